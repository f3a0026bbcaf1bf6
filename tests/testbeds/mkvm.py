#!/usr/bin/env python3
"""Emit a umockdev testbed (record format) of a Linux guest with Hyper-V storvsc disks, or
Azure's NVMe disks, or both.

Usage:
    mkvm.py PROFILE [OPTIONS]         whole VM (hot-plug LUNs left out)
    mkvm.py PROFILE --only-lun H:C:T:L  fragment for one LUN: its target (only if no
                                      base LUN shares it), scsi_device, disk, partitions
    mkvm.py PROFILE --only-host N     fragment for SCSI host N as a re-probe brings it back:
                                      the host and its base LUNs, as new disk instances
    mkvm.py PROFILE --nvme-hotplug    fragment of the NVMe namespaces hot-added later
    mkvm.py PROFILE --list-luns       "H:C:T:L sdX controller-guid[ hotplug]" per Hyper-V LUN
    mkvm.py PROFILE --kernel-tar      a tar of what the profile's kernel has beside its devices
                                      for hvtuned's request layout: sys/kernel/btf/ (vmlinux,
                                      scsi_mod, hv_storvsc, those it has) and
                                      proc/sys/kernel/osrelease; extract it in the testbed's
                                      root (umockdev redirects /sys and /proc to it)
    mkvm.py --profiles                list profile names
    mkvm.py PROFILE --lun-fragments DIR
                                      the VM without its LUNs, and each LUN in DIR/NNNNN.umockdev
Options (before the mode): --vcpus N (another size of the same VM), --cap N (storvsc probed
with storvsc_max_hw_queues=N, as from the kernel command line), --disks N (N data disks
instead of the profile's, 64 LUNs a controller, for benchmarks), --nvme N (N Azure NVMe data
disks beside them instead of the profile's NVMe controllers, 64 namespaces an accelerator,
for benchmarks: many_nvme()).

What it models (one VM description in PROFILES -> devices, emitted parents first):
  acpi VMBUS:NN -> vmbus controller <instance guid> (driver hv_storvsc) -> hostN (scsi_host)
  [+ class scsi_host/hostN] -> targetN:0:T -> N:0:T:L (driver sd) [+ class scsi_device,
  scsi_disk] -> block/sdX (queue/, mq/<n>/) -> sdXn partitions; plus non-Hyper-V disks
  (virtio, NVMe, USB stick, loop, dm, md) that a tuner must leave alone, and one hv_netvsc
  vmbus device (a vmbus device that is not storage). Beside the devices: /sys/devices/system/cpu
  (present, possible, online), /sys/module/hv_storvsc (parameters/; initstate when storvsc
  is a loadable module, none when built in, as on WSL) and /sys/bus/vmbus/drivers/hv_storvsc
  (bind, unbind). Azure's NVMe disks (profiles with "nvme"; the NVMe section below has the
  facts): acpi VMBUS:NN -> vmbus <instance guid> (driver hv_pci) -> pci<domain>:00 (a bare
  host bridge) -> <domain>:00:00.0 (pci, driver nvme) -> nvme/nvmeN (class nvme) ->
  nvmeNnM (block; ngNnM nvme-generic) -> nvmeNnMpK, with nvme-subsysN beside; or, under
  native multipath, the head nvme-subsysN/nvmeNnM and the hidden path nvmeNcNnM below the
  controller. umockdev takes only P: paths below /devices, so these are written as
  /devices/../module/... : umockdev joins the path and makes them where sysfs has them (with
  a subsystem link and a /sys/class/<subsystem> link more than sysfs has).

Where the facts come from: /work/shared/design/storvsc.md (storvsc can_queue / queue
formulas, scheduler text per kernel, attribute defaults), Linux drivers/hv/vmbus_drv.c
(device name = instance guid "%pUl"; class_id/device_id "{%pUl}"; modalias "vmbus:" + the
16 raw guid bytes in hex, i.e. first three fields byte-swapped), drivers/scsi/scsi_sysfs.c
(vendor/model padded "%.8s"/"%.16s"), block/genhd.c (capability flags, sd devnums),
block/blk-mq-sysfs.c (mq/<n>/cpu_list "0, 1"), systemd udev-builtin-path_id.c (ID_PATH:
a syspath containing "/VMBUS" gives "acpi-VMBUS:00-vmbus-<device_id without dashes>-lun-L",
not "...-scsi-H:C:T:L"). Sizes, PCI ids, relids are plausible examples, not measurements.

umockdev facts (tested with umockdev 0.17.16): device order does not matter (children may
come before or after parents) but a P: path may appear only once per testbed (a second add
aborts umockdev-run: "device ... already exists"); P: must start with /devices/ (no
/sys/bus/.../drivers or /sys/module entries: driver links dangle); E: SUBSYSTEM= makes the
subsystem link (bus/X for bus types, class/X for block, scsi_host, nvme, ...) and the
/sys/bus|class|block|dev/block links (dev/block needs A: dev); A: names with "/" create
subdirectories (queue/scheduler, mq/0/cpu_list); A: values are g_strcompress()ed (\\n, \\t,
\\\\, octal \\101; \\0 truncates) and keep trailing spaces; E: values are written raw into
the device's uevent file (DEVNAME=/dev/sda becomes DEVNAME=sda); N: makes /dev/<name>,
typed and numbered from E: MAJOR/MINOR. Devices are separated by a blank line; this script
ends every device with one, so `cat base fragment` is a valid file too. umockdev links every
block device, partitions included, into /sys/block (the kernel links only whole disks).
A duplicate P: through umockdev_testbed_add_from_string() is a g_error(): the process aborts,
so load an --only-lun fragment of a base LUN only onto a testbed that lacks that LUN.
"""
import sys

SCSI_CLASS = "ba6163d9-04a1-4d29-b605-72e2ffb1dc7f"
IDE_CLASS = "32412632-86cb-44a2-9b5c-50d1417354f5"
NETVSC_CLASS = "f8615163-df3e-46c5-913f-f2d2f965ed0e"
# Azure's NVMe controllers, by model (see the NVMe section below), and hv_pci's VMBus class.
ACCEL = "MSFT NVMe Accelerator v1.0"
DIRECT = "Microsoft NVMe Direct Disk"
DIRECT2 = "Microsoft NVMe Direct Disk v2"
HV_PCI_CLASS = "44c4f61d-4444-4400-9d52-802e27ede19f"
GEN2_VMBUS = "/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00"
GEN1_VMBUS = "/devices/LNXSYSTM:00/LNXSYBUS:00/PNP0A03:00/device:07/VMBUS:01"
GIB = 2 * 1024 * 1024  # 512-byte sectors per GiB

# Per-kernel behaviour. sched: registered elevators in the order the kernel prints them.
KERNELS = {
    "6x": dict(sched=["none", "mq-deadline", "kyber", "bfq"], mq=True, io_timeout=True,
               max_sectors_kb=1280, cap_sd="0", cap_removable="1", use_blk_mq="1"),
    "5.15": dict(sched=["mq-deadline", "kyber", "none"], mq=True, io_timeout=True,
                 max_sectors_kb=512, cap_sd="50", cap_removable="51", use_blk_mq="1"),
    # Debian 11's 5.10: no storvsc_max_hw_queues (5.13), so one hw queue per present CPU
    # always; 369 requests a channel (storvsc_drv.c, 5.10's ring arithmetic); no diskseq (5.15).
    "5.10": dict(sched=["mq-deadline", "kyber", "none"], mq=True, io_timeout=True,
                 max_sectors_kb=512, cap_sd="50", cap_removable="51", use_blk_mq="1",
                 hwq_param=False, diskseq=False, ring_requests=369),
    # A newer Azure kernel: blk-sysfs.c's blk_mq_queue_attrs group, which a bio-based queue (a
    # multipath head) does not show (the release that brought it is not pinned here: the vm
    # tier reports what real kernels show); the elevators loaded at boot only (kyber and bfq
    # are modules). Its release string and BTF are plausible, not a measured kernel's.
    "6.14": dict(sched=["none", "mq-deadline"], mq=True, io_timeout=True, bio_split=True,
                 max_sectors_kb=1280, cap_sd="0", cap_removable="1", use_blk_mq="1"),
    # nr_hw_queues (scsi_host) came in 5.10.
    "legacy": dict(sched=["noop", "deadline", "cfq"], mq=False, io_timeout=False,
                   max_sectors_kb=512, cap_sd="50", cap_removable="51", use_blk_mq="0",
                   nr_hw_queues=False, hwq_param=False, diskseq=False),
}

