#!/bin/bash
# Inside the guest (tests/vm/daemon.sh): a release's root on its kernel (5.10 bullseye, 6.1
# bookworm, 6.12 and 7.3 trixie), the release's .deb of hvtuned installed with dpkg, its unit,
# rule and catalog under that release's systemd, udevd and journald, on the storvsc
# stand-in's disks. Each stage prints "ok:" lines; the first failure prints "FAIL:",
# hvtuned's journal, and exits 1. The operator's steps and the MESSAGE_IDs:
# tests/common/container.sh, copied beside daemon/messages.h into /vmtest-files. Where the kernels differ the expectations name the kernel:
# 5.10 has no storvsc_max_hw_queues (the cap cannot apply: nothing to write, nothing to
# re-probe) and 369 requests a channel (can_queue 332 at 4 vCPUs, not 316).
set -uo pipefail
# shellcheck source=/dev/null
. /vmtest-files/env
: "${HVTUNED:?/vmtest-files/env names no hvtuned}"
: "${VMTEST_KERNEL:?/vmtest-files/env names no kernel}"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# What the helper's steps read (dpkg's output, the files the package installed) goes to the
# results share.
container_out=${VMTEST_OUT:-/tmp}
# shellcheck source=tests/common/container.sh
. /vmtest-files/container.sh

CTL=/sys/kernel/debug/hv_storvsc_standin/control
PARAM=/sys/module/hv_storvsc/parameters/storvsc_max_hw_queues
# Azure Gen2's SCSI controllers 0, 1 and 2, and a Gen1 IDE controller.
A=f8b3781a-1e82-4818-a1c3-63d806ec15bb
B=f8b3781b-1e82-4818-a1c3-63d806ec15bb
C=f8b3781c-1e82-4818-a1c3-63d806ec15bb
IDE=00000000-0000-8899-0000-000000000000
IDE_CLASS="{32412632-86cb-44a2-9b5c-50d1417354f5}"
# storvsc by kernel (tests/vm/standin/hv_storvsc.c cites each): requests a channel, and
# whether the cap's parameter exists. At 4 vCPUs a controller has one channel.
case $VMTEST_KERNEL in
5.10) rpc=369 hascap=0 ;;
*) rpc=352 hascap=1 ;;
esac
cq=$((rpc * 90 / 100))

# The helper's fail() ends a container's test: a guest's prints the journal and exits.
fail() {
        echo "FAIL: $*"
        echo "--- hvtuned's journal"
        journalctl -b -u hvtuned --no-pager -o short-monotonic | tail -n 80
        if [ -s /tmp/vmtest-journal.err ]; then
                echo "--- the last journal read's debug log"
                tail -n 20 /tmp/vmtest-journal.err
        fi
        exit 1
}
ok() { echo "ok ($SECONDS s): $*"; }

message_id APPLIED ATTR_APPLIED
message_id CLAMPED ATTR_CLAMPED
message_id FAILED ATTR_FAILED
message_id UNSUPPORTED ATTR_UNSUPPORTED
message_id FOUND DISK_FOUND
message_id STARTED STARTED
message_id REPAIRED DRIFT_REPAIRED
message_id RESTORED ATTR_RESTORED
message_id CONTROLLER CONTROLLER
message_id REPROBED REPROBED
message_id REFUSED REPROBE_REFUSED
message_id BUSY BUSY_RETRY
message_id GAVE_UP BUSY_GAVE_UP

# wait_until SECONDS WHAT 'SHELL TEST': evaluates the test every 0.2 s.
wait_until() {
        local seconds=$1 what=$2 i
        for ((i = 0; i < seconds * 5; i++)); do
                eval "$3" && return 0
                sleep 0.2
        done
        fail "$what: not within $seconds s"
}

