# shellcheck shell=bash
# The real-kernel test tier's harness: boots one of Debian's kernels (tools/fetch-vm-kernel:
# bullseye's 5.10, bookworm's 6.1, trixie's 6.12, trixie-backports' 7.3) under QEMU (TCG: this
# machine's KVM cannot run them) and runs a test script inside, one of two ways:
#
#   vm_initramfs   busybox is the whole system: the kernel, the modules asked for, the script.
#                  ~3-5 s a run at -smp 4, ~12 s at -smp 32. For what needs only the kernel
#                  (sysfs, modules, blk-mq, an out-of-tree module).
#   vm_systemd     systemd as PID 1 on the kernel's own release's root (tools/fetch-release:
#                  bullseye for 5.10, bookworm for 6.1, trixie for 6.12 and 7.3; an ext4 image
#                  of it read-only on a virtio disk, a tmpfs overlay on top) with that release's
#                  udevd and journald, a staging tree copied over it. ~20 s to "running",
#                  ~25-30 s a run.
#
# Source it from a bash test (set -euo pipefail), then:
#
#   vm_require                      # exit 77 with "SKIP: why" unless this machine can boot it
#
# It sources tests/common/container.sh: its checks (skip, need_root, need_tools), and what
# the tests that boot a release share with the container tiers.
#   rc=0; vm_initramfs [OPTIONS] SCRIPT || rc=$?
#   rc=0; vm_systemd   [OPTIONS] SCRIPT || rc=$?
#
# Each returns the script's exit status, or 255 when there is none: a timeout, a panic, a boot
# that went wrong (the console's tail goes to stderr) or a bad call. Call them with `|| rc=$?`:
# they check their own steps, as errexit is off in a function called that way. After a run:
#   VM_STATUS   the script's status, empty when it reported none
#   VM_OUTPUT   a file: the script's stdout and stderr
#   VM_LOG      a file: the guest's console (kernel and, in systemd mode, systemd's status)
#   VM_OUT      vm_systemd: the host directory the guest saw at $VMTEST_OUT (results share):
#               output.log (= VM_OUTPUT), status, journal.txt (journalctl -b) and what the
#               script wrote there
#   VM_SECONDS  the run's wall time, QEMU start to exit, also printed as a "vm:" line
#   VM_BOOTS    how many boots the run took: a guest that never reached its /init (TCG's
#               early int3 at sched_clock_cpu on 6.12 and 7.3, about 1 boot in 10) is booted
#               again, up to VM_BOOT_TRIES (default 3) boots, each retry printed as a "vm:" line
# and from vm_require: VM_SERIES (the kernel series: $VM_KERNEL, default 6.1), VM_TREE (the
# unpacked kernel), VM_KVER (its uname -r), VM_HEADERS (make -C "$VM_HEADERS" M="$PWD" modules
# builds a module for it; insmod it by path there, as the tree holds the real modules of the
# same names), VM_SUITE (its Debian release) and VM_ROOTFS (that release's root, which
# vm_systemd boots; vm_require_rootfs checks it is there).
#
# OPTIONS, for both:
#   --smp SPEC       QEMU's -smp (default 2): "4", "8", "32", "2,maxcpus=32" (2 CPUs run,
#                    nr_cpu_ids is 32). All vCPUs share one host thread (VM_TCG_THREAD=multi
#                    gives each its own: slower with more vCPUs than this machine's 2 cores).
#   --mem SIZE       QEMU's -m (default 1G)
#   --timeout SEC    kill QEMU after this long (default 120 initramfs, 300 systemd)
#   --append ARGS    more kernel command line (repeatable): "scsi_debug.submit_queues=4";
#                    under systemd "systemd.wants=hvtuned.service" (the boot's target is
#                    vmtest.target: basic.target and vmtest.service, not multi-user.target,
#                    whose units on this image take 15 s more), "systemd.unit=multi-user.target"
#                    (a later systemd.unit= wins), "systemd.log_level=debug"
#   --qemu ARG       one more QEMU argument (repeatable): --qemu -device --qemu
#                    virtio-scsi-pci,num_queues=4. The machine is "pc": its IDE controller is
#                    SCSI hosts 0 and 1 once udev loads ata_piix (systemd mode), so find a
#                    host by its proc_name, not its number.
#   --name NAME      names the run's files in $VM_WORK (default run<N>)
# vm_initramfs only:
#   --modules "M..." modules (names) to put in the initramfs with all they depend on, for the
#                    script to modprobe: "scsi_debug sd_mod" (no udev there to load sd_mod)
#   --file SRC:DEST  a host file or directory (an out-of-tree .ko, a helper) at DEST in the
#                    guest, mode kept (repeatable)
# vm_systemd only:
#   --stage DIR      a tree copied over the guest's root before systemd starts: a `meson
#                    install --destdir` tree, units and drop-ins (DIR/etc/systemd/system/...),
#                    configs. Its top-level bin, sbin and lib go under usr/ where the
#                    release's root has merged /usr. Units of its own start only when wanted: by
#                    --append systemd.wants=UNIT or by the script.
#   --out DIR        the host results directory (default: a fresh one under $VM_WORK)
#
# The SCRIPT (an executable file; its shebang picks the interpreter):
#   initramfs: /vmtest/test, run by /init as root with busybox's applets only (#!/bin/sh, no
#     bash), /proc, /sys, /dev, /sys/kernel/debug and a tmpfs /tmp mounted. No results share:
#     what it prints comes back in VM_OUTPUT. The kernel is "quiet": dmesg has the rest.
#   systemd: /vmtest/test, run by vmtest.service (Type=exec, after basic.target: udevd and
#     journald are up) with the release's tools (bash, udevadm, ...) and VMTEST_OUT=/vmtest/out,
#     the read-write results share. The boot does not wait for it, so it may wait for the boot
#     (systemctl is-system-running --wait). When it ends, the unit writes its status and the
#     journal to the share and powers the guest off at once.
#
# Environment: VM_KERNEL (5.10, 6.1, 6.12 or 7.3; default 6.1) picks the kernel;
# HVTUNED_VM_CACHE (default /var/cache/hvtuned-vm) is where the kernels are,
# HVTUNED_RELEASE_CACHE (default /var/cache/hvtuned-releases) where the releases' roots are;
# VM_WORK (default: made by vm_require, removed at exit unless VM_KEEP=1) holds each run's
# initramfs, console log and output; a caller with an EXIT trap of its own calls vm_cleanup
# from it. VM_VERBOSE=1 drops "quiet" from the kernel command line: the full boot on the
# console, ~3 s slower.

