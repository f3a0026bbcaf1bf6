#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Self-test of the hv_storvsc stand-in, run INSIDE a test guest (busybox sh is
# enough) with scsi_mod and sd_mod loaded and debugfs mounted.
# Usage: guest-selftest.sh /path/to/hv_storvsc.ko
# Prints "ok"/"FAIL" lines and ends with "standin-selftest: PASS" or "... FAIL".
# What it expects is the running kernel's storvsc (hv_storvsc.c's header cites each line):
# 5.10 has no storvsc_max_hw_queues (one hw queue per present CPU, always), 369 requests a
# channel and max_sectors left at the midlayer's 1024; 5.13 and later the parameter, 352
# requests a channel and max_sectors from the host's max_transfer_bytes (256 KiB).
KO=${1:-/hv_storvsc.ko}
G0=f8b3781a-1e82-4818-a1c3-63d806ec15bb
G1=f8b3781b-1e82-4818-a1c3-63d806ec15bb
IDE=00000000-0000-8899-0000-000000000000
CTL=/sys/kernel/debug/hv_storvsc_standin/control
P=/sys/module/hv_storvsc/parameters
DRV=/sys/bus/vmbus/drivers/hv_storvsc
fails=0
check() {	# check <what> <expected> <actual>
	if [ "$2" = "$3" ]; then echo "ok   $1 = $3"; else echo "FAIL $1: want '$2' got '$3'"; fails=$((fails + 1)); fi
}
host_of() { basename "$(ls -d /sys/bus/vmbus/devices/$1/host* 2>/dev/null)"; }
waitdisk() { i=0; while [ ! -e /sys/block/$1/mq ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done; }
rebind() { echo $G0 > $DRV/unbind; echo $G0 > $DRV/bind; waitdisk sda; }

ncpus() { tr ',' '\n' < $1 | awk -F- '{ n += ($2 == "" ? 1 : $2 - $1 + 1) } END { print n }'; }
present=$(ncpus /sys/devices/system/cpu/present)
online=$(ncpus /sys/devices/system/cpu/online)
kv=$(uname -r | cut -d. -f1,2)
case $kv in
5.10) rpc=369 hasparam=0 maxhw=512 ;;	# 5.10:2173-2178, 2015-2016, 2010
*) rpc=352 hasparam=1 maxhw=256 ;;	# storvsc_drv.c:2212-2217, 2045-2055, 2026
esac
echo "kernel $(uname -r): $rpc requests a channel, storvsc_max_hw_queues: $hasparam"
cq=$((rpc * ((online - 1) / 4 + 1) * 90 / 100))	# storvsc_drv.c:1949-1955

insmod "$KO" standin_controllers="scsi:$G0:1:16" || { echo "standin-selftest: FAIL (insmod)"; exit 1; }
if [ $hasparam = 1 ]; then
	check "param mode" "-rw-r--r--" "$(ls -l $P/storvsc_max_hw_queues | cut -c1-10)"
else
	check "no storvsc_max_hw_queues" "no" "$(test -e $P/storvsc_max_hw_queues && echo yes || echo no)"
fi
check "parameters" "$( [ $hasparam = 1 ] && echo 5 || echo 4)" "$(ls $P | wc -l)"
check "class_id" "{ba6163d9-04a1-4d29-b605-72e2ffb1dc7f}" "$(cat /sys/bus/vmbus/devices/$G0/class_id)"
check "device_id" "{$G0}" "$(cat /sys/bus/vmbus/devices/$G0/device_id)"
check "driver" "hv_storvsc" "$(basename "$(readlink /sys/bus/vmbus/devices/$G0/driver)")"
check "disk path" "/sys/devices/VMBUS:00/$G0/host0/target0:0:0/0:0:0:0/block/sda" "$(readlink -f /sys/block/sda)"
h=$(host_of $G0)
check "can_queue" "$cq" "$(cat /sys/class/scsi_host/$h/can_queue)"
check "proc_name" "storvsc_host" "$(cat /sys/class/scsi_host/$h/proc_name)"
check "nr_hw_queues" "$present" "$(cat /sys/class/scsi_host/$h/nr_hw_queues)"
check "mq dirs" "$present" "$(ls /sys/block/sda/mq | wc -l)"
check "vendor" "Msft    " "$(cat /sys/block/sda/device/vendor)"
check "model" "Virtual Disk    " "$(cat /sys/block/sda/device/model)"
check "max_hw_sectors_kb" "$maxhw" "$(cat /sys/block/sda/queue/max_hw_sectors_kb)"