# disk_of GUID LUN: the block device of a stand-in LUN, or nothing.
disk_of() {
        local d
        for d in /sys/bus/vmbus/devices/"$1"/host*/target*/*:"$2"/block/*; do
                [ -e "$d" ] && basename "$d"
        done
}
host_of() { basename "$(echo /sys/bus/vmbus/devices/"$1"/host*)"; }
attr() { cat "/sys/block/$1/$2"; }
# The active scheduler of a bracketed list.
sched() { sed -n 's/.*\[\(.*\)\].*/\1/p' "/sys/block/$1/queue/scheduler"; }
# state DISK: "scheduler nr_requests read_ahead_kb timeout"
state() { echo "$(sched "$1") $(attr "$1" queue/nr_requests) $(attr "$1" queue/read_ahead_kb) $(attr "$1" device/timeout)"; }
expect_state() {
        local got
        got=$(state "$1")
        [ "$got" = "$2" ] || fail "$1 ($3): $got, want $2"
}

# journal ARGS...: journalctl -b -u hvtuned ARGS, once journald has written what it was sent,
# and read whole. sd-journal reading a file that journald is appending to can meet an entry
# not yet fully written (EBADMSG, EADDRNOTAVAIL): it then skips that entry, or drops the whole
# file from the read ("Can't iterate through FILE, ignoring"), and says so only at debug
# level, while journalctl exits 0 with fewer entries or none. CI's 6.12 run once read no
# Started entry two seconds after counting it, while hvtuned logged the IDE disk's pass. A
# read that skipped anything is made again, a bounded number of times. -q: journalctl newer
# than trixie's 257 prints "-- No entries --" on stdout when nothing matched, even into a pipe.
journal() {
        local out i err=/tmp/vmtest-journal.err
        local skipped="Can't iterate through|we can't read|partially written|incompletely written"
        journalctl --sync
        for ((i = 1; i <= 10; i++)); do
                if out=$(SYSTEMD_LOG_LEVEL=debug journalctl -q -b -u hvtuned --no-pager "$@" 2> $err) &&
                        ! grep -qE "$skipped" $err; then
                        [ -z "$out" ] || printf '%s\n' "$out"
                        return 0
                fi
                echo "note: journalctl $* read again: $(grep -E "$skipped|[Ff]ailed" $err | head -n 1)" >&2
                sleep 0.2
        done
        echo "journalctl $*: no whole read in 10 tries: $(grep -E "$skipped|[Ff]ailed" $err | head -n 3)" >&2
        return 1
}
# jcount MATCH...: how many of hvtuned's journal entries match.
jcount() { journal -o cat "$@" | grep -c . || true; }
# jfield FIELD MATCH...: FIELD of each matching entry, one a line.
jfield() {
        local field=$1
        shift
        journal -o json "$@" |
                /usr/bin/python3 -c 'import json, sys
for line in sys.stdin:
    v = json.loads(line).get(sys.argv[1])
    if v is not None:
        print(v if isinstance(v, str) else " ".join(map(str, v)))' "$field"
}
status_text() { systemctl show -P StatusText hvtuned; }
settle() { udevadm settle --timeout=30; }

config() {
        install -m 0644 /dev/stdin /etc/hvtuned.conf
}

# --- 0: the machine -------------------------------------------------------------------------
systemctl is-system-running --wait > /dev/null || true
ok "the system is $(systemctl is-system-running)"
present=$(grep -c ^processor /proc/cpuinfo)
[ "$present" = 4 ] || fail "the guest has $present CPUs, not 4"
# The release's package, as its users install it. QEMU's guest is no Hyper-V guest to
# systemd-detect-virt: the stand-in is what makes it one, so the unit's condition goes, after
# the install (whose postinst would otherwise start the service with no disk yet).
hvtuned_install /vmtest-files/hvtuned.deb
[ -x "$HVTUNED" ] || fail "the package installed no $HVTUNED"
mkdir -p /etc/systemd/system/hvtuned.service.d
# While /run/vmtest-hold-hvtuned exists the rule's start is skipped (the NVMe stage makes its
# disks and the operator's settings first): a condition, as a mask would cost two reloads.
printf '[Unit]\nConditionVirtualization=\nConditionPathExists=!/run/vmtest-hold-hvtuned\n' > /etc/systemd/system/hvtuned.service.d/vmtest.conf
systemctl daemon-reload
ok "$(uname -r), $(. /etc/os-release && echo "$PRETTY_NAME"), systemd $(systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p'), $(dpkg-query -W -f='hvtuned ${Version}' hvtuned) installed"

# A Fedora-style rule that sets bfq (here on every LUN 1, at add and change: the drift hvtuned
# repairs), and an operator's rule that leaves IDE disks at mq-deadline with 200 requests (the
# originals hvtuned must give back), held until hvtuned's start-up pass is over: hvtuned starts
# with the first disk while udev is still at this one, and must not take it before its rules
# ran.
# 7.3 answers a scheduler write during its controller's re-probe with EBUSY (a trylock), and
# udev's ATTR{} then gives up ("Device or resource busy", seen once in CI): the operator's
# bfq would never be set, and the disk's true original would be none. The rule retries, as
# an operator's would have to on 7.3.
cat > /etc/udev/rules.d/60-vmtest-bfq.rules <<'EOF'
ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", KERNELS=="*:0:0:1", PROGRAM="/bin/sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do echo bfq > /sys%p/queue/scheduler && exit 0; sleep 0.2; done; exit 1'"
EOF
cat > /etc/udev/rules.d/61-vmtest-ide.rules <<EOF
ACTION=="add", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", ATTRS{class_id}=="$IDE_CLASS", PROGRAM="/bin/sh -c 'while [ -e /run/vmtest-hold ]; do sleep 0.1; done'", ATTR{queue/nr_requests}="200"
EOF
udevadm control --reload

# A disk that is not Hyper-V's, beside them: hvtuned must never touch it.
# With the optimal I/O size of Azure's NVMe accelerator (32 MiB): the NVMe stage backs its
# namespaces with more disks of this module (tests/vm/nvme-stage.sh, nvme_backing). sd takes
# an optimal transfer length only up to the maximum (sd_validate_opt_xfer_size()), which
# scsi_debug reports as its store's size: 64 MiB of 4096-byte blocks is above 8192 of them.
modprobe scsi_debug dev_size_mb=64 sector_size=4096 opt_blks=8192 || fail "no scsi_debug"
settle
other=$(basename "$(dirname "$(echo /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*:0:0:0/block/*/dev)")")
[ -e "/sys/block/$other" ] || fail "no scsi_debug disk"
other_before=$(state "$other")

config <<'EOF'
queue = { scheduler = "none"; nr_requests = 128; read_ahead_kb = 1024; };
device = { timeout = 300; };
host = { max_hw_queues = 2; };
EOF

# --- 1: the rule starts hvtuned with the first Hyper-V disk ----------------------------------
systemctl is-active -q hvtuned && fail "hvtuned runs before any Hyper-V disk"
touch /run/vmtest-hold
insmod /vmtest-files/hv_storvsc.ko "standin_controllers=scsi:$A:2,scsi:$B:1,ide:$IDE:1" ||
        fail "cannot load the stand-in"
wait_until 60 "hvtuned active" 'systemctl is-active -q hvtuned'
wait_until 30 "the start-up pass" '[ "$(jcount MESSAGE_ID=$STARTED)" = 1 ]'
# The start-up pass left the IDE disk, still in its rules, to its add event (and any other
# disk udev had not finished with yet). Read before the IDE disk is let go: hvtuned is idle.
started=$(jfield MESSAGE MESSAGE_ID=$STARTED)
rm /run/vmtest-hold
settle
case $started in
"Started: "[123]" storvsc disk"*) ;;
*) fail "the start-up pass did not leave the disk udev was at to its add event: $started" ;;
esac
wait_until 30 "STATUS after the start-up pass" 'status_text | grep -q "^4 storvsc disks"'
ok "the udev rule started hvtuned.service with the first Hyper-V disk: $(status_text)"
a0=$(disk_of $A 0) a1=$(disk_of $A 1) b0=$(disk_of $B 0) ide=$(disk_of $IDE 0)
for d in "$a0" "$a1" "$b0" "$ide"; do
        [ -n "$d" ] || fail "a stand-in disk is missing: a0=$a0 a1=$a1 b0=$b0 ide=$ide"
done
if [ $hascap = 1 ]; then
        case $(status_text) in
        "4 storvsc disks on 3 controllers: 4 tuned, 0 failed; hw queues: 2 controllers over cap 2, ~"*" MiB reclaimable at next boot"*) ;;
        *) fail "STATUS: $(status_text)" ;;
        esac
else
        case $(status_text) in
        "4 storvsc disks on 3 controllers: 4 tuned, 0 failed; hw queues: 2 controllers over cap 2, which this kernel cannot apply"*) ;;
        *) fail "STATUS on $VMTEST_KERNEL (no storvsc_max_hw_queues): $(status_text)" ;;
        esac
        # Said once, with why; no boot advice for a parameter this kernel does not have.
        said=$(journal -o cat | grep -c "this kernel predates storvsc_max_hw_queues, which came in 5.13" || true)
        [ "$said" = 1 ] || fail "the missing cap is said $said times, not once"
        journal -o cat | grep -q "To cap them from boot" && fail "boot advice on $VMTEST_KERNEL, which has no cap"
fi
wait_until 10 "$ide tuned" 'test "$(state "$ide")" = "none 128 1024 300"'
for d in "$a0" "$a1" "$b0" "$ide"; do
        expect_state "$d" "none 128 1024 300" "tuned at start"
done
[ "$(state "$other")" = "$other_before" ] || fail "scsi_debug's $other changed: $other_before -> $(state "$other")"
if [ $hascap = 1 ]; then
        [ "$(cat $PARAM)" = 2 ] || fail "storvsc_max_hw_queues is $(cat $PARAM), not 2"
        ok "every Hyper-V disk tuned (none/128/1024/300), scsi_debug's $other untouched ($other_before), the cap written"
else
        [ ! -e $PARAM ] || fail "$VMTEST_KERNEL has a $PARAM"
        ok "every Hyper-V disk tuned (none/128/1024/300), scsi_debug's $other untouched ($other_before); no cap parameter to write"
fi

# The journal: one entry per disk found, per change, per controller, with their fields.
[ "$(jcount MESSAGE_ID=$FOUND)" = 4 ] || fail "$(jcount MESSAGE_ID=$FOUND) disk-found entries, not 4"
from=$(jfield HVTUNED_FROM MESSAGE_ID=$APPLIED HVTUNED_DEVICE="$ide" HVTUNED_ATTR=queue/nr_requests)
[ "$from" = 200 ] || fail "$ide queue/nr_requests: HVTUNED_FROM=$from, not the operator's 200"
[ "$(jfield HVTUNED_FROM MESSAGE_ID=$APPLIED HVTUNED_DEVICE="$ide" HVTUNED_ATTR=queue/scheduler)" = mq-deadline ] ||
        fail "$ide's scheduler entry"
bfq_from=$(jfield HVTUNED_FROM HVTUNED_DEVICE="$a1" HVTUNED_ATTR=queue/scheduler | sort -u)
[ "$bfq_from" = bfq ] || fail "$a1: the rule's bfq is not what hvtuned undid (HVTUNED_FROM=$bfq_from)"
got=$(jfield HVTUNED_HW_QUEUES MESSAGE_ID=$CONTROLLER HVTUNED_CONTROLLER="{$A}" | tail -n 1)
can=$(cat "/sys/class/scsi_host/$(host_of $A)/can_queue")
[ "$got" = 4 ] && [ "$can" = "$cq" ] || fail "controller A: HVTUNED_HW_QUEUES=$got, can_queue $can (want 4, $cq)"
[ "$(jfield HVTUNED_CAN_QUEUE MESSAGE_ID=$CONTROLLER HVTUNED_CONTROLLER="{$A}" | tail -n 1)" = "$cq" ] ||
        fail "controller A: HVTUNED_CAN_QUEUE is not the kernel's $cq"
# Over the cap it cannot have on 5.10: "unsupported", nothing to win back.
over=yes
[ $hascap = 1 ] || over=unsupported
[ "$(jfield HVTUNED_OVER_CAP MESSAGE_ID=$CONTROLLER HVTUNED_CONTROLLER="{$A}" | tail -n 1)" = $over ] ||
        fail "controller A is not reported over the cap ($over)"
journal -x MESSAGE_ID=$APPLIED HVTUNED_DEVICE="$ide" HVTUNED_ATTR=queue/nr_requests |
        grep -q "hvtuned changed queue/nr_requests of the Hyper-V disk $ide" ||
        fail "journalctl -x shows no catalog text for a change"
# What the stand-in's disks start with, which stop must give back.
ra0=$(jfield HVTUNED_FROM MESSAGE_ID=$APPLIED HVTUNED_DEVICE="$ide" HVTUNED_ATTR=queue/read_ahead_kb)
t0=$(jfield HVTUNED_FROM MESSAGE_ID=$APPLIED HVTUNED_DEVICE="$ide" HVTUNED_ATTR=device/timeout)
[ -n "$ra0" ] && [ "$t0" = 180 ] || fail "$ide: read_ahead_kb $ra0 and timeout $t0 before hvtuned"
ok "journal: 4 disks found, the operator's originals as HVTUNED_FROM, the rule's bfq undone, controller fields, catalog text"

# --- 2: hotplug, the watch's change events, a rule's drift ----------------------------------
echo "lun-add $A 2 8" > $CTL || fail "lun-add"
settle
a2=$(disk_of $A 2)
[ -n "$a2" ] || fail "no disk for the hot-added LUN"
wait_until 20 "$a2 tuned after hot-add" 'test "$(state "$a2")" = "none 128 1024 300"'
ok "a LUN hot-added after READY=1 ($a2) is tuned"

writes_of() { echo $(($(jcount HVTUNED_DEVICE="$1" MESSAGE_ID=$APPLIED) + $(jcount HVTUNED_DEVICE="$1" MESSAGE_ID=$REPAIRED))); }
changes_before=$(writes_of "$a0")
udevadm monitor -u -s block > /tmp/monitor 2>&1 &
monitor=$!
sleep 1
# 60-block.rules' OPTIONS+="watch": each close after a write is a change event.
for _ in 1 2 3 4 5; do
        dd if=/dev/zero of="/dev/$a0" bs=4k count=1 conv=notrunc status=none || fail "cannot write $a0"
done
settle
sleep 2
kill "$monitor"
seen=$(grep -c "change.*/block/$a0 " /tmp/monitor || true)
[ "$seen" -ge 1 ] || fail "no watch change event for $a0: $(cat /tmp/monitor)"
changes_after=$(writes_of "$a0")
[ "$changes_after" = "$changes_before" ] || fail "$a0: a watch change event made hvtuned write"
expect_state "$a0" "none 128 1024 300" "after the watch's change events"
ok "$seen watch change events of $a0 absorbed: nothing written"

repairs_before=$(jcount MESSAGE_ID=$REPAIRED HVTUNED_DEVICE="$a1")
udevadm trigger -c change "/sys/block/$a1"
settle
wait_until 20 "$a1 repaired" '[ "$(jcount MESSAGE_ID=$REPAIRED HVTUNED_DEVICE="$a1")" -gt $repairs_before ]'
wait_until 10 "$a1 back at none/128" 'test "$(state "$a1")" = "none 128 1024 300"'
jfield HVTUNED_FROM MESSAGE_ID=$REPAIRED HVTUNED_DEVICE="$a1" HVTUNED_ATTR=queue/scheduler | grep -qx bfq ||
        fail "$a1: no repair entry from bfq"
# bfq came with 2 x min(316, 128) requests; hvtuned's switch to none reset them again.
[ "$(jfield HVTUNED_FROM MESSAGE_ID=$REPAIRED HVTUNED_DEVICE="$a1" HVTUNED_ATTR=queue/nr_requests | tail -n 1)" = 256 ] ||
        fail "$a1: nr_requests, reset by the switches, was not put back as part of the repair"
ok "the rule's bfq on a change event is repaired, nr_requests (reset by the switches) with it: $(state "$a1")"

# --- 3: the cap and the re-probe --------------------------------------------------------------
echo "add scsi $C 1" > $CTL || fail "cannot hot-add controller C"
settle
hc=$(host_of $C) c0=$(disk_of $C 0)
# Without the parameter (5.10) a controller has a queue per present CPU, whatever the cap.
cqueues=2
[ $hascap = 1 ] || cqueues=$present
[ "$(cat "/sys/class/scsi_host/$hc/nr_hw_queues")" = $cqueues ] || fail "controller C: $(cat "/sys/class/scsi_host/$hc/nr_hw_queues") hw queues, not $cqueues"
[ "$(ls "/sys/block/$c0/mq" | wc -l)" = $cqueues ] || fail "$c0: $(ls "/sys/block/$c0/mq" | wc -l) mq directories"
wait_until 20 "$c0 tuned" 'test "$(state "$c0")" = "none 128 1024 300"'
ok "a controller hot-added after the cap comes up with $cqueues hw queues (mq/: $cqueues), its disk tuned"

if command -v mkfs.ext4 > /dev/null; then mkfs=(mkfs.ext4 -q); else mkfs=(/vmtest-files/busybox mke2fs -q); fi
"${mkfs[@]}" "/dev/$b0" > /dev/null && mkdir -p /mnt/b && mount "/dev/$b0" /mnt/b || fail "cannot mount $b0"
config <<'EOF'
queue = { scheduler = "none"; nr_requests = 128; read_ahead_kb = 1024; };
device = { timeout = 300; };
host = { max_hw_queues = 2; reprobe_idle_controllers = true; };
EOF
hvtuned_reload "with reprobe_idle_controllers"
if [ $hascap = 0 ]; then
        # No cap to apply, so nothing a re-probe could win back: no controller is unbound.
        sleep 3
        settle
        [ "$(jcount MESSAGE_ID=$REPROBED)" = 0 ] || fail "$VMTEST_KERNEL: a controller was re-probed with no cap to apply"
        [ "$(cat "/sys/class/scsi_host/$(host_of $A)/nr_hw_queues")" = 4 ] || fail "controller A's queues changed"
        for d in "$a0" "$a1" "$a2"; do expect_state "$d" "none 128 1024 300" "no re-probe"; done
        ok "reprobe_idle_controllers on $VMTEST_KERNEL: no controller unbound (the cap cannot apply), disks as tuned"
else
wait_until 30 "controller A re-probed" 'cat /sys/bus/vmbus/devices/$A/host*/scsi_host/host*/nr_hw_queues 2>/dev/null | grep -qx 2'
settle
wait_until 30 "the re-probe entry for A" '[ "$(jcount MESSAGE_ID=$REPROBED HVTUNED_CONTROLLER="{$A}")" = 1 ]'

jfield MESSAGE HVTUNED_CONTROLLER="{$B}" MESSAGE_ID=$REFUSED | grep -q "is mounted on /mnt/b" ||
        fail "controller B (mounted) was not refused: $(jfield MESSAGE MESSAGE_ID=$REFUSED)"
[ "$(cat "/sys/class/scsi_host/$(host_of $B)/nr_hw_queues")" = 4 ] || fail "controller B was re-probed while mounted"
settle
wait_until 30 "A's disks back" '[ -n "$(disk_of $A 0)" ] && [ -n "$(disk_of $A 1)" ] && [ -n "$(disk_of $A 2)" ]'
a0=$(disk_of $A 0) a1=$(disk_of $A 1) a2=$(disk_of $A 2)
for d in "$a0" "$a2"; do
        wait_until 20 "$d tuned after the re-probe" 'test "$(state "$d")" = "none 128 1024 300"'
done
wait_until 20 "$a1 tuned after the re-probe" 'test "$(state "$a1")" = "none 128 1024 300"'
ok "reprobe_idle_controllers: A unbound and bound (4 -> 2 hw queues, disks back and tuned), B refused (mounted)"
fi

# --- 4: the kernel's answers through the daemon ----------------------------------------------
grep -q kyber "/sys/block/$ide/queue/scheduler" && fail "kyber is loaded: no unsupported scheduler to ask for"
config <<'EOF'
queue = { scheduler = "none"; nr_requests = 1000; read_ahead_kb = 1021; };
override = ( { match = { kind = "ide"; }; queue = { scheduler = "kyber"; }; } );
host = { max_hw_queues = 2; };
EOF
hvtuned_reload "the 2nd"
# read_ahead_kb is kept in pages: 1021 -> 1020. nr_requests beyond the tag depth under none:
# EINVAL. The IDE disk's list has no kyber: unsupported, nothing written. device/timeout is no
# longer managed: 180 back. Each check reads this reload's entry, the newest: on 7.3 the
# re-probe above can already have logged a failure of the same write (EBUSY, while the
# controller's other LUNs came back; the busy retry then tuned it).
[ "$(jfield HVTUNED_KEPT MESSAGE_ID=$CLAMPED HVTUNED_DEVICE="$a0" HVTUNED_ATTR=queue/read_ahead_kb | tail -n 1)" = 1020 ] ||
        fail "$a0: no clamped entry for read_ahead_kb 1021"
[ "$(jfield ERRNO MESSAGE_ID=$FAILED HVTUNED_DEVICE="$a0" HVTUNED_ATTR=queue/nr_requests | tail -n 1)" = 22 ] ||
        fail "$a0: no EINVAL entry for nr_requests 1000"
jfield HVTUNED_OFFERED MESSAGE_ID=$UNSUPPORTED HVTUNED_DEVICE="$ide" HVTUNED_ATTR=queue/scheduler | grep -q none ||
        fail "$ide: no unsupported entry for kyber"
[ "$(jfield HVTUNED_TO MESSAGE_ID=$RESTORED HVTUNED_DEVICE="$a0" HVTUNED_ATTR=device/timeout | tail -n 1)" = 180 ] ||
        fail "$a0: device/timeout not restored"
expect_state "$a0" "none 128 1020 180" "clamped, refused, restored"
case $(status_text) in *", 0 failed"*) fail "STATUS says nothing failed: $(status_text)" ;; *" failed"*) ;; *) fail "STATUS: $(status_text)" ;; esac
ok "clamped (1021 -> 1020), EINVAL (nr_requests 1000 > 316), unsupported (kyber), restore on reload"