# shellcheck source=tests/common/container.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/container.sh"

VM_CACHE=${HVTUNED_VM_CACHE:-/var/cache/hvtuned-vm}
VM_RELEASES=${HVTUNED_RELEASE_CACHE:-/var/cache/hvtuned-releases}
VM_MARK=VMTEST-EXIT
# /init prints it first thing: a console without it is a guest that never reached its init.
VM_INIT_MARK=VMTEST-INIT
vm_runs=0

# Checks what a boot needs and finds the kernel: VM_TREE (the unpacked tree), VM_KVER,
# VM_HEADERS (for make -C "$VM_HEADERS" M=DIR modules).
vm_require() {
        need_root "the VM tests' 9p shares, root images and cpio owners"
        need_tools qemu-system-x86_64 cpio depmod modprobe
        local applets
        applets=$(/bin/busybox --list 2>/dev/null || true)
        if ! grep -qx switch_root <<< "$applets" || ldd /bin/busybox > /dev/null 2>&1; then
                skip "no static /bin/busybox (tools/install-deps installs busybox-static)"
        fi
        VM_SERIES=${VM_KERNEL:-6.1}
        case $VM_SERIES in
        5.10) VM_SUITE=bullseye ;;
        6.1) VM_SUITE=bookworm ;;
        6.12|7.3) VM_SUITE=trixie ;;
        *) echo "vm: VM_KERNEL=$VM_SERIES: not one of 5.10, 6.1, 6.12, 7.3" >&2; exit 1 ;;
        esac
        VM_ROOTFS=$VM_RELEASES/$VM_SUITE
        [ -f "$VM_CACHE/$VM_SERIES/.hvtuned-vm-complete" ] ||
                skip "no $VM_SERIES kernel in $VM_CACHE/$VM_SERIES (run tools/fetch-vm-kernel $VM_SERIES)"
        VM_TREE=$(readlink -f "$VM_CACHE/$VM_SERIES")
        VM_KVER=$(basename "$VM_TREE")
        # shellcheck disable=SC2034 # for the callers that build modules
        VM_HEADERS=$VM_TREE/usr/src/linux-headers-$VM_KVER
        [ -f "$VM_TREE/vmlinux" ] || skip "no $VM_TREE/vmlinux (run tools/fetch-vm-kernel $VM_SERIES)"
        if [ -z "${VM_WORK:-}" ]; then
                VM_WORK=$(mktemp -d /tmp/hvtuned-vm.XXXXXX)
                trap vm_cleanup EXIT
        fi
        mkdir -p "$VM_WORK"
}

