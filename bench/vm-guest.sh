#!/bin/sh
# bench/vm's guest side (docs/performance.md, "The payoff on a real kernel"): runs as /init's
# test script in a busybox initramfs on one of Debian's kernels, with the storvsc stand-in at
# /vmtest/hv_storvsc.ko and its settings in /vmtest/bench.conf (QUEUES: the hw queue counts of
# the controller figures; REPS: runs of each; CAP: the cap of the re-probe figure; SCHED_REPS;
# NVME_DEPTHS: the nvme.io_queue_depth values of the NVMe figures, none when empty).
# It measures free memory and prints raw readings, one "kind field..." line each, in KiB; the
# host (bench/vm) makes the differences, the estimates and the table:
#   env PRESENT ONLINE CAP             CAP: 1 when the kernel has storvsc_max_hw_queues (5.13)
#   noise KiB...                       settled readings with nothing changing
#   ctl Q REP CAN_QUEUE NR_HW_QUEUES BEFORE ADDED DELETED     a controller, no LUN (without
#                                      the parameter: at one queue per present CPU only)
#   reprobe REP CAN_QUEUE Q_BEFORE Q_AFTER BEFORE_CAP CAPPED UNCAPPED_AGAIN
#   disk REP NR_HW_QUEUES CTL_ONLY WITH_LUN LUN_GONE LUN_MIB   a LUN added to a controller
#   sched REP NR_HW_QUEUES DEFAULT NR_REQ_DEADLINE NR_REQ_NONE NONE DEADLINE NONE_AGAIN
#   nvmens MQ_DIRS NR_TAGS QUEUE_COUNT SQSIZE IO_QUEUE_DEPTH   an NVMe namespace's and its
#                                      controller's figures (with NVME_DEPTHS)
#   nvme DEPTH REP QUEUE_COUNT SQSIZE BEFORE BOUND UNBOUND     an NVMe controller (no
#                                      namespace) bound to the PCI driver, then unbound
# Every change is measured both ways (made, then undone), so that the host can average the two
# differences: a slow drift of free memory (the kernel's deferred frees of the shell's own
# processes, slabs filling per CPU) then cancels out.
#   stage NAME SECONDS                 the guest's own wall time per stage (boot: uptime at start)
#   warn TEXT
# Free memory as docs/performance.md's "How it is measured" says: after sync, drop_caches and
# compaction, the zones' "pages free" plus every per-CPU list's "count:" (/proc/zoneinfo; MemFree
# leaves the per-CPU lists out), the median of three such settled readings.
# shellcheck disable=SC1091 # written by bench/vm
. /vmtest/bench.conf
G=f8b3781a-1e82-4818-a1c3-63d806ec15bb
CTL=/sys/kernel/debug/hv_storvsc_standin/control
P=/sys/module/hv_storvsc/parameters/storvsc_max_hw_queues
DRV=/sys/bus/vmbus/drivers/hv_storvsc

up() { cut -d' ' -f1 /proc/uptime; }
stage_start=$(up)
echo "stage boot $stage_start"
stage() {	# stage NAME: the time since the last stage ended
	now=$(up)
	echo "stage $1 $(awk -v a="$stage_start" -v b="$now" 'BEGIN { printf "%.1f", b - a }')"
	stage_start=$now
}
reading() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	echo 1 > /proc/sys/vm/compact_memory
	awk '$1 == "pages" && $2 == "free" { s += $3 } $1 == "count:" { s += $2 } END { print s * 4 }' /proc/zoneinfo
}
free_kib() { { reading; reading; reading; } | sort -n | sed -n 2p; }
die() { echo "warn $*"; exit 1; }
host_attr() { cat "$(ls -d /sys/bus/vmbus/devices/$G/host*)/scsi_host/"host*/"$1"; }
ctl() { echo "$*" > $CTL || die "control: $* failed"; }
disk_of() { basename "$(ls -d /sys/bus/vmbus/devices/$G/host*/target*/*:0/block/* 2>/dev/null)"; }
ncpus() { tr ',' '\n' < "$1" | awk -F- '{ n += ($2 == "" ? 1 : $2 - $1 + 1) } END { print n }'; }