# Each kernel's /proc/sys/kernel/osrelease: 6x an Azure kernel of Ubuntu's (upstream-numbered,
# but no row of lib/layout.c's table: its BTF decides), 5.10 Debian 11's (the table's row,
# as its modules have no BTF), WSL's and the legacy one a distribution's own numbering.
OSRELEASE = {
    "6x": "6.8.0-1021-azure",
    "6.14": "6.14.0-1012-azure",
    "5.15": "5.15.167.4-microsoft-standard-WSL2",
    "5.10": "5.10.0-46-amd64",
    "legacy": "3.10.0-1160.el7.x86_64",
}

# The BTF each kernel's /sys/kernel/btf has, as struct sizes (lib/layout.c): 6.1 as Debian
# builds it (vmlinux, and split BTF for the scsi_mod and hv_storvsc modules); 5.10 has
# vmlinux's only (module BTF came in 5.11), so the layout comes from the table by release;
# WSL's 5.15 and the legacy kernel none. Microsoft's own WSL kernels have had BTF, with storvsc
# built in, since 5.15.74.2 (docs/layout-platforms.md): this one stands for a WSL kernel built
# without it, whose layout is assumed from the nearest row when its release is known.
BTF = {
    "6x": {"vmlinux": [("request", 272), ("scatterlist", 32)], "scsi_mod": [("scsi_cmnd", 296)],
           "hv_storvsc": [("scsi_cmnd", 296), ("storvsc_cmd_request", 416)]},
    "5.10": {"vmlinux": [("request", 280), ("scatterlist", 32)]},
}
BTF["6.14"] = BTF["6x"]   # plausible: the sizes of the 6.x row


def btf_blob(structs, base_strs_len=None):
    """A minimal BTF (include/uapi/linux/btf.h): each struct a record with no members; split
    (names past vmlinux's strings) when base_strs_len is given."""
    import struct as st
    strs = b"" if base_strs_len is not None else b"\0"
    types = b""
    for name, size in structs:
        off = len(strs) + (base_strs_len or 0)
        strs += name.encode() + b"\0"
        types += st.pack("<III", off, 4 << 24, size)
    return st.pack("<HBBIIIII", 0xeb9f, 1, 0, 24, 0, len(types), len(types), len(strs)) + types + strs


def btf_files(kern):
    """name -> blob, for /sys/kernel/btf/."""
    files = BTF.get(kern, {})
    out = {}
    if "vmlinux" in files:
        out["vmlinux"] = btf_blob(files["vmlinux"])
        base_len = 1 + sum(len(n) + 1 for n, _ in files["vmlinux"])
        for mod in ("scsi_mod", "hv_storvsc"):
            if mod in files:
                out[mod] = btf_blob(files[mod], base_len)
    return out


def kernel_tar(kern):
    """The tar of --kernel-tar: reproducible (owner root, mtime 0)."""
    import io
    import tarfile
    out = io.BytesIO()
    files = {"sys/kernel/btf/" + n: b for n, b in btf_files(kern).items()}
    files["proc/sys/kernel/osrelease"] = (OSRELEASE[kern] + "\n").encode()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(files[name]), 0o444
            tar.addfile(info, io.BytesIO(files[name]))
    return out.getvalue()