# The release root vm_systemd boots (and a stand-in is built in), whole: made by
# tools/fetch-release, never written (an overlay is always on top).
vm_require_rootfs() {
        [ -f "$VM_ROOTFS/.hvtuned-release-complete" ] ||
                skip "no $VM_SUITE root in $VM_ROOTFS (run tools/fetch-release $VM_SUITE)"
}

vm_cleanup() {
        if [ -n "${VM_KEEP:-}" ]; then
                echo "vm: kept $VM_WORK"
        elif [ -n "${VM_WORK:-}" ]; then
                rm -rf "$VM_WORK"
        fi
}

# vm_add_modules ROOT MODULE...: copies the modules and all they depend on (softdeps too)
# from the kernel tree into ROOT at the same paths, and makes ROOT's modules.dep for the
# guest's modprobe.
vm_add_modules() {
        local root=$1 m
        shift
        local moddir=lib/modules/$VM_KVER
        local deps="" paths=()
        # --show-depends takes one module at a time; its "insmod PATH [PARAMS]" lines name the
        # files ("builtin X" lines need none). One cp for all: a process costs ~10 ms here.
        for m in "$@"; do
                deps+=$(modprobe -d "$VM_TREE" -S "$VM_KVER" --show-depends "$m") ||
                        { echo "vm: no module $m in $VM_KVER" >&2; return 255; }
                deps+=$'\n'
        done
        mapfile -t paths < <(awk -v tree="$VM_TREE/" '
                $1 == "insmod" && !seen[$2]++ { print substr($2, length(tree) + 1) }' <<< "$deps")
        mkdir -p "$root/$moddir"
        if [ ${#paths[@]} -gt 0 ]; then
                (cd "$VM_TREE" && cp --parents "${paths[@]}" "$root/")
        fi
        # modules.builtin lets modprobe of a built-in module succeed quietly, as on a full system.
        cp "$VM_TREE/$moddir"/modules.{order,builtin,builtin.modinfo} "$root/$moddir/"
        depmod -b "$root" "$VM_KVER"
}

# vm_cpio DIR OUT: an uncompressed newc archive of DIR, everything owned by root. Uncompressed
# because the guest would decompress it at TCG speed.
vm_cpio() {
        (cd "$1" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) > "$2"
}

# The part of /init both modes share: busybox's applets, the kernel's filesystems.
vm_init_head() {
        cat <<'EOF'
#!/bin/busybox sh
/bin/busybox echo VMTEST-INIT
/bin/busybox --install -s
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
EOF
}

# vm_base ROOT INIT MODULE...: a root with busybox, the modules and the /init read on stdin.
vm_base() {
        local root=$1
        shift
        mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,vmtest}
        cp /bin/busybox "$root/bin/busybox"
        cat > "$root/init"
        chmod 0755 "$root/init"
        vm_add_modules "$root" "$@"
}

# vm_qemu MODE KERNEL_ARGS QEMU_ARGS...: runs QEMU with the options parsed into vm_opt_*,
# sets VM_SECONDS and VM_LOG.
vm_qemu() {
        local mode=$1 cmdline=$2
        shift 2
        local start end rc=0
        # One host thread runs all the vCPUs in turn. This machine has 2 cores: with a thread
        # per vCPU (multi), -smp 4 boots in twice the time, -smp 32 in three times, as vCPUs
        # spin on locks whose holders wait for a core.
        local vm_tcg_thread=${VM_TCG_THREAD:-single}
        # "quiet" keeps the console to warnings and worse (systemd: to failures and slow jobs).
        # The serial port costs under TCG: 560 lines of a verbose systemd boot take ~3 s of
        # ~25. In initramfs mode kernel messages would also land inside the script's output.
        local quiet=quiet
        [ -z "${VM_VERBOSE:-}" ] || quiet=""
        VM_LOG=$VM_WORK/$vm_name.console
        # tsc=unstable: under TCG the TSC is no clock to trust, and 6.12 and 7.3 sometimes die
        # with an int3 in sched_clock_cpu as they mark sched_clock stable, which a TSC known
        # unstable should keep them from doing. The retry below stays either way.
        cmdline="console=ttyS0 panic=-1 tsc=unstable $quiet $cmdline"
        local tries=${VM_BOOT_TRIES:-3}
        VM_BOOTS=0
        start=$(date +%s.%N)
        while :; do
                VM_BOOTS=$((VM_BOOTS + 1))
                rc=0
                # The serial console goes to a file, not to stdio: QEMU then never touches the
                # terminal of whoever runs the test, and a run killed at the timeout keeps its
                # log. -no-reboot turns the guest's poweroff, reboot and panic (panic=-1) into
                # QEMU's exit.
                timeout --kill-after=5 "$vm_opt_timeout" \
                        qemu-system-x86_64 -accel "tcg,thread=$vm_tcg_thread" -cpu max -machine pc \
                        -smp "$vm_opt_smp" -m "$vm_opt_mem" \
                        -nodefaults -no-user-config -display none -monitor none -nic none \
                        -serial "file:$VM_LOG" -no-reboot \
                        -kernel "$VM_TREE/vmlinux" -initrd "$VM_WORK/$vm_name.cpio" \
                        -append "$cmdline" \
                        "$@" "${vm_opt_qemu[@]}" < /dev/null > "$VM_WORK/$vm_name.qemu" 2>&1 || rc=$?
                # A guest that printed /init's mark ran the test's system: whatever it did next
                # is the test's outcome. One that did not never got that far (the kernel died
                # on the way): that is no outcome of the test, so boot it again, a few times.
                if tr -d '\r' < "$VM_LOG" | grep -qx "$VM_INIT_MARK" || [ "$VM_BOOTS" -ge "$tries" ]; then
                        break
                fi
                echo "vm: $vm_name: boot $VM_BOOTS of at most $tries never reached /init; the console's end:" >&2
                tr -d '\r' < "$VM_LOG" | grep -v '^$' | tail -n 5 | sed 's/^/vm:   /' >&2
                cp "$VM_LOG" "$VM_LOG.boot$VM_BOOTS"
        done
        end=$(date +%s.%N)
        VM_SECONDS=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }')
        if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
                echo "vm: $vm_name: killed after the ${vm_opt_timeout} s timeout" >&2
        elif [ "$rc" != 0 ]; then
                echo "vm: $vm_name: QEMU exited with $rc:" >&2
                cat "$VM_WORK/$vm_name.qemu" >&2
        fi
        echo "vm: $vm_name: $mode run of $VM_KVER took $VM_SECONDS s (smp $vm_opt_smp, mem $vm_opt_mem, boots $VM_BOOTS, retries $((VM_BOOTS - 1)))"
}

# Parses the options both modes take into vm_opt_*; leaves the script in vm_script.
vm_parse() {
        local mode=$1
        shift
        vm_runs=$((vm_runs + 1))
        vm_name=run$vm_runs
        vm_opt_smp=2 vm_opt_mem=1G vm_opt_append="" vm_opt_modules="" vm_opt_stage="" vm_opt_out=""
        vm_opt_qemu=() vm_opt_files=()
        if [ "$mode" = initramfs ]; then vm_opt_timeout=120; else vm_opt_timeout=300; fi
        while [ $# -gt 1 ]; do
                case $1 in
                --smp) vm_opt_smp=$2 ;;
                --mem) vm_opt_mem=$2 ;;
                --timeout) vm_opt_timeout=$2 ;;
                --append) vm_opt_append="$vm_opt_append $2" ;;
                --qemu) vm_opt_qemu+=("$2") ;;
                --name) vm_name=$2 ;;
                --modules) [ "$mode" = initramfs ] || { echo "vm: --modules is for vm_initramfs" >&2; return 255; }
                        vm_opt_modules="$vm_opt_modules $2" ;;
                --file) [ "$mode" = initramfs ] || { echo "vm: --file is for vm_initramfs" >&2; return 255; }
                        vm_opt_files+=("$2") ;;
                --stage) [ "$mode" = systemd ] || { echo "vm: --stage is for vm_systemd" >&2; return 255; }
                        vm_opt_stage=$2 ;;
                --out) [ "$mode" = systemd ] || { echo "vm: --out is for vm_systemd" >&2; return 255; }
                        vm_opt_out=$2 ;;
                *) echo "vm: unknown option $1" >&2; return 255 ;;
                esac
                shift 2
        done
        if [ $# != 1 ] || [ ! -x "$1" ]; then
                echo "vm: vm_$mode [OPTIONS] SCRIPT: no executable script" >&2
                return 255
        fi
        vm_script=$1
        [ -n "${VM_TREE:-}" ] || { echo "vm: call vm_require first" >&2; return 255; }
        # Only the run's own files: a caller's "$VM_WORK/<name>.conf" is not the harness's.
        local f
        for f in console cpio out output qemu root; do
                rm -rf "${VM_WORK:?}/$vm_name.$f"
        done
}

