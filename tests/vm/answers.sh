#!/bin/bash
# tests/kernel/kernel-answers.h on a real kernel (VM_KERNEL: 5.10, 6.1, 6.12, 7.3): this build's
# test-loop (tests/kernel/test-loop.c) on a loop device of a busybox guest of that kernel, its
# shared libraries from this machine beside it. Its kernel_couplings rows take the guest's own
# column (uname), so every row the emulation answers with (tests/emulate/sysfs-kernel.c,
# $HVTUNED_TEST_KERNEL) is one that kernel gave; the single-write answers and the knock-on
# restores are checked there too. Exits 77 only without root, QEMU or the kernel.
# usage: answers.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1") here=$(realpath "$2")/tests/vm

# shellcheck source=tests/vm/qemu.sh
. "$here/qemu.sh"
vm_require

exe=$build/tests/kernel/test-loop
[ -x "$exe" ] || { echo "FAIL: no $exe: build it first"; exit 1; }
files=(--file "$exe:/vmtest/test-loop")
# The libraries as this machine's loader resolves them, each a file (not a link) at the path
# the binary asks for: the guest's root is busybox's only.
while read -r lib; do
        files+=(--file "$(realpath "$lib"):$lib")
done < <(ldd "$exe" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')

cat > "$VM_WORK/answers-test" <<'EOF2'
#!/bin/sh
modprobe loop || { echo "no loop module"; exit 1; }
# The elevators test-loop offers beyond none and mq-deadline, where they are modules.
modprobe bfq 2> /dev/null
modprobe kyber-iosched 2> /dev/null
echo "kernel $(uname -r)"
cd /tmp && /vmtest/test-loop
EOF2
chmod +x "$VM_WORK/answers-test"

rc=0
vm_initramfs --name "answers-$VM_SERIES" --smp 2 --mem 1G --modules "loop bfq kyber-iosched" "${files[@]}" \
        "$VM_WORK/answers-test" || rc=$?
vm_verdict "$rc" "tests/kernel/kernel-answers.h on $VM_KVER"