config <<'EOF'
queue = { read_ahead_kb = 1024; };
host = { max_hw_queues = 2; };
EOF
hvtuned_reload "the 3rd"
# The IDE disk had mq-deadline with 200 requests before hvtuned: the scheduler goes back first
# (the kernel resets nr_requests to 256 on the switch), then 200.
expect_state "$ide" "mq-deadline 200 1024 180" "scheduler and nr_requests no longer managed"
ok "reload: the true originals back in order ($ide: mq-deadline, then nr_requests 200)"

# --- 5: stop puts every original back ---------------------------------------------------------
config <<'EOF'
queue = { scheduler = "none"; nr_requests = 128; read_ahead_kb = 1024; };
device = { timeout = 300; };
host = { max_hw_queues = 2; };
EOF
hvtuned_reload "the 4th"
expect_state "$ide" "none 128 1024 300" "tuned again"
hvtuned_stop
for d in "$a0" "$a1" "$a2" "$b0" "$c0"; do
        depth=$(cat "/sys/block/$d/mq/0/nr_tags")
        want="none $depth $ra0 180"
        # The rule's bfq on LUN 1 is what it had before hvtuned (2 x min(depth, 128) requests).
        [ "$d" != "$a1" ] || want="bfq 256 $ra0 180"
        expect_state "$d" "$want" "after stop"
