# shellcheck shell=bash
# Builds the storvsc stand-in (tests/vm/standin) for the guest's kernel. Source it after
# qemu.sh, then, once vm_require has run:
#
#   vm_build_standin   # sets STANDIN_KO: hv_storvsc.ko, built in $VM_WORK/standin
#
# It builds inside the kernel's own release's root (VM_ROOTFS: bullseye for 5.10, bookworm for
# 6.1, trixie for 6.12 and 7.3) with that release's compiler, make and libc: the kbuild tools
# Debian ships with a kernel (modpost, objtool, resolve_btfids) are linked against that
# release's libc (trixie's need glibc 2.38), and the kernel's flags are its compiler's (gcc-12
# rejects gcc-14's -fmin-function-alignment). The root is never written: systemd-nspawn runs
# on a private overlay of it with a tmpfs upper, in a mount namespace of its own, with the
# kernel's tree (read-only) and the build directory bound at their host paths, as the
# headers name the tree by its path.
# kbuild writes into the module's directory: the sources are copied there first, so the
# checkout stays clean. The tree also holds the real hv_storvsc.ko: insmod this one by path.

# vm_in_rootfs COMMAND...: runs COMMAND in the release's root (overlaid), with VM_TREE and
# $VM_WORK visible at their paths, and tests/common/container.sh at /opt/container.sh for a
# command that needs its functions (deb_build).
vm_in_rootfs() {
        local ov
        ov=$(mktemp -d "$VM_WORK/rootfs.XXXXXX")
        mkdir -p "$ov/upper" "$ov/work" "$ov/merged"
        # unshare -m: the overlay goes with the namespace, whatever happens to this shell.
        # shellcheck disable=SC2154 # container_sh: tests/common/container.sh's, which qemu.sh sources
        unshare -m --propagation private sh -ec '
                ov=$1 lower=$2 tree=$3 work=$4 helper=$5
                shift 5
                mount -t tmpfs tmpfs "$ov/upper"
                mkdir "$ov/upper/u" "$ov/upper/w"
                mount -t overlay -o "lowerdir=$lower,upperdir=$ov/upper/u,workdir=$ov/upper/w" overlay "$ov/merged"
                exec systemd-nspawn -q --register=no --keep-unit --pipe -D "$ov/merged" -M "hvtuned-build-$$" \
                        --bind-ro="$tree" --bind="$work" --bind-ro="$helper:/opt/container.sh" --chdir="$work" \
                        -E LC_ALL=C.UTF-8 -- "$@"
        ' vm_in_rootfs "$ov" "$VM_ROOTFS" "$VM_TREE" "$VM_WORK" "$container_sh" "$@"
        local rc=$?
        rm -rf "$ov"
        return $rc
}

vm_build_standin() {
        local src dir
        src=$(cd "$(dirname "${BASH_SOURCE[0]}")/standin" && pwd)
        dir=$VM_WORK/standin
        vm_require_rootfs
        need_tools systemd-nspawn
        mkdir -p "$dir"
        cp "$src/hv_storvsc.c" "$src/Kbuild" "$dir/"
        if ! vm_in_rootfs make -s -C "$VM_HEADERS" M="$dir" CONFIG_DEBUG_INFO_BTF_MODULES= modules > "$dir/build.log" 2>&1; then
                cat "$dir/build.log" >&2
                echo "FAIL: the stand-in does not build against $VM_HEADERS in the $VM_SUITE root" >&2
                return 1
        fi
        # kbuild's own chatter ("Skipping BTF generation ...") is fine; a warning is not.
        if grep -E 'warning:|error:' "$dir/build.log" | grep -v 'pahole version differs' >&2; then
                echo "FAIL: the stand-in builds with warnings" >&2
                return 1
        fi
        STANDIN_KO=$dir/hv_storvsc.ko
        [ -f "$STANDIN_KO" ] || { cat "$dir/build.log" >&2; echo "FAIL: no $STANDIN_KO" >&2; return 1; }
}
