#!/usr/bin/env python3
"""hvtuned beside the real TuneD (Debian's tuned 2.20), one owner per attribute.

TuneD's virtual-guest (what `tuned-adm recommend` picks on any VM) includes
throughput-performance, whose `[disk] readahead=>4096` raises a disk's read_ahead_kb to 4096
where it is lower: at TuneD's start, at every profile load and at a disk's add, never on a
timer, and with no uevent. hvtuned wants at most 128 on Azure's disks. Each case runs both
programs on a copy of a testbed, in one of two orders:

  first   TuneD started (the usual boot order), then hvtuned, then `tuned-adm profile P`;
  second  hvtuned started, then TuneD.

With P = virtual-guest, TuneD raises the managed disks to 4096 after hvtuned tuned them, and
hvtuned's periodic re-check (verify_interval = 1 here) repairs each one once, back to 128: the
end state is hvtuned's, and the repair is the only entry that says so. TuneD's own log (--debug)
names each of its writes: the repair's HVTUNED_FROM is TuneD's value on a disk TuneD wrote.
With P = the profile hvtuned ships (tuned/hvtuned-virtual-guest: virtual-guest with the disk
plugin off), TuneD writes no disk and hvtuned repairs nothing: one owner per attribute. There
TuneD starts as on a VM where nobody chose its profile (automatic mode, virtual-guest loaded
last): the recommendation hvtuned ships (tuned/recommend.d/40-hvtuned.conf) makes it load P,
as virt-what says "hyperv" (a stand-in on TuneD's PATH says so here). Those
four cases on the Azure v6 VM (NVMe accelerator namespaces at the kernel's 65536, a Direct Disk
at 128, decoys). The fifth, storvsc-7.3, is the one a value cannot tell: on 7.3 (from 6.17) the
kernel's own read-ahead for a rotational disk without an optimal I/O size is 2 x max_sectors_kb,
4096 on Azure's Standard disks (max_sectors_kb 2048, as set here on the Azure VM's storvsc
disks), which is TuneD's value too. TuneD started after hvtuned writes it; hvtuned repairs it
as another writer's, not the kernel's, as TuneD is alive (daemon/writer.h).

Everything runs in a private mount namespace: the testbed's tree bound over /sys (both
programs reach it with plain system calls, as bench/run runs TuneD, through the bench's
preload: libudev's fstatfs check, and the kernel's answers to writes), a tmpfs over /run (a
private system bus for tuned-adm, TuneD's pid file and state, hvtuned's records, and a journal
socket this test reads), directories of the test's over /etc/tuned (TuneD's configuration,
the shipped profile as /etc/tuned/NAME and the recommendation in /etc/tuned/recommend.d) and
/proc/sys (TuneD's sysctls land in files there). TuneD's PATH has the stand-in virt-what alone:
it runs no other program (hdparm, systemctl). So neither the host's devices, nor its sysctls,
TuneD state or D-Bus are touched.

Needs root, unshare(1), umockdev-run, dbus-daemon and TuneD: exits 77 (skip) without them.

    test-tuned.py HVTUNED PRELOAD TESTBEDS_DIR PROFILE_DIR RECOMMEND MESSAGES_H [CASE...]
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

SKIP = 77
TUNED = "/usr/sbin/tuned"
TUNED_ADM = "/usr/sbin/tuned-adm"
DBUS_DAEMON = "/usr/bin/dbus-daemon"
JOURNAL_SOCKET = "/run/systemd/journal/socket"
# The re-check's interval in this test; the end state is read after two of them at least.
VERIFY_INTERVAL = 1
# The VMs: the testbed (tests/testbeds), the kernel the shim plays and hvtuned learns
# ($HVTUNED_TEST_KERNEL; None: the shim's default), max_sectors_kb set on the managed disks
# (None: the testbed's), the disks hvtuned manages, and disks it leaves alone that TuneD's disk
# plugin takes (whole disks under scsi, virtio, xen or nvme, or with no parent).
V6 = dict(testbed="azure-v6", kernel=None, max_sectors_kb=None,
          # The accelerator's namespaces, which the kernel leaves at 65536, and the Direct Disk.
          managed=("nvme0n1", "nvme0n2", "nvme0n3", "nvme1n1"),
          # QEMU's namespace and the loop devices.
          decoys=("nvme2n1", "loop0", "loop1"))
GEN2_73 = dict(testbed="azure-gen2", kernel="7.3", max_sectors_kb="2048",
               managed=("sda", "sdb", "sdc", "sdd"), decoys=())
# A case: (order, profile, VM); "shipped" is the profile of PROFILE_DIR.
CASES = {"first-virtual-guest": ("first", "virtual-guest", V6),
         "second-virtual-guest": ("second", "virtual-guest", V6),
         "first-shipped": ("first", "shipped", V6),
         "second-shipped": ("second", "shipped", V6),
         "storvsc-7.3": ("second", "virtual-guest", GEN2_73)}
# Its main configuration: a service with its static tuning (no dynamic tuning, no sysctls of
# the system reapplied), on the private system bus so that tuned-adm reaches it. TuneD's default
# configuration but for those.
TUNED_MAIN = """daemon = 1
dynamic_tuning = 0
sleep_interval = 1
update_interval = 10
recommend_command = 1
reapply_sysctl = 0
enable_dbus = 1
enable_unix_socket = 0
"""
# A system bus for this namespace only: TuneD owns com.redhat.tuned on it, and with no polkit
# there TuneD authorizes root's calls by its fallback (its D-Bus exporter's).
BUS_CONF = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=/run/dbus/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"""
# What TuneD's sysctl plugin reads and writes for virtual-guest, as files of /proc/sys here.
SYSCTLS = {"vm/dirty_ratio": "20", "vm/dirty_background_ratio": "10", "vm/swappiness": "60",
           "net/core/somaxconn": "4096", "kernel/numa_balancing": "0"}
