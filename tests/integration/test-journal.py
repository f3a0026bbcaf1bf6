#!/usr/bin/env python3
"""The daemon's journal entries, read back from a real systemd-journald.

journald runs in a private mount namespace (its own /run, and /var/log/journal hidden), so
the host's journal is untouched. hvtuned runs as a service would: stderr connected to a stream
that JOURNAL_STREAM names, on a copy of the Azure Gen2 testbed. The test then asks journalctl
for the entries by their fields, as an operator would. The last run has a write the kernel
refuses (tests/emulate/sysfs-faults.c): its entry, with ERRNO, as journald stores it.

Under the test setup "valgrind" (HVTUNED_TEST_VALGRIND) each hvtuned runs under memcheck, its
report in a file of its own, which must stay empty: stderr is the journal's here.

Last, hvtuned on a copy of the Azure v6 testbed (its disks all NVMe): the entries of Azure's
NVMe disks carry their kind, role, nsid, layout and hv_pci controller, the decoys have none,
and a stop leaves their 30 s I/O timeouts at 240000, said in one entry with the boot-time step.

A restart (the fake PID 1 says hvtuned.service has a job of type restart) writes nothing and
keeps the record files as they are; the start after it, on a configuration that no longer
manages queue_depth, puts back only that; a plain stop then restores the rest.

Needs root, unshare(1) and systemd-journald: exits 77 (skip) without them.

    test-journal.py HVTUNED TESTBED SYSFS_KERNEL FAKE_MANAGER SYSFS_FAULTS MESSAGES_H V6_TESTBED
"""
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

SKIP = 77
JOURNALD = "/lib/systemd/systemd-journald"
# The MESSAGE_IDs, set by load_message_ids() from daemon/messages.h itself: a test that kept
# copies could go on looking for an id the daemon no longer logs.
APPLIED = FAILED = FOUND = STARTED = REPAIRED = RESTORED = KNOCKED_ON = None
STATE_DISK = STATE_SUMMARY = SKIPPED = CONTROLLER = HWQ_ADVICE = NVME_TIMEOUT_SHORT = None
RESTART_KEPT = STOPPED = NVME_TIMEOUT_KEPT = NVME_ADVICE = None
AZURE_HWQ = "; hw queues: 2 controllers over cap 4, ~169 MiB reclaimable at next boot"
SCSI0, SCSI1 = "{f8b3781a-1e82-4818-a1c3-63d806ec15bb}", "{f8b3781b-1e82-4818-a1c3-63d806ec15bb}"
# Every original of the testbed as a stop puts it back. The cap goes back too: hot-added
# controllers get one queue per CPU again.
ALL_RESTORED = sorted([("sda", "queue/scheduler", "mq-deadline"), ("sdb", "queue/scheduler", "bfq"),
                       ("hv_storvsc", "parameters/storvsc_max_hw_queues", "0"),
                       ("sdc", "queue/scheduler", "bfq"), ("sda", "device/queue_depth", "2048"),
                       ("sdb", "device/queue_depth", "2048"), ("sdc", "device/queue_depth", "2048")])
SDB = ("/run/tb/sys/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/"
       "f8b3781a-1e82-4818-a1c3-63d806ec15bb/host0/target0:0:0/0:0:0:1/block/sdb")
SYSFS_OF = {"sda": SDB.replace("0:0:0:1/block/sdb", "0:0:0:0/block/sda"), "sdb": SDB,
            "sdc": SDB.replace("f8b3781a", "f8b3781b").replace("host0/target0:0:0/0:0:0:1/block/sdb",
                                                               "host1/target1:0:0/1:0:0:0/block/sdc"),
            "hv_storvsc": "/run/tb/sys/module/hv_storvsc"}


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def load_message_ids(path):
    """Sets the MESSAGE_ID constants from the #define HVT_MESSAGE_<NAME> "<id>" lines of
    daemon/messages.h."""
    global APPLIED, FAILED, FOUND, STARTED, REPAIRED, RESTORED, KNOCKED_ON
    global STATE_DISK, STATE_SUMMARY, SKIPPED, CONTROLLER, HWQ_ADVICE, NVME_TIMEOUT_SHORT
    global RESTART_KEPT, STOPPED, NVME_TIMEOUT_KEPT, NVME_ADVICE
    with open(path) as f:
        ids = dict(re.findall(r'^#define HVT_MESSAGE_(\w+) +"([0-9a-f]{32})"$', f.read(), re.M))
    try:
        APPLIED, FAILED, FOUND = ids["ATTR_APPLIED"], ids["ATTR_FAILED"], ids["DISK_FOUND"]
        STARTED, REPAIRED, RESTORED = ids["STARTED"], ids["DRIFT_REPAIRED"], ids["ATTR_RESTORED"]
        KNOCKED_ON, STATE_DISK, STATE_SUMMARY = ids["ATTR_KNOCKED_ON"], ids["STATE_DISK"], ids["STATE_SUMMARY"]
        SKIPPED, CONTROLLER, HWQ_ADVICE = ids["RESTORE_SKIPPED"], ids["CONTROLLER"], ids["HWQ_ADVICE"]
        NVME_TIMEOUT_SHORT = ids["NVME_TIMEOUT_SHORT"]
        RESTART_KEPT, STOPPED = ids["RESTART_KEPT"], ids["STOPPED"]
        NVME_TIMEOUT_KEPT, NVME_ADVICE = ids["NVME_TIMEOUT_KEPT"], ids["NVME_ADVICE"]
    except KeyError as e:
        fail(f"{path} defines no HVT_MESSAGE_{e.args[0]}")


def daemon_argv(hvtuned):
    valgrind = shlex.split(os.environ.get("HVTUNED_TEST_VALGRIND", ""))
    if valgrind:
        valgrind += ["-q", "--log-file=/run/hvtuned-valgrind.%p"]
    return valgrind + [hvtuned, "-c", "/run/hvtuned.conf"]