modprobe sd_mod || die "modprobe sd_mod"
insmod /vmtest/hv_storvsc.ko || die "insmod the stand-in"
present=$(ncpus /sys/devices/system/cpu/present)
# A kernel before 5.13 has no cap: one hw queue per present CPU is all a controller can have.
hascap=1
[ -e $P ] || { hascap=0; QUEUES=$present; }
setp() { [ $hascap = 0 ] || echo "$1" > $P; }
echo "env $present $(ncpus /sys/devices/system/cpu/online) $hascap"

# Warm-up: the first controller and the first disk allocate things once (per-CPU chunks, slab
# caches' first pages, kernfs) that later ones reuse; none of it is a controller's cost.
# Then ten settled readings: free memory drifts down for the first seconds after boot, as
# every CPU's slab caches fill with the shell's processes.
setp 0
ctl add scsi $G 0
ctl lun-add $G 0 1
d=$(disk_of)
echo mq-deadline > /sys/block/"$d"/queue/scheduler
echo none > /sys/block/"$d"/queue/scheduler
ctl lun-del $G 0
ctl del $G
i=0
while [ $i -lt 10 ]; do reading > /dev/null; i=$((i + 1)); done
stage setup

# Noise: settled readings with nothing happening, spread over the time of a measurement.
echo "noise $(free_kib) $(free_kib) $(free_kib) $(free_kib) $(free_kib)"
stage noise

# 1. A controller without LUNs (the tag set's preallocated requests and what a Scsi_Host
#    holds) at each queue count: added, then deleted.
for q in $QUEUES; do
	rep=1
	while [ $rep -le "$REPS" ]; do
		setp "$q"
		before=$(free_kib)
		ctl add scsi $G 0
		cq=$(host_attr can_queue) nrq=$(host_attr nr_hw_queues)
		added=$(free_kib)
		ctl del $G
		deleted=$(free_kib)
		echo "ctl $q $rep $cq $nrq $before $added $deleted"
		rep=$((rep + 1))
	done
done
stage controllers

# 2. The cap and a re-probe, as hvtuned does it: a controller probed with one queue per present
#    CPU, then the parameter set to CAP and the driver unbound and bound again. Not without
#    the parameter.
rep=1
[ $hascap = 1 ] || rep=$((REPS + 1))
while [ $rep -le "$REPS" ]; do
	echo 0 > $P
	ctl add scsi $G 0
	q0=$(host_attr nr_hw_queues)
	before=$(free_kib)
	echo "$CAP" > $P
	echo $G > $DRV/unbind
	echo $G > $DRV/bind
	# bind probes synchronously, and scsi_mod.scan=sync makes the scan part of the probe.
	cq=$(host_attr can_queue) q1=$(host_attr nr_hw_queues)
	capped=$(free_kib)
	echo 0 > $P
	echo $G > $DRV/unbind
	echo $G > $DRV/bind
	again=$(free_kib)
	ctl del $G
	echo "reprobe $rep $cq $q0 $q1 $before $capped $again"
	rep=$((rep + 1))
done
setp 0
stage reprobe

# 3. A disk on a controller with one queue per present CPU: what the LUN adds, then the
#    scheduler none -> mq-deadline -> none on it.
rep=1
while [ $rep -le "$SCHED_REPS" ]; do
	ctl add scsi $G 0
	nrq=$(host_attr nr_hw_queues)
	ctl_only=$(free_kib)
	ctl lun-add $G 0 1
	d=$(disk_of)
	if [ -z "$d" ] || [ ! -e /sys/block/"$d"/queue/scheduler ]; then die "no disk on LUN 0"; fi
	with_lun=$(free_kib)
	default=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/block/"$d"/queue/scheduler)
	echo none > /sys/block/"$d"/queue/scheduler
	none=$(free_kib)
	echo mq-deadline > /sys/block/"$d"/queue/scheduler || die "mq-deadline on $d"
	nr_dl=$(cat /sys/block/"$d"/queue/nr_requests)
	deadline=$(free_kib)
	echo none > /sys/block/"$d"/queue/scheduler
	nr_none=$(cat /sys/block/"$d"/queue/nr_requests)
	none_again=$(free_kib)
	echo "sched $rep $nrq $default $nr_dl $nr_none $none $deadline $none_again"
	ctl lun-del $G 0
	lun_gone=$(free_kib)
	echo "disk $rep $nrq $ctl_only $with_lun $lun_gone 1"
	ctl del $G
	rep=$((rep + 1))
