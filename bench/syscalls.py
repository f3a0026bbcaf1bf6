"""System calls a bound hvtuned --once made, from `strace -f -o` output: every call, and the
calls that are hvtuned's own, without those the two shims make for the kernel.

Bound (bench/launch -r), the testbed's tmpfs answers as sysfs through two LD_PRELOAD shims
(one object, bench/hvtuned-bound-sysfs.so) whose own calls strace sees in the same process,
and which a guest's kernel makes none of:
  - bound-sysfs.c: a readlink(2) of /proc/self/fd/N after each fstatfs();
  - the test suite's sysfs-kernel.c, on an open for writing: a readlink(2) of the directory
    fd and a newfstatat(AT_FDCWD) of the file, or, for a file it does not emulate, a
    newfstatat(dirfd, name, flags 0) of it right before the program's openat of that name;
    then, for an emulated attribute, the old content read (openat(AT_FDCWD,
    O_RDONLY|O_CLOEXEC), read, close); on write(): other attributes read the same way (the
    scheduler, a host's can_queue) and nr_requests reset (openat(AT_FDCWD,
    O_WRONLY|O_TRUNC|O_CLOEXEC), write, close), then the shown value put in place of the
    program's write: pwrite64 then ftruncate (lseek, ftruncate, write on an O_APPEND file);
    on a LUN's timeout, its disk's io_timeout found by a listing of the LUN's block/
    (openat O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY, getdents64, close) and stored.
hvtuned and libudev use readlinkat(), never readlink(), and open sysfs files with O_NOFOLLOW,
O_NOCTTY or O_DIRECTORY: the shims' calls are told apart by their form. The write the shim
makes in place of the program's counts as the program's (a kernel gets that one write).
"""
import re

LINE = re.compile(r'^(\d+) +(\w+)\((.*?)(?:\) += (-?\d+|0x[0-9a-f]+|\?)| <unfinished \.\.\.>)')
SHIM_OPEN = re.compile(r'^AT_FDCWD, "[^"]*", (O_RDONLY\|O_CLOEXEC|O_WRONLY\|O_TRUNC\|O_CLOEXEC)$')
# sysfs-kernel's couple_timeouts(): a listing of a LUN's block/ to find the disk whose
# io_timeout a write of the LUN's timeout changes (its getdents64 and close follow).
# Neither hvtuned nor libudev lists a LUN's block/ (hvtuned's opendir()s are /sys/class/block
# and /sys/class/scsi_host; its other listings go through hvt_opendirat()).
SHIM_OPENDIR = re.compile(r'^AT_FDCWD, "[^"]*/\d+:\d+:\d+:\d+/block", O_RDONLY\|O_NONBLOCK\|O_CLOEXEC\|O_DIRECTORY$')


def count(lines):
    """(all system calls, hvtuned's own) in an `strace -f -o` trace of one process tree."""
    total = shim = 0
    shim_fds = {}        # (pid, fd) of a file the shims opened
    groups = {}          # (pid, fd): put-back writes seen on a file the program writes
    state = {}           # pid: what the last call was, for the call that follows it
    for line in lines:
        if "<... " in line and "resumed>" in line:
            continue     # counted at its start
        m = LINE.match(line)
        if not m:
            continue     # signals, exits
        pid, call, args = m.group(1), m.group(2), m.group(3)
        total += 1
        last = state.get(pid)
        state[pid] = None
        fd = args.split(",", 1)[0].strip()
        key = (pid, fd)
        if call == "readlink":
            shim += 1
            state[pid] = "readlink" if args.endswith("2047") or ", 2047" in args else None
        elif call == "newfstatat" and last == "readlink" and args.startswith("AT_FDCWD"):
            shim += 1
        elif call == "newfstatat" and not args.startswith("AT_FDCWD") and args.endswith(", 0"):
            state[pid] = ("stat", args.split(",", 2)[:2])
        elif call == "openat" and isinstance(last, tuple) and last[0] == "stat" and \
                args.split(",", 2)[:2] == last[1] and "O_WRONLY" in args:
            shim += 1    # the newfstatat before it: the shim's permission check
        elif call == "pwrite64":
            state[pid] = ("pwrite", fd)
        elif call == "ftruncate" and last == ("pwrite", fd):
            shim += 1    # the pwrite64 before it stood for the program's write
        elif call == "openat" and (SHIM_OPEN.match(args) or SHIM_OPENDIR.match(args)):
            shim += 1
            ret = m.group(4)
            if ret is not None and not ret.startswith("-"):
                shim_fds[(pid, ret)] = True
        elif key in shim_fds and call in ("read", "write", "newfstatat", "close", "lseek", "getdents64"):
            shim += 1
            if call == "close":
                del shim_fds[key]
        elif call == "lseek" and args.endswith(", 0, SEEK_SET"):
            state[pid] = ("lseek", fd)
        elif call == "ftruncate" and last == ("lseek", fd):
            shim += 2    # and the lseek before it
            state[pid] = ("put-back", fd)
        elif call == "write" and last == ("put-back", fd):
            groups[key] = groups.get(key, 0) + 1
        elif call == "close" and key in groups:
            shim += 1    # the put-back at close; the others stood for the program's writes
            del groups[key]
    return total, total - shim
