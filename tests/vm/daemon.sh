#!/bin/bash
# hvtuned end to end on a real kernel (VM_KERNEL: 5.10, 6.1, 6.12, 7.3) in its own release's
# guest: that release's root (bullseye, bookworm, trixie) booted with its systemd, udevd and
# journald as PID 1 (tests/vm/qemu.sh), that release's .deb of hvtuned installed in it with
# dpkg, and the storvsc stand-in (tests/vm/standin, built for that kernel in that root)
# playing Hyper-V's disks over the real SCSI midlayer, sd and blk-mq, beside a scsi_debug
# disk. daemon-inside.sh drives it in the guest with systemctl, udevadm and journalctl.
# The .deb is BUILD_DIR/release/SUITE/hvtuned_*.deb when the release package test
# (tests/release) left one; otherwise it is built here the same way (dpkg-buildpackage in the
# release's root, from the working tree as it is). Exits 77 only without root, QEMU, the
# kernel or the root. The guest also has QEMU's NVMe controller (the decoy) from boot, and
# tests/vm/nvme-stage.sh makes Azure's NVMe namespaces in it (the kernel's NVMe target).
# VM_DAEMON_INSIDE names another guest script than daemon-inside.sh (a developer's shortcut:
# its stage 0 and one stage).
# usage: daemon.sh BUILD_DIR SOURCE_DIR      (VM_KERNEL in the environment, default 6.1)
set -euo pipefail
build=$(realpath "$1") src=$(realpath "$2")
here=$src/tests/vm

# shellcheck source=tests/vm/qemu.sh
. "$here/qemu.sh"
# shellcheck source=tests/vm/standin.sh
. "$here/standin.sh"
vm_require
vm_require_rootfs
vm_build_standin

deb=$(ls "$build/release/$VM_SUITE"/hvtuned_*_amd64.deb 2>/dev/null | head -n 1 || true)
# One older than this build's hvtuned is of other sources: never test it.
if [ -n "$deb" ] && [ ! "$deb" -nt "$build/daemon/hvtuned" ]; then
        echo "vm: $deb is older than $build/daemon/hvtuned: not used"
        deb=
fi
if [ -n "$deb" ]; then
        echo "vm: $VM_SUITE's .deb from the release package test: $deb"
else
        pkgsrc=$VM_WORK/pkg/hvtuned-$(project_version "$build")
        copy_source "$src" "$pkgsrc"
        # -d: whether debian/control's build dependencies resolve in each release is the
        # release package test's to judge (bullseye's root has pkg-config, not pkgconf); here
        # the root's tools build it.
        if ! vm_in_rootfs bash -c '. /opt/container.sh && deb_build "$@"' sh "$pkgsrc" "$VM_WORK/pkg/build.log" -d; then
                echo "FAIL: dpkg-buildpackage in the $VM_SUITE root"
                exit 1
        fi
        deb=$(ls "$VM_WORK/pkg"/hvtuned_*_amd64.deb)
        echo "vm: no $build/release/$VM_SUITE/hvtuned_*.deb: built $(basename "$deb") in the $VM_SUITE root"
fi

stage=$VM_WORK/stage
mkdir -p "$stage/vmtest-files"
cp "$STANDIN_KO" "$stage/vmtest-files/hv_storvsc.ko"
cp "$deb" "$stage/vmtest-files/hvtuned.deb"
# The release's root has no busybox; its mke2fs makes the filesystem stage 3 mounts where the
# root has no e2fsprogs (trixie's).
cp /bin/busybox "$stage/vmtest-files/busybox"
# The operator's steps and daemon/messages.h's MESSAGE_IDs, as the container tests have them.
cp "$container_sh" "$stage/vmtest-files/container.sh"
cp "$messages_h" "$stage/vmtest-files/messages.h"
echo "HVTUNED=/usr/sbin/hvtuned" > "$stage/vmtest-files/env"
echo "VMTEST_KERNEL=$VM_SERIES" >> "$stage/vmtest-files/env"
# The NVMe stage (tests/vm/nvme-stage.sh): one layout a kernel, to keep to one boot each.
# Native multipath heads on 6.1 (tcp: the old bio-based head, which still shows scheduler
# and nr_requests, over paths that have io_timeout) and 6.12 (loop: the new head, with
# neither, over paths without io_timeout); the direct layout (nvme_core.multipath=N, as
# Azure's accelerator most likely is) on 5.10 and 7.3, over tcp, so that the namespace itself
# has the io_timeout Azure's rule sets. nvme-loop is built on 6.12 and 7.3 only.
case $VM_SERIES in
5.10) nvme_layout=direct nvme_transport=tcp ;;
6.1) nvme_layout=heads nvme_transport=tcp ;;
6.12) nvme_layout=heads nvme_transport=loop ;;
7.3) nvme_layout=direct nvme_transport=tcp ;;
esac
echo "VMTEST_NVME_LAYOUT=$nvme_layout" >> "$stage/vmtest-files/env"
echo "VMTEST_NVME_TRANSPORT=$nvme_transport" >> "$stage/vmtest-files/env"
cp "$here/nvme-stage.sh" "$here/nvme-events.sh" "$stage/vmtest-files/"
nvme_args=()
[ "$nvme_layout" = heads ] || nvme_args+=(--append nvme_core.multipath=N)
# The decoy: QEMU's NVMe controller ("QEMU NVMe Ctrl"), on every kernel, from boot.
truncate -s 16M "$VM_WORK/nvme-decoy.img"
nvme_args+=(--qemu -drive --qemu "file=$VM_WORK/nvme-decoy.img,if=none,id=decoy,format=raw"
        --qemu -device --qemu "nvme,serial=hvtuned-decoy,drive=decoy")

rc=0
vm_systemd --name "daemon-$VM_SERIES" --smp 4 --mem 2G --timeout "${VM_DAEMON_TIMEOUT:-900}" --stage "$stage" \
        "${nvme_args[@]}" "${VM_DAEMON_INSIDE:-$here/daemon-inside.sh}" || rc=$?
cat "$VM_OUTPUT" 2>/dev/null || true
if [ "$rc" != 0 ]; then
        echo "FAIL: $VM_KVER in $VM_SUITE's root: the guest's test exited with ${VM_STATUS:-no status} ($rc); console: $VM_LOG, journal: $VM_OUT/journal.txt"
        [ "$rc" != 255 ] || tail -n 40 "$VM_LOG"
        VM_KEEP=1
        exit 1
fi
echo "PASS: $VM_KVER in $VM_SUITE's root, $VM_BOOTS boot(s)"
