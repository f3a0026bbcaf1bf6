#!/usr/bin/env python3
# The unit per systemd version (systemd/meson.build): every directive of hvtuned.service.in is
# in the table below with the first release whose NEWS has it, the template marks each one
# newer than 239 with that release (@SINCE_N@), and each unit the build made for a release
# (VERSION=FILE; an empty VERSION: every directive) keeps exactly the directives that release
# knows. Then the host's own systemd-analyze verify reads the unit made for the newest release
# it is not older than, and must know each key. A directive added to the template without a
# row here fails: look its version up in systemd's NEWS first.
# usage: test-versions.py TEMPLATE VERSION=UNIT...
import re
import shutil
import subprocess
import sys
import tempfile

# Directive (or directive=value, where the value came later than the key) -> the release
# that introduced it, from systemd's NEWS ("CHANGES WITH N"). 0: older than anything hvtuned
# supports (before 209), or a NEWS entry older than 239 is all that matters.
SINCE = {
    "Description": 0, "Documentation": 0, "After": 0, "WantedBy": 0,
    "ConditionVirtualization": 0,            # "microsoft": long before 239
    "ConditionVirtualization=|wsl": 242,     # "ACRN hypervisor and Windows Subsystem for Linux (WSL)"
    "Type": 0, "ExecStart": 0, "ExecReload": 0, "Restart": 0,
    "WatchdogSec": 0,
    "TimeoutAbortSec": 243,                  # "a separate timeout may be set using TimeoutAbortSec="
    "RuntimeDirectory": 211,
    "RuntimeDirectoryMode": 211,
    "RuntimeDirectoryPreserve": 235,
    "ReadWritePaths": 231,
    "CapabilityBoundingSet": 0,
    "NoNewPrivileges": 227,
    "ProtectSystem": 232,                    # "strict" came with 232
    "ProtectHome": 214,
    "PrivateTmp": 0,
    "PrivateMounts": 239,
    "PrivateIPC": 248,
    "DevicePolicy": 0, "DeviceAllow": 0,
    "ProtectKernelModules": 232,
    "ProtectKernelLogs": 244,
    "ProtectControlGroups": 232,
    "ProtectClock": 245,
    "ProtectHostname": 242,
    "ProtectProc": 247,
    "RestrictAddressFamilies": 211,
    "RestrictNamespaces": 233,
    "RestrictRealtime": 231,
    "RestrictSUIDSGID": 242,
    "LockPersonality": 235,
    "MemoryDenyWriteExecute": 231,
    "SystemCallArchitectures": 209,
    "SystemCallFilter": 231,                 # named groups (@privileged, @resources): 231
    "SystemCallFilter=@system-service": 239,  # systemd PR #8766, merged for 239
    "SystemCallErrorNumber": 209,
    "IPAddressDeny": 235,
    "RemoveIPC": 212,
    "KeyringMode": 235,
    "UMask": 0,
}
FLOOR = 239  # RHEL 8: the oldest systemd the unit is built for
MISSING = "# needs systemd "

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def since(key, value):
    return SINCE.get(key + "=" + value, SINCE.get(key))


def directives(text):
    """(key, value, line) of each directive, and (N, key, value) of each one left out."""
    kept, dropped = [], []
    for line in text.splitlines():
        m = re.match(r"^# needs systemd (\d+): ([A-Za-z]+)=(.*)$", line)
        if m:
            dropped.append((int(m.group(1)), m.group(2), m.group(3)))
            continue
        m = re.match(r"^([A-Za-z]+)=(.*)$", line)
        if m:
            kept.append((m.group(1), m.group(2), line))
    return kept, dropped


def check_template(path):
    for n, line in enumerate(open(path), 1):
        m = re.match(r"^(@SINCE_(\d+)@)?([A-Za-z]+)=(.*)$", line.rstrip("\n"))
        if not m:
            continue
        key, value = m.group(3), m.group(4)
        want = since(key, value)
        if want is None:
            fail(f"{path}:{n}: {key}= has no row in test-versions.py: look its version up in systemd's NEWS")
            continue
        marked = int(m.group(2)) if m.group(2) else None
        if want > FLOOR and marked != want:
            fail(f"{path}:{n}: {key}={value} is systemd {want}'s, marked {marked or 'for every version'}")
        if want <= FLOOR and marked is not None:
            fail(f"{path}:{n}: {key}={value} is older than {FLOOR} but marked @SINCE_{marked}@")


def check_unit(version, path):
    v = int(re.match(r"\d+", version).group(0)) if version else None
    kept, dropped = directives(open(path).read())
    for key, value, line in kept:
        want = since(key, value)
        if want is None:
            fail(f"{path}: {line}: no row in test-versions.py")
        elif v is not None and want > v:
            fail(f"{path}: {line} is systemd {want}'s, left in a unit for {v}")
    for n, key, value in dropped:
        if v is None or n <= v:
            fail(f"{path}: {key}={value} (systemd {n}) left out of a unit for {version or 'any version'}")
    names = sorted({f"{k}={val}" if f"{k}={val}" in SINCE else k for n, k, val in dropped})
    print(f"ok: unit for systemd {version or '(newest)'}: {len(kept)} directives, left out: {', '.join(names) or 'none'}")


def host_verify(units):
    """The host's systemd-analyze knows every key of the unit made for its version or the
    newest one below it (an unknown key is a warning there, not an error)."""
    if not shutil.which("systemd-analyze"):
        print("note: no systemd-analyze, the host's check is left out")
        return
    out = subprocess.run(["systemd-analyze", "--version"], capture_output=True, text=True).stdout
    host = int(re.match(r"systemd (\d+)", out).group(1))
    fits = [(int(v), p) for v, p in units if v and int(v) <= host]
    if not fits:
        print(f"note: no unit made for systemd {host} or older")
        return
    v, path = max(fits)
    with tempfile.TemporaryDirectory() as d:
        unit = d + "/hvtuned.service"
        shutil.copy(path, unit)
        r = subprocess.run(["systemd-analyze", "verify", unit], capture_output=True, text=True)
    unknown = [l for l in (r.stdout + r.stderr).splitlines() if re.search(r"[Uu]nknown (key|lvalue)", l)]
    for l in unknown:
        fail(f"systemd {host}'s systemd-analyze verify, unit made for {v}: {l}")
    if not unknown:
        print(f"ok: systemd-analyze verify of systemd {host} knows every key of the unit made for {v}")


check_template(sys.argv[1])
units = [a.split("=", 1) for a in sys.argv[2:]]
for version, path in units:
    check_unit(version, path)
host_verify(units)
sys.exit(1 if failures else 0)