REPAIRED = STARTED = None


# What this case started, ended by fail(): they hold the test's output open.
children = []


def fail(msg):
    print("FAIL:", msg, flush=True)
    for p in children:
        if p.poll() is None:
            p.kill()
            p.wait()
    sys.exit(1)


def log(msg):
    print(msg, flush=True)


def load_message_ids(path):
    """The MESSAGE_IDs, from daemon/messages.h itself."""
    global REPAIRED, STARTED
    with open(path) as f:
        ids = dict(re.findall(r'^#define HVT_MESSAGE_(\w+) +"([0-9a-f]{32})"$', f.read(), re.M))
    REPAIRED, STARTED = ids["DRIFT_REPAIRED"], ids["STARTED"]


class Journal:
    """journald's socket as hvtuned finds it (daemon/log.c): each datagram one entry of the
    native protocol. hvtuned escapes every value, so each field is a plain NAME=value line."""
    def __init__(self):
        os.makedirs(os.path.dirname(JOURNAL_SOCKET))
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(JOURNAL_SOCKET)
        self.entries = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        while True:
            try:
                data = self.sock.recv(1 << 20)
            except OSError:
                return
            entry = dict(line.split("=", 1) for line in data.decode(errors="replace").splitlines() if "=" in line)
            with self.cond:
                self.entries.append(entry)
                self.cond.notify_all()

    def match(self, **fields):
        with self.cond:
            return [e for e in self.entries if all(e.get(k) == v for k, v in fields.items())]

    def wait(self, what, timeout=30, **fields):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                found = [e for e in self.entries if all(e.get(k) == v for k, v in fields.items())]
                if found or time.monotonic() > deadline:
                    break
                self.cond.wait(0.1)
        if not found:
            fail(f"no journal entry for {what} ({fields})")
        return found


def read_ahead(name):
    with open(f"/sys/class/block/{name}/queue/read_ahead_kb") as f:
        return f.read().strip()


