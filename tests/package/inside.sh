#!/bin/bash
# Runs inside the container of run.sh, as a unit of the real systemd there: installs the .deb
# with dpkg as an operator would, runs the installed service on the Azure testbed, purges the
# package and looks for anything left. finish, fail and expect: tests/common/container.sh.
set -u
. /opt/container.sh
build=/opt/build tb=/run/tb
sda=$tb/sys/block/sda
APPLIED=eb47933e2e9c4b03a3bebcf187cc6d70
dropin=/etc/systemd/system/hvtuned.service.d/testbed.conf

dpkg-query -W hvtuned > /dev/null 2>&1 && fail "hvtuned is installed before the test"
# A build host in a container may forbid services to start or stop from maintainer scripts
# (policy-rc.d exiting 101); a machine the package is for does not.
rm -f /usr/sbin/policy-rc.d
find /etc /run /var/lib/systemd -name '*hvtuned*' 2>/dev/null | sort > /opt/out/before.txt

# --- install: enabled, but not started on a machine that is no Hyper-V guest.
dpkg -i /opt/pkg/hvtuned_*.deb || fail "dpkg -i failed"
echo "ok: dpkg -i installed $(dpkg-query -W -f='${Package} ${Version}' hvtuned)"
dpkg -L hvtuned > /opt/out/files.txt
expect "is-enabled after install" "$(systemctl is-enabled hvtuned)" enabled
expect "is-active after install (ConditionVirtualization)" "$(systemctl is-active hvtuned)" inactive
expect "condition result" "$(systemctl show -P ConditionResult hvtuned)" no
[ -e /etc/hvtuned.conf ] && fail "the package shipped /etc/hvtuned.conf"
[ -f /usr/share/doc/hvtuned/examples/hvtuned.conf ] || fail "no example configuration"
man -w hvtuned.conf > /dev/null 2>&1 || [ -f /usr/share/man/man5/hvtuned.conf.5.gz ] || fail "no hvtuned.conf(5)"
# dpkg's trigger of systemd rebuilt the catalog database.
journalctl --list-catalog | grep -q "$APPLIED hvtuned" || fail "the catalog is not in journalctl's database"
echo "ok: the journal catalog is installed and indexed"

# --- run the installed service on the testbed, as the system test does (its drop-in only
# points it at the testbed and lifts the condition; the configuration is the built-in one).
# With what its kernel has beside the devices (BTF, osrelease): the estimates' layout.
umockdev-run -d "$build/tests/testbeds/azure-gen2.umockdev" -- sh -c 'cp -a "$UMOCKDEV_DIR" /run/tb' &&
        tar -C /run/tb -xf "$build/tests/testbeds/azure-gen2.kernel.tar" ||
        fail "cannot make the testbed"
mkdir -p "${dropin%/*}"
cat > "$dropin" <<CONF
[Unit]
ConditionVirtualization=
[Service]
Environment=LD_PRELOAD=$build/tests/emulate/hvtuned-sysfs-kernel.so:libumockdev-preload.so.0
Environment=UMOCKDEV_DIR=$tb ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0
ReadWritePaths=$tb
CONF
systemctl daemon-reload
systemctl start hvtuned || fail "systemctl start hvtuned failed: $(systemctl status hvtuned --no-pager)"
expect "is-active after start" "$(systemctl is-active hvtuned)" active
expect "sda scheduler" "$(active "$sda")" none
status=$(systemctl show -P StatusText hvtuned)
expect "StatusText" "$status" "4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed; hw queues: 2 controllers over cap 4, ~169 MiB reclaimable at next boot"
systemctl status hvtuned --no-pager > /opt/out/status.txt
expect "journal entries applied" "$(journalctl -u hvtuned -o cat MESSAGE_ID=$APPLIED | sort | tr '\n' ';')" \
        "hv_storvsc parameters/storvsc_max_hw_queues: 0 -> 4 (applied);sda queue/scheduler: mq-deadline -> none (applied);sdc queue/scheduler: bfq -> none (applied);"
journalctl -x -u hvtuned MESSAGE_ID=$APPLIED --no-pager | grep -q "as hvtuned.conf asks" ||
        fail "journalctl -x shows no catalog text"
echo "ok: journalctl -x explains the entries"
journalctl -u hvtuned --no-pager > /opt/out/journal.txt

# --- purge: the service stops (and restores), everything the package put or made goes.
rm -rf "${dropin%/*}"
systemctl daemon-reload
dpkg --purge hvtuned || fail "dpkg --purge failed"
expect "sda scheduler after purge" "$(active "$sda")" mq-deadline
dpkg-query -W hvtuned > /dev/null 2>&1 && fail "dpkg still knows hvtuned"
while read -r f; do
        [ -d "$f" ] && continue
        [ -e "$f" ] && fail "$f is left after purge"
done < /opt/out/files.txt
find /etc /run /var/lib/systemd -name '*hvtuned*' 2>/dev/null | sort > /opt/out/after.txt
left=$(comm -13 /opt/out/before.txt /opt/out/after.txt | tr '\n' ' ')
[ -z "$left" ] || fail "left after purge: $left"
[ -e /run/hvtuned ] && fail "/run/hvtuned is left after purge"
expect "unit after purge" "$(systemctl show -P LoadState hvtuned)" not-found
journalctl --list-catalog | grep -q "$APPLIED" && fail "the catalog database still has hvtuned's entries"
echo "ok: purge left nothing (files, unit links, runtime directory, catalog)"
finish PASS