# LUN tuple: (H:C:T:L, disk name, scheduler, size in sectors, [(partno, start, size)], hotplug)
AZURE_OS_PARTS = [(1, 227328, 30 * GIB - 227328 - 33), (14, 2048, 8192), (15, 10240, 217088)]
PROFILES = {
    "azure-gen2": dict(vcpus=32, kernel="6x", wbt=True, vmbus=GEN2_VMBUS, others="full",
        controllers=[
            dict(host=0, guid="f8b3781a-1e82-4818-a1c3-63d806ec15bb", cls=SCSI_CLASS, relid=14, luns=[
                ("0:0:0:0", "sda", "mq-deadline", 30 * GIB, AZURE_OS_PARTS, False),
                ("0:0:0:1", "sdb", "none", 128 * GIB, [(1, 2048, 128 * GIB - 4096)], False)]),
            dict(host=1, guid="f8b3781b-1e82-4818-a1c3-63d806ec15bb", cls=SCSI_CLASS, relid=15, luns=[
                ("1:0:0:0", "sdc", "bfq", 1024 * GIB, [], False),
                ("1:0:0:1", "sdd", "none", 512 * GIB, [], False),
                ("1:0:0:2", "sdf", "none", 256 * GIB, [], True)])]),   # sde is the USB stick
    "gen1": dict(vcpus=8, kernel="6x", wbt=True, vmbus=GEN1_VMBUS, others="full",
        controllers=[
            dict(host=0, guid="00000000-0000-8899-0000-000000000000", cls=IDE_CLASS, relid=1, luns=[
                ("0:0:0:0", "sda", "mq-deadline", 127 * GIB, [(1, 2048, 127 * GIB - 4096)],
                 False)]),
            dict(host=1, guid="00000000-0001-8899-0000-000000000000", cls=IDE_CLASS, relid=2, luns=[
                ("1:0:1:0", "sdb", "mq-deadline", 40 * GIB, [], False)]),
            dict(host=2, guid="5e2f0b7c-3d91-4a6e-8c4b-9f1d27a6e8b3", cls=SCSI_CLASS, relid=3, luns=[
                ("2:0:0:0", "sdc", "none", 100 * GIB, [], False),
                ("2:0:0:1", "sdd", "bfq", 200 * GIB, [], False),
                ("2:0:0:2", "sdf", "mq-deadline", 50 * GIB, [], True)])]),   # sde is the USB stick
    "wsl2": dict(vcpus=16, kernel="5.15", hwq_cap=4, builtin=True, wbt=False, vmbus=GEN2_VMBUS, others="wsl",
        controllers=[
            dict(host=0, guid="a3c7e9f1-52b8-4d06-9e1a-7b4c2d8f0e65", cls=SCSI_CLASS, relid=9, luns=[
                ("0:0:0:0", "sda", "none", 790528, [], False),            # system distro
                ("0:0:0:1", "sdb", "none", 4 * GIB, [], False),           # swap
                ("0:0:0:2", "sdc", "mq-deadline", 1024 * GIB, [], False),  # user distro root
                ("0:0:0:3", "sdd", "none", 1024 * GIB, [], False),
                ("0:0:0:4", "sde", "none", 64 * GIB, [], True)])]),       # wsl --mount
    # An Azure VM of 8 vCPUs on Debian 11 (5.10): the cap has nothing to act on.
    "bullseye": dict(vcpus=8, kernel="5.10", wbt=True, vmbus=GEN2_VMBUS, others="wsl",
        controllers=[
            dict(host=0, guid="b1e5a11e-1e82-4818-a1c3-63d806ec15bb", cls=SCSI_CLASS, relid=14, luns=[
                ("0:0:0:0", "sda", "mq-deadline", 30 * GIB, AZURE_OS_PARTS, False)]),
            dict(host=1, guid="b1e5a11f-1e82-4818-a1c3-63d806ec15bb", cls=SCSI_CLASS, relid=15, luns=[
                ("1:0:0:0", "sdb", "none", 256 * GIB, [], False)])]),
    # An Azure v6 VM (a Standard_D2ads_v6: 2 vCPUs, one local disk of 110 GiB, as in
    # azure-vm-utils' selftest table): no storvsc at all. OS and data disks are namespaces of
    # the accelerator (nsid 1 the OS disk, nsid n the data disk of LUN n - 2), the local disk a
    # Direct Disk v2 controller of its own, each on hv_pci's virtual PCI bus. Beside them
    # decoys: a QEMU NVMe controller, and an NVMe/TCP namespace of a Linux target (nvmet sets
    # CMIC's multi-controller bit, so native multipath: a head and a hidden path device).
    "azure-v6": dict(vcpus=2, kernel="6.14", wbt=True, vmbus=GEN2_VMBUS, others="wsl", storvsc=False,
        controllers=[],
        nvme=[
            dict(instance=0, model=ACCEL, serial="SN: 000001", firmware="v1.00000", pci_id=("1414", "B111"),
                 hv_pci="0d5b1c3e-7870-4a3b-8d2e-6f1a9c4b7e20", relid=16, tags=1023, namespaces=[
                     dict(nsid=1, size=30 * GIB, ra_kb=65536, io_opt=33554432, max_hw_kb=512, parts=AZURE_OS_PARTS),
                     dict(nsid=2, size=256 * GIB, ra_kb=65536, io_opt=33554432, max_hw_kb=512),
                     dict(nsid=3, size=512 * GIB, ra_kb=65536, io_opt=33554432, max_hw_kb=512, sched="mq-deadline"),
                     dict(nsid=4, size=128 * GIB, ra_kb=65536, io_opt=33554432, max_hw_kb=512, hotplug=True)]),
            dict(instance=1, model=DIRECT2, serial="ebeb91bd841bceb90001", firmware="NVMDV002",
                 pci_id=("1414", "B111"), hv_pci="7a4e2f91-2b41-4c6d-9e35-1d8f0a6b3c57", relid=17, tags=1023,
                 namespaces=[dict(nsid=1, size=110 * GIB, parts=[(1, 2048, 110 * GIB - 4096)])]),
            dict(instance=2, model="QEMU NVMe Ctrl", serial="deadbeef", firmware="8.2.2", pci_id=("1B36", "0010"),
                 slot="0000:00:05.0", nqn="nqn.2019-08.org.qemu:deadbeef", queues=2, tags=1023,
                 namespaces=[dict(nsid=1, size=16 * GIB, pbs="512", sched="none")]),
            dict(instance=3, model="Linux", serial="4f2d7a1c9e3b5a60", firmware="6.12.0", transport="tcp",
                 address="traddr=10.0.0.4,trsvcid=4420,src_addr=10.0.0.5", traddr="10.0.0.4", trsvcid="4420",
                 nqn="nqn.2024-01.io.example:storage1", multipath=True, cntlid=1, queues=2, tags=128,
                 namespaces=[dict(nsid=1, size=64 * GIB, pbs="512", parts=[(1, 2048, 64 * GIB - 4096)])])]),
    # The same VM with the accelerator under native multipath (a head for each namespace below
    # its subsystem, the hidden path devices below the controller), on a kernel whose
    # bio-based queue still shows scheduler "none" and nr_requests (6.8).
    "azure-v6-mpath": dict(vcpus=2, kernel="6x", wbt=True, vmbus=GEN2_VMBUS, others="wsl", storvsc=False,
        controllers=[],
        nvme=[
            dict(instance=0, model=ACCEL, serial="SN: 000001", firmware="v1.00000", pci_id=("1414", "B111"),
                 hv_pci="0d5b1c3e-7870-4a3b-8d2e-6f1a9c4b7e20", relid=16, tags=1023, multipath=True, namespaces=[
                     dict(nsid=1, size=30 * GIB, ra_kb=65536, io_opt=33554432, max_hw_kb=512, parts=AZURE_OS_PARTS),
                     dict(nsid=2, size=256 * GIB, ra_kb=65536, io_opt=33554432, max_hw_kb=512)]),
            dict(instance=1, model=DIRECT2, serial="ebeb91bd841bceb90001", firmware="NVMDV002",
                 pci_id=("1414", "B111"), hv_pci="7a4e2f91-2b41-4c6d-9e35-1d8f0a6b3c57", relid=17, tags=1023,
                 namespaces=[dict(nsid=1, size=110 * GIB)])]),
    # An Lsv3 VM (a Standard_L16s_v3: 16 vCPUs, storvsc OS, resource and data disks, and two
    # local NVMe disks, each a Direct Disk (v1) controller of its own on hv_pci's bus).
    "lsv3": dict(vcpus=16, kernel="6x", wbt=True, vmbus=GEN2_VMBUS, others="wsl",
        controllers=[
            dict(host=0, guid="f8b3781a-1e82-4818-a1c3-63d806ec15bb", cls=SCSI_CLASS, relid=14, luns=[
                ("0:0:0:0", "sda", "mq-deadline", 30 * GIB, AZURE_OS_PARTS, False),
                ("0:0:0:1", "sdb", "none", 160 * GIB, [(1, 2048, 160 * GIB - 4096)], False)]),
            dict(host=1, guid="f8b3781b-1e82-4818-a1c3-63d806ec15bb", cls=SCSI_CLASS, relid=15, luns=[
                ("1:0:0:0", "sdc", "none", 1024 * GIB, [], False),
                ("1:0:0:1", "sdd", "mq-deadline", 512 * GIB, [], False)])],
        nvme=[
            dict(instance=0, model=DIRECT, serial="f0451a1ba53a00000001", firmware="NVMDV001",
                 pci_id=("1414", "B111"), hv_pci="3c9e6d10-5d21-4f0b-b7a4-8e2c1f6a9d03", relid=18, tags=1023,
                 namespaces=[dict(nsid=1, size=3750000000)]),
            dict(instance=1, model=DIRECT, serial="f0451a1ba53a00000002", firmware="NVMDV001",
                 pci_id=("1414", "B111"), hv_pci="9b2f4e87-e3a7-4c52-8f1d-0a6c3b5e7d14", relid=19, tags=1023,
                 namespaces=[dict(nsid=1, size=3750000000, sched="mq-deadline")])]),
    "legacy": dict(vcpus=4, kernel="legacy", wbt=False, vmbus=GEN2_VMBUS, others="none",
        controllers=[
            dict(host=0, guid="d1b2c3a4-1e82-4818-a1c3-63d806ec15bb", cls=SCSI_CLASS, relid=14, luns=[
                ("0:0:0:0", "sda", "deadline", 30 * GIB, [(1, 2048, 30 * GIB - 4096)], False)])]),
}


# ---------------------------------------------------------------- record format
class Dev:
    def __init__(self, path, subsystem, props=(), attrs=(), links=(), node=None, driver=None, raw_attrs=()):
        self.path, self.node, self.raw_attrs = path, node, list(raw_attrs)
        self.props = [("SUBSYSTEM", subsystem)] + list(props)
        self.attrs, self.links = list(attrs), list(links)
        if driver:
            bus, name = driver
            self.props.append(("DRIVER", name))
            # link relative to /sys/<path>: one "../" per path component climbs to /sys
            self.links.append(("driver", "../" * path.count("/") + f"bus/{bus}/drivers/{name}"))

    def text(self):
        esc = lambda v: v.replace("\\", "\\\\").replace("\n", "\\n")
        out = [f"P: {self.path}"] + ([f"N: {self.node}"] if self.node else [])
        out += [f"E: {k}={v}" for k, v in self.props]
        out += [f"A: {k}={esc(v + chr(10))}" for k, v in self.attrs]  # sysfs ends lines in \n
        out += [f"A: {k}={esc(v)}" for k, v in self.raw_attrs]
        out += [f"L: {k}={v}" for k, v in self.links]
        return "\n".join(out) + "\n"


def guid_hex(guid):
    """guid_t raw byte order, as vmbus prints it in modalias (%*phN)."""
    b = bytes.fromhex(guid.replace("-", ""))
    return (b[3::-1] + b[5:3:-1] + b[7:5:-1] + b[8:]).hex()


def sd_devnum(name):
    """sd_probe(): 16 disks a major over the 16 sd majors, then minors from bit 8 up."""
    idx = 0
    for ch in name[2:]:
        idx = idx * 26 + ord(ch) - ord("a") + 1
    idx -= 1
    m = (idx & 0xf0) >> 4
    major = 8 if m == 0 else (65 + m - 1 if m < 8 else 128 + m - 8)
    return major, ((idx & 0xf) << 4) | (idx & 0xfff00)