class Tuned:
    """TuneD in the foreground, as its service runs it but for the log (stderr, --debug: each
    file it writes is named there)."""
    def __init__(self, work, profile, auto):
        """profile selected by an administrator (manual mode), or, auto, virtual-guest loaded
        last in automatic mode: TuneD then loads what it recommends at its start."""
        self.work = work
        self.log_path = os.path.join(work, "tuned.log")
        with open("/etc/tuned/active_profile", "w") as f:
            f.write(("virtual-guest" if auto else profile) + "\n")
        with open("/etc/tuned/profile_mode", "w") as f:
            f.write(("auto" if auto else "manual") + "\n")
        self.p = None

    def start(self, env):
        with open(self.log_path, "a") as log_file:
            self.p = subprocess.Popen(["/usr/bin/python3", "-Es", TUNED, "--debug", "--no-socket"], env=env,
                                      stdout=log_file, stderr=subprocess.STDOUT)
        children.append(self.p)
        self.wait_applied(1)

    def text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def lines(self, pattern):
        """The matches of pattern in TuneD's log, a line each: its log holds each line twice, as
        its own handler and Python's last-resort one write it; this takes its own ("DATE TIME
        LEVEL logger: message")."""
        return re.findall(r"^\d{4}-\d\d-\d\d [\d:,]+ +[A-Z]+ +[\w.]+: " + pattern, self.text(), re.M)

    def applied(self):
        """The profiles TuneD loaded, in order."""
        return self.lines(r"static tuning from profile '([^']*)' applied$")

    def wait_applied(self, n, timeout=60):
        """Until TuneD said n times that a profile's static tuning is applied."""
        deadline = time.monotonic() + timeout
        while len(self.applied()) < n:
            if self.p.poll() is not None or time.monotonic() > deadline:
                fail(f"TuneD {'exited (%s)' % self.p.returncode if self.p.returncode is not None else 'timed out'}"
                     f" before its profile was applied:\n{self.text()[-3000:]}")
            time.sleep(0.05)

    def writes(self, name):
        """The values TuneD wrote to name's read_ahead_kb, in order (tuned/utils/commands.py
        logs each write at debug level)."""
        return self.lines(r"Writing to file: '/sys/block/" + re.escape(name) + r"/queue/read_ahead_kb' < '([^']*)'$")

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            fail("TuneD did not stop within 60 s of SIGTERM")