done
stage disk

# 4. An NVMe controller on the real PCI driver (QEMU's nvme, no namespace: the controller's
#    own preallocation, as the storvsc controller above has no LUN), at each depth of
#    NVME_DEPTHS (nvme.io_queue_depth, read when a controller is enabled): bound, then
#    unbound. A second controller, with a namespace, stays bound: its sysfs figures (the
#    namespace's mq/ directories and nr_tags) against its controller's (queue_count, sqsize),
#    which hvtuned reads.
if [ -n "${NVME_DEPTHS:-}" ]; then
	NP=/sys/module/nvme/parameters/io_queue_depth
	ND=/sys/bus/pci/drivers/nvme
	modprobe nvme || die "modprobe nvme"
	ctrl_of() {	# ctrl_of SERIAL: the class device of the controller with that serial
		for c in /sys/class/nvme/nvme*; do
			# The kernel prints the 20-byte field blank-padded.
			[ "$(tr -d ' ' < "$c/serial" 2>/dev/null)" = "$1" ] && { echo "$c"; return 0; }
		done
		return 1
	}
	live() {	# live SERIAL: waits up to 20 s for that controller to be live
		i=0
		while [ $i -lt 400 ]; do
			c=$(ctrl_of "$1") && [ "$(cat "$c/state")" = live ] && return 0
			sleep 0.05
			i=$((i + 1))
		done
		die "NVMe controller $1 never went live"
	}
	live hvtbench
	live hvtns
	c=$(ctrl_of hvtns)
	ns=$(ls -d "$c"/nvme*n1 2>/dev/null | head -n 1)
	i=0
	while [ -z "$ns" ] && [ $i -lt 200 ]; do sleep 0.05; ns=$(ls -d "$c"/nvme*n1 2>/dev/null | head -n 1); i=$((i + 1)); done
	[ -n "$ns" ] || die "no namespace on the second NVMe controller"
	echo "nvmens $(ls -d "$ns"/mq/* | wc -l) $(cat "$ns"/mq/0/nr_tags) $(cat "$c"/queue_count) $(cat "$c"/sqsize) $(cat $NP)"
	pci=$(basename "$(readlink -f "$(ctrl_of hvtbench)/device")")
	orig=$(cat $NP)
	# Warm-up: a first unbind and bind.
	echo "$pci" > $ND/unbind
	echo "$pci" > $ND/bind
	live hvtbench
	echo "$pci" > $ND/unbind
	for depth in $NVME_DEPTHS; do
		echo "$depth" > $NP || die "nvme.io_queue_depth=$depth"
		rep=1
		while [ $rep -le "$REPS" ]; do
			before=$(free_kib)
			echo "$pci" > $ND/bind
			live hvtbench
			c=$(ctrl_of hvtbench)
			qc=$(cat "$c"/queue_count) sq=$(cat "$c"/sqsize)
			added=$(free_kib)
			echo "$pci" > $ND/unbind
			deleted=$(free_kib)
			echo "nvme $depth $rep $qc $sq $before $added $deleted"
			rep=$((rep + 1))
		done
	done
	echo "$orig" > $NP
	stage nvme
fi

n=$(dmesg | grep -cE 'WARNING|Oops:|BUG:|Call Trace')
[ "$n" = 0 ] || { echo "warn dmesg has $n WARNING/Oops/BUG lines:"; dmesg | tail -n 40; }
exit 0
