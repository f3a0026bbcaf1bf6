"""The periodic check's parts for bench/run --verify (docs/performance.md, "The periodic
check"): a memory cgroup to charge a process's kernel memory to, one check's system calls out
of an `strace -f -p` of the service, and what kept sysfs fds would cost (bench/sysfs-fds).

A check is what the service does between two returns of epoll_wait(2): the timer is
epoll_wait's timeout (daemon/event.c), so each check is one wakeup and its calls end at the
next epoll_wait.
"""
import os
import re
import resource
import subprocess

CALL = re.compile(r'^(?:\d+ +)?(\w+)\(')


def one_check(lines):
    """(system calls of one whole check, by call) in an strace of the idle service with a
    periodic check: from the epoll_wait that woke it (counted) to the next (not), taken
    between the first two epoll_waits of the trace, so a check that strace joined midway is
    left out. None when the trace has no whole check."""
    marks = []
    calls = []
    for line in lines:
        if "resumed>" in line and "epoll_wait" not in line:
            continue
        m = CALL.match(line)
        if not m:
            continue
        if m.group(1) == "epoll_wait":
            marks.append(len(calls))
        calls.append(m.group(1))
    if len(marks) < 2:
        return None
    by = {}
    for c in calls[marks[0]:marks[1]]:
        by[c] = by.get(c, 0) + 1
    return by


def trace_marks(path):
    """How many epoll_waits an strace output holds so far."""
    try:
        with open(path, errors="replace") as f:
            return sum(1 for line in f if "epoll_wait(" in line and "resumed>" not in line)
    except FileNotFoundError:
        return 0


class MemCgroup:
    """A memory cgroup below this process's own: what a process moved into it charges from
    then on (nothing of before moves with it: v1's move_charge_at_immigrate is 0, and v2
    never moves charges). (all, kernel) in KiB: v2's memory.current and memory.stat's
    "kernel" (or "slab" before 5.18); v1's memory.kmem.usage_in_bytes, and for all that
    plus memory.stat's rss and cache (v1's memory.usage_in_bytes counts the per-CPU
    batches charged ahead, 64 pages each, not what is used). Kernel memory a process keeps (a kernfs file's seq_file page,
    its struct file) is charged here and shows in no RSS."""
    def __init__(self, name):
        self.path, self.v2, self.why = None, False, None
        mount, rel = self._find()
        if not mount:
            self.why = "no memory cgroup mounted"
            return
        path = os.path.join(mount, rel.lstrip("/"), name)
        try:
            os.mkdir(path)
        except OSError as e:
            self.why = f"cannot make {path}: {e.strerror}"
            return
        self.path = path

    def _find(self):
        """(mount point, this process's cgroup below it) of the memory controller."""
        mounts = {}
        with open("/proc/self/mountinfo") as f:
            for line in f:
                pre, post = line.split(" - ", 1)
                fstype, _, opts = post.split()[:3]
                mnt = pre.split()[4]
                if fstype == "cgroup2":
                    try:
                        with open(os.path.join(mnt, "cgroup.controllers")) as c:
                            if "memory" in c.read().split():
                                mounts.setdefault("v2", mnt)
                    except OSError:
                        pass
                elif fstype == "cgroup" and "memory" in opts.split(","):
                    mounts.setdefault("v1", mnt)
        with open("/proc/self/cgroup") as f:
            own = [l.rstrip("\n").split(":", 2) for l in f]
        if "v1" in mounts:
            for _, ctrls, rel in own:
                if "memory" in ctrls.split(","):
                    return mounts["v1"], rel
        if "v2" in mounts:
            for hid, _, rel in own:
                if hid == "0":
                    self.v2 = True
                    return mounts["v2"], rel
        return None, None

    def add(self, pid):
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(pid))

    def read(self):
        def num(name):
            with open(os.path.join(self.path, name)) as f:
                return int(f.read().split()[0])
        if self.v2:
            with open(os.path.join(self.path, "memory.stat")) as f:
                stat = dict(l.split() for l in f if l.strip())
            kernel = int(stat.get("kernel", stat.get("slab", 0)))
            return num("memory.current") // 1024, kernel // 1024
        with open(os.path.join(self.path, "memory.stat")) as f:
            stat = dict(l.split() for l in f if l.strip())
        kernel = num("memory.kmem.usage_in_bytes")
        return (int(stat["rss"]) + int(stat["cache"]) + kernel) // 1024, kernel // 1024

    def close(self):
        if self.path:
            try:
                os.rmdir(self.path)
            except OSError:
                pass    # a process still in it: it goes with it


def sysfs_attributes():
    """Real sysfs attributes of this machine's block devices that hvtuned manages (the
    canonical paths, as hvtuned opens them), for sysfs-fds: the disks of the bench are
    tmpfs files, whose fds pin no seq_file page."""
    out = []
    for name in sorted(os.listdir("/sys/block")):
        queue = os.path.realpath(os.path.join("/sys/block", name, "queue"))
        for attr in ("scheduler", "nr_requests", "read_ahead_kb", "io_timeout"):
            if os.path.exists(os.path.join(queue, attr)):
                out.append(os.path.join(queue, attr))
    return out


def kept_fds(tool, n, cgroup_name):
    """What n kept sysfs fds cost, each read once: {opened, read: (all, kernel) KiB charged
    since the start; emfile: opens refused at the default soft RLIMIT_NOFILE of 1024 (systemd's
    for a service), and why; open_ns, dir_ns, kept_ns: an attribute's time by its path, below a directory fd
    opened a directory, and on a kept fd}, or a reason
    why not."""
    paths = sysfs_attributes()
    if not paths:
        return "no block device in /sys/block"
    cg = MemCgroup(cgroup_name)
    if not cg.path:
        return cg.why

    def soft_1024():
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))

    p = subprocess.Popen([tool, str(n)] + paths, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, preexec_fn=soft_1024)
    out = {}
    try:
        assert p.stdout.readline().strip() == "ready"
        cg.add(p.pid)
        base = cg.read()

        def step():
            p.stdin.write("\n")
            p.stdin.flush()
            return p.stdout.readline().split()
        words = step()
        out["opened"] = tuple(a - b for a, b in zip(cg.read(), base))
        out["emfile"] = (int(words[1]), " ".join(words[2:]))
        step()
        out["read"] = tuple(a - b for a, b in zip(cg.read(), base))
        words = step()
        out["open_ns"], out["dir_ns"], out["kept_ns"] = int(words[1]), int(words[2]), int(words[3])
        p.stdin.write("\n")
        p.stdin.flush()
        if p.wait(60) != 0:
            return f"sysfs-fds failed ({p.returncode})"
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        cg.close()
    out["paths"] = len(paths)
    return out
