#!/bin/sh
# hvtuned --once with the bundled configuration (examples/hvtuned.conf) on a bundled VM: its
# override for data disks matches exactly the disks Azure's rule calls data, storvsc LUNs of
# the D32s v5 and NVMe namespaces of the v6 alike, and they read ahead 1024 KiB; every other
# disk hvtuned manages stays at the platform's 128.
# usage (inside umockdev-run -d on examples/azure-d32s.umockdev or examples/azure-v6.umockdev):
#     conf-once.sh HVTUNED KERNEL_TAR SHIM CONF "DATA DISKS" "OTHER DISKS"
set -eu
hvtuned=$1 kernel=$2 shim=$3 conf=$4 data=$5 others=$6
sys=$UMOCKDEV_DIR/sys
tar -C "$UMOCKDEV_DIR" -xf "$kernel"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# hvtuned refuses a configuration others could write: a checkout made under umask 002 would be.
install -m 0644 "$conf" "$work/hvtuned.conf"
RUNTIME_DIRECTORY=$work/run
mkdir -m 0700 "$RUNTIME_DIRECTORY"
export RUNTIME_DIRECTORY
# Under the setup "valgrind", hvtuned runs under memcheck ($HVTUNED_TEST_VALGRIND, unquoted:
# a command line).
# shellcheck disable=SC2086
# Its report on stdout, its diagnostics on stderr (hvtuned(8), LOGGING).
LD_PRELOAD="$shim:${LD_PRELOAD:-}" ${HVTUNED_TEST_VALGRIND:-} "$hvtuned" --once -c "$work/hvtuned.conf" \
        > "$work/out" 2> "$work/err" || { cat "$work/out" "$work/err"; echo "hvtuned --once failed"; exit 1; }
cat "$work/out" "$work/err"
# The disks hvtuned found with role data: "sdc: found ..., role data" on storvsc,
# "nvme0n2: found ... (data LUN 0), ..." on NVMe.
found=$(sed -n 's/^\([a-z0-9]*\): found .*\(, role data$\| (data LUN \).*/\1/p' "$work/out" | sort | tr '\n' ' ')
# shellcheck disable=SC2086 # a list of disk names, split on purpose
want=$(printf '%s\n' $data | sort | tr '\n' ' ')
if [ "$found" != "$want" ]; then
        printf 'data disks found: %s\nwanted:           %s\n' "$found" "$want"
        exit 1
fi
check() {
        got=$(cat "$sys/block/$1/queue/read_ahead_kb")
        [ "$got" = "$2" ] || { echo "$1 queue/read_ahead_kb is \"$got\", not \"$2\""; exit 1; }
}
for d in $data; do
        check "$d" 1024
done
for d in $others; do
        check "$d" 128
done
echo "the example's override reads ahead 1024 KiB on the data disks ($data), and only there"