# vm_verdict RC WHAT: a test's end after its run: the script's output, then "PASS: WHAT", or
# "FAIL: WHAT" with the status and console, the run's files kept (VM_KEEP), and exit 1.
vm_verdict() {
        cat "$VM_OUTPUT" 2>/dev/null || true
        if [ "$1" != 0 ]; then
                echo "FAIL: $2 (status ${VM_STATUS:-none}); console: $VM_LOG"
                # shellcheck disable=SC2034 # read by vm_cleanup
                VM_KEEP=1
                exit 1
        fi
        echo "PASS: $2"
}

# Reports the run's outcome: the script's status, or 255 with what the console said.
vm_result() {
        if [ -z "$VM_STATUS" ]; then
                echo "vm: $vm_name: the test script reported no status; the console's end ($VM_LOG):" >&2
                tail -n 40 "$VM_LOG" >&2 || true
                [ -n "${VM_VERBOSE:-}" ] || echo "vm: VM_VERBOSE=1 shows the whole boot there" >&2
                return 255
        fi
        return "$VM_STATUS"
}

vm_initramfs() {
        vm_parse initramfs "$@" || return
        local root=$VM_WORK/$vm_name.root f
        # shellcheck disable=SC2086 # a list of module names
        {
                vm_init_head
                cat <<EOF
mkdir -p /tmp && mount -t tmpfs tmpfs /tmp
# The script's output between two marks, so that the host can tell it from the kernel's.
# Kernel messages could still split a line: the kernel prints at "quiet" level unless asked.
echo; echo VMTEST-BEGIN
/vmtest/test 2>&1
rc=\$?
echo; echo "$VM_MARK=\$rc"
poweroff -f
EOF
        } | vm_base "$root" $vm_opt_modules || return 255
        cp "$vm_script" "$root/vmtest/test" || return 255
        for f in "${vm_opt_files[@]}"; do
                if ! { mkdir -p "$root/$(dirname "${f#*:}")" && cp -a "${f%%:*}" "$root/${f#*:}"; }; then
                        echo "vm: --file $f: cannot copy" >&2
                        return 255
                fi
        done
        vm_cpio "$root" "$VM_WORK/$vm_name.cpio" || return 255
        rm -rf "$root"

        vm_qemu initramfs "$vm_opt_append"
        VM_OUTPUT=$VM_WORK/$vm_name.output
        # Between the marks, less the empty line /init adds to end a last line left open; all
        # of it up to the end when the script never finished.
        tr -d '\r' < "$VM_LOG" | awk -v mark="$VM_MARK=" '
                on && index($0, mark) == 1 {
                        if (n && line[n] == "") n--
                        for (i = 1; i <= n; i++) print line[i]
                        done = 1; exit
                }
                on { line[++n] = $0 }
                $0 == "VMTEST-BEGIN" { on = 1 }
                END { if (!done) for (i = 1; i <= n; i++) print line[i] }' > "$VM_OUTPUT"
        VM_STATUS=$(tr -d '\r' < "$VM_LOG" | sed -n "s/^$VM_MARK=\([0-9]*\)$/\1/p" | tail -n 1)
        vm_result
}

# vm_root_image: the release's root as an ext4 image, which vm_systemd's guest mounts
# read-only from a virtio disk: made once per root (stamped with the root's own stamp) under
# $VM_RELEASES/.images, and made again when tools/fetch-release remade the root. A root served
# over 9p costs every exec a round trip per path and page: a process took 0.13 s on 6.1 and
# 0.5 s on 5.10 that way, most of a run's time; a block device has the guest's page cache.
# Sets VM_ROOT_IMAGE.
vm_root_image() {
        local dir=$VM_RELEASES/.images lock bytes files start=$SECONDS
        VM_ROOT_IMAGE=$dir/$VM_SUITE.ext4
        mkdir -p "$dir" || return 255
        # One maker at a time; the others wait for its image.
        exec {lock}> "$VM_ROOT_IMAGE.lock" || return 255
        flock "$lock"
        if [ -f "$VM_ROOT_IMAGE" ] && cmp -s "$VM_ROOTFS/.hvtuned-release-complete" "$VM_ROOT_IMAGE.stamp"; then
                exec {lock}>&-
                return 0
        fi
        rm -f "$VM_ROOT_IMAGE" "$VM_ROOT_IMAGE.stamp"
        bytes=$(du -sxb "$VM_ROOTFS" | cut -f1) files=$(find "$VM_ROOTFS" -xdev | wc -l)
        # A quarter more than the files' bytes for ext4's own, and inodes to spare; no journal
        # (never written).
        if ! { truncate -s $((bytes * 5 / 4 + (256 << 20))) "$VM_ROOT_IMAGE.tmp" &&
               mkfs.ext4 -q -F -L "$VM_SUITE" -O ^has_journal -N $((files * 5 / 4 + 8192)) \
                       -d "$VM_ROOTFS" "$VM_ROOT_IMAGE.tmp"; }; then
                echo "vm: cannot make an ext4 image of $VM_ROOTFS" >&2
                rm -f "$VM_ROOT_IMAGE.tmp"
                exec {lock}>&-
                return 255
        fi
        mv "$VM_ROOT_IMAGE.tmp" "$VM_ROOT_IMAGE"
        cp "$VM_ROOTFS/.hvtuned-release-complete" "$VM_ROOT_IMAGE.stamp"
        echo "vm: made $VM_ROOT_IMAGE ($(du -h "$VM_ROOT_IMAGE" | cut -f1)) from $VM_ROOTFS in $((SECONDS - start)) s"
        exec {lock}>&-
}

vm_systemd() {
        vm_parse systemd "$@" || return
        [ -f "$VM_ROOTFS/.hvtuned-release-complete" ] ||
                { echo "vm: no $VM_SUITE root in $VM_ROOTFS: call vm_require_rootfs first" >&2; return 255; }
        vm_root_image || return 255
        local root=$VM_WORK/$vm_name.root d
        VM_OUT=${vm_opt_out:-$VM_WORK/$vm_name.out}
        mkdir -p "$VM_OUT" || return 255
        rm -f "$VM_OUT/status" "$VM_OUT/output.log" "$VM_OUT/journal.txt"

        {
                vm_init_head
                cat <<'EOF'
for m in virtio_pci virtio_blk ext4 9pnet_virtio 9p overlay; do modprobe "$m"; done
fail() { echo "vmtest /init: $*"; echo "VMTEST-EXIT=255"; poweroff -f; }
p9="trans=virtio,version=9p2000.L,msize=512000"
mkdir -p /host /rw /newroot
# The release's root: vm_root_image's ext4 image, the first virtio disk (the only one).
mount -t ext4 -o ro,noload /dev/vda /host || fail "cannot mount the release's root from /dev/vda"
# The release's root below a tmpfs: the guest may write anywhere, the cached root stays as
# tools/fetch-release made it.
mount -t tmpfs -o mode=0755 tmpfs /rw
mkdir /rw/upper /rw/work
mount -t overlay -o lowerdir=/host,upperdir=/rw/upper,workdir=/rw/work overlay /newroot ||
        fail "cannot mount the overlay"
# With /.dockerenv systemd takes itself for a container's init: it ignores the kernel
# command line and skips the units conditioned on a real machine.
rm -f /newroot/.dockerenv
# systemd-tmpfiles would otherwise walk (and clean) the root's /tmp.
mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp
# A root may have no /lib/modules at all.
mkdir -p /newroot/lib/modules
mount -t 9p -o "$p9,ro,cache=loose" modules /newroot/lib/modules || fail "cannot mount the modules"
cp -a /stage/. /newroot/ || fail "cannot copy the staging tree"
mount -t 9p -o "$p9" vmtestout /newroot/vmtest/out || fail "cannot mount the results share"
# A getty's vhangup() on the serial line cuts the output of everything else on the console.
for u in getty.target getty@.service serial-getty@.service console-getty.service \
         container-getty@.service; do
        ln -sfn /dev/null "/newroot/etc/systemd/system/$u"
done
# Generators run before any unit, each a process loading libsystemd-shared under TCG: keep
# the one the kernel command line needs (debug: systemd.wants=, systemd.mask=) and fstab's.
mkdir -p /newroot/etc/systemd/system-generators
for g in /newroot/lib/systemd/system-generators/* /newroot/usr/local/lib/systemd/system-generators/*; do
        case ${g##*/} in
        systemd-debug-generator|systemd-fstab-generator|"*") ;;
        *) ln -sfn /dev/null "/newroot/etc/systemd/system-generators/${g##*/}" ;;
        esac
done
umount /sys/kernel/debug /sys /proc
umount /dev
exec switch_root /newroot /lib/systemd/systemd
EOF
        } | vm_base "$root" virtio_pci virtio_blk ext4 9pnet_virtio 9p overlay || return 255

        # What /init copies over the root: the caller's staging tree, then the harness's files.
        mkdir -p "$root/stage"
        if [ -n "$vm_opt_stage" ]; then
                cp -a "$vm_opt_stage/." "$root/stage/" ||
                        { echo "vm: --stage $vm_opt_stage: cannot copy" >&2; return 255; }
                # busybox cp cannot put a directory where the root has a link (/lib -> usr/lib
                # on a merged-/usr root: bookworm's and trixie's, not bullseye's).
                for d in bin sbin lib lib32 lib64; do
                        if [ -d "$root/stage/$d" ] && [ ! -L "$root/stage/$d" ] && [ -L "$VM_ROOTFS/$d" ]; then
                                mkdir -p "$root/stage/$(readlink "$VM_ROOTFS/$d")"
                                cp -a "$root/stage/$d/." "$root/stage/$(readlink "$VM_ROOTFS/$d")/"
                                rm -rf "${root:?}/stage/$d"
                        fi
                done
        fi
        mkdir -p "$root/stage/vmtest/out" "$root/stage/etc/systemd/system"
        cp "$vm_script" "$root/stage/vmtest/test" || return 255
        cat > "$root/stage/vmtest/run" <<'EOF'