done
expect_state "$ide" "mq-deadline 200 $ra0 180" "after stop"
[ $hascap = 0 ] || [ "$(cat $PARAM)" = 0 ] || fail "storvsc_max_hw_queues is $(cat $PARAM) after stop, not 0"
[ "$(state "$other")" = "$other_before" ] || fail "scsi_debug's $other changed"
[ -z "$(ls /run/hvtuned)" ] || fail "records left: $(ls /run/hvtuned)"
ok "systemctl stop: every disk and the parameter back at their originals, no record left"

# --- 6: kill -9 between the scheduler switch and the nr_requests write ------------------------
echo mq-deadline > "/sys/block/$a0/queue/scheduler"
echo 200 > "/sys/block/$a0/queue/nr_requests"
echo 256 > "/sys/block/$a0/queue/read_ahead_kb"
expect_state "$a0" "mq-deadline 200 256 180" "set up for the crash"
nr=$(readlink -f "/sys/block/$a0/queue/nr_requests")
# strace holds hvtuned's first write to that one file for 60 s: the switch to none is done
# (and the kernel has reset nr_requests), the write of 128 is not.
RUNTIME_DIRECTORY=/run/hvtuned strace -f -qq -o /dev/null -P "$nr" -e trace=write \
        -e inject=write:delay_enter=60000000:when=1 "$HVTUNED" > /tmp/crash.log 2>&1 &
