#!/usr/bin/env python3
"""Every system call and allocation hvtuned makes may fail at any point of its life.

    sweep.py BUILD_DIR [--sample N] [--seed S] [--jobs J] [--table FILE] [--only FUNC] [--testbed NAME] [--restore]

One life of the daemon on the Azure Gen2 testbed: start and READY=1, a drift repaired (a
distro rule's bfq on sdc, found by the periodic check), a knock-on put back (device/timeout
moves queue/io_timeout), a reload that changes values, SIGUSR1, SIGTERM. With --testbed
azure-v6, the same life on Azure's NVMe disks: the platform defaults (io_timeout 240000, the
read-ahead ceiling) applied and put back, and the drift is the accelerator's read-ahead of
65536 come back on nvme0n2. A first life, with
nothing failing, lists its points (tests/faults/inject.c: a function, its call site, the path
it was about). Then, for each point, a life where it fails (at its first occurrence, at its
last, and from its first on, each with an errno that call meets for real), followed by a
clean life on the same runtime directory. Each faulty life must keep these:
  - hvtuned never dies of a signal;
  - it obeys SIGTERM within 5 s, or exits by itself at start, saying why on stderr;
  - the manager is told: READY=1, the reload's RELOADING=1 and READY=1, STOPPING=1 (a send
    that fails once is tried again);
  - an original it did not put back is said on stderr (the disk or the driver, and what went
    wrong), and its record is kept: after the clean life every attribute of every device and
    the driver's parameter is exactly what it was before the faulty life (an Azure NVMe
    namespace's I/O timeout under 120 s excepted: a stop leaves hvtuned's 240000 there);
  - `hvtuned --status` (with the same fault), run while it runs and `--status --json` once it
    has stopped, never dies of a signal or hangs, and either reports (valid JSON) or exits 1
    saying why on stderr.
A point whose life breaks one of these is run again before it counts (timing: umockdev's
thread). Without --sample, every point; --sample N takes N of them, chosen with --seed.
--table writes the results as a Markdown table (docs/faults.md). Needs root (the testbed's
files are root's) and umockdev-run; exits 77 without them.

With --restore, the life is `hvtuned --restore` after a daemon killed with SIGKILL once ready
(its tuned values and its records left behind), and the points are those of --restore
(restore_points(), restore_one()). Each faulty --restore must: never die of a signal, end
within RESTORE_WAIT s with 0, 1 (refused) or 2 (a record kept), saying why when not 0; leave
every original it did not put back with its record still there and said (the disk or the
driver named on a line that says kept, failed or cannot); and leave nothing tuned when it
exits 0. The clean --restore that follows on the same directory must exit 0, with every
attribute and the driver's parameter back and no record left.
"""
import argparse
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

SKIP = 77
CONFIG = ('queue = { scheduler = "none"; nr_requests = 128; };\ndevice = { timeout = 300; };\n'
          'verify_interval = 1;\nmetrics_file = "%s/metrics/hvtuned.prom";\n')
RELOADED = CONFIG.replace("nr_requests = 128;", "nr_requests = 128; read_ahead_kb = 1024;")
# Per testbed: the disk whose drift the periodic check repairs, the attribute, what a neighbour
# writes there and what hvtuned's repair shows.
DRIFT = {"azure-gen2": ("sdc", "queue/scheduler", "none mq-deadline kyber [bfq] \n", "[none]"),
         "azure-v6": ("nvme0n2", "queue/read_ahead_kb", "65536\n", "128")}


def disk_dir(root, name):
    """The syspath of the block disk name below root's sys/devices (relative to root)."""
    for d, dirs, _ in os.walk(os.path.join(root, "sys/devices")):
        if os.path.basename(d) == name and "queue" in dirs:
            return os.path.relpath(d, root)
    raise SystemExit(f"sweep.py: no disk {name} in the testbed")
WAIT_READY, WAIT_STOP = 15, 5

