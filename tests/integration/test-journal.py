#!/usr/bin/env python3
"""The daemon's journal entries, read back from a real systemd-journald.

journald runs in a private mount namespace (its own /run, and /var/log/journal hidden), so
the host's journal is untouched. hvtuned runs as a service would: stderr connected to a stream
that JOURNAL_STREAM names, on a copy of the Azure Gen2 testbed. The test then asks journalctl
for the entries by their fields, as an operator would.

Needs root, unshare(1) and systemd-journald: exits 77 (skip) without them.
"""
import json
import os
import shutil
import subprocess
import sys
import time

SKIP = 77
JOURNALD = "/lib/systemd/systemd-journald"
APPLIED = "eb47933e2e9c4b03a3bebcf187cc6d70"
FAILED = "573b87040f9442c4ae74cb59264b8376"
FOUND = "9b1ee9a1f9644d0da961e04a6296daed"
STARTED = "8f3cf14e474f4ae4a79a61748195705f"


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def journal(*match):
    out = subprocess.run(["journalctl", "-D", "/run/log/journal", "--no-pager", "-o", "json", *match],
                         check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def wait_for(what, *match, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        entries = journal(*match)
        if entries:
            return entries
        time.sleep(0.1)
    fail(f"no journal entry for {what} ({' '.join(match)})")


def inside(hvtuned, testbed):
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/run"], check=True)
    if os.path.isdir("/var/log/journal"):
        subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/var/log/journal"], check=True)
    os.makedirs("/run/systemd/journal")
    os.makedirs("/run/log/journal")

    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "UMOCKDEV_DIR", "NOTIFY_SOCKET")}
    journald = subprocess.Popen([JOURNALD], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        if os.path.exists("/run/systemd/journal/socket"):
            break
        time.sleep(0.05)
    else:
        fail("journald did not create its socket")

    # A persistent testbed the daemon runs on directly (testing.md's recipe).
    subprocess.run(["umockdev-run", "-d", testbed, "--", "sh", "-c", 'cp -a "$UMOCKDEV_DIR" /run/tb'],
                   env=env, check=True)
    with open("/run/tb/sys/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/"
              "f8b3781b-1e82-4818-a1c3-63d806ec15bb/host1/target1:0:0/1:0:0:1/queue_depth", "w") as f:
        f.write("deep\n")  # sdd's LUN: this one attribute must fail, and say so
    with open("/run/hvtuned.conf", "w") as f:
        f.write('queue = { scheduler = "none"; };\ndevice = { queue_depth = 254; };\n')

    stream = open("/run/hvtuned.stderr", "w")
    st = os.fstat(stream.fileno())
    denv = dict(env, LD_PRELOAD="libumockdev-preload.so.0", UMOCKDEV_DIR="/run/tb",
                JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}")
    daemon = subprocess.Popen([hvtuned, "-c", "/run/hvtuned.conf"], env=denv, stderr=stream)
    pid = str(daemon.pid)
    wait_for("the start-up pass", f"_PID={pid}", f"MESSAGE_ID={STARTED}")
    daemon.terminate()
    if daemon.wait(timeout=30) != 0:
        fail(f"hvtuned exited with {daemon.returncode}")
    journald.terminate()
    journald.wait(timeout=30)

    check_entries(pid)
    with open("/run/hvtuned.stderr") as f:
        stray = f.read()
    if stray:
        fail(f"under the journal nothing belongs on stderr, got:\n{stray}")


def check_entries(pid):
    applied = journal(f"_PID={pid}", f"MESSAGE_ID={APPLIED}")
    got = sorted((e["HVTUNED_DEVICE"], e["HVTUNED_ATTR"], e["HVTUNED_FROM"], e["HVTUNED_TO"]) for e in applied)
    want = sorted([("sda", "queue/scheduler", "mq-deadline", "none"),
                   ("sdc", "queue/scheduler", "bfq", "none"),
                   ("sda", "device/queue_depth", "2048", "254"),
                   ("sdb", "device/queue_depth", "2048", "254"),
                   ("sdc", "device/queue_depth", "2048", "254")])
    if got != want:
        fail(f"applied entries {got}, want {want}")
    for e in applied:
        if e["HVTUNED_RESULT"] != "applied" or e["PRIORITY"] != "6":
            fail(f"bad applied entry {e}")
        ctrl = "{f8b3781a-1e82-4818-a1c3-63d806ec15bb}" if e["HVTUNED_DEVICE"] in ("sda", "sdb") \
            else "{f8b3781b-1e82-4818-a1c3-63d806ec15bb}"
        if e["HVTUNED_CONTROLLER"] != ctrl:
            fail(f"controller of {e['HVTUNED_DEVICE']} is {e['HVTUNED_CONTROLLER']}, want {ctrl}")
        want_msg = f"{e['HVTUNED_DEVICE']} {e['HVTUNED_ATTR']}: {e['HVTUNED_FROM']} -> {e['HVTUNED_TO']} (applied)"
        if e["MESSAGE"] != want_msg:
            fail(f"MESSAGE {e['MESSAGE']!r}, want {want_msg!r}")

    failed = journal(f"_PID={pid}", "HVTUNED_RESULT=failed")
    if len(failed) != 1:
        fail(f"want one failed entry, got {failed}")
    e = failed[0]
    if (e["MESSAGE_ID"], e["HVTUNED_DEVICE"], e["HVTUNED_ATTR"], e["ERRNO"], e["PRIORITY"]) != \
            (FAILED, "sdd", "device/queue_depth", "74", "3"):
        fail(f"bad failed entry {e}")

    found = journal(f"_PID={pid}", f"MESSAGE_ID={FOUND}")
    if sorted(e["HVTUNED_DEVICE"] for e in found) != ["sda", "sdb", "sdc", "sdd"]:
        fail(f"found entries {found}")
    if journal(f"_PID={pid}", "HVTUNED_DEVICE=vda") or journal(f"_PID={pid}", "HVTUNED_RESULT=unchanged"):
        fail("entries for an untouched disk or an unchanged attribute")
    print(f"ok: {len(applied)} applied, 1 failed, {len(found)} found entries in the journal")


def main():
    hvtuned, testbed = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3 and sys.argv[3] == "--inside":
        inside(hvtuned, testbed)
        return
    if os.geteuid() != 0:
        print("SKIP: needs root for a private mount namespace and journald")
        sys.exit(SKIP)
    for tool in ("unshare", "journalctl", "umockdev-run"):
        if not shutil.which(tool):
            print(f"SKIP: needs {tool}")
            sys.exit(SKIP)
    if not os.access(JOURNALD, os.X_OK):
        print(f"SKIP: needs {JOURNALD}")
        sys.exit(SKIP)
    sys.exit(subprocess.run(["unshare", "--mount", sys.executable, __file__, hvtuned, testbed, "--inside"]).returncode)


if __name__ == "__main__":
    main()