def sd_name(idx):
    """sd_format_disk_name(): sda..sdz, sdaa..sdzz, sdaaa..."""
    name = ""
    idx += 1
    while idx > 0:
        idx -= 1
        name = chr(ord("a") + idx % 26) + name
        idx //= 26
    return "sd" + name


def can_queue(vcpus, ide=False, kern="6x"):
    """storvsc_probe(): a ring's requests per channel (one channel per 4 vCPUs), 90% of them;
    IDE has the one channel."""
    ring = KERNELS[kern].get("ring_requests", 352)
    return ring * 90 // 100 if ide else ring * ((vcpus - 1) // 4 + 1) * 90 // 100


def cpu_lists(kernel, vcpus, nq):
    if kernel == "6x":   # group_cpus_evenly: contiguous groups
        groups = [[c for c in range(vcpus) if c * nq // vcpus == q] for q in range(nq)]
    else:                # 5.15 blk_mq_map_queues without SMT siblings: round robin
        groups = [[c for c in range(vcpus) if c % nq == q] for q in range(nq)]
    return [", ".join(map(str, g)) for g in groups]


# ---------------------------------------------------------------- block devices
def block_devs(path, name, devnum, size, kern, vcpus, sched, nq, tags, wbt, *, part_prefix=None,
               parts=(), props=(), rot="1", pbs="4096", timeout_ms=30000, max_hw_kb=2048,
               cap=None, removable="0", rng="16", device_link=None, mq=True, extra=(),
               seq_offset=0, ra_kb=128, io_min=None, io_opt=0, part_devnum=None, diskseq=None):
    k = KERNELS[kern]
    sched_txt = "none" if not mq else \
        "".join(f"[{n}] " if n == sched else n + " " for n in k["sched"])  # bio-based: "none"
    has_mq = mq and k["mq"]
    nr_req = 128 if not has_mq else (tags if sched == "none" else 2 * min(tags, 128))
    q = [("scheduler", sched_txt), ("nr_requests", str(nr_req)), ("read_ahead_kb", str(ra_kb)),
         ("max_sectors_kb", str(min(k["max_sectors_kb"], max_hw_kb))),
         ("max_hw_sectors_kb", str(max_hw_kb)), ("rq_affinity", "1"), ("nomerges", "0"),
         ("add_random", "1" if rot == "1" else "0"), ("iostats", "1"), ("rotational", rot),
         ("logical_block_size", "512"), ("physical_block_size", pbs), ("hw_sector_size", "512"),
         ("minimum_io_size", io_min or pbs), ("optimal_io_size", str(io_opt))]
    if k["mq"]:   # newer than the legacy (3.10) queue layout
        q += [("write_cache", "write back"), ("zoned", "none"), ("io_poll", "0")]
    if k["io_timeout"]:
        q.append(("io_timeout", str(timeout_ms)))
    if wbt and has_mq:
        q.append(("wbt_lat_usec", "0" if sched == "bfq" else ("75000" if rot == "1" else "2000")))
    attrs = [("dev", "%d:%d" % devnum), ("size", str(size)), ("ro", "0"),
             ("removable", removable), ("range", rng), ("ext_range", "256"),
             ("capability", cap or k["cap_sd"]), ("hidden", "0"), ("alignment_offset", "0"),
             ("inflight", "       0        0"), ("stat", " ".join(["0"] * 17))] + list(extra)
    if k.get("diskseq", True):  # diskseq: 5.15+; a unique number per disk instance (plausible, not real)
        attrs.append(("diskseq", str(diskseq() if diskseq else devnum[0] * 1000 + devnum[1] // 16 + 1 + seq_offset)))
    attrs += [("queue/" + a, v) for a, v in q]
    if has_mq:
        for i, cpus in enumerate(cpu_lists(kern, vcpus, nq)):
            attrs += [(f"mq/{i}/cpu_list", cpus), (f"mq/{i}/nr_tags", str(tags)),
                      (f"mq/{i}/nr_reserved_tags", "0")]
    base = [("DEVNAME", "/dev/" + name), ("MAJOR", str(devnum[0])), ("MINOR", str(devnum[1]))]
    out = [Dev(path, "block", [("DEVTYPE", "disk")] + base + list(props), attrs,
               [("device", device_link)] if device_link else [], node=name)]
    for no, start, psize in parts:
        pname = f"{part_prefix or name}{no}"
        pnum = part_devnum() if part_devnum else (devnum[0], devnum[1] + no)
        out.append(Dev(f"{path}/{pname}", "block",
                       [("DEVTYPE", "partition"), ("DEVNAME", "/dev/" + pname),
                        ("MAJOR", str(pnum[0])), ("MINOR", str(pnum[1])), ("PARTN", str(no))]
                       + list(props),
                       [("dev", "%d:%d" % pnum), ("partition", str(no)), ("start", str(start)),
                        ("size", str(psize)), ("ro", "0"), ("alignment_offset", "0"),
                        ("inflight", "       0        0"), ("stat", " ".join(["0"] * 17))],
                       node=pname))
    return out


def scsi_host(path, n, proc_name, cq, nq, cmd_per_lun, kern, sg=32):
    hp = f"{path}/host{n}"
    return [Dev(hp, "scsi", [("DEVTYPE", "scsi_host")]),
            Dev(f"{hp}/scsi_host/host{n}", "scsi_host", [], [
                ("can_queue", str(cq))] + ([("nr_hw_queues", str(nq))] if KERNELS[kern].get("nr_hw_queues", True) else []) + [
                ("cmd_per_lun", str(cmd_per_lun)),
                ("host_busy", "0"), ("proc_name", proc_name), ("unique_id", str(n)),
                ("sg_tablesize", str(sg)), ("eh_deadline", "off"), ("state", "running"),
                ("use_blk_mq", KERNELS[kern]["use_blk_mq"]), ("prot_capabilities", "0"),
                ("supported_mode", "Initiator"), ("active_mode", "Initiator")],
                [("device", f"../../../host{n}")])]


def scsi_lun(host_path, hctl, vendor, model, rev, depth, kern):
    h, c, t, _ = hctl.split(":")
    tp = f"{host_path}/target{h}:{c}:{t}"
    sp = f"{tp}/{hctl}"
    sdev = Dev(sp, "scsi", [("DEVTYPE", "scsi_device"), ("MODALIAS", "scsi:t-0x00")], [
        ("vendor", f"{vendor:<8.8}"), ("model", f"{model:<16.16}"), ("rev", f"{rev:<4.4}"),
        ("type", "0"), ("scsi_level", "6"), ("state", "running"), ("queue_depth", str(depth)),
        ("queue_type", "simple" if KERNELS[kern]["mq"] else "none"), ("timeout", "180"),
        ("eh_timeout", "10"), ("device_blocked", "0"), ("device_busy", "0"),
        ("modalias", "scsi:t-0x00"), ("iorequest_cnt", "0x0"), ("iodone_cnt", "0x0"),
        ("ioerr_cnt", "0x0")], driver=("scsi", "sd"))
    return [Dev(tp, "scsi", [("DEVTYPE", "scsi_target")]), sdev,
            Dev(f"{sp}/scsi_device/{hctl}", "scsi_device", [], [], [("device", f"../../../{hctl}")]),
            Dev(f"{sp}/scsi_disk/{hctl}", "scsi_disk", [], [
                ("cache_type", "write back"), ("manage_start_stop", "0"), ("allow_restart", "0"),
                ("protection_type", "0")], [("device", f"../../../{hctl}")])]


def scsi_disk_props(vendor, model, id_path):
    tag = "".join(c if c.isalnum() or c == "-" else "_" for c in id_path)
    return [("ID_BUS", "scsi"), ("ID_TYPE", "disk"), ("ID_VENDOR", vendor.strip()),
            ("ID_MODEL", model.strip().replace(" ", "_")), ("ID_PATH", id_path),
            ("ID_PATH_TAG", tag)]


# ---------------------------------------------------------------- VM -> devices
def acpi_chain(vmbus):
    parts, out = vmbus.split("/")[2:], []
    for i, name in enumerate(parts):
        hid = name.split(":")[0]
        attrs = [] if hid == "device" else [("hid", hid), ("modalias", f"acpi:{hid}:")]
        out.append(Dev("/devices/" + "/".join(parts[:i + 1]), "acpi", [], attrs))
    return out


def hw_queues(p, ide):
    """storvsc_probe(): IDE keeps one queue; SCSI gets the cap, or one per present CPU when
    there is none or it exceeds them (or the kernel has no cap)."""
    cap = p.get("hwq_cap", 0) if KERNELS[p["kernel"]].get("hwq_param", True) else 0
    return 1 if ide else (cap if 0 < cap <= p["vcpus"] else p["vcpus"])


def hv_lun(p, ctl, host, lun, seq_offset=0):
    """Devices for one Hyper-V LUN: target, scsi_device (+ class devs), disk, partitions."""
    hctl, name, sched, size, parts, _ = lun
    ide = ctl["cls"] == IDE_CLASS
    cq = can_queue(p["vcpus"], ide, p["kernel"])
    nq = hw_queues(p, ide)
    host_path = f"{p['vmbus']}/{ctl['guid']}/host{host}"
    id_path = "acpi-%s-vmbus-%s-lun-%s" % (p["vmbus"].rsplit("/", 1)[1],
                                           ctl["guid"].replace("-", ""), hctl.split(":")[3])
    devs = scsi_lun(host_path, hctl, "Msft", "Virtual Disk", "1.0", min(2048, cq), p["kernel"])
    sdev_path = devs[1].path
    devs += block_devs(f"{sdev_path}/block/{name}", name, sd_devnum(name), size,
                       p["kernel"], p["vcpus"], sched, nq, cq, p["wbt"], parts=parts,
                       props=scsi_disk_props("Msft", "Virtual Disk", id_path),
                       timeout_ms=180000, device_link=f"../../../{hctl}", seq_offset=seq_offset)
    return devs


def host_devices(p, ctl, hotplug, seq_offset=0):
    """The SCSI host of a controller and its LUNs: what a probe of the controller makes."""
    ide = ctl["cls"] == IDE_CLASS
    devs = scsi_host(f"{p['vmbus']}/{ctl['guid']}", ctl["host"], "storvsc_host",
                     can_queue(p["vcpus"], ide, p["kernel"]), hw_queues(p, ide),
                     2048 if not ide else can_queue(p["vcpus"], ide, p["kernel"]), p["kernel"], sg=512)
    for lun in ctl["luns"]:
        if hotplug or not lun[5]:
            devs += hv_lun(p, ctl, ctl["host"], lun, seq_offset)
    return devs


def driver_devices(p):
    """What sysfs has for the CPUs, the storvsc module and its driver (see the docstring)."""
    cpus = f"0-{p['vcpus'] - 1}" if p["vcpus"] > 1 else "0"
    params = [("parameters/logging_level", "1"), ("parameters/storvsc_ringbuffer_size", "131072"),
              ("parameters/storvsc_vcpus_per_sub_channel", "4"),
              ("parameters/ring_avail_percent_lowater", "10")]
    if KERNELS[p["kernel"]].get("hwq_param", True):   # storvsc_max_hw_queues: 5.13 and later
        params.append(("parameters/storvsc_max_hw_queues", str(p.get("hwq_cap", 0))))
    module = [] if p.get("builtin") else [("initstate", "live"), ("refcnt", "0"), ("coresize", "45056")]
    cpu = Dev("/devices/system/cpu", "cpu", [], [("present", cpus), ("possible", cpus), ("online", cpus),
                                                  ("offline", ""), ("kernel_max", "8191")])
    if not p.get("storvsc", True):   # no storvsc device, so no module loaded for one
        return [cpu]
    return [cpu,
            Dev("/devices/../module/hv_storvsc", "module", [], params + module),
            Dev("/devices/../bus/vmbus/drivers/hv_storvsc", "drivers", [], [("bind", ""), ("unbind", "")])]


def hv_devices(p, hotplug):
    devs = acpi_chain(p["vmbus"]) + driver_devices(p)
    for ctl in p["controllers"]:
        ide = ctl["cls"] == IDE_CLASS
        devs.append(Dev(f"{p['vmbus']}/{ctl['guid']}", "vmbus",
                        [("MODALIAS", "vmbus:" + guid_hex(ctl["cls"]))],
                        [("class_id", "{%s}" % ctl["cls"]), ("device_id", "{%s}" % ctl["guid"]),
                         ("id", str(ctl["relid"])), ("state", "3"), ("monitor_id", str(ctl["relid"] - 1)),
                         ("modalias", "vmbus:" + guid_hex(ctl["cls"])), ("vendor", "0x1414"),
                         ("device", "0x0" if ide else "0x1"), ("numa_node", "0")],
                        driver=("vmbus", "hv_storvsc")))
        devs += host_devices(p, ctl, hotplug)
    net = "9a4c0e2b-6f1d-4b7a-8e3c-5d2f1a0b9c87"
    devs.append(Dev(f"{p['vmbus']}/{net}", "vmbus", [("MODALIAS", "vmbus:" + guid_hex(NETVSC_CLASS))],
                    [("class_id", "{%s}" % NETVSC_CLASS), ("device_id", "{%s}" % net), ("id", "2"),
                     ("state", "3"), ("modalias", "vmbus:" + guid_hex(NETVSC_CLASS)),
                     ("vendor", "0x1414"), ("device", "0x3")], driver=("vmbus", "hv_netvsc")))
    return devs


def virtual_disk(name, devnum, kern, vcpus, sched, mq=True, extra=(), size=8 * GIB):
    return block_devs(f"/devices/virtual/block/{name}", name, devnum, size, kern, vcpus, sched,
                      1, 128, False, rot="0", pbs="512", max_hw_kb=128 if mq else 1024,
                      cap="0" if kern == "6x" else "50", rng="1" if mq else "16", mq=mq,
                      extra=extra)


def other_devices(p):
    kern, vcpus, which = p["kernel"], p["vcpus"], p["others"]
    if which == "none":
        return []
    loops = virtual_disk("loop0", (7, 0), kern, vcpus, "none") + \
        virtual_disk("loop1", (7, 1), kern, vcpus, "none")
    if which == "wsl":
        return loops
    pci = "/devices/pci0000:00"
    def pcidev(slot, ven, dev, cls, drv):
        return Dev(f"{pci}/{slot}", "pci", [("PCI_ID", f"{ven}:{dev}"), ("PCI_SLOT_NAME", slot)],
                   [("vendor", "0x" + ven.lower()), ("device", "0x" + dev.lower()),
                    ("class", cls)], driver=("pci", drv))
    vq = min(vcpus, 4)
    devs = [pcidev("0000:00:04.0", "1AF4", "1001", "0x010000", "virtio-pci"),
            Dev(f"{pci}/0000:00:04.0/virtio1", "virtio", [("MODALIAS", "virtio:d00000002v00001AF4")],
                [("device", "0x0002"), ("vendor", "0x1af4")], driver=("virtio", "virtio_blk"))]
    devs += block_devs(f"{pci}/0000:00:04.0/virtio1/block/vda", "vda", (254, 0), 16 * GIB, kern,
                       vcpus, "none", vq, 256, p["wbt"], rot="0", pbs="512", max_hw_kb=2147483647,
                       device_link="../../../virtio1", props=[("ID_PATH", "pci-0000:00:04.0")])
    nv = f"{pci}/0000:00:05.0/nvme/nvme0"
    # Another vendor's NVMe (QEMU's): no Azure model, left alone. The kernel pads the model to
    # the 40 bytes of Identify Controller.
    devs += [pcidev("0000:00:05.0", "1B36", "0010", "0x010802", "nvme"),
             Dev(nv, "nvme", [("DEVNAME", "/dev/nvme0"), ("MAJOR", "242"), ("MINOR", "0")],
                 [("dev", "242:0"), ("model", "QEMU NVMe Ctrl".ljust(40)), ("state", "live"),
                  ("transport", "pcie"), ("firmware_rev", "8.0.0")],
                 [("device", "../../../0000:00:05.0")], node="nvme0")]
    devs += block_devs(f"{nv}/nvme0n1", "nvme0n1", (259, 0), 440 * GIB, kern, vcpus, "none",
                       vcpus, 1023, p["wbt"], part_prefix="nvme0n1p", rot="0", max_hw_kb=128,
                       cap=None, rng="0", device_link="../../nvme0",
                       props=[("ID_PATH", "pci-0000:00:05.0-nvme-1")], extra=[("nsid", "1")])
    usb = f"{pci}/0000:00:14.0/usb1"
    host = f"{usb}/1-1/1-1:1.0"
    devs += [pcidev("0000:00:14.0", "8086", "A36D", "0x0c0330", "xhci_hcd"),
             Dev(usb, "usb", [("DEVTYPE", "usb_device"), ("PRODUCT", "1d6b/2/606")],
                 [("idVendor", "1d6b"), ("idProduct", "0002"), ("busnum", "1"), ("devnum", "1"),
                  ("speed", "480")], driver=("usb", "usb")),
             Dev(f"{usb}/1-1", "usb", [("DEVTYPE", "usb_device"), ("PRODUCT", "781/5567/100")],
                 [("idVendor", "0781"), ("idProduct", "5567"), ("product", "Cruzer Blade"),
                  ("manufacturer", "SanDisk"), ("busnum", "1"), ("devnum", "2"), ("speed", "480")],
                 driver=("usb", "usb")),
             Dev(host, "usb", [("DEVTYPE", "usb_interface"), ("INTERFACE", "8/6/80")],
                 [("bInterfaceClass", "08"), ("bInterfaceSubClass", "06"),
                  ("bInterfaceProtocol", "50")], driver=("usb", "usb-storage"))]
    devs += scsi_host(host, 5, "usb-storage", 1, 1, 1, kern, sg=2048)
    devs += scsi_lun(f"{host}/host5", "5:0:0:0", "SanDisk", "Cruzer Blade", "1.00", 1, kern)
    sde = f"{host}/host5/target5:0:0/5:0:0:0/block/sde"
    devs += block_devs(sde, "sde", sd_devnum("sde"), 60 * GIB // 2, kern, vcpus, "mq-deadline",
                       1, 1, p["wbt"], parts=[(1, 32, 60 * GIB // 2 - 32)], rot="1", pbs="512",
                       max_hw_kb=120, cap=KERNELS[kern]["cap_removable"], removable="1",
                       timeout_ms=30000, device_link="../../../5:0:0:0",
                       props=scsi_disk_props("SanDisk", "Cruzer Blade",
                                             "pci-0000:00:14.0-usb-0:1:1.0-scsi-0:0:0:0"))
    devs += virtual_disk("dm-0", (253, 0), kern, vcpus, "none", mq=False, size=30 * GIB,
                         extra=[("dm/name", "vg0-root"), ("dm/uuid", "LVM-q1w2e3r4t5y6u7i8"),
                                ("dm/suspended", "0")])
    devs += virtual_disk("md0", (9, 0), kern, vcpus, "none", mq=False, size=64 * GIB,
                         extra=[("md/level", "raid1"), ("md/raid_disks", "2"),
                                ("md/array_state", "clean")])
    return devs + loops


# ---------------------------------------------------------------- NVMe
# Where the facts come from: Linux drivers/nvme/host/core.c and sysfs.c (controller attributes;
# model, serial and firmware_rev printed "%.*s" over the whole Identify field, 40, 20 and 8
# bytes padded with spaces; the synthesized subsysnqn of a controller that reports none,
# nvme_init_subnqn(): "nqn.2014.08.org.nvmexpress:" vid ssvid, then the padded serial and
# model; namespace attributes nsid, wwid, nguid, uuid, csi, metadata_bytes, nuse),
# multipath.c (a head "nvme<subsys>n<ns>" below /sys/devices/virtual/nvme-subsystem/
# nvme-subsys<N>/, bio-based; its paths "nvme<subsys>c<ctrl>n<ns>" below their controllers,
# GENHD_FL_HIDDEN: block/genhd.c gives a hidden disk no dev_t, no partitions, no uevent),
# pci.c (a controller is a class "nvme" device "nvme<N>" below its PCI function; its tag set
# is min(CAP.MQES + 1, io_queue_depth 1024) - 1 deep, one hw queue a CPU; the address
# attribute is the PCI name; uevent NVME_TRTYPE), drivers/pci/controller/pci-hyperv.c (a
# VMBus device of class {44c4f61d-4444-4400-9d52-802e27ede19f} bound to hv_pci is the parent
# of a PCI host bridge "pci<domain>:00", the domain taken from bytes 4 and 5 of the instance
# GUID, i.e. its second field), block/blk-sysfs.c (a bio-based queue has no io_timeout; on
# kernels with blk_mq_queue_attrs ("bio_split" below) no nr_requests, scheduler, rq_affinity
# or wbt_lat_usec either; before that its scheduler reads "none" unbracketed and its
# nr_requests 128), drivers/nvme/host/core.c nvme_io_timeout (30 s: io_timeout 30000). The
# models are the strings azure-vm-utils' udev/80-azure-disk.rules and doc/disk-identification.md
# name; the accelerator's optimal_io_size is 33554432 (NOWS 65535 at 512-byte blocks, as an
# azure-vm-utils maintainer gives it in #99; 262144, which AKS#5455 shows, would make the
# kernel's rule 512, not the 65536 AKS#5743 reports), and read_ahead_kb 65536 is what the
# kernel's rule makes of it (lib/readahead-rule.h). PCI device ids, serials, GUIDs, sizes and MQES are plausible examples,
# not measurements.
NVME_BLOCK_MAJOR = 259       # blkext: namespaces and their partitions, minors in probe order
NVME_CHAR_MAJOR = 242        # the nvme class's char devices (dynamic; plausible)
NVME_GENERIC_MAJOR = 240     # nvme-generic, ng<ctrl>n<ns> (dynamic; plausible)


def padded(text, width):
    """An Identify string as sysfs shows it: the whole field, padded with spaces."""
    return f"{text:<{width}.{width}}"


class Minors:
    """Dynamic device numbers of one major, handed out in the order the devices appear."""
    def __init__(self, major):
        self.major, self.next = major, 0

    def __call__(self):
        self.next += 1
        return (self.major, self.next - 1)


def hv_pci_devices(vmbus, guid, relid):
    """A VMBus device bound to hv_pci and the PCI host bridge pci-hyperv.c makes below it;
    returns the devices and the bridge's path."""
    dom = int(guid.split("-")[1], 16)
    bridge = f"{vmbus}/{guid}/pci{dom:04x}:00"
    devs = [Dev(f"{vmbus}/{guid}", "vmbus", [("MODALIAS", "vmbus:" + guid_hex(HV_PCI_CLASS))],
                [("class_id", "{%s}" % HV_PCI_CLASS), ("device_id", "{%s}" % guid), ("id", str(relid)),
                 ("state", "3"), ("monitor_id", str(relid - 1)), ("modalias", "vmbus:" + guid_hex(HV_PCI_CLASS)),
                 ("vendor", "0x1414"), ("device", "0x5"), ("numa_node", "0")],  # HV_PCIE
                driver=("vmbus", "hv_pci")),
            # The host bridge is a bare device (no subsystem, an empty uevent), which a record
            # cannot describe: its pci_bus class device makes the directory, and the uevent
            # file is written from there (raw, no newline).
            Dev(f"{bridge}/pci_bus/{dom:04x}:00", "pci_bus", [], [("rescan", "")],
                [("device", "../../../pci%04x:00" % dom)], raw_attrs=[("../../uevent", "")])]
    return devs, bridge, f"{dom:04x}:00:00.0"


def pci_function(parent, slot, ven, dev, cls, drv, numa="0"):
    sub = f"{parent}/{slot}"
    return Dev(sub, "pci", [("PCI_CLASS", "%X" % int(cls, 16)),
                            ("PCI_ID", f"{ven}:{dev}"), ("PCI_SUBSYS_ID", f"{ven}:0000"),
                            ("PCI_SLOT_NAME", slot),
                            ("MODALIAS", f"pci:v0000{ven}d0000{dev}sv0000{ven}sd00000000bc01sc08i02")],
               [("vendor", "0x" + ven.lower()), ("device", "0x" + dev.lower()),
                ("subsystem_vendor", "0x" + ven.lower()), ("subsystem_device", "0x0000"),
                ("class", cls), ("numa_node", numa), ("enable", "1")], driver=("pci", drv))


def namespace_attrs(c, ns):
    nguid = "%08x-%04x-%04x-%04x-%012x" % (0x6e766d65, c["instance"], ns["nsid"], 0x4d53, ns["nsid"] << 8 | c["instance"])
    return [("nsid", str(ns["nsid"])), ("wwid", "eui." + nguid.replace("-", "")), ("nguid", nguid),
            ("uuid", nguid), ("csi", "0"), ("metadata_bytes", "0"), ("nuse", str(ns["size"]))]


def hide(dev):
    """A path device of native multipath: GENHD_FL_HIDDEN, so no dev_t (no dev attribute, no
    node, no DEVNAME/MAJOR/MINOR) and hidden 1."""
    dev.node = None
    dev.props = [(k, v) for k, v in dev.props if k not in ("DEVNAME", "MAJOR", "MINOR")]
    dev.attrs = [(k, "1" if k == "hidden" else v) for k, v in dev.attrs if k != "dev"]
    return dev


def bio_based(dev, kern):
    """A multipath head's queue: bio-based (block/blk-sysfs.c)."""
    drop = {"queue/io_timeout", "queue/wbt_lat_usec"}
    if KERNELS[kern].get("bio_split"):
        drop |= {"queue/scheduler", "queue/nr_requests", "queue/rq_affinity"}
    dev.attrs = [(k, v) for k, v in dev.attrs if k not in drop and not k.startswith("mq/")]
    return dev


def nvme_controller(p, c):
    """One NVMe controller: its PCI function (under hv_pci's bridge, or on a root bus of its
    own), or a fabrics controller below /sys/devices/virtual/nvme-fabrics/ctl, and its
    subsystem. Returns the devices, and the paths and address its namespaces need."""
    vcpus, n = p["vcpus"], c["instance"]
    devs = []
    transport = c.get("transport", "pcie")
    if transport == "pcie":
        if c.get("hv_pci"):
            bus, bridge, slot = hv_pci_devices(p["vmbus"], c["hv_pci"], c["relid"])
            devs += bus
        else:
            bridge, slot = "/devices/pci0000:00", c["slot"]
        devs.append(pci_function(bridge, slot, c["pci_id"][0], c["pci_id"][1], "0x010802", "nvme"))
        ctrl = f"{bridge}/{slot}/nvme/nvme{n}"
        ctrl_link = f"../../../{slot}"
        address = slot
        vid = int(c["pci_id"][0], 16)
        nqn = "nqn.2014.08.org.nvmexpress:%04x%04x%s%s" % (vid, vid, padded(c["serial"], 20), padded(c["model"], 40))
        nqn = c.get("nqn", nqn)
        uevent = [("NVME_TRTYPE", "pcie")]
    else:
        # Fabrics controllers are children of the nvme-fabrics class device "ctl"
        # (drivers/nvme/host/fabrics.c), which has no dev_t.
        devs.append(Dev("/devices/virtual/nvme-fabrics/ctl", "nvme-fabrics"))
        ctrl, ctrl_link = f"/devices/virtual/nvme-fabrics/ctl/nvme{n}", "../../ctl"
        address = c["address"]
        nqn = c["nqn"]
        uevent = [("NVME_TRTYPE", transport), ("NVME_TRADDR", c["traddr"]), ("NVME_TRSVCID", c["trsvcid"]),
                  ("NVME_HOST_TRADDR", "none"), ("NVME_HOST_IFACE", "none")]
    nq, tags = c.get("queues", vcpus), c.get("tags", 1023)
    subsys = f"/devices/virtual/nvme-subsystem/nvme-subsys{n}"
    ident = [("model", padded(c["model"], 40)), ("serial", padded(c["serial"], 20)),
             ("firmware_rev", padded(c["firmware"], 8))]
    devs += [Dev(ctrl, "nvme", [("DEVNAME", f"/dev/nvme{n}"), ("MAJOR", str(NVME_CHAR_MAJOR)), ("MINOR", str(n))] + uevent,
                 [("dev", f"{NVME_CHAR_MAJOR}:{n}")] + ident +
                 [("cntlid", str(c.get("cntlid", 0))), ("transport", transport), ("subsysnqn", nqn),
                  ("address", address), ("state", "live"), ("numa_node", "0" if transport == "pcie" else "-1"),
                  # sqsize is 0's based: pci.c's q_depth - 1 (the tag set's depth, too, below
                  # 4096), a fabrics controller's queue_size - 1 (its tag set sqsize + 1).
                  ("queue_count", str(nq + 1)), ("sqsize", str(tags if transport == "pcie" else tags - 1)),
                  ("kato", "0" if transport == "pcie" else "5"),
                  ("cntrltype", "io"), ("dctype", "none"), ("reset_controller", ""), ("rescan_controller", "")]
                 + ([("delete_controller", "")] if transport != "pcie" else []),
                 [("device", ctrl_link)] if ctrl_link else [], node=f"nvme{n}"),
             # The subsystem: every controller has one (nvme_init_subsystem()), with a link to it.
             Dev(subsys, "nvme-subsystem", [],
                 ident + [("subsysnqn", nqn), ("subsystype", "nvm"), ("iopolicy", "numa")],
                 [(f"nvme{n}", "../../../" + ctrl[len("/devices/"):])])]
    return devs, ctrl, subsys, address


def nvme_namespaces(p, c, ctrl, subsys, address, minors, generic, seqs, hotplug):
    """A controller's namespaces: the base ones, or (hotplug) those hot-added later.
    Direct: a disk below the controller (and its nvme-generic char device); native multipath:
    a head below the subsystem and a hidden path below the controller."""
    kern, vcpus, n = p["kernel"], p["vcpus"], c["instance"]
    nq, tags = c.get("queues", vcpus), c.get("tags", 1023)
    devs = []
    for ns in c["namespaces"]:
        if bool(ns.get("hotplug")) != hotplug:
            continue
        name = f"nvme{n}n{ns['nsid']}"
        q = dict(diskseq=lambda: next(seqs), rot="0", pbs=ns.get("pbs", "4096"), io_min=ns.get("pbs", "4096"), io_opt=ns.get("io_opt", 0),
                 ra_kb=ns.get("ra_kb", 128), max_hw_kb=ns.get("max_hw_kb", 128), cap=None, rng="0",
                 timeout_ms=ns.get("io_timeout", 30000), extra=namespace_attrs(c, ns))
        parts = dict(part_prefix=name + "p", parts=ns.get("parts", ()), part_devnum=minors)
        if c.get("multipath"):
            head = block_devs(f"{subsys}/{name}", name, minors(), ns["size"], kern, vcpus, "none", 1, tags, False,
                              device_link=f"../../nvme-subsys{n}", mq=False, **parts, **q)
            path = f"nvme{n}c{n}n{ns['nsid']}"
            devs += [bio_based(head[0], kern)] + head[1:]
            devs += [hide(d) for d in block_devs(f"{ctrl}/{path}", path, (0, 0), ns["size"], kern, vcpus,
                                                 ns.get("sched", "none"), nq, tags, p["wbt"],
                                                 device_link=f"../../nvme{n}", **q)]
            continue
        id_path = [("ID_PATH", f"pci-{address}-nvme-{ns['nsid']}")] if c.get("transport", "pcie") == "pcie" else []
        devs += block_devs(f"{ctrl}/{name}", name, minors(), ns["size"], kern, vcpus, ns.get("sched", "none"), nq,
                           tags, p["wbt"], device_link=f"../../nvme{n}", props=id_path, **parts, **q)
        ng = f"ng{n}n{ns['nsid']}"
        num = generic()
        devs.append(Dev(f"{ctrl}/{ng}", "nvme-generic",
                        [("DEVNAME", f"/dev/{ng}"), ("MAJOR", str(num[0])), ("MINOR", str(num[1]))],
                        [("dev", "%d:%d" % num)], [("device", f"../../nvme{n}")], node=ng))
    return devs


def nvme_devices(p, hotplug=False):
    """Every NVMe controller and namespace of the profile, device numbers in probe order; with
    hotplug, the namespaces hot-added later alone, numbered after those."""
    import itertools
    minors, generic = Minors(NVME_BLOCK_MAJOR), Minors(NVME_GENERIC_MAJOR)
    seqs = itertools.count(21)   # diskseq: one number a disk instance, in probe order (plausible)
    devs, extra = [], []
    for c in p.get("nvme", []):
        cdevs, ctrl, subsys, address = nvme_controller(p, c)
        devs += cdevs + nvme_namespaces(p, c, ctrl, subsys, address, minors, generic, seqs, False)
    for c in p.get("nvme", []):
        _, ctrl, subsys, address = nvme_controller(p, c)
        extra += nvme_namespaces(p, c, ctrl, subsys, address, minors, generic, seqs, True)
    return extra if hotplug else devs


def unique(devs):
    seen, out = set(), []
    for d in devs:
        if d.path not in seen:       # umockdev aborts on a repeated P:
            seen.add(d.path)
            out.append(d)
    return out


def vm_devices(p, hotplug=False):
    return unique(hv_devices(p, hotplug) + nvme_devices(p) + other_devices(p))


def many_disks(p, n):
    """The VM with n data disks instead of its own, 64 LUNs a controller (Azure's limit),
    as many controllers as that takes; only loop devices beside them (no sde stick)."""
    sched = ["mq-deadline", "bfq", "none"]
    ctls = []
    for h in range((n + 63) // 64):
        luns = [(f"{h}:0:0:{l}", sd_name(64 * h + l), sched[(64 * h + l) % 3], 64 * GIB, [], False)
                for l in range(min(64, n - 64 * h))]
        ctls.append(dict(host=h, guid="%08x-1e82-4818-a1c3-63d806ec15bb" % (0xf8b30000 + h),
                         cls=SCSI_CLASS, relid=14 + h, luns=luns))
    return dict(p, controllers=ctls, others="wsl")


def many_nvme(p, n):
    """The VM with n Azure NVMe data disks beside its storvsc ones (--disks): namespaces of
    accelerator controllers ("MSFT NVMe Accelerator v1.0") under hv_pci, laid out as azure-v6's
    (read_ahead_kb 65536, optimal_io_size 33554432, io_timeout 30000: the kernel's 30 s), 64
    namespaces a controller (nsid 2 to 65: data LUNs 0 to 63, Azure's most data disks a VM), as
    many controllers as that takes, their schedulers mq-deadline, bfq and none in turn. No OS
    namespace (nsid 1): the storvsc disks are the VM's own, as --disks leaves them."""
    sched = ["mq-deadline", "bfq", "none"]
    relid = 14 + len(p["controllers"])   # after the storvsc controllers' channels
    ctls = []
    for i in range((n + 63) // 64):
        nss = [dict(nsid=2 + j, size=64 * GIB, ra_kb=65536, io_opt=33554432, max_hw_kb=512,
                    sched=sched[(64 * i + j) % 3]) for j in range(min(64, n - 64 * i))]
        ctls.append(dict(instance=i, model=ACCEL, serial="SN: %06d" % (i + 1), firmware="v1.00000",
                         pci_id=("1414", "B111"), hv_pci="%08x-%04x-4a3b-8d2e-6f1a9c4b7e20" % (0x0d5b1c3e + i, 0x7870 + i),
                         relid=relid + i, tags=1023, namespaces=nss))
    return dict(p, nvme=ctls)


def write_lun_fragments(p, directory):
    """Every LUN's own devices, one file each (NNNNN.umockdev, in LUN order), and the VM
    without them on stdout: disks to add one by one."""
    import os
    empty = dict(p, controllers=[dict(c, luns=[]) for c in p["controllers"]])
    have = {d.path for d in vm_devices(empty)}
    i = 0
    for c in p["controllers"]:
        for l in c["luns"]:
            frag = [d for d in hv_lun(p, c, c["host"], l) if d.path not in have]
            have.update(d.path for d in frag)
            with open(os.path.join(directory, "%05d.umockdev" % i), "w") as f:
                f.write("".join(d.text() + "\n" for d in frag))
            i += 1
    print("".join(d.text() + "\n" for d in vm_devices(empty)), end="")


def take_option(argv, name):
    """The value of "name N" among argv (removed from it), or None."""
    if name in argv:
        i = argv.index(name)
        value = int(argv[i + 1])
        del argv[i:i + 2]
        return value
    return None


def main(argv):
    argv = list(argv)
    if len(argv) < 2 or argv[1] not in PROFILES:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\nprofiles: " + " ".join(PROFILES) + "\n")
        return 0 if argv[1:2] == ["--profiles"] else 2
    p = dict(PROFILES[argv[1]])
    vcpus, cap = take_option(argv, "--vcpus"), take_option(argv, "--cap")
    if vcpus:
        p["vcpus"] = vcpus
    if cap is not None:
        p["hwq_cap"] = cap
    disks = take_option(argv, "--disks")
    if disks is not None:
        p = many_disks(p, disks)
    nvme = take_option(argv, "--nvme")
    if nvme is not None:
        p = many_nvme(p, nvme)
    if argv[2:] == ["--kernel-tar"]:
        sys.stdout.buffer.write(kernel_tar(p["kernel"]))
        return 0
    if argv[2:3] == ["--lun-fragments"] and len(argv) == 4:
        write_lun_fragments(p, argv[3])
        return 0
    luns = [(c, l) for c in p["controllers"] for l in c["luns"]]
    if argv[2:3] == ["--list-luns"]:
        for c, l in luns:
            print(f"{l[0]} {l[1]} {c['guid']}" + (" hotplug" if l[5] else ""))
        return 0
    if argv[2:3] == ["--only-lun"] and len(argv) == 4:
        match = [(c, l) for c, l in luns if l[0] == argv[3]]
        if not match:
            sys.stderr.write(f"no LUN {argv[3]} in profile {argv[1]}\n")
            return 2
        c, l = match[0]
        # everything else the base VM has (this LUN and hot-plug LUNs left out)
        rest = dict(p, controllers=[dict(cc, luns=[x for x in cc["luns"] if x is not l])
                                    for cc in p["controllers"]])
        have = {d.path for d in vm_devices(rest)}
        frag = [d for d in hv_lun(p, c, c["host"], l) if d.path not in have]
        print("".join(d.text() + "\n" for d in frag), end="")
        return 0
    if argv[2:] == ["--nvme-hotplug"]:
        # The NVMe namespaces hot-added later (an Azure data disk attached to the running VM:
        # a new namespace of the accelerator), numbered after every base device.
        print("".join(d.text() + "\n" for d in nvme_devices(p, hotplug=True)), end="")
        return 0
    if argv[2:3] == ["--only-host"] and len(argv) == 4:
        match = [c for c in p["controllers"] if c["host"] == int(argv[3])]
        if not match:
            sys.stderr.write(f"no host {argv[3]} in profile {argv[1]}\n")
            return 2
        # A re-probe makes new disk instances: the kernel gives them new diskseq numbers.
        print("".join(d.text() + "\n" for d in unique(host_devices(p, match[0], False, seq_offset=500))), end="")
        return 0
    if len(argv) != 2:
        sys.stderr.write("usage: mkvm.py PROFILE [--vcpus N] [--cap N] [--disks N] [--nvme N] "
                         "[--list-luns | --only-lun H:C:T:L | --only-host N | --nvme-hotplug | --lun-fragments DIR]\n")
        return 2
    print("".join(d.text() + "\n" for d in vm_devices(p)), end="")  # blank line after each
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
