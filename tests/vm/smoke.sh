#!/bin/bash
# The real-kernel tier's own test: both boot modes of qemu.sh work on Debian's 6.1 kernel.
#   initramfs: scsi_debug with 4 submit queues at -smp 4 makes a SCSI host with 4 hw queues
#              and a disk; a file passed with --file arrives.
#   systemd:   bookworm's root (tools/fetch-release) boots to a running (or degraded) system; udevd names a new
#              disk, journald keeps a message, the staging tree is in place, and results
#              come back through the share.
# Exits 77 without root, QEMU or the kernel (tools/install-deps fetches it).
# usage: smoke.sh
set -euo pipefail
here=$(dirname "$(realpath "$0")")
# shellcheck source=qemu.sh source-path=SCRIPTDIR
. "$here/qemu.sh"
vm_require
vm_require_rootfs
failed=0

# --- initramfs mode --------------------------------------------------------------------------
cat > "$VM_WORK/initramfs-test" <<'EOF'
#!/bin/sh
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
[ "$(nproc)" = 4 ] && ok "4 CPUs online" || bad "$(nproc) CPUs online, not 4"
grep -qx 'vmtest smoke' /vmtest/extra/note && [ -x /vmtest/extra/note ] &&
        ok "--file put an executable file in place" || bad "--file: /vmtest/extra/note missing or not executable"
grep -q '^debugfs /sys/kernel/debug ' /proc/mounts && ok "debugfs mounted" || bad "no debugfs at /sys/kernel/debug"
modprobe scsi_debug submit_queues=4 max_queue=192 dev_size_mb=1 || bad "modprobe scsi_debug"
modprobe sd_mod || bad "modprobe sd_mod"
host=""
for h in /sys/class/scsi_host/host*; do
        [ "$(cat "$h/proc_name")" = scsi_debug ] && host=$h
done
[ -n "$host" ] || { bad "no scsi_debug host"; exit 1; }
q=$(cat "$host/nr_hw_queues")
[ "$q" = 4 ] && ok "${host##*/}: 4 hw queues" || bad "${host##*/}: $q hw queues, not 4"
# sd probes asynchronously.
i=0
while [ $i -lt 100 ] && ! ls /sys/block | grep -q '^sd'; do sleep 0.1; i=$((i + 1)); done
disk=$(ls /sys/block | grep '^sd' | head -n 1)
if [ -n "$disk" ]; then
        ok "disk $disk, $(ls "/sys/block/$disk/mq" | wc -l) blk-mq queues, scheduler: $(cat "/sys/block/$disk/queue/scheduler")"
        [ -b "/dev/$disk" ] && ok "/dev/$disk is a block device" || bad "no /dev/$disk"
else
        bad "no sd disk appeared"
fi
exit $fail
EOF
chmod 0755 "$VM_WORK/initramfs-test"
printf '#!/bin/sh\n# vmtest smoke\nvmtest smoke\n' > "$VM_WORK/note"
chmod 0755 "$VM_WORK/note"

rc=0
vm_initramfs --name initramfs --smp 4 --mem 1G --timeout 120 --modules "scsi_debug sd_mod" \
        --file "$VM_WORK/note:/vmtest/extra/note" "$VM_WORK/initramfs-test" || rc=$?
cat "$VM_OUTPUT"
if [ "$rc" = 0 ]; then
        echo "ok: initramfs mode ($VM_SECONDS s)"
else
        echo "FAIL: initramfs mode: status $rc; console: $VM_LOG"
        failed=1
fi

# --- a guest that never reaches its init is booted again, a bounded number of times ----------
# rdinit= names no file: the kernel panics before any /init runs, as TCG's early int3 kills a
# 6.12 or 7.3 guest. The harness must tell that from a test's failure: no mark from /init,
# VM_BOOT_TRIES boots, then 255 (no status), never the test's pass.
rc=0
VM_BOOT_TRIES=2 vm_initramfs --name noinit --smp 1 --mem 256M --timeout 60 \
        --append "rdinit=/vmtest-none" "$VM_WORK/initramfs-test" 2> "$VM_WORK/noinit.err" || rc=$?
retries=$(grep -c 'never reached /init' "$VM_WORK/noinit.err" || true)
if [ "$rc" = 255 ] && [ "$VM_BOOTS" = 2 ] && [ "$retries" = 1 ]; then
        echo "ok: a guest that never reached /init: booted $VM_BOOTS times (1 retry printed), then no status ($VM_SECONDS s)"
else
        echo "FAIL: a guest that never reached /init: status $rc after $VM_BOOTS boots, $retries retries printed"
        cat "$VM_WORK/noinit.err"
        failed=1