dd if=/dev/urandom of=/tmp/pat bs=1M count=4 2>/dev/null
dd if=/tmp/pat of=/dev/sda bs=1M conv=fsync 2>/dev/null
echo 3 > /proc/sys/vm/drop_caches
dd if=/dev/sda of=/tmp/back bs=1M count=4 2>/dev/null
check "dd readback" "same" "$(cmp -s /tmp/pat /tmp/back && echo same)"

if [ $hasparam = 0 ]; then
	# No parameter to cap with: a rebind gives one queue per present CPU again.
	rebind
	check "no cap: nr_hw_queues after rebind" "$present" "$(cat /sys/class/scsi_host/$(host_of $G0)/nr_hw_queues)"
	dd if=/dev/sda of=/tmp/back bs=1M count=4 2>/dev/null
	check "data after rebind" "same" "$(cmp -s /tmp/pat /tmp/back && echo same)"
elif [ "$present" -ge 4 ]; then
	echo 4 > $P/storvsc_max_hw_queues; rebind
	check "cap 4: nr_hw_queues" "4" "$(cat /sys/class/scsi_host/$(host_of $G0)/nr_hw_queues)"
	check "cap 4: mq dirs" "4" "$(ls /sys/block/sda/mq | wc -l)"
	dd if=/dev/sda of=/tmp/back bs=1M count=4 2>/dev/null
	check "data after rebind" "same" "$(cmp -s /tmp/pat /tmp/back && echo same)"
fi
if [ $hasparam = 1 ]; then
	echo 2 > $P/logging_level
	echo $((present + 1)) > $P/storvsc_max_hw_queues; rebind
	echo 1 > $P/logging_level
	check "cap > present: reset" "0" "$(cat $P/storvsc_max_hw_queues)"
	check "cap > present: queues" "$present" "$(cat /sys/class/scsi_host/$(host_of $G0)/nr_hw_queues)"
	check "reset warning" "1" "$(dmesg | grep -c 'Resetting invalid storvsc_max_hw_queues')"
fi

echo "lun-add $G0 3 8" > $CTL
check "hot-add LUN 3" "sdb" "$(basename "$(ls -d /sys/bus/vmbus/devices/$G0/host*/target*/*:3/block/* 2>/dev/null)")"
echo "lun-del $G0 3" > $CTL
check "hot-remove LUN 3" "sda" "$(ls /sys/block | tr '\n' ' ' | sed 's/ $//')"
echo "add scsi $G1 0" > $CTL; echo "lun-add $G1 2 8" > $CTL
check "LUN 2 without LUN 0" "1" "$(ls -d /sys/bus/vmbus/devices/$G1/host*/target*/*:2 2>/dev/null | wc -l)"
echo "add ide $IDE 1 8" > $CTL
hi=$(host_of $IDE)
check "IDE nr_hw_queues" "1" "$(cat /sys/class/scsi_host/$hi/nr_hw_queues)"
check "IDE can_queue" "$((rpc * 90 / 100))" "$(cat /sys/class/scsi_host/$hi/can_queue)"
echo "del $G1" > $CTL; echo "del $IDE" > $CTL
rmmod hv_storvsc
check "rmmod" "" "$(ls /sys/bus | grep -x vmbus)"
check "dmesg clean" "0" "$(dmesg | grep -cE 'WARNING|Oops:|BUG:|Call Trace')"

if [ $fails -eq 0 ]; then echo "standin-selftest: PASS"; else echo "standin-selftest: FAIL ($fails)"; fi