# Errnos each call meets for real: opens run out of descriptors or are refused, sysfs answers
# for a disk that went away or a kernel that refuses the value, the runtime directory's file
# system fills up or turns read-only, sockets meet a manager gone or short of memory.
SYSFS = {"open": ["ENOENT", "ENODEV", "ENXIO", "EACCES", "EMFILE"],
         "read": ["ENODEV", "EIO", "EBUSY", "ENXIO"],
         "write": ["EINVAL", "EBUSY", "ENODEV", "EIO", "ENXIO"]}
FILES = {"open": ["EMFILE", "ENFILE", "EACCES", "ENOMEM", "ENOSPC", "EROFS"],
         "read": ["EIO"],
         "write": ["ENOSPC", "EIO", "EROFS"]}
OTHER = {"fsync": ["EIO", "ENOSPC"], "renameat": ["EROFS", "EIO", "ENOSPC"], "unlinkat": ["EROFS", "EIO"],
         "mkdir": ["EROFS", "ENOSPC", "EACCES"], "fchmod": ["EROFS", "EIO"],
         "fstat": ["EIO", "ENOMEM"], "fstatat": ["EIO", "ENOMEM", "EACCES"], "stat": ["EIO", "ENOMEM", "EACCES"],
         "lstat": ["EIO", "EACCES"], "readlinkat": ["EIO", "EACCES", "ENOENT"], "fdopendir": ["ENOMEM", "EMFILE"],
         "flock": ["ENOLCK", "EINTR"], "memfd_create": ["EMFILE", "ENOMEM"], "socket": ["EMFILE", "ENOBUFS"],
         "connect": ["ECONNREFUSED", "EAGAIN"], "send": ["EAGAIN", "ECONNREFUSED"],
         "sendmsg": ["ECONNREFUSED", "EAGAIN", "ENOBUFS", "EINTR"], "recvmsg": ["ENOBUFS", "EINTR"],
         "epoll_ctl": ["ENOMEM", "ENOSPC"], "signalfd": ["EMFILE", "ENOMEM"], "getrandom": ["EAGAIN", "ENOSYS"],
         "malloc": ["ENOMEM"], "calloc": ["ENOMEM"], "realloc": ["ENOMEM"], "reallocarray": ["ENOMEM"]}
# These come once: a call that answers them for ever is no system hvtuned could run on.
ONCE_ONLY = {"EINTR", "EAGAIN"}


def errnos_for(func, path):
    kind = {"open": "open", "openat": "open", "pread": "read"}.get(func, func)
    if kind in SYSFS:
        return (SYSFS if path.startswith("/sys") else FILES)[kind]
    return OTHER.get(func, ["EIO"])


class Notify:
    """The service manager's socket, read as systemd would: every datagram, in order."""
    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.seen = []

    def wait(self, needle, timeout, proc=None, after=0):
        """The index of the first message from after on holding needle, or None."""
        deadline = time.monotonic() + timeout
        while True:
            for i in range(after, len(self.seen)):
                if needle in self.seen[i]:
                    return i
            left = deadline - time.monotonic()
            if left <= 0 or (proc and proc.poll() is not None and not self._more(0)):
                return None
            self._more(min(left, 0.1))

    def _more(self, timeout):
        if timeout > 0:
            self.sock.settimeout(timeout)
        else:
            self.sock.setblocking(False)
        try:
            self.seen.append(self.sock.recv(65536).decode(errors="replace"))
            return True
        except (BlockingIOError, socket.timeout):
            return False

    def close(self):
        self.sock.close()


# An Azure NVMe namespace's (one behind VMBus's PCI) I/O timeout under the host's 120 s retry window is never put back
# (hvtuned(8), SIGNALS): a stop leaves hvtuned's 240000 there, and a clean life ends with it.
NVME_HOST_RETRY_MS, NVME_TIMEOUT_MS = 120000, "240000"


def left_at_stop(path, value):
    """What a stop leaves in path whose original is value."""
    if "/VMBUS:" in path and "/nvme/" in path and path.endswith("/queue/io_timeout") and value.isdigit() \
            and int(value) < NVME_HOST_RETRY_MS:
        return NVME_TIMEOUT_MS
    return value