tracer=$!
wait_until 60 "$a0 switched to none" 'test "$(sched "$a0")" = none'
sleep 1
depth=$(cat "/sys/block/$a0/mq/0/nr_tags")
[ "$(attr "$a0" queue/nr_requests)" = "$depth" ] || fail "$a0: nr_requests $(attr "$a0" queue/nr_requests) mid-pass, not the reset $depth"
grep -qx "queue/nr_requests=200" "/run/hvtuned/$a0" || fail "the record of $a0 lacks nr_requests=200: $(cat "/run/hvtuned/$a0")"
pkill -KILL -x hvtuned
# strace itself sits out its delay unless killed outright.
kill -KILL "$tracer" 2> /dev/null
wait "$tracer" 2> /dev/null
ok "killed between the switch and the nr_requests write: $a0 at none/$depth, the record holds 200"
hvtuned_start "again after kill -9"
expect_state "$a0" "none 128 1024 300" "after the restart"
hvtuned_stop "after the restart"
expect_state "$a0" "mq-deadline 200 256 180" "after stop"
ok "restart and stop: $a0 back at mq-deadline/200/256, its true originals"

# --- 7: knock-ons: after stop, every writable attribute exactly as the operator left it -------
# The issue's run: max_sectors_kb managed, read_ahead_kb not. From 6.9 a max_sectors_kb write is
# a queue-limits update that re-derives read_ahead_kb (6.12: a value below 128 KiB raised to
# 128; 7.3: on a rotational disk with no optimal I/O size, to twice max_sectors_kb), so
# hvtuned's write and its restore both move an attribute it does not manage. Two disks, the
# operator's read_ahead_kb 64 and 0, max_sectors_kb 128, mq-deadline with 200 requests.
# snapshot DISK: every readable and writable attribute of queue/ and device/, name=value.
snapshot() {
        local f v
        while read -r f; do
                v=$(cat "$f" 2>/dev/null) || v="<unreadable>"
                echo "${f#/sys/block/$1/}=$v"
        done < <(find "/sys/block/$1/queue/" "/sys/block/$1/device/" -maxdepth 1 -type f -perm -u=rw | LC_ALL=C sort)
}
ra_of() { attr "$1" queue/read_ahead_kb; }
for d in "$a0" "$a2"; do
        echo mq-deadline > "/sys/block/$d/queue/scheduler"
        echo 200 > "/sys/block/$d/queue/nr_requests"
        echo 128 > "/sys/block/$d/queue/max_sectors_kb"
