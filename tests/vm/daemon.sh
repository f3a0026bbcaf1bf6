#!/bin/bash
# hvtuned end to end on a real 6.1 kernel: `meson install --destdir` of the build, staged over
# the host's root in a QEMU guest that boots systemd as PID 1 (tests/vm/qemu.sh), with the
# storvsc stand-in (tests/vm/standin) playing Hyper-V's disks over the real SCSI midlayer,
# sd and blk-mq, beside a scsi_debug disk. daemon-inside.sh drives it in the guest with
# systemctl, udevadm and journalctl. Exits 77 only without root, QEMU or the kernel.
# usage: daemon.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1") src=$(realpath "$2")
here=$src/tests/vm

# shellcheck source=tests/vm/qemu.sh
. "$here/qemu.sh"
# shellcheck source=tests/vm/standin.sh
. "$here/standin.sh"
vm_require
vm_build_standin

stage=$VM_WORK/stage
meson install -C "$build" --destdir "$stage" --no-rebuild --quiet
prefix=$(meson introspect --buildoptions "$build" | python3 -c \
        'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
mkdir -p "$stage/vmtest-files" "$stage/etc/systemd/system/hvtuned.service.d"
cp "$STANDIN_KO" "$stage/vmtest-files/hv_storvsc.ko"
# QEMU's guest is no Hyper-V guest to systemd-detect-virt: the stand-in is what makes it one.
cat > "$stage/etc/systemd/system/hvtuned.service.d/vmtest.conf" <<'EOF'
[Unit]
ConditionVirtualization=
EOF
echo "HVTUNED=$prefix/sbin/hvtuned" > "$stage/vmtest-files/env"

rc=0
vm_systemd --name daemon --smp 4 --mem 2G --timeout 400 --stage "$stage" "$here/daemon-inside.sh" || rc=$?
cat "$VM_OUTPUT" 2>/dev/null || true
if [ "$rc" != 0 ]; then
        echo "FAIL: the guest's test exited with ${VM_STATUS:-no status} ($rc); console: $VM_LOG, journal: $VM_OUT/journal.txt"
        [ "$rc" != 255 ] || tail -n 40 "$VM_LOG"
        VM_KEEP=1
        exit 1
fi
echo PASS