fi

# --- systemd mode ----------------------------------------------------------------------------
# A staging tree with one file under lib/, which bookworm's merged /usr turns into usr/lib/.
stage=$VM_WORK/stage
mkdir -p "$stage/etc/vmtest-smoke" "$stage/lib/vmtest-smoke"
echo etc > "$stage/etc/vmtest-smoke/marker"
echo lib > "$stage/lib/vmtest-smoke/marker"

cat > "$VM_WORK/systemd-test" <<EOF
#!/bin/bash
kver=$VM_KVER
EOF
cat >> "$VM_WORK/systemd-test" <<'EOF'
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
t0=$(cut -d' ' -f1 /proc/uptime)
state=$(systemctl is-system-running --wait)
case $state in
running) ok "systemctl is-system-running: running" ;;
degraded)
        ok "systemctl is-system-running: degraded; failed units:"
        systemctl --failed --no-legend --plain --no-pager ;;
*) bad "systemctl is-system-running: $state" ;;
esac
echo "the system was $state at $(cut -d' ' -f1 /proc/uptime) s of uptime (the test started at $t0 s)"
[ "$(uname -r)" = "$kver" ] && ok "kernel $kver" || bad "kernel $(uname -r), not $kver"
[ "$(cat /proc/1/comm)" = systemd ] && ok "PID 1 is systemd" || bad "PID 1 is $(cat /proc/1/comm)"
[ ! -e /.dockerenv ] && [ "$(systemd-detect-virt)" = qemu ] && ok "systemd-detect-virt: qemu" ||
        bad "systemd-detect-virt: $(systemd-detect-virt)"
for u in systemd-journald systemd-udevd; do
        systemctl is-active -q "$u" && ok "$u is active" || bad "$u is $(systemctl is-active "$u")"
done
[ "$(cat /etc/vmtest-smoke/marker 2>&1)" = etc ] && [ "$(cat /usr/lib/vmtest-smoke/marker 2>&1)" = lib ] &&
        ok "the staging tree is in place" || bad "the staging tree is not in place"
touch /vmtest-smoke-writable && ok "the root is writable" || bad "the root is read-only"

# A disk made now: udevd handles its uevent with the host's rules.
modprobe scsi_debug dev_size_mb=1 || bad "modprobe scsi_debug"
udevadm settle --timeout=30
disk=""
for d in /sys/block/sd*; do [ -e "$d" ] && disk=/dev/${d##*/}; done
if [ -n "$disk" ] && info=$(udevadm info --query=property "$disk"); then
        # ID_SERIAL and the by-id links come from the rules (60-persistent-storage), not the
        # kernel's uevent.
        if grep -q '^ID_SERIAL=' <<< "$info" && grep -q '^DEVLINKS=.*/dev/disk/by-id/' <<< "$info"; then
                ok "udevadm info $disk: $(grep -E '^(ID_MODEL|ID_SERIAL)=' <<< "$info" | tr '\n' ' ')"
        else
                bad "udevadm info $disk has no ID_SERIAL or by-id link from the rules:"; echo "$info"
        fi
else
        bad "no sd disk for udev (disk '$disk')"
fi

msg="vmtest-smoke-$RANDOM"
echo "$msg" | systemd-cat -t vmtest-smoke
journalctl --sync 2>/dev/null || sleep 1
journalctl -b -t vmtest-smoke --no-pager -o cat | grep -qx "$msg" &&
        ok "journalctl found a message logged through journald" || bad "journalctl did not find $msg"

echo "from the guest" > "$VMTEST_OUT/results.txt" || bad "cannot write $VMTEST_OUT"
exit $fail
EOF
chmod 0755 "$VM_WORK/systemd-test"

rc=0
vm_systemd --name systemd --smp 4 --mem 2G --timeout 240 --stage "$stage" "$VM_WORK/systemd-test" || rc=$?
cat "$VM_OUTPUT" 2>/dev/null || true
if [ "$rc" = 0 ] && [ "$(cat "$VM_OUT/results.txt" 2>/dev/null)" = "from the guest" ] &&
   [ -s "$VM_OUT/journal.txt" ]; then
        echo "ok: systemd mode ($VM_SECONDS s); results and journal came back through the share"
else
        echo "FAIL: systemd mode: status $rc; console: $VM_LOG, results: $VM_OUT"
        [ "$rc" = 0 ] || tail -n 30 "$VM_LOG"
        failed=1
fi

if [ "$failed" != 0 ]; then
        # Keep the logs the FAIL lines name.
        VM_KEEP=1
        exit 1
fi
echo PASS