def values(root):
    """Every attribute file of the testbed's devices and of the driver: path -> value, with a
    scheduler list read as its active name."""
    out = {}
    for top in ("sys/devices", "sys/module/hv_storvsc"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                p = os.path.join(d, name)
                if os.path.islink(p) or name == "uevent":
                    continue
                try:
                    with open(p, errors="replace") as f:
                        v = f.read().strip()
                except OSError:
                    continue
                m = re.search(r"\[([^\]]+)\]", v)
                out[os.path.relpath(p, root)] = m.group(1) if m else v
    return out


def subject(root, path):
    """What hvtuned's messages call the owner of an attribute file: its disk (sdc, for a LUN's
    device/ attributes too), or hv_storvsc."""
    m = re.search(r"/block/(sd[a-z]+)/", path)
    if m:
        return m.group(1)
    if "hv_storvsc" in path:
        return "hv_storvsc"
    try:
        return os.listdir(os.path.join(root, os.path.dirname(path), "block"))[0]
    except (OSError, IndexError):
        return os.path.basename(os.path.dirname(path))


def gone(proc, said):
    """Why proc is gone, when it is: a signal, or an exit and the last thing it said."""
    rc = proc.poll()
    if rc is None:
        return None
    if rc < 0:
        return f"died of signal {-rc}"
    last = said().strip().splitlines()[-1:] or [""]
    return f"exited with {rc}: {last[0][:200]}"


# Where a library, not hvtuned, fails its own allocation: libconfig (1.5 to 1.7) uses what
# calloc() and realloc() return unchecked, in config_init() and its parser, and dies of
# SIGSEGV; its flex scanner, out of memory, says so and calls exit(2). Nothing hvtuned does
# can catch either; the table says so, and such a point does not fail the sweep.
def external(inj, why):
    func, site = inj[0], inj[1]
    return func in ("malloc", "calloc", "realloc", "reallocarray") and site.startswith("libconfig+") and \
        bool(why) and ("died of signal 11" in why or "out of dynamic memory" in why)


def pristine(testbed, kernel_tar):
    """The testbed's files, with its kernel's (BTF, osrelease), made once: each life starts on
    a copy of them."""
    root = os.path.join(tempfile.mkdtemp(prefix="hvtuned-faults-tb."), "tb")
    subprocess.run(["umockdev-run", "-d", testbed, "--", "sh", "-c", f'cp -a "$UMOCKDEV_DIR" {root}'],
                   check=True, env=Life.env_base())
    subprocess.run(["tar", "-C", root, "-xf", kernel_tar], check=True)
    return root


class Life:
    def __init__(self, build, testbed_root, drift):
        self.build = build
        self.drift = drift
        self.dir = tempfile.mkdtemp(prefix="hvtuned-faults.")
        os.chmod(self.dir, 0o755)
        self.root = os.path.join(self.dir, "tb")
        subprocess.run(["cp", "-a", testbed_root, self.root], check=True)
        for sub in ("run", "metrics"):
            os.mkdir(os.path.join(self.dir, sub), 0o755)
        self.config = os.path.join(self.dir, "hvtuned.conf")
        self.write_config(CONFIG)
        self.originals = values(self.root)

    @staticmethod
    def env_base():
        return {k: v for k, v in os.environ.items()
                if k not in ("LD_PRELOAD", "UMOCKDEV_DIR", "NOTIFY_SOCKET", "JOURNAL_STREAM", "WATCHDOG_USEC")}

    def write_config(self, text):
        with open(self.config, "w") as f:
            f.write(text % self.dir)
        os.chmod(self.config, 0o644)

    def spawn(self, tag, extra, args=None):
        emulate = os.path.join(self.build, "tests", "emulate", "hvtuned-sysfs-kernel.so")
        inject = os.path.join(self.build, "tests", "faults", "hvtuned-inject.so")
        notify = Notify(os.path.join(self.dir, f"notify-{tag}"))
        err = open(os.path.join(self.dir, f"stderr-{tag}"), "w+")
        env = dict(self.env_base(), LD_PRELOAD=f"{inject}:{emulate}:libumockdev-preload.so.0",
                   UMOCKDEV_DIR=self.root, RUNTIME_DIRECTORY=os.path.join(self.dir, "run"),
                   NOTIFY_SOCKET=notify.path, WATCHDOG_USEC="2000000", HVTUNED_INJECT_STRIP=self.dir, **extra)
        proc = subprocess.Popen([os.path.join(self.build, "daemon", "hvtuned")] + (args or ["-c", self.config]),
                                env=env, stdout=subprocess.DEVNULL, stderr=err)
        self.extra = extra
        return proc, notify, err

    def check_status(self, when, json_form=False):
        """hvtuned --status in this life, under the daemon's fault (not its recording, whose
        points are the daemon's): what went wrong with it, or None."""
        emulate = os.path.join(self.build, "tests", "emulate", "hvtuned-sysfs-kernel.so")
        inject = os.path.join(self.build, "tests", "faults", "hvtuned-inject.so")
        extra = {k: v for k, v in self.extra.items() if k != "HVTUNED_INJECT_RECORD"}
        if "HVTUNED_INJECT_HIT" in extra:
            extra["HVTUNED_INJECT_HIT"] = os.path.join(self.dir, "hit-status")
        env = dict(self.env_base(), LD_PRELOAD=f"{inject}:{emulate}:libumockdev-preload.so.0",
                   UMOCKDEV_DIR=self.root, RUNTIME_DIRECTORY=os.path.join(self.dir, "run"),
                   HVTUNED_INJECT_STRIP=self.dir, **extra)
        args = [os.path.join(self.build, "daemon", "hvtuned"), "--status", "-c", self.config]
        try:
            out = subprocess.run(args + (["--json"] if json_form else []), env=env, capture_output=True,
                                 timeout=WAIT_READY, text=True, errors="replace")
        except subprocess.TimeoutExpired:
            return f"--status {when}: no answer within {WAIT_READY} s"
        if out.returncode < 0:
            return f"--status {when}: died of signal {-out.returncode}"
        if out.returncode != 0:
            return None if out.returncode == 1 and out.stderr.strip() else \
                f"--status {when}: exit {out.returncode} saying {out.stderr.strip()[-200:]!r}"
        if not json_form:
            return None if out.stdout.startswith("hvtuned is") else f"--status {when}: {out.stdout[:200]!r}"
        import json
        try:
            json.loads(out.stdout)
        except ValueError as e:
            return f"--status --json {when}: no JSON ({e}): {out.stdout[:200]!r}"
        return None

    def live(self, tag, extra, faulty, untold=False):
        """One life; what went wrong with it, or None. untold: the manager cannot be told
        anything (its socket fails for good), so nothing is expected on it."""
        proc, notify, err = self.spawn(tag, extra)
        try:
            return self._live(proc, notify, err, faulty, untold)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            notify.close()
            err.close()

    def _live(self, proc, notify, err, faulty, untold):
        def said():
            err.seek(0)
            return err.read()

        if untold:
            # Nothing to wait for: the start is over once the status would have been sent.
            ready = notify.wait("READY=1", 2, proc)
            if proc.poll() is None:
                ready = ready or 0
        else:
            ready = notify.wait("READY=1", WAIT_READY, proc)
        if ready is None:
            if proc.poll() is None:
                return f"no READY=1 within {WAIT_READY} s, and still running"
            rc = proc.returncode
            if rc < 0:
                return f"died of signal {-rc} at start"
            if not faulty:
                return f"a clean life exited with {rc} at start: {said()[-300:]}"
            if rc == 0 or not said().strip():
                return f"exited with {rc} at start without READY=1 and said nothing"
            return None
        if faulty:
            # A neighbour's value (a distro rule's bfq on sdc, the accelerator's read-ahead): the
            # periodic check (verify_interval = 1) repairs it.
            name, attr, theirs, ours = self.drift
            path = os.path.join(self.root, disk_dir(self.root, name), attr)
            with open(path, "w") as f:
                f.write(theirs)
            deadline = time.monotonic() + 1.5
            while time.monotonic() < deadline:
                time.sleep(0.05)
                with open(path) as f:
                    if ours in f.read():
                        break
            self.write_config(RELOADED)
            proc.send_signal(signal.SIGHUP)
            if untold:
                time.sleep(0.5)
            reloading = 0 if untold else notify.wait("RELOADING=1", WAIT_STOP, proc, ready + 1)
            if reloading is None:
                return gone(proc, said) or "no RELOADING=1 after SIGHUP"
            if not untold and notify.wait("READY=1", WAIT_STOP, proc, reloading) is None:
                return gone(proc, said) or "no READY=1 after RELOADING=1"
            proc.send_signal(signal.SIGUSR1)
            time.sleep(0.2)
            why = self.check_status("while it runs")
            if why:
                return why
        stopping = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(timeout=WAIT_STOP)
        except subprocess.TimeoutExpired:
            return f"did not obey SIGTERM within {WAIT_STOP} s"
        if rc < 0:
            return f"died of signal {-rc}"
        if not untold and notify.wait("STOPPING=1", 0.5) is None:
            return f"no STOPPING=1 (exit {rc} after {time.monotonic() - stopping:.1f} s)"
        if rc != 0:
            return f"exited with {rc} on SIGTERM"
        return self.check_status("after it stopped", True) if faulty else None

    def check_said(self, text):
        """An original not put back is said: its owner named on a line saying what failed."""
        now = values(self.root)
        for path, value in sorted(now.items()):
            if value in (self.originals.get(path), left_at_stop(path, self.originals.get(path) or "")):
                continue
            who = subject(self.root, path)
            lines = [l for l in text.splitlines() if who in l and re.search(r"fail|cannot|Cannot|not written", l)]
            if not lines:
                return f"{path} is {value!r}, not {self.originals.get(path)!r}, and nothing said so about {who}"
        return None

    def check_restored(self):
        now = values(self.root)
        diff = [f"{p}: {now.get(p)!r} (was {v!r})" for p, v in sorted(self.originals.items())
                if now.get(p) != left_at_stop(p, v)]
        diff += [f"{p}: new" for p in sorted(set(now) - set(self.originals))]
        return f"after the clean life: {'; '.join(diff[:4])}" if diff else None

    def done(self):
        shutil.rmtree(self.dir, ignore_errors=True)


RESTORE_WAIT = 15


def killed(life):
    """A daemon's life cut short by SIGKILL once it is ready: its tuned values and its records
    stay behind for --restore. What went wrong, or None."""
    proc, notify, err = life.spawn("killed", {})
    try:
        if notify.wait("READY=1", WAIT_READY, proc) is None:
            return "the daemon to be killed did not get ready"
        proc.kill()
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        notify.close()
        err.close()
    return None if values(life.root) != life.originals else "the killed daemon left nothing to restore"


def restore_run(life, tag, extra):
    """hvtuned --restore: its exit status (None when it hung, and was killed) and what it said."""
    proc, notify, err = life.spawn(tag, extra, ["--restore"])
    try:
        try:
            rc = proc.wait(timeout=RESTORE_WAIT)
        except subprocess.TimeoutExpired:
            rc = None
        err.seek(0)
        return rc, err.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        notify.close()
        err.close()


def records_left(life):
    run = os.path.join(life.dir, "run")
    return sorted(n for n in os.listdir(run) if not n.startswith("."))


def restore_check(life, rc, said):
    """The invariants of a faulty --restore (see the module's text)."""
    if rc is None:
        return f"--restore did not end within {RESTORE_WAIT} s"
    if rc < 0:
        return f"--restore died of signal {-rc}"
    if rc not in (0, 1, 2) or (rc != 0 and not said.strip()):
        return f"--restore exited with {rc}: {said.strip()[-200:]!r}"
    now, left = values(life.root), records_left(life)
    for path, value in sorted(now.items()):
        if life.originals.get(path) == value:
            continue
        who = subject(life.root, path)
        if rc == 0:
            return f"--restore exited with 0, but {path} is {value!r}, not {life.originals.get(path)!r}"
        if who not in left:
            return f"{path} is {value!r}, not {life.originals.get(path)!r}, and {who}'s record is gone"
        # Refused as a whole (1): one line says why, about no disk in particular.
        if rc == 2 and not [l for l in said.splitlines() if who in l and re.search(r"kept|fail|cannot|Cannot", l)]:
            return f"{path} is {value!r}, not {life.originals.get(path)!r}, and nothing said so about {who}"
    return None


def restore_points(args):
    """The points of --restore after a killed daemon, nothing failing."""
    life = Life(args.build, args.root, args.drift)
    try:
        rec = os.path.join(life.dir, "points")
        why = killed(life)
        if not why:
            rc, said = restore_run(life, "record", {"HVTUNED_INJECT_RECORD": rec})
            why = None if rc == 0 else f"exited with {rc}: {said.strip()[-300:]}"
        why = why or life.check_restored()
        if why:
            sys.exit(f"FAIL: --restore without faults: {why}")
        with open(rec) as f:
            return [(func, site, path, int(count))
                    for func, site, path, count in (line.rstrip("\n").split("\t") for line in f)]
    finally:
        life.done()


def restore_one(args, inj):
    """One faulty --restore after a killed daemon, then a clean one on the same directory."""
    import errno as errno_mod
    func, site, path, n, err, mode = inj
    for attempt in range(2):
        life = Life(args.build, args.root, args.drift)
        try:
            hit = os.path.join(life.dir, "hit")
            spec = "\t".join([func, site, path, str(n), str(getattr(errno_mod, err)), mode])
            why = killed(life)
            if not why:
                rc, said = restore_run(life, "faulty", {"HVTUNED_INJECT": spec, "HVTUNED_INJECT_HIT": hit})
                why = restore_check(life, rc, said)
            if not why:
                rc, said = restore_run(life, "clean", {})
                why = (f"the clean --restore exited with {rc}: {said.strip()[-200:]!r}" if rc != 0 else
                       life.check_restored() or
                       (f"records left after the clean --restore: {records_left(life)}" if records_left(life)
                        else None))
            reached = os.path.exists(hit)
        finally:
            life.done()
        if not why:
            return inj, reached, None
    return inj, reached, why


def record(args):
    life = Life(args.build, args.root, args.drift)
    try:
        rec = os.path.join(life.dir, "points")
        why = life.live("record", {"HVTUNED_INJECT_RECORD": rec}, True)
        if why:
            sys.exit(f"FAIL: the life without faults: {why}")
        points = []
        with open(rec) as f:
            for line in f:
                func, site, path, count = line.rstrip("\n").split("\t")
                points.append((func, site, path, int(count)))
        return points
    finally:
        life.done()


def injections(points):
    """Per point: its first occurrence once, its last once, and from its first on."""
    out = []
    for i, (func, site, path, count) in enumerate(points):
        errs = errnos_for(func, path)
        for j, (n, mode) in enumerate([(1, "once"), (count, "once"), (1, "from")]):
            if j == 1 and count == 1:
                continue
            err = errs[(i + j) % len(errs)]
            if mode == "from" and err in ONCE_ONLY:
                err = next((e for e in errs if e not in ONCE_ONLY), None)
                if err is None:
                    continue
            out.append((func, site, path, n, err, mode))
    return out


def run_one(args, inj):
    import errno as errno_mod
    func, site, path, n, err, mode = inj
    for attempt in range(2):
        life = Life(args.build, args.root, args.drift)
        try:
            hit = os.path.join(life.dir, "hit")
            spec = "\t".join([func, site, path, str(n), str(getattr(errno_mod, err)), mode])
            # The manager's socket failing for good: nothing can reach it, and hvtuned is to
            # go on untold (said once), not to stop.
            untold = mode == "from" and func in ("socket", "connect", "send", "sendmsg") and path == "socket:1:2"
            why = life.live("faulty", {"HVTUNED_INJECT": spec, "HVTUNED_INJECT_HIT": hit}, True, untold)
            with open(os.path.join(life.dir, "stderr-faulty")) as f:
                said = f.read()
            if not why:
                why = life.check_said(said)
            if not why:
                why = life.live("clean", {}, False) or life.check_restored()
            reached = os.path.exists(hit)
        finally:
            life.done()
        if not why or external(inj, why):
            return inj, reached, why if why else None
    return inj, reached, why


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--table")
    ap.add_argument("--only")
    ap.add_argument("--testbed", default="azure-gen2", choices=sorted(DRIFT))
    ap.add_argument("--restore", action="store_true", help="the life of hvtuned --restore after kill -9")
    args = ap.parse_args()
    if os.geteuid() != 0 or not shutil.which("umockdev-run"):
        print("SKIP: needs root and umockdev-run")
        return SKIP
    args.build = os.path.abspath(args.build)
    args.drift = DRIFT[args.testbed]
    args.kernel_tar = os.path.join(args.build, "tests", "testbeds", args.testbed + ".kernel.tar")
    args.testbed = os.path.join(args.build, "tests", "testbeds", args.testbed + ".umockdev")
    args.root = pristine(args.testbed, args.kernel_tar)
    try:
        return sweep(args)
    finally:
        shutil.rmtree(os.path.dirname(args.root), ignore_errors=True)


def sweep(args):
    started = time.monotonic()
    points = (restore_points if args.restore else record)(args)
    todo = injections(points)
    if args.only:
        todo = [t for t in todo if t[0] == args.only]
    if args.sample:
        todo = random.Random(args.seed).sample(todo, min(args.sample, len(todo)))
    print(f"{len(points)} points in a life ({sum(p[3] for p in points)} calls); {len(todo)} faulty lives to run",
          flush=True)
    results = []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for inj, reached, why in pool.map(lambda t: (restore_one if args.restore else run_one)(args, t), todo):
            results.append((inj, reached, why))
            tag = "libconfig's" if external(inj, why) else "FAIL" if why else "ok" if reached else "ok (not reached)"
            print(f"{tag}: {inj[0]} {inj[1]} {inj[2]} #{inj[3]} {inj[4]} {inj[5]}" + (f": {why}" if why else ""),
                  flush=True)
    failed = [r for r in results if r[2] and not external(r[0], r[2])]
    if args.table:
        write_table(args.table, points, results, time.monotonic() - started)
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def write_table(path, points, results, seconds):
    by_func = {}
    for inj, reached, why in results:
        func, err = inj[0], inj[4]
        row = by_func.setdefault(func, {"points": set(), "lives": 0, "reached": 0, "errnos": set(), "failed": 0,
                                        "external": 0})
        row["lives"] += 1
        row["reached"] += reached
        row["errnos"].add(err)
        row["external" if external(inj, why) else "failed"] += bool(why)
    for func, site, where, _ in points:
        if func in by_func:
            by_func[func]["points"].add((site, where))
    with open(path, "w") as f:
        f.write("| call | points | faulty lives | fault reached | errnos | broke an invariant | libconfig's own |\n"
                "|---|---:|---:|---:|---|---:|---:|\n")
        for func in sorted(by_func):
            r = by_func[func]
            f.write(f"| {func} | {len(r['points'])} | {r['lives']} | {r['reached']} | "
                    f"{', '.join(sorted(r['errnos']))} | {r['failed']} | {r['external']} |\n")
        f.write(f"\n{len(points)} points, {len(results)} faulty lives, {seconds:.0f} s.\n\n")
        for inj, _, why in results:
            if why:
                f.write(f"- {'libconfig: ' if external(inj, why) else ''}{' '.join(map(str, inj))}: {why}\n")


if __name__ == "__main__":
    sys.exit(main())