done
echo 64 > "/sys/block/$a0/queue/read_ahead_kb"
echo 0 > "/sys/block/$a2/queue/read_ahead_kb"
[ "$(ra_of "$a0") $(ra_of "$a2")" = "64 0" ] || fail "the operator's read_ahead_kb 64 and 0 did not hold: $(ra_of "$a0") $(ra_of "$a2")"
snapshot "$a0" > /tmp/a0.before
snapshot "$a2" > /tmp/a2.before
# LUN 1 as the distro rule left it: bfq, which turns writeback throttling off while it is the
# elevator (bfq_init_queue(): wbt_disable_default()); the switch to none turns it on again.
[ "$(sched "$a1")" = bfq ] || fail "$a1 is not at the rule's bfq: $(sched "$a1")"
snapshot "$a1" > /tmp/a1.before
config <<'EOF'
queue = { scheduler = "none"; max_sectors_kb = 256; };
EOF
hvtuned_start "for the knock-on run"
wait_until 20 "$a0 at max_sectors_kb 256" 'test "$(attr "$a0" queue/max_sectors_kb) $(sched "$a0")" = "256 none"'
wait_until 20 "$a2 at max_sectors_kb 256" 'test "$(attr "$a2" queue/max_sectors_kb) $(sched "$a2")" = "256 none"'
wait_until 20 "$a1 at max_sectors_kb 256" 'test "$(attr "$a1" queue/max_sectors_kb) $(sched "$a1")" = "256 none"'
wbt="$(grep '^queue/wbt_lat_usec=' /tmp/a1.before | cut -d= -f2) -> $(attr "$a1" queue/wbt_lat_usec)"
ra_during="$(ra_of "$a0") $(ra_of "$a2")"
nr_during=$(attr "$a0" queue/nr_requests)
# A second pass with the same configuration writes nothing (7.3 would reset nr_requests on a
# write of the active "none").
applied_before=$(writes_of "$a0")
hvtuned_reload "with the same configuration"
[ "$(writes_of "$a0")" = "$applied_before" ] || fail "$a0: a second pass with the same configuration wrote again"
[ "$(attr "$a0" queue/nr_requests)" = "$nr_during" ] || fail "$a0: nr_requests $nr_during -> $(attr "$a0" queue/nr_requests) on a second pass"
hvtuned_stop "after the knock-on run"
rot=$(attr "$a0" queue/rotational)
diffs=0
for d in a0 a1 a2; do
        snapshot "${!d}" > "/tmp/$d.after"
        diff -u "/tmp/$d.before" "/tmp/$d.after" > "/tmp/$d.diff" || diffs=1
done
if [ $diffs != 0 ]; then
        cat /tmp/a0.diff /tmp/a1.diff /tmp/a2.diff
        fail "$VMTEST_KERNEL: after stop an attribute differs from what the operator left (read_ahead_kb while tuned: $ra_during; rotational $rot)"
fi
ok "$VMTEST_KERNEL: max_sectors_kb managed, read_ahead_kb not (64 and 0; $ra_during while tuned, rotational $rot; $a1 from bfq, wbt_lat_usec $wbt while tuned): after stop $(wc -l < /tmp/a0.after) writable attributes of each as the operator left them; a second pass wrote nothing"

