#!/bin/bash
# The udev rule, run by the real udev rules engine (udevadm test) on umockdev VMs: every
# storvsc disk and Azure NVMe namespace, and nothing else (QEMU's and a Linux target's NVMe,
# partitions, a hidden per-path device), is tagged for systemd and wants hvtuned.service. udevadm of
# systemd 252 has no "verify"; a rule it cannot parse is logged by name, and fails here.
# Needs root (a private mount namespace puts the rule in /etc/udev/rules.d); exits 77 without.
# usage: test-rules.sh RULES_FILE TESTBEDS_DIR
set -euo pipefail
rules=$(realpath "$1") testbeds=$(realpath "$2")
if [ "$(id -u)" != 0 ]; then echo "SKIP: needs root for a private mount namespace"; exit 77; fi
command -v udevadm > /dev/null || { echo "SKIP: no udevadm"; exit 77; }

exec unshare --mount /bin/bash -euo pipefail -c '
rules=$1 testbeds=$2
mount --make-rprivate /
dir=$(mktemp -d)
cp "$rules" "$dir/"
mount --bind "$dir" /etc/udev/rules.d
check() {  # check TESTBED "hyper-v disks" "other devices"
        umockdev-run -d "$testbeds/$1.umockdev" -- bash -euo pipefail -c "
                for d in $2; do
                        out=\$(udevadm test --action=add /sys/class/block/\$d 2>&1)
                        if echo \"\$out\" | grep -i \"70-hvtuned.rules\" | grep -qiE \"invalid|error|unknown|ignoring\"; then
                                echo \"FAIL: the rule does not parse: \$out\"; exit 1
                        fi
                        echo \"\$out\" | grep -qx SYSTEMD_WANTS=hvtuned.service || { echo \"FAIL: $1 \$d does not want hvtuned\"; exit 1; }
                        echo \"\$out\" | grep -q \"^TAGS=.*:systemd:\" || { echo \"\$out\"; echo \"FAIL: $1 \$d is not tagged systemd\"; exit 1; }
                        echo \"ok: $1 \$d wants hvtuned.service\"
                done
                for d in $3; do
                        if udevadm test --action=add /sys/class/block/\$d 2>&1 | grep -q hvtuned.service; then
                                echo \"FAIL: $1 \$d wants hvtuned\"; exit 1
                        fi
                        echo \"ok: $1 \$d left alone\"
                done"
}
check azure-gen2 "sda sdb sdc sdd" "sda1 sdb1 sde vda nvme0n1 loop0 dm-0 md0"
check gen1 "sda sdb sdc sdd" "sda1 sde"
check wsl2 "sda sdb sdc sdd" "loop0"
check azure-v6 "nvme0n1 nvme0n2 nvme0n3 nvme1n1" "nvme0n1p1 nvme1n1p1 nvme2n1 nvme3n1 nvme3c3n1 loop0"
check lsv3 "sda sdb sdc sdd nvme0n1 nvme1n1" "sda1 sdb1"
' bash "$rules" "$testbeds"
