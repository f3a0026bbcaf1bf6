#!/bin/bash
# The storvsc stand-in against the facts it models of the guest's kernel's storvsc (VM_KERNEL:
# 5.10, 6.1, 6.12, 7.3; tests/vm/standin/guest-selftest.sh, hv_storvsc.c citing each version's
# source): the parameter (absent on 5.10), its mode, read at probe and reset to 0 above the
# present CPUs; can_queue from storvsc's formula (369 or 352 requests a channel); one hw queue
# per present CPU, or the cap;
# the sysfs path, class_id and device_id; INQUIRY strings; data through unbind and bind;
# LUN hot-add and hot-remove; the IDE case; rmmod. On a busybox guest with 8 CPUs, so that a
# cap of 4 means something. Exits 77 only without root, QEMU or the kernel.
# usage: standin-check.sh SOURCE_DIR
set -euo pipefail
here=$(realpath "$1")/tests/vm

# shellcheck source=tests/vm/qemu.sh
. "$here/qemu.sh"
# shellcheck source=tests/vm/standin.sh
. "$here/standin.sh"
vm_require
vm_build_standin

cat > "$VM_WORK/standin-test" <<'EOF2'
#!/bin/sh
modprobe sd_mod || exit 1
sh /vmtest/selftest.sh /vmtest/hv_storvsc.ko > /tmp/selftest.log 2>&1
cat /tmp/selftest.log
grep -qx "standin-selftest: PASS" /tmp/selftest.log
EOF2
chmod +x "$VM_WORK/standin-test"

rc=0
vm_initramfs --name standin --smp 8 --mem 1G --modules "sd_mod" \
        --file "$STANDIN_KO:/vmtest/hv_storvsc.ko" --file "$here/standin/guest-selftest.sh:/vmtest/selftest.sh" \
        "$VM_WORK/standin-test" || rc=$?
vm_verdict "$rc" "the stand-in's self-test on $VM_KVER"