#!/bin/sh
# Runs the test, leaves its status and the journal in the results share, powers off.
/vmtest/test > "$VMTEST_OUT/output.log" 2>&1
rc=$?
journalctl -b --no-pager -o short-monotonic > "$VMTEST_OUT/journal.txt" 2>&1
echo "$rc" > "$VMTEST_OUT/status"
sync
echo "VMTEST-EXIT=$rc" > /dev/console
# The results are on the host already: no unit's stop matters any more.
systemctl poweroff --force --force
EOF
        chmod 0755 "$root/stage/vmtest/run"
        cat > "$root/stage/etc/systemd/system/vmtest.service" <<'EOF'
[Unit]
Description=hvtuned VM test
After=basic.target

[Service]
# Type=exec, not oneshot: the boot does not wait for the test, so the test can wait for the
# boot (systemctl is-system-running --wait).
Type=exec
Environment=VMTEST_OUT=/vmtest/out
ExecStart=/vmtest/run
StandardOutput=journal+console
EOF
        cat > "$root/stage/etc/systemd/system/vmtest.target" <<'EOF'
[Unit]
Description=hvtuned VM test system
# A root comes with whatever its image enables in multi-user.target: the test boots to
# basic.target and what it asks for instead.
Requires=basic.target
After=basic.target
Wants=vmtest.service
AllowIsolate=yes
EOF
        vm_cpio "$root" "$VM_WORK/$vm_name.cpio" || return 255
        rm -rf "$root"

        # The release's root image, read-only, and the two 9p shares /init mounts: the kernel's
        # modules (the root has none of this kernel's) and the results directory.
        vm_qemu systemd "systemd.unit=vmtest.target systemd.wants=vmtest.service systemd.firstboot=off $vm_opt_append" \
                -drive "file=$VM_ROOT_IMAGE,format=raw,if=virtio,readonly=on" \
                -virtfs "local,path=$VM_TREE/lib/modules,mount_tag=modules,security_model=none,readonly=on" \
                -virtfs "local,path=$VM_OUT,mount_tag=vmtestout,security_model=none"
        VM_OUTPUT=$VM_OUT/output.log
        VM_STATUS=$(cat "$VM_OUT/status" 2>/dev/null || true)
        vm_result
}
