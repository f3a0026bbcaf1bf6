#!/bin/bash
# Runs inside a release's root booted under systemd-nspawn, as a unit of that release's own
# systemd (see package.sh): installs the release's .deb with dpkg as an operator would, runs
# the udev rule through the release's udevadm, verifies the installed unit and rates its
# exposure with the release's systemd-analyze, drives the service on the Azure testbed (start,
# STATUS=, journal fields, catalog, reload, a refused reload, stop), purges the package and
# looks for anything left; on bookworm, first, the README's operator walk-through
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
        "4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed; hw queues: 2 controllers over cap 4, ~169 MiB reclaimable at next boot"
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
journalctl -u hvtuned --no-pager > /opt/out/journal.txt

# stop: the originals are back.
hvtuned_stop
expect "sda scheduler after stop" "$(active "$sda")" mq-deadline
expect "sdc scheduler after stop" "$(active "$sdc")" bfq
expect "sda nr_requests after stop" "$(cat "$sda/queue/nr_requests")" 256
expect "the cap after stop" "$(cat "$param")" 0

# --- purge: everything the package put or made goes.
hvtuned_purge
finish PASS
