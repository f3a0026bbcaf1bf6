# shellcheck shell=bash
# Builds the storvsc stand-in (tests/vm/standin) for the guest's kernel. Source it after
# qemu.sh, then, once vm_require has run:
#
#   vm_build_standin   # sets STANDIN_KO: hv_storvsc.ko, built in $VM_WORK/standin
#
# kbuild writes into the module's directory: the sources are copied there first, so the
# checkout stays clean. The tree also holds the real hv_storvsc.ko: insmod this one by path.

vm_build_standin() {
        local src dir
        src=$(cd "$(dirname "${BASH_SOURCE[0]}")/standin" && pwd)
        dir=$VM_WORK/standin
        mkdir -p "$dir"
        cp "$src/hv_storvsc.c" "$src/Kbuild" "$dir/"
        if ! make -s -C "$VM_HEADERS" M="$dir" modules > "$dir/build.log" 2>&1; then
                cat "$dir/build.log" >&2
                echo "FAIL: the stand-in does not build against $VM_HEADERS" >&2
                return 1
        fi
        # kbuild's own chatter ("Skipping BTF generation ...") is fine; a warning is not.
        if grep -E 'warning:|error:' "$dir/build.log" >&2; then
                echo "FAIL: the stand-in builds with warnings" >&2
                return 1
        fi
        STANDIN_KO=$dir/hv_storvsc.ko
}
