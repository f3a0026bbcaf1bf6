#!/bin/sh
# hvtuned --once on the bundled example of an Azure v6 VM (examples/azure-v6.umockdev), with
# no configuration file: it tunes exactly the Azure NVMe disks with the platform defaults
# (read_ahead_kb at most 128, io_timeout 240000, scheduler none) and leaves every other file
# of the VM byte-identical: the partitions, QEMU's NVMe namespace, the NVMe/TCP head and its
# hidden path, the controllers. Its summary counts NVMe disks and says nothing of storvsc.
# usage (inside umockdev-run -d examples/azure-v6.umockdev):
#     v6-once.sh HVTUNED KERNEL_TAR SHIM DEFAULT_CONFIG_PATH
set -eu
hvtuned=$1 kernel=$2 shim=$3 default_config=$4
# hvtuned runs natively in every setup: under memcheck the new testbeds have one case,
# integration/nvme's, and CI takes a skip for a failure.
# Without -c, hvtuned reads its default path; only where nothing is there does it run on its
# built-in policy (a -c naming a missing file is an error).
if [ -e "$default_config" ]; then
        echo "$default_config exists: no run without a configuration file here"
        exit 77
fi
sys=$UMOCKDEV_DIR/sys
tar -C "$UMOCKDEV_DIR" -xf "$kernel"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Every regular file of the VM's devices, with its content's checksum.
sums() {
        find "$sys/devices" -type f -print0 | sort -z | xargs -0 sha256sum | sed "s|$sys/devices/||"
}
sums > "$work/before"
RUNTIME_DIRECTORY=$work/run
mkdir -m 0700 "$RUNTIME_DIRECTORY"
export RUNTIME_DIRECTORY
# Its report on stdout, its diagnostics on stderr (hvtuned(8), LOGGING): the platform defaults
# go on without a warning.
LD_PRELOAD="$shim:${LD_PRELOAD:-}" "$hvtuned" --once \
        > "$work/out" 2> "$work/err" || { cat "$work/out" "$work/err"; echo "hvtuned --once failed"; exit 1; }
cat "$work/out" "$work/err"
if [ -s "$work/err" ]; then
        echo "hvtuned --once said something on stderr:"; cat "$work/err"; exit 1
fi
grep -q '^nvme0n1 queue/io_timeout: .* -> 240000 (applied)$' "$work/out" ||
        { echo "no line for nvme0n1's io_timeout on stdout"; exit 1; }
sums > "$work/after"
# The files that changed, by the name of their disk.
changed=$(diff "$work/before" "$work/after" | sed -n 's/^> [0-9a-f]*  //p' |
          sed 's|.*/\(nvme[0-9]*n[0-9]*/queue/.*\)|\1|' | sort | tr '\n' ' ')
want="nvme0n1/queue/io_timeout nvme0n1/queue/read_ahead_kb nvme0n2/queue/io_timeout nvme0n2/queue/read_ahead_kb \
nvme0n3/queue/io_timeout nvme0n3/queue/nr_requests nvme0n3/queue/read_ahead_kb nvme0n3/queue/scheduler \
nvme1n1/queue/io_timeout "
if [ "$changed" != "$want" ]; then
        printf 'changed: %s\nwanted:  %s\n' "$changed" "$want"
        exit 1
fi
check() {
        got=$(cat "$sys/block/$1/queue/$2")
        [ "$got" = "$3" ] || { echo "$1 queue/$2 is \"$got\", not \"$3\""; exit 1; }
}
for d in nvme0n1 nvme0n2 nvme0n3; do
        check $d read_ahead_kb 128
        check $d io_timeout 240000
done
check nvme0n3 scheduler "[none] mq-deadline "
check nvme1n1 io_timeout 240000
check nvme1n1 read_ahead_kb 128
# Counted by kind, and nothing of storvsc on a VM without it (no hv_storvsc under /sys/module,
# no storvsc controller).
grep -qx "4 Azure NVMe disks on 2 controllers, 0 storvsc: 4 tuned, 0 failed" "$work/out" ||
        { echo "no count by kind in the summary"; exit 1; }
if grep -E "Request layout|storvsc_max_hw_queues|hw queues" "$work/out" "$work/err"; then
        echo "storvsc named on a VM without it"
        exit 1
fi
echo "the Azure NVMe disks tuned, every other file as it was"