def check_valgrind(pid):
    """Under memcheck -q, a report holds only errors and definite leaks."""
    if not os.environ.get("HVTUNED_TEST_VALGRIND"):
        return
    with open(f"/run/hvtuned-valgrind.{pid}") as f:
        report = f.read()
    if report:
        fail(f"memcheck found errors in hvtuned:\n{report}")


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


def start_journald(env):
    """journald, once it stores what it is sent. The socket file of an earlier journald stays
    behind it: a client that came before the new one bound it lost its first entries."""
    global journald_starts
    journald_starts += 1
    if os.path.exists(JOURNAL_SOCKET):
        os.unlink(JOURNAL_SOCKET)
    journald = subprocess.Popen([JOURNALD], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        if os.path.exists(JOURNAL_SOCKET):
            break
        time.sleep(0.05)
    else:
        fail("journald did not create its socket")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        s.sendto(f"MESSAGE=test-journal ready\nTEST_JOURNALD={journald_starts}\n".encode(), JOURNAL_SOCKET)
    wait_for("journald's start", f"TEST_JOURNALD={journald_starts}")
    return journald


journald_starts = 0
JOURNAL_SOCKET = "/run/systemd/journal/socket"


def inside(hvtuned, testbed, emulator, manager, faults, v6_testbed):
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/run"], check=True)
    if os.path.isdir("/var/log/journal"):
        subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/var/log/journal"], check=True)
    os.makedirs("/run/systemd/journal")
    os.makedirs("/run/log/journal")
    # A build root has an empty /etc/machine-id (debootstrap leaves it so, for the first
    # boot to fill); journald 247 then cannot open its journal once it was restarted
    # ("No medium found"). A booted system has one: this namespace gets its own.
    if os.path.isfile("/etc/machine-id") and os.path.getsize("/etc/machine-id") == 0:
        with open("/run/machine-id", "w") as f:
            f.write(os.urandom(16).hex() + "\n")
        subprocess.run(["mount", "--bind", "/run/machine-id", "/etc/machine-id"], check=True)

    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "UMOCKDEV_DIR", "NOTIFY_SOCKET")}
    journald = start_journald(env)

    # A persistent testbed the daemon runs on directly (docs/testing.md, "A testbed by hand").
    subprocess.run(["umockdev-run", "-d", testbed, "--", "sh", "-c", 'cp -a "$UMOCKDEV_DIR" /run/tb'],
                   env=env, check=True)
    # What the testbed's kernel has beside its devices (BTF, osrelease): its request layout.
    subprocess.run(["tar", "-C", "/run/tb", "-xf", testbed[:-len(".umockdev")] + ".kernel.tar"], check=True)
    with open("/run/tb/sys/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/"
              "f8b3781b-1e82-4818-a1c3-63d806ec15bb/host1/target1:0:0/1:0:0:1/queue_depth", "w") as f:
        f.write("deep\n")  # sdd's LUN: this one attribute must fail, and say so
    with open("/run/hvtuned.conf", "w") as f:
        # verify_interval: the drift below is found without a uevent.
        f.write('platform_defaults = false;\nqueue = { scheduler = "none"; };\ndevice = { queue_depth = 254; };\n'
                'verify_interval = 1;\n')

    stream = open("/run/hvtuned.stderr", "w")
    st = os.fstat(stream.fileno())
    # The testbed answers writes as the kernel would (tests/emulate/sysfs-kernel.c).
    denv = dict(env, LD_PRELOAD=f"{emulator}:libumockdev-preload.so.0", UMOCKDEV_DIR="/run/tb",
                RUNTIME_DIRECTORY="/run/hvtuned", JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}")
    daemon = subprocess.Popen(daemon_argv(hvtuned), env=denv, stderr=stream)
    pid = str(daemon.pid)
    wait_for("the start-up pass", f"_PID={pid}", f"MESSAGE_ID={STARTED}")

    # A distro rule puts bfq back on sdb: the periodic check repairs it. The kernel resets
    # nr_requests on the switch, to 2 x min(2534, 128).
    with open(SDB + "/queue/scheduler", "w") as f:
        f.write("none mq-deadline kyber [bfq] \n")
    with open(SDB + "/queue/nr_requests", "w") as f:
        f.write("256\n")
    wait_for("the drift repair", f"_PID={pid}", f"MESSAGE_ID={REPAIRED}")
    daemon.send_signal(signal.SIGUSR1)
    wait_for("the state dump", f"_PID={pid}", f"MESSAGE_ID={STATE_SUMMARY}")
    daemon.terminate()
    if daemon.wait(timeout=30) != 0:
        fail(f"hvtuned exited with {daemon.returncode}")
    check_valgrind(pid)
    journald.terminate()
    journald.wait(timeout=30)

    check_entries(pid)
    check_hw_queues(pid)
    check_lifecycle(pid)
    with open("/run/hvtuned.stderr") as f:
        stray = f.read()
    if stray:
        fail(f"under the journal nothing belongs on stderr, got:\n{stray}")
    # Before the checks below take the system bus and libsystemd away from this namespace.
    check_nvme(hvtuned, env, emulator, v6_testbed)
    check_shutdown(hvtuned, manager, env, denv)
    check_restart(hvtuned, manager, env, denv)
    check_shutdown_silent(hvtuned, env, denv)
    check_fault(hvtuned, env, denv, emulator, faults)
    check_shutdown_blind(hvtuned, manager, env, denv)
    check_wedged(hvtuned, env, denv)


V6_ACCEL = "{0d5b1c3e-7870-4a3b-8d2e-6f1a9c4b7e20}"
V6_DIRECT2 = "{7a4e2f91-2b41-4c6d-9e35-1d8f0a6b3c57}"


