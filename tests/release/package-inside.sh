#!/bin/bash
# Runs inside a release's root booted under systemd-nspawn, as a unit of that release's own
# systemd (see package.sh): installs the release's .deb with dpkg as an operator would, runs
# the udev rule through the release's udevadm, verifies the installed unit and rates its
# exposure with the release's systemd-analyze, drives the service on the Azure testbed (start,
# STATUS=, journal fields, catalog, reload, a refused reload, stop), removes and purges the
# package, and runs the RPM's %preun, each after a --once and each putting the originals back,
# purges it and looks for anything left; on bookworm, first, the README's operator walk-through
# (walk-inside.sh). The operator's steps, finish, fail and expect: tests/common/container.sh.
set -u
# shellcheck source=tests/common/container.sh
. /opt/container.sh
sda=$tb/sys/block/sda sdc=$tb/sys/block/sdc
param=$tb/sys/module/hv_storvsc/parameters/storvsc_max_hw_queues
message_id APPLIED ATTR_APPLIED
message_id CONFIG_ERROR CONFIG_ERROR
. /etc/os-release
systemd_version=$(systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')
echo "ok: $PRETTY_NAME, systemd $systemd_version as PID 1, umockdev $(dpkg-query -W -f='${Version}' umockdev)"

# --- Debian 12 alone: the README's operator sections, run as written from install to purge in
# the root as it booted, before anything else here (walk-inside.sh).
if [ "$VERSION_CODENAME" = bookworm ]; then
        # shellcheck source=tests/release/walk-inside.sh
        . /opt/walk-inside.sh
fi

# --- install: enabled, not started on a machine that is no Hyper-V guest.
hvtuned_install /opt/pkg/hvtuned_*.deb

# --- the unit as this release's systemd reads it: Type=notify with ExecReload= on every
# version (a Type=notify-reload could not fail a reload), no key it does not know, and its
# exposure rating.
unit=$(systemctl show -P FragmentPath hvtuned)
expect "Type (systemd $systemd_version)" "$(systemctl show -P Type hvtuned)" notify
systemctl show -P ExecReload hvtuned | grep -q -- "--reload=" || fail "no ExecReload= with hvtuned --reload"
systemd-analyze verify "$unit" > /opt/out/verify.txt 2>&1 ||
        { cat /opt/out/verify.txt; fail "systemd-analyze verify $unit failed"; }
[ -s /opt/out/verify.txt ] && { cat /opt/out/verify.txt; fail "systemd-analyze verify $unit is not clean"; }
echo "ok: systemd-analyze verify $unit says nothing"
systemd-analyze security --no-pager hvtuned.service > /opt/out/security.txt 2>&1 ||
        { cat /opt/out/security.txt; fail "systemd-analyze security failed"; }
level=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' /opt/out/security.txt)
[ -n "$level" ] || fail "no exposure level from systemd-analyze security"
echo "ok: systemd $systemd_version rates hvtuned.service's exposure $level"

# --- the testbed, and the udev rule through this release's rules engine: no udevd runs in a
# container, so the rule is run by udevadm test (the rule starting the unit is a guest's test).
testbed_persist /opt/testbeds
# udevadm 257 indents the properties it prints; 247 does not.
props() { echo "$1" | grep -E '^\s*[A-Z_.]+=|hvtuned'; }
for d in sda sdc; do
        out=$(umockdev-run -d /opt/testbeds/azure-gen2.umockdev -- udevadm test --action=add "/sys/class/block/$d" 2>&1)
        echo "$out" | grep -qE '^\s*SYSTEMD_WANTS=hvtuned.service$' ||
                { props "$out"; fail "udevadm test: $d does not want hvtuned.service"; }
        echo "$out" | grep -qE '^\s*TAGS=.*:systemd:' || { props "$out"; fail "udevadm test: $d is not tagged systemd"; }
        echo "ok: udevadm test: $d wants hvtuned.service"
done
out=$(umockdev-run -d /opt/testbeds/azure-gen2.umockdev -- udevadm test --action=add /sys/class/block/vda 2>&1)
echo "$out" | grep -q hvtuned.service && { props "$out"; fail "udevadm test: vda wants hvtuned.service"; }
echo "ok: udevadm test: vda left alone"

# --- run the installed service on the testbed (the drop-in only points it there and lifts the
# condition; the shim is the one built with this release's compiler).
testbed_unit /opt/shim/hvtuned-sysfs-kernel.so
printf 'queue = { scheduler = "none"; };\n' > /etc/hvtuned.conf
hvtuned_start
expect "sda scheduler when start returned" "$(active "$sda")" none
expect "sdc scheduler when start returned" "$(active "$sdc")" none
expect "the cap when start returned" "$(cat "$param")" 4
expect "StatusText" "$(systemctl show -P StatusText hvtuned)" \
        "4 storvsc disks on 2 controllers: 4 tuned, 0 failed; hw queues: 2 controllers over cap 4, ~169 MiB reclaimable at next boot"
# This start's entries alone: on bookworm the walk-through ran the service before.
journalctl -u hvtuned -o json MESSAGE_ID=$APPLIED _SYSTEMD_INVOCATION_ID="$(systemctl show -P InvocationID hvtuned)" \
        > /opt/out/applied.json
got=$(python3 -c '
import json, sys
rows = sorted((e["HVTUNED_DEVICE"], e["HVTUNED_ATTR"], e["HVTUNED_FROM"], e["HVTUNED_TO"], e["HVTUNED_RESULT"])
              for e in map(json.loads, open(sys.argv[1])))
print(";".join(",".join(r) for r in rows))' /opt/out/applied.json)
expect "applied entries" "$got" "hv_storvsc,parameters/storvsc_max_hw_queues,0,4,applied;sda,queue/scheduler,mq-deadline,none,applied;sdc,queue/scheduler,bfq,none,applied"
journalctl -x -u hvtuned MESSAGE_ID=$APPLIED --no-pager > /opt/out/catalog.txt
grep -q "as hvtuned.conf asks, and read" /opt/out/catalog.txt || fail "journalctl -x shows no catalog text: $(cat /opt/out/catalog.txt)"
echo "ok: journalctl -x explains the entries"

# reload: returns once the new values are applied, through ExecReload= on every version.
printf 'queue = { scheduler = "none"; nr_requests = 128; };\n' > /etc/hvtuned.conf
hvtuned_reload
expect "sda nr_requests when reload returned" "$(cat "$sda/queue/nr_requests")" 128
expect "sdc nr_requests when reload returned" "$(cat "$sdc/queue/nr_requests")" 128
expect "ReloadResult after a good reload" "$(systemctl show -P ReloadResult hvtuned)" success

# A bad file: systemctl reload fails, the unit stays active on the old values, and its status
# and the journal name the refused line.
printf 'queue = { scheduler = "none"; nr_requests = 99999; };\n' > /etc/hvtuned.conf
systemctl reload hvtuned 2> /opt/out/bad-reload.txt && fail "a reload of a bad file succeeded"
grep -q "Job for hvtuned.service failed" /opt/out/bad-reload.txt ||
        fail "systemctl reload did not say the job failed: $(cat /opt/out/bad-reload.txt)"
expect "ReloadResult after a bad reload" "$(systemctl show -P ReloadResult hvtuned)" exit-code
expect "is-active after a bad reload" "$(systemctl is-active hvtuned)" active
expect "sda nr_requests after a bad reload" "$(cat "$sda/queue/nr_requests")" 128
systemctl status --no-pager --full -n 20 hvtuned > /opt/out/bad-status.txt
grep -q "Status: \".*; config error at /etc/hvtuned.conf:1, keeping previous\"$" /opt/out/bad-status.txt ||
        { cat /opt/out/bad-status.txt; fail "systemctl status does not say the file was refused"; }
grep -q "The new configuration was refused (error at /etc/hvtuned.conf:1): hvtuned keeps running on the previous one" \
        /opt/out/bad-status.txt || { cat /opt/out/bad-status.txt; fail "systemctl status does not name the refused line"; }
journalctl -u hvtuned MESSAGE_ID=$CONFIG_ERROR -o cat | grep -q '/etc/hvtuned.conf:1: queue.nr_requests: 99999 is out of range' ||
        fail "no configuration error in the journal"
echo "ok: the refused reload failed, kept the old values, and systemctl status names the line"

# A SIGHUP from outside systemd (kill -HUP): RELOADING=1 puts the unit through a reload of
# its own, READY=1 ends it, and a good file is applied.
printf 'queue = { scheduler = "none"; nr_requests = 64; };\n' > /etc/hvtuned.conf
kill -HUP "$(systemctl show -P MainPID hvtuned)"
for _ in $(seq 100); do
        [ "$(cat "$sda/queue/nr_requests")" = 64 ] && [ "$(systemctl is-active hvtuned)" = active ] &&
                ! systemctl show -P StatusText hvtuned | grep -q "config error" && break
        sleep 0.1
done
expect "sda nr_requests after kill -HUP" "$(cat "$sda/queue/nr_requests")" 64
expect "is-active after kill -HUP" "$(systemctl is-active hvtuned)" active
# shellcheck source=tests/release/restart-inside.sh
. /opt/restart-inside.sh
journalctl -u hvtuned --no-pager > /opt/out/journal.txt

# stop: the originals are back.
hvtuned_stop
expect "sda scheduler after stop" "$(active "$sda")" mq-deadline
expect "sdc scheduler after stop" "$(active "$sdc")" bfq
expect "sda nr_requests after stop" "$(cat "$sda/queue/nr_requests")" 256
expect "the cap after stop" "$(cat "$param")" 0

# --- removal puts back what the records hold. After a --once (a crash, or a stop with
# restore_on_stop = false, leaves the same) the records in /run/hvtuned are the only copy of
# the operator's values, and once the package is gone no hvtuned is left to put them back.
# The --once and the package's own hvtuned --restore meet the testbed as the service does: a
# hvtuned first on PATH that runs /usr/sbin/hvtuned in the unit's environment (the drop-in's:
# the shim, umockdev's preload, UMOCKDEV_DIR). The maintainer scripts find hvtuned on PATH;
# the preload itself must not reach apt and dpkg (trixie's umockdev takes apt's ioctl on
# /dev/null for a mocked device's). The drop-in goes now: a reinstall must not start the
# service on the testbed, and a --once cannot run beside it.
tb_bin=/root/testbed-bin
read -ra tb_env <<< "$(systemctl show -P Environment hvtuned)"
[[ " ${tb_env[*]}" == *" UMOCKDEV_DIR=$tb"* ]] || fail "the unit's environment has no UMOCKDEV_DIR=$tb: ${tb_env[*]}"
mkdir -p "$tb_bin"
printf '#!/bin/sh\nexec env %s /usr/sbin/hvtuned "$@"\n' "${tb_env[*]}" > "$tb_bin/hvtuned"
chmod 755 "$tb_bin/hvtuned"
rm -rf "${dropin%/*}"
systemctl daemon-reload
# The records of originals (its dot files are no records).
records() { find /run/hvtuned -maxdepth 1 -type f ! -name '.*' -printf '%f ' 2>/dev/null; }
tuned_once() {
        "$tb_bin/hvtuned" --once > "$container_out/once.txt" 2>&1 ||
                { cat "$container_out/once.txt"; fail "hvtuned --once ($1) failed"; }
        expect "sda scheduler after --once ($1)" "$(active "$sda")" none
        [ -n "$(records)" ] || fail "hvtuned --once ($1) left no record in /run/hvtuned"
}
originals() {
        expect "sda scheduler $1" "$(active "$sda")" mq-deadline
        expect "sdc scheduler $1" "$(active "$sdc")" bfq
        expect "sda nr_requests $1" "$(cat "$sda/queue/nr_requests")" 256
        expect "the cap $1" "$(cat "$param")" 0
        expect "records $1" "$(records)" ""
}
# apt_get ACTION: the package removed as an operator does; its hvtuned --restore puts every
# record back, and says nothing. apt gives dpkg a PATH of its own, DPkg::Path (its default
# with the testbed's hvtuned first).
apt_get() {
        DEBIAN_FRONTEND=noninteractive apt-get -o "DPkg::Path=$tb_bin:/usr/sbin:/usr/bin:/sbin:/bin" "$1" -y hvtuned \
                > "$container_out/apt-$1.txt" 2>&1 ||
                { cat "$container_out/apt-$1.txt"; fail "apt-get $1 hvtuned failed"; }
        grep -q 'hvtuned --restore' "$container_out/apt-$1.txt" &&
                { cat "$container_out/apt-$1.txt"; fail "apt-get $1 hvtuned: the package's restore was not quiet"; }
        echo "ok: apt-get $1 hvtuned"
}
tuned_once "before apt-get remove"
apt_get remove
expect "the package after apt-get remove" "$(dpkg-query -W -f='${Status}' hvtuned)" "deinstall ok config-files"
originals "after apt-get remove"
dpkg -i /opt/pkg/hvtuned_*.deb > "$container_out/dpkg.txt" 2>&1 || { cat "$container_out/dpkg.txt"; fail "dpkg -i, again"; }
tuned_once "before apt-get purge"
apt_get purge
dpkg-query -W hvtuned > /dev/null 2>&1 && fail "dpkg still knows hvtuned after apt-get purge"
originals "after apt-get purge"
[ -e /run/hvtuned ] && fail "/run/hvtuned is left after apt-get purge"

# What cannot go back is said and does not fail the removal: dpkg's prerm as dpkg runs it
# (the package stays), on a kernel that answers every scheduler write to sdc EBUSY, as 7.3's
# trylock does while another writer holds the lock (the shim's HVTUNED_TEST_KERNEL_BUSY):
# hvtuned --restore gives up after its retries, keeps sdc's record and exits 2.
hvtuned_install /opt/pkg/hvtuned_*.deb
tuned_once "before a prerm that cannot put sdc back"
PATH=$tb_bin:$PATH HVTUNED_TEST_KERNEL=7.3 HVTUNED_TEST_KERNEL_BUSY=sdc:1000 /var/lib/dpkg/info/hvtuned.prerm remove \
        > "$container_out/prerm.txt" 2>&1 || { cat "$container_out/prerm.txt"; fail "prerm remove failed where sdc cannot go back"; }
if ! grep -q '^sdc: its record is kept' "$container_out/prerm.txt" ||
        ! grep -q 'hvtuned --restore exited 2' "$container_out/prerm.txt"; then
        cat "$container_out/prerm.txt"; fail "prerm remove did not say that sdc's record is kept"
fi
expect "sda scheduler after a prerm that cannot put sdc back" "$(active "$sda")" mq-deadline
expect "records after a prerm that cannot put sdc back" "$(records)" "sdc "
echo "ok: prerm remove said what it could not put back, and exited 0:"
sed 's/^/    | /' "$container_out/prerm.txt"

# The RPM's %preun on an erase ($1 = 0) as rpm runs it: sh with the count, on rpm's own PATH
# for scriptlets (the testbed's hvtuned first); its text is rpm's own parse of hvtuned.spec
# (package.sh), here under this release's sh and systemctl.
tuned_once "before the RPM's %preun"
rc=0
PATH=$tb_bin:/sbin:/bin:/usr/sbin:/usr/bin sh -s 0 < /opt/pkg/hvtuned.spec.preun > "$container_out/preun.txt" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$container_out/preun.txt"; fail "the RPM's %preun exited $rc"; }
[ -s "$container_out/preun.txt" ] && { cat "$container_out/preun.txt"; fail "the RPM's %preun was not quiet"; }
originals "after the RPM's %preun"

# --- purge: everything the package put or made goes; with no record left, the package's
# restore says nothing.
hvtuned_purge
grep -q 'hvtuned --restore' "$container_out/dpkg.txt" &&
        { cat "$container_out/dpkg.txt"; fail "dpkg --purge: the package's restore was not quiet"; }
finish PASS
