#!/usr/bin/env python3
"""Write fuzz-device seeds from umockdev testbeds: one record per Hyper-V disk (a block disk
below a VMBus device bound to hv_storvsc), in the key=value format of fuzz-device.c. With
--classify, fuzz-classify seeds instead: per whole disk and per SCSI host of the testbed, the
sysfs directories on its path (uevent, subsystem and driver links, the attributes the
classifier reads), in the line format of fuzz-classify.c.

Usage: corpus-from-testbeds.py [--classify] OUTDIR TESTBED...   (the testbeds of tests/testbeds/mkvm.py)
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


CLASSIFY_ATTRS = ("device_id", "class_id", "vendor", "model", "diskseq", "nr_hw_queues", "can_queue")


def escape(text):
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def tree(devs, syspath):
    """The lines of fuzz-classify.c for the devices on syspath, and their links."""
    lines = []
    parts = syspath.split("/")
    for i in range(2, len(parts) + 1):
        path = "/".join(parts[:i])
        dev = devs.get(path)
        if dev is None:
            continue
        where = "sys" + path
        uevent = "".join(f"{k}={v}\n" for k, v in dev["E"].items())
        lines.append(f"file={where}/uevent={escape(uevent)}")
        if "SUBSYSTEM" in dev["E"]:
            up = "../" * (path.count("/") - 1)
            lines.append(f"link={where}/subsystem={up}../bus/{dev['E']['SUBSYSTEM']}")
        lines += [f"link={where}/{k}={v}" for k, v in dev["L"].items() if k == "driver"]
        lines += [f"file={where}/{k}={escape(v + chr(10))}" for k, v in dev["A"].items() if k in CLASSIFY_ATTRS]
    return lines


def classify_seeds(devs):
    for path, dev in devs.items():
        e = dev["E"]
        if e.get("SUBSYSTEM") == "block" and e.get("DEVTYPE") == "disk":
            yield path.rsplit("/", 1)[1], "\n".join([f"disk=sys{path}"] + tree(devs, path)) + "\n"
        elif e.get("SUBSYSTEM") == "scsi_host":
            yield path.rsplit("/", 1)[1], "\n".join([f"host=sys{path}"] + tree(devs, path)) + "\n"


def main():
    classify = sys.argv[1] == "--classify"
    args = sys.argv[2:] if classify else sys.argv[1:]
    outdir = args[0]
    os.makedirs(outdir, exist_ok=True)
    for testbed in args[1:]:
        name = os.path.basename(testbed).removesuffix(".umockdev")
        for disk, text in (classify_seeds if classify else records)(devices(testbed)):
            with open(os.path.join(outdir, f"{name}-{disk}"), "w", encoding="utf-8") as f:
                f.write(text)


if __name__ == "__main__":
    main()