# --- 8: a LUN removed and added again while hvtuned does not look -------------------------
# The new disk has the old one's path and device number, and before 5.15 (5.10, RHEL 8's 4.18)
# no diskseq: only its sysfs directory, a new kernfs node, tells it apart. hvtuned is stopped
# (SIGSTOP) across the delete and the rescan, so the remove event comes after the new disk
# appeared; its own original (bfq, a distro rule's) must be what its record holds and what
# the stop gives back, not the old disk's mq-deadline.
config <<'EOF'
queue = { scheduler = "none"; };
EOF
echo mq-deadline > "/sys/block/$a0/queue/scheduler"
hvtuned_start "for the re-added LUN"
wait_until 20 "$a0 tuned" 'test "$(sched "$a0")" = none'
grep -qx "queue/scheduler=mq-deadline" "/run/hvtuned/$a0" || fail "the record of $a0 lacks mq-deadline: $(cat "/run/hvtuned/$a0")"
lun=$(readlink -f "/sys/block/$a0/device")
old_ino=$(stat -L -c %i "/sys/block/$a0")
seq=$(cat "/sys/block/$a0/diskseq" 2>/dev/null || echo none)
pid=$(systemctl show -P MainPID hvtuned)
kill -STOP "$pid"
echo 1 > "$lun/delete"
echo "- - -" > "/sys/class/scsi_host/$(host_of "$A")/scan"
wait_until 20 "the LUN back at $(basename "$lun")" 'ls "$lun/block" 2> /dev/null | grep -q .'
new=$(ls "$lun/block")
new_ino=$(stat -L -c %i "/sys/block/$new")
[ "$new_ino" != "$old_ino" ] || fail "the re-added $new has the old sysfs inode $old_ino"
settle
echo bfq > "/sys/block/$new/queue/scheduler"
kill -CONT "$pid"
wait_until 20 "the re-added $new tuned" 'test "$(sched "$new")" = none'
wait_until 20 "the record of the re-added $new" 'grep -qx "queue/scheduler=bfq" "/run/hvtuned/$new"'
grep -qx "ino=$new_ino" "/run/hvtuned/$new" || fail "the record of $new does not name inode $new_ino: $(cat "/run/hvtuned/$new")"
hvtuned_stop "after the re-added LUN"
[ "$(sched "$new")" = bfq ] || fail "$new: $(sched "$new") after stop, not its own original bfq"
ok "$VMTEST_KERNEL: a LUN deleted and re-added while hvtuned was stopped ($a0 -> $new, diskseq $seq, inode $old_ino -> $new_ino) got a record of its own, and its own bfq back at stop"

# --- 9: another LUN of the controller changing its queues --------------------------------------
# From 7.3 a scheduler or nr_requests write takes the tag set's update_nr_hwq_lock with a
# trylock: while an operator's loop writes nr_requests of LUN 2 without pause, most scheduler
# writes to LUN 0 of the same controller are answered EBUSY. hvtuned reports it, holds
# nr_requests, and runs the pass again later, until one lands (while the loop still runs, or
# once it ends). Before 7.3 the lock is waited for: the loop only delays hvtuned. hvtuned
# manages LUN 0 alone here.
case $VMTEST_KERNEL in 7.3) trylock=1 ;; *) trylock=0 ;; esac
a0=$(disk_of $A 0) a2=$(disk_of $A 2)
config <<EOF
override = ( { match = { controller = "{$A}"; lun = 0; }; queue = { scheduler = "none"; nr_requests = 128; }; } );
EOF
echo mq-deadline > "/sys/block/$a0/queue/scheduler"
echo 200 > "/sys/block/$a0/queue/nr_requests"
snapshot "$a0" > /tmp/a0.before
rm -f /run/vmtest-stop
(
        while [ ! -e /run/vmtest-stop ]; do
                echo 32 > "/sys/block/$a2/queue/nr_requests"
                echo 33 > "/sys/block/$a2/queue/nr_requests"
        done 2> /dev/null
) &
writer=$!
# The disk may have an earlier stage's name, and on 7.3 the re-probe of stage 3 can have had
# a busy pass already: entries from here on only.
failed_before=$(jcount MESSAGE_ID=$FAILED HVTUNED_DEVICE="$a0")
busy_before=$(jcount MESSAGE_ID=$BUSY HVTUNED_DEVICE="$a0")
busy_here() { [ "$(jcount MESSAGE_ID=$BUSY HVTUNED_DEVICE="$a0")" -gt "$busy_before" ]; }
hvtuned_start "beside the nr_requests loop"
if [ $trylock = 1 ]; then
        # Now and then all four tries of a pass land between the loop's writes: the disk is
        # then set back (a write that may be busy itself) for another pass, a few times.
        for ((attempt = 1; attempt <= 5; attempt++)); do
                wait_until 30 "$a0: busy, or tuned" 'busy_here || [ "$(sched "$a0")" = none ]'
                busy_here && break
                for _ in $(seq 100); do echo mq-deadline > "/sys/block/$a0/queue/scheduler" 2> /dev/null && break; done
                udevadm trigger -c change "/sys/block/$a0"
        done
        busy_here || fail "$a0: no busy pass in $((attempt - 1)) passes beside the loop"
        [ "$(jfield ERRNO MESSAGE_ID=$FAILED HVTUNED_DEVICE="$a0" HVTUNED_ATTR=queue/scheduler | tail -n 1)" = 16 ] ||
                fail "$a0: no EBUSY entry for the scheduler"
        jfield MESSAGE MESSAGE_ID=$FAILED HVTUNED_DEVICE="$a0" HVTUNED_ATTR=queue/nr_requests | tail -n 1 |
                grep -q "the write of queue/scheduler it depends on failed: Device or resource busy" ||
                fail "$a0: nr_requests was not held behind the busy scheduler"
        busy_said=$(jfield MESSAGE MESSAGE_ID=$BUSY HVTUNED_DEVICE="$a0" | tail -n +$((busy_before + 1)) | head -n 1)
fi
touch /run/vmtest-stop
wait "$writer"
wait_until 30 "$a0 tuned" 'test "$(state "$a0" | cut -d" " -f1,2)" = "none 128"'
[ "$(jcount MESSAGE_ID=$GAVE_UP)" = 0 ] || fail "hvtuned gave up on a busy disk"
if [ $trylock = 0 ]; then
        [ "$(jcount MESSAGE_ID=$BUSY)" = 0 ] || fail "$VMTEST_KERNEL: a busy pass, on a kernel that waits for the lock"
        [ "$(jcount MESSAGE_ID=$FAILED HVTUNED_DEVICE="$a0")" = "$failed_before" ] || fail "$a0: a write failed beside the loop"
