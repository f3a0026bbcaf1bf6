"""The floor's script: the filesystem calls one hvtuned run made, from its strace.

strace -X raw -xx -s 65536 -e trace=<TRACED> prints every argument raw; this keeps the calls
on files of the run (the testbed, /proc, /run, the runtime directory, the configuration) and
drops the dynamic loader's (libraries, locale) and stdio's (fds 0-2). umockdev's preload
turns /sys and /dev paths into paths below its testbed directory before the system call; the
script names them as the program did (the prefix taken off), so the floor, run under the
same preload, pays the same translation. The calls the preload makes on its own (access()
of its "disabled" flag, readlink() and getcwd() to resolve paths) are not traced: the
floor's preload makes them again.

One call a line, tab-separated, fds as the traced program numbered them:
  O fd dirfd flags mode path      openat (fd -1: it failed)
  R fd count / P fd count offset  read / pread64
  W fd hexdata                    write
  C fd                            close
  G fd count                      getdents64
  L dirfd path                    readlinkat
  S dirfd path flags              newfstatat
  A dirfd path mode flags         faccessat2
  F fd                            fstatfs
  N olddirfd old newdirfd new     renameat
  U dirfd path flags              unlinkat
  M path mode                     mkdir
  Y fd                            fsync
  K fd offset whence              lseek
"""
import re
import sys

TRACED = ("openat,read,pread64,write,close,getdents64,readlinkat,newfstatat,faccessat2,"
          "fstatfs,renameat,unlinkat,mkdir,fsync,lseek")
AT_FDCWD = -100
SKIP_PREFIXES = ("/lib/", "/usr/lib/", "/etc/ld.so", "/usr/share/locale", "/etc/localtime",
                 "/usr/share/zoneinfo")

# Calls on an fd, and calls on a path below a directory fd: the script's letter, and which
# raw arguments follow the fd (or the directory fd and the path) on its line.
FD_CALLS = {"read": ("R", [2]), "pread64": ("P", [2, 3]), "write": ("W", []), "close": ("C", []),
            "getdents64": ("G", [2]), "fstatfs": ("F", []), "fsync": ("Y", []), "lseek": ("K", [1, 2])}
PATH_CALLS = {"readlinkat": ("L", []), "newfstatat": ("S", [3]), "faccessat2": ("A", [2, 3]),
              "unlinkat": ("U", [2])}

LINE = re.compile(r'^(?:\d+ +)?(\w+)\((.*)\) += (-?\d+|0x[0-9a-f]+)')
STRING = re.compile(r'"((?:\\x[0-9a-f]{2})*)"')


def unhex(s):
    return bytes.fromhex(s.replace("\\x", ""))


def split_args(text):
    """Top-level comma-separated arguments; strings and {...} structs stay whole."""
    args, depth, cur, quoted = [], 0, "", False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "{[":
            depth += 1
        elif not quoted and ch in "}]":
            depth -= 1
        elif not quoted and depth == 0 and ch == ",":
            args.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        args.append(cur.strip())
    return args


def path_arg(a, testbed):
    m = STRING.fullmatch(a.rstrip("."))
    p = unhex(m.group(1)).decode("utf-8", "surrogateescape") if m else ""
    return p[len(testbed):] if testbed and p.startswith(testbed + "/") else p


def num(a):
    """strace's raw numbers: decimal, 0x hex, or C octal (modes: 0755)."""
    if re.fullmatch(r"0[0-7]+", a):
        return int(a, 8)
    return int(a, 0)


def convert(lines, testbed):
    fds = set()          # the traced program's fds that the floor follows
    out = []
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue     # signals, exits, unfinished calls
        call, args, ret = m.group(1), split_args(m.group(2)), num(m.group(3))

        def fd(i):
            return num(args[i])

        def dirfd(i):
            d = num(args[i])
            return d if d == AT_FDCWD or d in fds else None

        if call == "openat":
            path = path_arg(args[1], testbed)
            if path.startswith(SKIP_PREFIXES) or dirfd(0) is None:
                continue
            mode = num(args[3]) if len(args) > 3 else 0
            out.append(f"O\t{ret}\t{num(args[0])}\t{num(args[2])}\t{mode}\t{path}")
            if ret >= 0:
                fds.add(ret)
        elif call in FD_CALLS:
            if fd(0) not in fds:
                continue
            letter, numbers = FD_CALLS[call]
            fields = [str(fd(0))] + [str(num(args[k])) for k in numbers]
            if call == "write":
                fields.append(STRING.fullmatch(args[1].rstrip(".")).group(1).replace("\\x", ""))
            out.append("\t".join([letter] + fields))
            if call == "close":
                fds.discard(fd(0))
        elif call in PATH_CALLS:
            d, path = dirfd(0), path_arg(args[1], testbed)
            if d is None or path.startswith(SKIP_PREFIXES) or (path == "" and d == AT_FDCWD):
                continue
            letter, numbers = PATH_CALLS[call]
            out.append("\t".join([letter, str(d), path] + [str(num(args[k])) for k in numbers]))
        elif call == "renameat":
            if dirfd(0) is None or dirfd(2) is None:
                continue
            out.append(f"N\t{num(args[0])}\t{path_arg(args[1], testbed)}\t{num(args[2])}\t"
                       f"{path_arg(args[3], testbed)}")
        elif call == "mkdir":
            out.append(f"M\t{path_arg(args[0], testbed)}\t{num(args[1])}")
    return out


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: ops.py STRACE-OUTPUT TESTBED-DIR > OPS\n")
        return 2
    with open(argv[1], errors="surrogateescape") as f:
        ops = convert(f, argv[2].rstrip("/"))
    sys.stdout.write("\n".join(ops) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