def check_nvme(hvtuned, env, emulator, v6_testbed):
    """Azure's NVMe disks in the journal (the v6 testbed, a file of the platform defaults only),
    as a service runs and stops. Natively even under valgrind: the new testbeds stay out of
    that setup but for one case (integration/nvme's)."""
    journald = start_journald(env)
    subprocess.run(["umockdev-run", "-d", v6_testbed, "--", "sh", "-c", 'cp -a "$UMOCKDEV_DIR" /run/tb6'],
                   env=env, check=True)
    subprocess.run(["tar", "-C", "/run/tb6", "-xf", v6_testbed[:-len(".umockdev")] + ".kernel.tar"], check=True)
    with open("/run/hvtuned-v6.conf", "w") as f:
        f.write("platform_defaults = true;\n")
    stream = open("/run/hvtuned.stderr", "w")
    st = os.fstat(stream.fileno())
    daemon = subprocess.Popen([hvtuned, "-c", "/run/hvtuned-v6.conf"], stderr=stream,
                              env=dict(env, LD_PRELOAD=f"{emulator}:libumockdev-preload.so.0", UMOCKDEV_DIR="/run/tb6",
                                       RUNTIME_DIRECTORY="/run/hvtuned-v6",
                                       JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}"))
    pid = str(daemon.pid)
    wait_for("the v6 start-up pass", f"_PID={pid}", f"MESSAGE_ID={STARTED}")
    daemon.terminate()
    if daemon.wait(timeout=30) != 0:
        fail(f"hvtuned exited with {daemon.returncode} on the v6 VM")
    wait_for("the v6 stop's summary", f"_PID={pid}", f"MESSAGE_ID={STOPPED}")
    journald.terminate()
    journald.wait(timeout=30)

    found = {e["HVTUNED_DEVICE"]: e for e in journal(f"_PID={pid}", f"MESSAGE_ID={FOUND}")}
    if sorted(found) != ["nvme0n1", "nvme0n2", "nvme0n3", "nvme1n1"]:
        fail(f"found entries on the v6 VM: {sorted(found)}")
    fields = ("HVTUNED_KIND", "HVTUNED_ROLE", "HVTUNED_NSID", "HVTUNED_NVME_LAYOUT", "HVTUNED_VIA_HV_PCI",
              "HVTUNED_CONTROLLER")
    want = {"nvme0n1": ("nvme-accelerator", "os", "1", "direct", "yes", V6_ACCEL),
            "nvme0n2": ("nvme-accelerator", "data", "2", "direct", "yes", V6_ACCEL),
            "nvme0n3": ("nvme-accelerator", "data", "3", "direct", "yes", V6_ACCEL),
            "nvme1n1": ("nvme-direct-v2", "local", "1", "direct", "yes", V6_DIRECT2)}
    for name, e in found.items():
        got = tuple(e.get(k) for k in fields)
        if got != want[name]:
            fail(f"{name}'s found entry has {dict(zip(fields, got))}, want {dict(zip(fields, want[name]))}")
    applied = journal(f"_PID={pid}", f"MESSAGE_ID={APPLIED}", "HVTUNED_DEVICE=nvme0n2", "HVTUNED_ATTR=queue/io_timeout")
    got = [(e["HVTUNED_FROM"], e["HVTUNED_TO"], e.get("HVTUNED_KIND"), e.get("HVTUNED_ROLE")) for e in applied]
    if got != [("30000", "240000", "nvme-accelerator", "data")]:
        fail(f"nvme0n2's io_timeout applied entries {got}")
    # The 30 s timeouts stay at 240000 at stop, said once, with the boot-time step; the start
    # said that step once too.
    if journal(f"_PID={pid}", f"MESSAGE_ID={NVME_TIMEOUT_SHORT}"):
        fail("a stop put a 30 s NVMe timeout back")
    kept = journal(f"_PID={pid}", f"MESSAGE_ID={NVME_TIMEOUT_KEPT}")
    got = [(e["HVTUNED_DEVICES"], e["HVTUNED_COUNT"], e["HVTUNED_FIX"], e["PRIORITY"]) for e in kept]
    if got != [("nvme0n1, nvme0n2, nvme0n3, nvme1n1", "4", "nvme_core.io_timeout=240", "5")]:
        fail(f"timeouts kept at stop {got}")
    advice = journal(f"_PID={pid}", f"MESSAGE_ID={NVME_ADVICE}")
    if len(advice) != 1 or advice[0]["HVTUNED_FIX"] != "nvme_core.io_timeout=240" or \
            "ran with an I/O timeout of 30000 ms until hvtuned started" not in advice[0]["MESSAGE"]:
        fail(f"NVMe boot advice entries {advice}")
    stopped = journal(f"_PID={pid}", f"MESSAGE_ID={STOPPED}")
    got = [(e["HVTUNED_STOP"], e["HVTUNED_N_KEPT"], e["HVTUNED_N_LEFT"], e["HVTUNED_N_DISKS"]) for e in stopped]
    if got != [("stop", "4", "0", "4")]:
        fail(f"the v6 stop's summary {got}")
    short = kept
    with open("/run/hvtuned.stderr") as f:
        stray = f.read()
    if stray:
        fail(f"under the journal nothing belongs on stderr, got:\n{stray}")
    for decoy in ("nvme2n1", "nvme3n1", "nvme3c3n1", "nvme0n1p1"):
        if journal(f"_PID={pid}", f"HVTUNED_DEVICE={decoy}"):
            fail(f"an entry names {decoy}, which is not Azure's")
    print(f"ok: {len(found)} Azure NVMe disks in the journal with kind, role, nsid and hv_pci; "
          f"their 30 s timeouts kept at stop in {len(short)} entry, the boot-time step once; no decoy named")


def check_hw_queues(pid):
    param = journal(f"_PID={pid}", f"MESSAGE_ID={APPLIED}", "HVTUNED_DEVICE=hv_storvsc")
    if [(e["HVTUNED_ATTR"], e["HVTUNED_FROM"], e["HVTUNED_TO"], e["HVTUNED_ACTION"]) for e in param] != \
            [("parameters/storvsc_max_hw_queues", "0", "4", "tune")] or "HVTUNED_CONTROLLER" in param[0]:
        fail(f"module parameter entries {param}")
    # 32 vCPUs: 32 queues of 2534 requests, and 4 under the cap (lib/hwqueues.h's model).
    ctrls = journal(f"_PID={pid}", f"MESSAGE_ID={CONTROLLER}")
    got = sorted((e["HVTUNED_CONTROLLER"], e["HVTUNED_HOST"], e["HVTUNED_KIND"], e["HVTUNED_HW_QUEUES"],
                  e["HVTUNED_CAN_QUEUE"], e["HVTUNED_EST_BYTES"], e["HVTUNED_EST_BYTES_CAPPED"],
                  e["HVTUNED_OVER_CAP"], e["PRIORITY"]) for e in ctrls)
    want = [(SCSI0, "host0", "scsi", "32", "2534", "101294080", "12661760", "yes", "6"),
            (SCSI1, "host1", "scsi", "32", "2534", "101294080", "12661760", "yes", "6")]
    if got != want:
        fail(f"controller entries {got}, want {want}")
    # The testbed's BTF has all four structs: the figures are the kernel's own, said so, with
    # no row assumed and no band (docs/layout-platforms.md).
    for e in ctrls:
        if e.get("HVTUNED_LAYOUT") != "btf" or "HVTUNED_LAYOUT_ROW" in e or "HVTUNED_EST_BAND_PCT" in e:
            fail(f"controller entry's layout fields {e}")
    advice = journal(f"_PID={pid}", f"MESSAGE_ID={HWQ_ADVICE}")
    if len(advice) != 1 or advice[0]["HVTUNED_FIX"] != "hv_storvsc.storvsc_max_hw_queues=4" or \
            advice[0]["HVTUNED_EST_BYTES_RECLAIMABLE"] != "177264640" or advice[0]["PRIORITY"] != "5" or \
            advice[0].get("HVTUNED_LAYOUT") != "btf":
        fail(f"boot advice entries {advice}")
    print(f"ok: the cap, {len(ctrls)} controller entries and the boot advice in the journal")


def check_entries(pid):
    applied = [e for e in journal(f"_PID={pid}", f"MESSAGE_ID={APPLIED}") if e["HVTUNED_DEVICE"] != "hv_storvsc"]
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

    # nr_requests is not managed: each switch of the scheduler (sdb: its repair) changed it, a
    # knock-on naming its cause.
    knocked = journal(f"_PID={pid}", f"MESSAGE_ID={KNOCKED_ON}")
    got = sorted((e["HVTUNED_DEVICE"], e["HVTUNED_ATTR"], e.get("HVTUNED_CAUSE")) for e in knocked)
    if got != [(d, "queue/nr_requests", "queue/scheduler") for d in ("sda", "sdb", "sdc")]:
        fail(f"knock-on entries {got}")

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


def check_shutdown(hvtuned, manager, env, denv):
    """SIGTERM while systemd says the system is stopping: nothing is restored."""
    os.makedirs("/run/systemd", exist_ok=True)
    fake = subprocess.Popen([manager, "/run/systemd/private", "stopping"], env=env, stdout=subprocess.PIPE,
                            text=True)
    if fake.stdout.readline().strip() != "ready":
        fail("the fake manager did not start")
    journald = start_journald(env)
    stream = open("/run/hvtuned.stderr", "w")
    st = os.fstat(stream.fileno())
    daemon = subprocess.Popen(daemon_argv(hvtuned), stderr=stream,
                              env=dict(denv, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}"))
    pid = str(daemon.pid)
    wait_for("the second start-up pass", f"_PID={pid}", f"MESSAGE_ID={STARTED}")
    daemon.terminate()
    if daemon.wait(timeout=30) != 0:
        fail(f"hvtuned exited with {daemon.returncode}")
    check_valgrind(pid)
    fake.kill()
    journald.terminate()
    journald.wait(timeout=30)

    if len(journal(f"_PID={pid}", f"MESSAGE_ID={SKIPPED}")) != 1:
        fail("no entry saying the restore was skipped at shutdown")
    if journal(f"_PID={pid}", f"MESSAGE_ID={RESTORED}"):
        fail("originals restored although the system is stopping")
    with open(SDB + "/queue/scheduler") as f:
        if "[none]" not in f.read():
            fail("sdb lost its tuned scheduler at shutdown")
    print("ok: no restore while the system is stopping")


RECORDS = ("sda", "sdb", "sdc", "hv_storvsc")


def record_inodes():
    """The inode of each record file of the testbed's disks (sdd's attribute fails at every
    start, so its record is left out)."""
    inodes = {}
    for name in RECORDS:
        try:
            inodes[name] = os.stat(f"/run/hvtuned/{name}").st_ino
        except FileNotFoundError:
            pass
    return inodes


def start_under_manager(hvtuned, manager, env, denv, job):
    """journald, a fake PID 1 that says the system is running and, given job, that
    hvtuned.service has a job of that type, and hvtuned once started."""
    fake = subprocess.Popen([manager, "/run/systemd/private", "running"] + ([job] if job else []), env=env,
                            stdout=subprocess.PIPE, text=True)
    if fake.stdout.readline().strip() != "ready":
        fail("the fake manager did not start")
    journald = start_journald(env)
    stream = open("/run/hvtuned.stderr", "w")
    st = os.fstat(stream.fileno())
    daemon = subprocess.Popen(daemon_argv(hvtuned), stderr=stream, env=dict(denv, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}"))
    pid = str(daemon.pid)
    wait_for("a start-up pass", f"_PID={pid}", f"MESSAGE_ID={STARTED}")
    return fake, journald, daemon, pid


def stop_under_manager(fake, journald, daemon, pid):
    daemon.terminate()
    if daemon.wait(timeout=30) != 0:
        fail(f"hvtuned exited with {daemon.returncode}")
    check_valgrind(pid)
    fake.kill()
    fake.wait()
    journald.terminate()
    journald.wait(timeout=30)


def restored(pid):
    return sorted((e["HVTUNED_DEVICE"], e["HVTUNED_ATTR"], e["HVTUNED_TO"])
                  for e in journal(f"_PID={pid}", f"MESSAGE_ID={RESTORED}") if e["HVTUNED_DEVICE"] != "sdd")


def check_restart(hvtuned, manager, env, denv):
    """The stop half of a restart writes nothing, keeps the records (the same files), says so
    once; the next start adopts them, and puts back only what its configuration no longer
    manages; a plain stop after it restores the rest."""
    with open("/run/hvtuned.conf") as f:
        config = f.read()
    first = record_inodes()
    if sorted(first) != sorted(RECORDS):
        fail(f"records before the restart: {sorted(first)}")

    run = start_under_manager(hvtuned, manager, env, denv, "restart")
    pid = run[3]
    stop_under_manager(*run)
    if restored(pid):
        fail(f"a restart restored {restored(pid)}")
    kept = journal(f"_PID={pid}", f"MESSAGE_ID={RESTART_KEPT}")
    if len(kept) != 1 or not re.fullmatch(r"restart: restoring nothing; \d+ records kept for the next start",
                                          kept[0]["MESSAGE"]) or int(kept[0]["HVTUNED_RECORDS"]) < len(RECORDS):
        fail(f"the restart's entries {kept}")
    if journal(f"_PID={pid}", f"MESSAGE_ID={SKIPPED}"):
        fail("a restart taken for a shutdown")
    stopped = journal(f"_PID={pid}", f"MESSAGE_ID={STOPPED}")
    if [(e["HVTUNED_STOP"], e["HVTUNED_N_RESTORED"], e["HVTUNED_N_KEPT"]) for e in stopped] != [("restart", "0", "0")] or \
            int(stopped[0]["HVTUNED_N_LEFT"]) < len(RECORDS):
        fail(f"the restart's summary {stopped}")
    if record_inodes() != first:
        fail(f"the records are other files after the restart: {first} then {record_inodes()}")
    with open(SDB + "/queue/scheduler") as f:
        if "[none]" not in f.read():
            fail("sdb lost its tuned scheduler at the restart")

    # The new configuration no longer manages queue_depth: the start puts back that alone.
    with open("/run/hvtuned.conf", "w") as f:
        f.write(config.replace("device = { queue_depth = 254; };\n", ""))
    run = start_under_manager(hvtuned, manager, env, denv, None)
    pid = run[3]
    at_start = restored(pid)
    if at_start != [(d, "device/queue_depth", "2048") for d in ("sda", "sdb", "sdc")]:
        fail(f"the start after a restart restored {at_start}")
    if [e for e in journal(f"_PID={pid}", f"MESSAGE_ID={APPLIED}") if e["HVTUNED_DEVICE"] != "sdd"]:
        fail("the start after a restart wrote what the records and the disks already had")
    stop_under_manager(*run)
    at_stop = [r for r in restored(pid) if r not in at_start]
    if ("sdb", "queue/scheduler", "bfq") not in at_stop or \
            ("hv_storvsc", "parameters/storvsc_max_hw_queues", "0") not in at_stop:
        fail(f"a plain stop restored {at_stop}")
    stopped = journal(f"_PID={pid}", f"MESSAGE_ID={STOPPED}")
    if [(e["HVTUNED_STOP"], e["HVTUNED_N_KEPT"], e["HVTUNED_N_LEFT"]) for e in stopped] != [("stop", "0", "0")]:
        fail(f"the plain stop's summary {stopped}")
    with open("/run/hvtuned.conf", "w") as f:
        f.write(config)
    print(f"ok: a restart wrote nothing and kept {len(first)} records as they were; the start after it restored "
          f"{len(at_start)} attributes no longer managed; a plain stop restored {len(at_stop)}")


def silent_socket(path, accept):
    """A unix socket that never says a word: it leaves connections in its backlog, or accepts
    them and keeps them open unread, as a stuck PID 1 or D-Bus broker would."""
    if os.path.exists(path):
        os.unlink(path)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(16)
    if accept:
        held = []
        threading.Thread(target=lambda: held.extend(iter(lambda: s.accept()[0], None)), daemon=True).start()
    return s


def check_shutdown_silent(hvtuned, env, denv):
    """SIGTERM while PID 1 and the bus do not answer: the check gives up within its 2 s, and
    the stop ends within 5 s with every original restored. First the bus alone (no private
    socket), then PID 1's private socket too."""
    # Under memcheck hvtuned itself is tens of times slower; the check's deadline is not.
    bound = 5.0 * (10 if os.environ.get("HVTUNED_TEST_VALGRIND") else 1)
    bus = silent_socket("/run/silent-bus", accept=True)
    cases = [("the system bus silent", None), ("PID 1's private socket silent too", False)]
    for what, private_accepts in cases:
        if os.path.exists("/run/systemd/private"):
            os.unlink("/run/systemd/private")
        private = None if private_accepts is None else silent_socket("/run/systemd/private", private_accepts)
        journald = start_journald(env)
        stream = open("/run/hvtuned.stderr", "w")
        st = os.fstat(stream.fileno())
        daemon = subprocess.Popen(daemon_argv(hvtuned) + ["-v"], stderr=stream,
                                  env=dict(denv, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}",
                                           DBUS_SYSTEM_BUS_ADDRESS="unix:path=/run/silent-bus"))
        pid = str(daemon.pid)
        try:
            wait_for(f"the start-up pass with {what}", f"_PID={pid}", f"MESSAGE_ID={STARTED}")
            start = time.monotonic()
            daemon.terminate()
            try:
                daemon.wait(timeout=bound)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
                fail(f"with {what}, hvtuned was still stopping {bound:.0f} s after SIGTERM")
            took = time.monotonic() - start
            if daemon.returncode != 0:
                fail(f"hvtuned exited with {daemon.returncode} with {what}")
            check_valgrind(pid)
        finally:
            journald.terminate()
            journald.wait(timeout=30)
            if private:
                private.close()

        restored = journal(f"_PID={pid}", f"MESSAGE_ID={RESTORED}")
        got = sorted((e["HVTUNED_DEVICE"], e["HVTUNED_ATTR"], e["HVTUNED_TO"]) for e in restored)
        if got != ALL_RESTORED:
            fail(f"with {what}, restored {got}, want {ALL_RESTORED}")
        for disk, attr, value in ALL_RESTORED:
            path = f"{SYSFS_OF[disk]}/{attr}".replace("/device/", "/../../")
            with open(path) as f:
                now = f.read()
            if (f"[{value}]" if attr == "queue/scheduler" else value) not in now.split():
                fail(f"with {what}, {disk} {attr} is {now.strip()!r} after the stop, want {value}")
        said = [e["MESSAGE"] for e in journal(f"_PID={pid}", "PRIORITY=6")
                if e["MESSAGE"].startswith("Cannot tell whether the system is shutting down")]
        if len(said) != 1:
            fail(f"with {what}, no info entry saying the check could not tell: {said}")
        print(f"ok: with {what}, stopped in {took:.1f} s with {len(restored)} originals restored ({said[0]})")
    bus.close()


def check_shutdown_blind(hvtuned, manager, env, denv):
    """The same stop without a libsystemd to ask with: hvtuned cannot tell, so it restores."""
    fake = subprocess.Popen([manager, "/run/systemd/private", "stopping"], env=env, stdout=subprocess.PIPE,
                            text=True)
    if fake.stdout.readline().strip() != "ready":
        fail("the fake manager did not start")
    # The libsystemd.so.0 the dynamic linker finds (the fake manager's), an empty file in this
    # mount namespace: dlopen() fails on it as on a system without it.
    with open(f"/proc/{fake.pid}/maps") as f:
        libs = {line.split()[-1] for line in f if "/libsystemd.so.0" in line}
    if len(libs) != 1:
        fail(f"libsystemd mapped as {libs} in the fake manager")
    open("/run/empty.so", "w").close()
    subprocess.run(["mount", "--bind", "/run/empty.so", libs.pop()], check=True)
    journald = start_journald(env)
    try:
        stream = open("/run/hvtuned.stderr", "w")
        st = os.fstat(stream.fileno())
        daemon = subprocess.Popen(daemon_argv(hvtuned) + ["-v"], stderr=stream,
                                  env=dict(denv, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}"))
        pid = str(daemon.pid)
        wait_for("the start-up pass without libsystemd", f"_PID={pid}", f"MESSAGE_ID={STARTED}")
        daemon.terminate()
        if daemon.wait(timeout=30) != 0:
            fail(f"hvtuned exited with {daemon.returncode} without libsystemd")
        check_valgrind(pid)
    finally:
        # A failure must not leave them holding the test's output open until its timeout.
        fake.kill()
        journald.terminate()
        journald.wait(timeout=30)

    if journal(f"_PID={pid}", f"MESSAGE_ID={SKIPPED}"):
        fail("restore skipped although hvtuned could not ask systemd")
    if not journal(f"_PID={pid}", f"MESSAGE_ID={RESTORED}"):
        fail("no originals restored although hvtuned could not tell a shutdown")
    said = [e["MESSAGE"] for e in journal(f"_PID={pid}", "PRIORITY=7") if "libsystemd" in e["MESSAGE"]]
    if len(said) != 1 or not said[0].startswith("Cannot load libsystemd"):
        fail(f"no debug entry saying libsystemd could not be loaded: {said}")
    print("ok: without libsystemd, the originals restored at stop")


def check_fault(hvtuned, env, denv, emulator, faults):
    """A write the kernel refuses (tests/emulate/sysfs-faults.c), as journald stores it."""
    journald = start_journald(env)
    sdc = SDB.replace("f8b3781a", "f8b3781b").replace("host0/target0:0:0/0:0:0:1/block/sdb",
                                                      "host1/target1:0:0/1:0:0:0/block/sdc")
    with open(sdc + "/queue/scheduler", "w") as f:
        f.write("none mq-deadline kyber [bfq] \n")  # a distro rule's bfq, for hvtuned to undo
    stream = open("/run/hvtuned.stderr", "w")
    st = os.fstat(stream.fileno())
    daemon = subprocess.Popen([hvtuned, "-c", "/run/hvtuned.conf"], stderr=stream,
                              env=dict(denv, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}",
                                       LD_PRELOAD=f"{faults}:{emulator}:libumockdev-preload.so.0",
                                       HVTUNED_TEST_FAULTS="sdc/queue/scheduler=write:EBUSY"))
    pid = str(daemon.pid)
    wait_for("the start-up pass with a fault", f"_PID={pid}", f"MESSAGE_ID={STARTED}")
    # journald may store another client's entries in between: wait for the one that matters.
    wait_for("sdc's refused write", f"_PID={pid}", f"MESSAGE_ID={FAILED}", "HVTUNED_DEVICE=sdc")
    with open(sdc + "/../../queue_depth") as f:
        if f.read().strip() != "254":
            fail("sdc's queue_depth is not tuned")
    daemon.terminate()
    if daemon.wait(timeout=30) != 0:
        fail(f"hvtuned exited with {daemon.returncode} after a refused write")
    journald.terminate()
    journald.wait(timeout=30)

    failed = journal(f"_PID={pid}", f"MESSAGE_ID={FAILED}", "HVTUNED_DEVICE=sdc")
    got = [(e["HVTUNED_ATTR"], e["HVTUNED_RESULT"], e["HVTUNED_FROM"], e["HVTUNED_TO"], e["ERRNO"], e["PRIORITY"],
            e["MESSAGE"]) for e in failed]
    want = [("queue/scheduler", "failed", "bfq", "none", "16", "3",
             "sdc queue/scheduler: bfq -> none (failed: Device or resource busy)")]
    if got != want:
        fail(f"failed entries of sdc {got}, want {want}")
    # The rest as usual: the only other failure is sdd's unreadable queue_depth.
    others = sorted((e["HVTUNED_DEVICE"], e["HVTUNED_ATTR"]) for e in journal(f"_PID={pid}", "HVTUNED_RESULT=failed"))
    if others != [("sdc", "queue/scheduler"), ("sdd", "device/queue_depth")]:
        fail(f"failed entries {others}")
    with open(sdc + "/queue/scheduler") as f:
        if "[bfq]" not in f.read():
            fail("sdc's scheduler changed although the write was refused")
    print("ok: a refused write in the journal, ERRNO=16, the rest tuned")


def check_lifecycle(pid):
    repaired = journal(f"_PID={pid}", f"MESSAGE_ID={REPAIRED}")
    if [(e["HVTUNED_DEVICE"], e["HVTUNED_ATTR"], e["HVTUNED_FROM"], e["HVTUNED_TO"], e["HVTUNED_ACTION"])
            for e in repaired] != [("sdb", "queue/scheduler", "bfq", "none", "repair")]:
        fail(f"repair entries {repaired}")

    states = journal(f"_PID={pid}", f"MESSAGE_ID={STATE_DISK}")
    by_disk = {e["HVTUNED_DEVICE"]: e["HVTUNED_STATE"] for e in states}
    if sorted(by_disk) != ["sda", "sdb", "sdc", "sdd"]:
        fail(f"state entries for {sorted(by_disk)}")
    # Several attributes: the field repeats, and journalctl shows a list (in no set order).
    want_sda = sorted(["queue/scheduler original=mq-deadline desired=none current=none last=applied",
                       "queue/nr_requests original=256 desired=- current=2534 last=reset by the scheduler",
                       "device/queue_depth original=2048 desired=254 current=254 last=applied"])
    if sorted(by_disk["sda"]) != want_sda:
        fail(f"sda state {by_disk['sda']}, want {want_sda}")
    if "queue/scheduler original=bfq desired=none current=none last=applied" not in by_disk["sdb"]:
        fail(f"sdb state {by_disk['sdb']}")
    summary = journal(f"_PID={pid}", f"MESSAGE_ID={STATE_SUMMARY}")
    if len(summary) != 1 or summary[0]["HVTUNED_DISKS"] != "4" or \
            summary[0]["MESSAGE"] != "State: 4 storvsc disks on 2 controllers: 3 tuned, 1 failed" + AZURE_HWQ:
        fail(f"summary {summary}")

    restored = journal(f"_PID={pid}", f"MESSAGE_ID={RESTORED}")
    got = sorted((e["HVTUNED_DEVICE"], e["HVTUNED_ATTR"], e["HVTUNED_TO"]) for e in restored)
    if got != ALL_RESTORED:
        fail(f"restored entries {got}, want {ALL_RESTORED}")
    print(f"ok: 1 repair, {len(states)} state entries and a summary, {len(restored)} restores")


def disk(name):
    """A Hyper-V disk's directory in the testbed."""
    return os.path.realpath(f"/run/tb/sys/block/{name}")


def scheduler(name):
    with open(disk(name) + "/queue/scheduler") as f:
        text = f.read()
    return text[text.index("[") + 1:text.index("]")]


def tuned_values():
    """What hvtuned manages on each Hyper-V disk, as the kernel shows it now."""
    values = {}
    for name in ("sda", "sdb", "sdc", "sdd"):
        with open(disk(name) + "/device/queue_depth") as f:
            values[name] = (scheduler(name), f.read().strip())
    return values


def fill_socket(path):
    """Datagrams of the test's own until journald's socket takes no more."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        s.setblocking(False)
        n = 0
        while True:
            try:
                s.sendto(b"MESSAGE=test-journal filler\nTEST_FILLER=1\n", path)
            except BlockingIOError:
                return n
            n += 1


class FakeManager:
    """NOTIFY_SOCKET's other side, read all the time (PID 1 is not the one stuck here): every
    notification with the time it came."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.1)
        self.notes = []
        self.done = False
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        while not self.done:
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                continue
            self.notes.append((time.monotonic(), data.decode(errors="replace")))

    def wait(self, needle, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(needle in text for _, text in self.notes):
                return
            time.sleep(0.05)
        fail(f"no {needle} notification in {timeout} s")

    def pings(self, start, end):
        return [t for t, text in self.notes if "WATCHDOG=1" in text and start <= t <= end]

    def close(self):
        self.done = True
        self.thread.join()
        self.sock.close()


def wait_value(what, get, want, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if get() == want:
            return
        time.sleep(0.05)
    fail(f"{what} is {get()!r}, not {want!r}, after {timeout} s")


def check_wedged(hvtuned, env, denv):
    """A journald that stops reading (SIGSTOP, its socket full) while hvtuned runs as a service:
    drifts are still repaired and the watchdog still pinged for longer than WatchdogSec, SIGTERM
    still restores every original within 5 s; the entries journald had no room for and that did
    not fit in hvtuned's queue are counted, and the count reaches the journal once it reads."""
    scale = 10 if os.environ.get("HVTUNED_TEST_VALGRIND") else 1
    watchdog = 2.0 * scale
    journald = start_journald(env)
    manager = FakeManager("/run/hvtuned-notify")
    originals = tuned_values()
    # stderr is journald's stream here as under systemd: a stream socket, read by the test
    # only after the exit.
    stream, stream_peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    st = os.fstat(stream.fileno())
    daemon = subprocess.Popen(daemon_argv(hvtuned), stderr=stream.fileno(),
                              env=dict(denv, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}",
                                       NOTIFY_SOCKET="/run/hvtuned-notify", WATCHDOG_USEC=str(int(watchdog * 1e6))))
    stream.close()
    pid = str(daemon.pid)
    try:
        manager.wait("READY=1", 30 * scale)
        wait_for("the start-up pass of the wedged run", f"_PID={pid}", f"MESSAGE_ID={STARTED}")

        journald.send_signal(signal.SIGSTOP)
        wedged = time.monotonic()
        filled = fill_socket(JOURNAL_SOCKET)
        # State dumps: more entries than hvtuned's queue holds, with journald not reading.
        for _ in range(300):
            daemon.send_signal(signal.SIGUSR1)
            time.sleep(0.005 * scale)
        for name in ("sdb", "sdc"):
            with open(disk(name) + "/queue/scheduler", "w") as f:
                f.write("none mq-deadline kyber [bfq] \n")
            wait_value(f"{name}'s scheduler while journald is stopped", lambda: scheduler(name), "none", 10 * scale)
        while time.monotonic() < wedged + 1.5 * watchdog:
            time.sleep(0.1)
        resumed = time.monotonic()
        pings = [wedged] + manager.pings(wedged, resumed) + [resumed]
        gap = max(b - a for a, b in zip(pings, pings[1:]))
        if gap >= watchdog:
            fail(f"no watchdog ping for {gap:.2f} s (WatchdogSec {watchdog} s) while journald was stopped")
        print(f"ok: journald stopped for {resumed - wedged:.1f} s ({filled} datagrams filled its socket): "
              f"sdb and sdc repaired, {len(pings) - 2} pings, none more than {gap:.2f} s apart")

        journald.send_signal(signal.SIGCONT)
        deadline = time.monotonic() + 30 * scale
        while not (dropped := [e for e in journal(f"_PID={pid}", "PRIORITY=4") if "HVTUNED_DROPPED" in e]):
            if time.monotonic() > deadline:
                fail("no entry with the count of dropped entries once journald read again")
            time.sleep(0.1)
        if len(dropped) != 1 or int(dropped[0]["HVTUNED_DROPPED"]) < 1 or dropped[0]["PRIORITY"] != "4" or \
                dropped[0]["MESSAGE"] != f"Dropped {dropped[0]['HVTUNED_DROPPED']} log entries that journald " \
                                         "did not read in time":
            fail(f"dropped entries {dropped}")
        # The queue was full of state dumps when the repairs came: dumps gave way, not repairs.
        repaired = journal(f"_PID={pid}", f"MESSAGE_ID={REPAIRED}")
        if sorted(e["HVTUNED_DEVICE"] for e in repaired) != ["sdb", "sdc"]:
            fail(f"the repairs made while journald was stopped are not all stored: {repaired}")
        print(f"ok: once journald read again: {dropped[0]['MESSAGE']}; {len(repaired)} repairs stored, "
              f"{len(journal(f'_PID={pid}', f'MESSAGE_ID={STATE_SUMMARY}'))} state dumps")

        # Stopped again: SIGTERM is obeyed, every original back, in time.
        journald.send_signal(signal.SIGSTOP)
        fill_socket(JOURNAL_SOCKET)
        stopping = time.monotonic()
        daemon.terminate()
        try:
            rc = daemon.wait(timeout=5 * scale)
        except subprocess.TimeoutExpired:
            fail(f"hvtuned did not exit within {5 * scale} s of SIGTERM while journald was stopped")
        took = time.monotonic() - stopping
        if rc != 0:
            fail(f"hvtuned exited with {rc} while journald was stopped")
        check_valgrind(pid)
        if tuned_values() != originals:
            fail(f"after stop {tuned_values()}, want the originals {originals}")
        manager.wait("STOPPING=1", 1)
        stream_peer.setblocking(False)
        try:
            said = stream_peer.recv(65536).decode()
        except BlockingIOError:
            said = ""
        if not said.startswith("<4>Dropped ") or not said.endswith(" log entries that journald did not read "
                                                                    "before exit\n"):
            fail(f"the stream says {said!r}, not the count of entries dropped at exit")
        print(f"ok: SIGTERM obeyed in {took * 1000:.0f} ms with journald stopped, the originals restored; "
              f"on the stream: {said.strip()}")
    finally:
        if daemon.poll() is None:
            daemon.kill()
        journald.send_signal(signal.SIGCONT)
        journald.terminate()
        journald.wait(timeout=30)
        manager.close()
        stream_peer.close()


def main():
    hvtuned, testbed, emulator, manager, faults, messages, v6_testbed = sys.argv[1:8]
    load_message_ids(messages)
    if len(sys.argv) > 8 and sys.argv[8] == "--inside":
        inside(hvtuned, testbed, emulator, manager, faults, v6_testbed)
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
    sys.exit(subprocess.run(["unshare", "--mount", sys.executable, __file__, hvtuned, testbed, emulator,
                             manager, faults, messages, v6_testbed, "--inside"]).returncode)


if __name__ == "__main__":
    main()
