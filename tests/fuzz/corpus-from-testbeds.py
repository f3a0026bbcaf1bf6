#!/usr/bin/env python3
"""Write fuzz-device seeds from umockdev testbeds: one record per Hyper-V disk (a block disk
below a VMBus device bound to hv_storvsc), in the key=value format of fuzz-device.c.

Usage: corpus-from-testbeds.py OUTDIR TESTBED...   (the testbeds of tests/testbeds/mkvm.py)
"""
import os
import re
import sys

KINDS = {"{ba6163d9-04a1-4d29-b605-72e2ffb1dc7f}": "scsi", "{32412632-86cb-44a2-9b5c-50d1417354f5}": "ide",
         "{2f9bcc4a-0069-4af3-b76b-6fd0be528cda}": "fc"}
LUN_ATTRS = ("queue_depth", "timeout", "eh_timeout")


def devices(path):
    """{syspath: {"E": {...}, "A": {...}, "L": {...}}} of a umockdev record file."""
    out, cur = {}, None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("P: "):
            cur = out.setdefault(line[3:], {"E": {}, "A": {}, "L": {}})
        elif cur is not None and line[:3] in ("E: ", "A: ", "L: "):
            key, _, value = line[3:].partition("=")
            if line[0] == "A":   # sysfs values end in a newline, escaped in the record
                value = value.replace("\\n", "\n").rstrip("\n").replace("\\\\", "\\")
            cur[line[0]][key] = value
    return out


def records(devs):
    for path, dev in devs.items():
        if dev["E"].get("SUBSYSTEM") != "block" or dev["E"].get("DEVTYPE") != "disk":
            continue
        m = re.search(r"/VMBUS:\d+/([0-9a-f-]{36})/host\d+/target[^/]+/(\d+:\d+:\d+:\d+)/block/([^/]+)$", path)
        if not m:
            continue
        vmbus = devs.get(path[:path.index(m.group(1)) + 36], {"E": {}, "A": {}})
        if vmbus["E"].get("DRIVER") != "hv_storvsc":
            continue
        sdev = devs.get(path[:path.index("/block/")], {"A": {}})
        lines = [f"sysname={m.group(3)}", f"dev={dev['A'].get('dev', '')}", f"diskseq={dev['A'].get('diskseq', '0')}",
                 f"controller={vmbus['A'].get('device_id', '')}", f"vmbus={m.group(1)}",
                 f"kind={KINDS.get(vmbus['A'].get('class_id'), 'unknown')}", f"address={m.group(2)}",
                 f"vendor={sdev['A'].get('vendor', '')}", f"model={sdev['A'].get('model', '')}"]
        lines += [f"{k}={v}" for k, v in dev["A"].items() if k.startswith("queue/") and "\n" not in v]
        lines += [f"device/{k}={sdev['A'][k]}" for k in LUN_ATTRS if k in sdev["A"]]
        for ppath, part in devs.items():
            if ppath.startswith(path + "/") and part["E"].get("DEVTYPE") == "partition":
                lines.append(f"part={ppath.rsplit('/', 1)[1]} {part['A'].get('dev', '')}")
        yield m.group(3), "\n".join(lines) + "\n"


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for testbed in sys.argv[2:]:
        name = os.path.basename(testbed).removesuffix(".umockdev")
        for disk, text in records(devices(testbed)):
            with open(os.path.join(outdir, f"{name}-{disk}"), "w", encoding="utf-8") as f:
                f.write(text)


if __name__ == "__main__":
    main()