def hvtuned_start(hvtuned, env, journal):
    with open("/run/hvtuned.conf", "w") as f:
        # The platform defaults (read-ahead at most 128) and the periodic re-check.
        f.write(f"verify_interval = {VERIFY_INTERVAL};\n")
    os.chmod("/run/hvtuned.conf", 0o644)
    stream = open("/run/hvtuned.stderr", "w")
    st = os.fstat(stream.fileno())
    p = subprocess.Popen([hvtuned, "-c", "/run/hvtuned.conf"], stderr=stream,
                         env=dict(env, RUNTIME_DIRECTORY="/run/hvtuned", JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}"))
    stream.close()
    children.append(p)
    journal.wait("hvtuned's start", MESSAGE_ID=STARTED)
    return p


def materialize(testbed, dest):
    """The testbed as a tree of files in dest, with what its kernel has beside its devices (its
    BTF below sys, its osrelease): once a VM, as umockdev takes seconds to load one."""
    subprocess.run(["umockdev-run", "-d", testbed, "--", "sh", "-c", f'cp -a "$UMOCKDEV_DIR" {dest}'], check=True)
    subprocess.run(["tar", "-C", dest, "-xf", testbed[:-len(".umockdev")] + ".kernel.tar"], check=True)


def case(name, hvtuned, preload, trees, profile_dir, recommend):
    """One order, one profile and one VM, in this process's own mount namespace; trees holds
    the VMs materialize() made."""
    order, profile, vm = CASES[name]
    first = order == "first"
    shipped = profile == "shipped"
    profile = os.path.basename(profile_dir) if shipped else profile
    managed, decoys = vm["managed"], vm["decoys"]
    # All on the namespace's own tmpfs over /run: libudev takes a directory for sysfs only
    # where fstatfs() says so, which the preload answers for a tmpfs (bench/bound-sysfs.c).
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/run"], check=True)
    work = "/run/test"
    tb = os.path.join(work, "tb")
    os.makedirs(work)
    subprocess.run(["cp", "-a", os.path.join(trees, vm["testbed"]), tb], check=True)
    if vm["max_sectors_kb"]:
        for d in managed:
            queue = os.path.join(tb, "sys/class/block", d, "queue")
            with open(os.path.join(queue, "max_sectors_kb"), "w") as f:
                f.write(vm["max_sectors_kb"] + "\n")
            # The case holds only where the kernel's rule gives TuneD's value: a rotational
            # disk with no optimal I/O size, read ahead 2 x max_sectors_kb.
            attrs = {}
            for a in ("rotational", "optimal_io_size"):
                with open(os.path.join(queue, a)) as f:
                    attrs[a] = f.read().strip()
            if attrs != {"rotational": "1", "optimal_io_size": "0"} or 2 * int(vm["max_sectors_kb"]) != 4096:
                fail(f"{d} on {vm['kernel']}: {attrs}, max_sectors_kb {vm['max_sectors_kb']}: the kernel's "
                     "read-ahead is not 4096, TuneD's value, and the case tells nothing")
    for rel, value in SYSCTLS.items():
        os.makedirs(os.path.dirname(os.path.join(tb, "proc/sys", rel)), exist_ok=True)
        with open(os.path.join(tb, "proc/sys", rel), "w") as f:
            f.write(value + "\n")
    os.makedirs(os.path.join(work, "etc-tuned"))
    os.makedirs(os.path.join(work, "path"))
    for src, dst in ((tb + "/sys", "/sys"), (tb + "/proc/sys", "/proc/sys"), (work + "/etc-tuned", "/etc/tuned")):
        subprocess.run(["mount", "--bind", src, dst], check=True)
    with open("/etc/tuned/tuned-main.conf", "w") as f:
        f.write(TUNED_MAIN)
    # The shipped profile and recommendation, where TuneD looks for an administrator's:
    # /etc/tuned/NAME, and /etc/tuned/recommend.d, read in one order of names with TuneD's own
    # /usr/lib/tuned/recommend.d/50-tuned.conf.
    shutil.copytree(profile_dir, os.path.join("/etc/tuned", os.path.basename(profile_dir)))
    os.makedirs("/etc/tuned/recommend.d")
    shutil.copy(recommend, "/etc/tuned/recommend.d")
    # virt-what as on Hyper-V and Azure, for TuneD's recommendation.
    with open(os.path.join(work, "path", "virt-what"), "w") as f:
        f.write("#!/bin/sh\necho hyperv\n")
    os.chmod(os.path.join(work, "path", "virt-what"), 0o755)

    journal = Journal()
    os.makedirs("/run/dbus")
    with open(os.path.join(work, "bus.conf"), "w") as f:
        f.write(BUS_CONF)
    bus = subprocess.Popen([DBUS_DAEMON, "--nofork", "--nopidfile", "--config-file=" + os.path.join(work, "bus.conf")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children.append(bus)
    for _ in range(200):
        if os.path.exists("/run/dbus/system_bus_socket"):
            break
        time.sleep(0.02)
    else:
        fail("dbus-daemon did not make its socket")

    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "UMOCKDEV_DIR", "NOTIFY_SOCKET", "JOURNAL_STREAM", "DBUS_SYSTEM_BUS_ADDRESS")}
    # Bound, the testbed's root is /: the kernel's answers to writes are played below it.
    env.update(LD_PRELOAD=preload, UMOCKDEV_DIR="/")
    if vm["kernel"]:
        env["HVTUNED_TEST_KERNEL"] = vm["kernel"]
    tuned = Tuned(work, profile, auto=shipped)
    tuned_env = dict(env, PATH=os.path.join(work, "path"))
    before = {d: read_ahead(d) for d in managed + decoys}

    t0 = time.monotonic()
    if first:
        tuned.start(tuned_env)
        daemon = hvtuned_start(hvtuned, env, journal)
        # The profile loaded again while both run: TuneD's unapply puts back what it found,
        # its apply raises what is lower than 4096, with no uevent.
        r = subprocess.run([TUNED_ADM, "profile", profile], env=dict(env, LD_PRELOAD=""),
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fail(f"tuned-adm profile {profile} exited {r.returncode}: {r.stdout}{r.stderr}")
        tuned.wait_applied(2)
    else:
        daemon = hvtuned_start(hvtuned, env, journal)
        tuned.start(tuned_env)
    t_tuned = time.monotonic()

    # hvtuned's last pass before TuneD's last load was its start; what TuneD wrote after it,
    # the re-check finds within one interval. Two intervals and the repair's pass are waited
    # for when a repair is due; where none is, two intervals show that none comes.
    raised = [d for d in managed if tuned.writes(d) and tuned.writes(d)[-1] == "4096"]
    if shipped:
        time.sleep(2 * VERIFY_INTERVAL + 0.5)
    else:
        for d in raised:
            journal.wait(f"{d}'s repair", timeout=5 * VERIFY_INTERVAL + 5, HVTUNED_DEVICE=d,
                         HVTUNED_ACTION="repair")
    t_end = time.monotonic()
    end = {d: read_ahead(d) for d in managed + decoys}
    loaded = tuned.applied()
    repairs = journal.match(HVTUNED_ACTION="repair")

    daemon.terminate()
    if daemon.wait(timeout=30) != 0:
        fail(f"hvtuned exited with {daemon.returncode}")
    tuned.stop()
    bus.terminate()
    bus.wait(timeout=30)
    with open("/run/hvtuned.stderr") as f:
        stray = f.read()
    if stray:
        fail(f"under the journal nothing belongs on stderr, got:\n{stray}")

    log(f"{name}: TuneD loaded {loaded}; read_ahead_kb before {before}, at the end {end}")
    log(f"{name}: TuneD wrote " + ", ".join(f"{d} {tuned.writes(d)}" for d in managed + decoys))
    log(f"{name}: hvtuned's repairs: " + "; ".join(e.get("MESSAGE", "") for e in repairs))
    log(f"{name}: {t_tuned - t0:.1f} s until TuneD's last load, {t_end - t_tuned:.1f} s more until the end state")

    # The end state: hvtuned's value on every disk it manages, whoever wrote last.
    for d in managed:
        if end[d] != "128":
            fail(f"{d}'s read_ahead_kb is {end[d]} at the end, not hvtuned's 128")
    written = {d for d in managed + decoys if tuned.writes(d)}
    if loaded != [profile] * len(loaded):
        fail(f"TuneD loaded {loaded}, not {profile} alone")
    if shipped:
        # One owner: hvtuned had nothing to repair, as TuneD wrote no disk.
        if repairs:
            fail(f"hvtuned repaired with TuneD's {profile}: " + "; ".join(e.get("MESSAGE", "") for e in repairs))
        if written:
            fail(f"TuneD's {profile} wrote the read-ahead of {sorted(written)}: its disk plugin is on")
        for d in decoys:
            if end[d] != before[d]:
                fail(f"{d}'s read_ahead_kb went from {before[d]} to {end[d]} with TuneD's {profile}")
        return
    # virtual-guest: TuneD raised every managed disk after hvtuned tuned it (they were all at
    # 128 by then), and the decoys, which it keeps.
    if sorted(raised) != sorted(managed):
        fail(f"TuneD's last writes raised {sorted(raised)}, expected every managed disk {list(managed)}")
    for d in decoys:
        if end[d] != "4096":
            fail(f"{d} (not hvtuned's) is at {end[d]}, not TuneD's 4096")
    # Who wrote it: one repair a disk, of TuneD's 4096, found by the periodic re-check (no
    # uevent came), nothing else repaired, and each told as another writer's (a neighbour's
    # MESSAGE_ID, HVTUNED_WRITER=other), not the kernel's: on 7.3 the kernel's own rule gives
    # 4096 too, and TuneD alive (its pid file, its process) is what tells them apart.
    got = sorted((e.get("HVTUNED_DEVICE"), e.get("HVTUNED_ATTR"), e.get("HVTUNED_FROM"), e.get("HVTUNED_TO"),
                  e.get("MESSAGE_ID"), e.get("HVTUNED_WRITER")) for e in repairs)
    want = sorted((d, "queue/read_ahead_kb", "4096", "128", REPAIRED, "other") for d in managed)
    if got != want:
        fail(f"hvtuned's repairs {got}, expected {want}")


def main():
    # Absolute: meson names built files from the build directory, and a relative LD_PRELOAD
    # would be looked for from each program's own directory.
    hvtuned, preload, testbeds, profile_dir, recommend, messages = map(os.path.abspath, sys.argv[1:7])
    load_message_ids(messages)
    if len(sys.argv) > 9 and sys.argv[7] == "--case":
        case(sys.argv[8], hvtuned, preload, sys.argv[9], profile_dir, recommend)
        return
    cases = sys.argv[7:] or CASES
    if os.geteuid() != 0:
        print("SKIP: needs root for a private mount namespace")
        sys.exit(SKIP)
    for tool in ("unshare", "umockdev-run"):
        if not shutil.which(tool):
            print(f"SKIP: needs {tool}")
            sys.exit(SKIP)
    for tool in (TUNED, TUNED_ADM, DBUS_DAEMON):
        if not os.access(tool, os.X_OK):
            print(f"SKIP: needs {tool} (tools/install-deps installs tuned, masked)")
            sys.exit(SKIP)
    for c in cases:
        if c not in CASES:
            fail(f"no case {c}: {', '.join(CASES)}")
    trees = tempfile.mkdtemp(prefix="hvtuned-tuned.")
    try:
        for vm in sorted({CASES[c][2]["testbed"] for c in cases}):
            materialize(os.path.join(testbeds, vm + ".umockdev"), os.path.join(trees, vm))
        for c in cases:
            r = subprocess.run(["unshare", "--mount", sys.executable, __file__, hvtuned, preload, testbeds,
                                profile_dir, recommend, messages, "--case", c, trees])
            if r.returncode != 0:
                sys.exit(r.returncode)
    finally:
        shutil.rmtree(trees)
    print("PASS")


if __name__ == "__main__":
    main()