fi
hvtuned_stop "after the nr_requests loop"
snapshot "$a0" > /tmp/a0.after
diff -u /tmp/a0.before /tmp/a0.after || fail "$a0: after stop an attribute differs from what the operator left"
if [ $trylock = 1 ]; then
        ok "7.3: beside another LUN's nr_requests loop, $a0's scheduler write was busy (EBUSY), nr_requests held, and \"$busy_said\"; tuned by a later pass, all back at stop"
else
        ok "$VMTEST_KERNEL: beside another LUN's nr_requests loop, $a0 tuned with no busy write (the lock is waited for), all back at stop"
fi

# --- 10: failing system calls on a real kernel ---------------------------------------------
# tests/faults fails every call on umockdev's testbeds with a preload; here strace --inject
# fails them against the kernel's own sysfs, kernfs's answers and all: the kept fd's pread
# after a write, a write the kernel never saw, no descriptor left, a record that cannot be
# made. One life with one kind of call failing from some call on, SIGTERM; then a clean life
# on the same runtime directory. Never killed by a signal, SIGTERM obeyed within 5 s (or an
# exit of its own at start, saying why), and after the clean life every writable attribute of
# every disk and the parameter exactly as before the faulty one, no record left.
config <<EOF
queue = { scheduler = "none"; nr_requests = 128; read_ahead_kb = 1024; };
device = { timeout = 300; };
EOF
# Every writable attribute of queue/ and device/ of every stand-in disk, path:value: one find
# and one grep (a cat a file, as snapshot() does, is seconds a disk under TCG).
everything() {
        local d dirs=()
        for d in /sys/bus/vmbus/devices/*/host*/target*/*/block/*; do
                dirs+=("/sys/block/${d##*/}/queue/" "/sys/block/${d##*/}/device/")
        done
        find "${dirs[@]}" -maxdepth 1 -type f -perm -u=rw -print0 | LC_ALL=C sort -z |
                xargs -0 grep -H '' 2> /dev/null
        [ $hascap = 0 ] || echo "parameter $(cat $PARAM)"
}
everything > /tmp/faults.before
# life LOG [STRACE ARGS...]: hvtuned as the unit runs it, under strace with ARGS when given;
# SIGTERM once it has started (said so, or sleeps in epoll_wait(), which wchan names ep_poll
# on 5.10 and do_epoll_wait later: with write(2) failing, no line gets out). Its exit status
# in life_rc, or fails.
life() {
        local log=$1 pid i
        shift
        if [ $# -gt 0 ]; then
                RUNTIME_DIRECTORY=/run/hvtuned strace -f -qq -o /dev/null "$@" "$HVTUNED" > "$log" 2>&1 &
        else
                RUNTIME_DIRECTORY=/run/hvtuned "$HVTUNED" > "$log" 2>&1 &
        fi
        pid=$!
        for ((i = 0; i < 300; i++)); do
                grep -q "^Started" "$log" && break
                grep -qsE "ep_poll|epoll" "/proc/$(pgrep -x -n hvtuned)/wchan" && break
                kill -0 $pid 2> /dev/null || break
                sleep 0.2
        done
        pkill -TERM -x hvtuned
        for ((i = 0; i < 25; i++)); do
                kill -0 $pid 2> /dev/null || break
                sleep 0.2
        done
        if kill -0 $pid 2> /dev/null; then
                pkill -KILL -x hvtuned
                fail "$log: SIGTERM not obeyed within 5 s"
        fi
        wait $pid
        life_rc=$?
        [ $life_rc -lt 128 ] || fail "$log: hvtuned died of signal $((life_rc - 128)): $(tail -n 5 "$log")"
}
n=0
for spec in pread64:error=EIO:when=3+ write:error=ENODEV:when=2+ openat:error=EMFILE:when=25+ \
        renameat:error=EROFS:when=1+; do
        n=$((n + 1))
        life /tmp/faults.$n.log -e trace="${spec%%:*}" -e inject="$spec"
        rc=$life_rc
        case $spec in
        write:*) ;;  # its lines cannot get out either
        *) grep -q "^Started" /tmp/faults.$n.log || [ $rc != 0 ] || fail "$spec: neither started nor said why not" ;;
        esac
        life /tmp/clean.$n.log
        [ "$life_rc" = 0 ] || fail "the clean life after $spec exited $life_rc: $(tail -n 5 /tmp/clean.$n.log)"
        everything > /tmp/faults.after
        if ! diff -u /tmp/faults.before /tmp/faults.after; then
                echo "--- the faulty life's stderr"
                tail -n 40 /tmp/faults.$n.log
                echo "--- the clean life's stderr"
                tail -n 40 /tmp/clean.$n.log
                fail "after $spec and a clean life, the disks differ"
        fi
        [ -z "$(ls /run/hvtuned)" ] || fail "after $spec and a clean life, records left: $(ls /run/hvtuned)"
        ok "$spec: exit $rc, then a clean life: every disk and the parameter as before"
done

# --- 11: NVMe: Azure's namespaces on the real NVMe host driver, QEMU's controller beside them -
# tests/vm/nvme-stage.sh: the kernel's NVMe target stands for Azure's controllers.
# shellcheck source=tests/vm/nvme-stage.sh
. /vmtest-files/nvme-stage.sh
nvme_stage

# 5.10's nvmet-tcp, the stand-in's target side (not the host driver under test), flushes a
# workqueue from its own reclaim workqueue at each connect (nvmet_tcp_install_queue), and the
# workqueue code warns (check_flush_dependency): that one warning is 5.10's, expected.
known='^$'
if [ "$VMTEST_KERNEL" = 5.10 ] && dmesg | grep -q 'nvmet_tcp_install_queue'; then
        known='WARNING: CPU: [0-9]+ PID: [0-9]+ at kernel/workqueue.c:[0-9]+ check_flush_dependency'
fi
dmesg | grep -E 'Oops:|BUG:|WARNING:' | grep -vE "$known" && fail "the kernel complained"
echo "vmtest: all stages passed"
