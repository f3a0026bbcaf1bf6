#!/bin/bash
# Runs inside the container, as a unit of the real systemd there (see run.sh): drives hvtuned
# with systemctl and reads it back with journalctl, as an operator would. The operator's
# steps, finish, fail and expect: tests/common/container.sh.
set -u
# shellcheck source=tests/common/container.sh
. /opt/container.sh
build=/opt/build
sda=$tb/sys/block/sda sdc=$tb/sys/block/sdc
param=$tb/sys/module/hv_storvsc/parameters/storvsc_max_hw_queues
message_id APPLIED ATTR_APPLIED
message_id CONFIG_ERROR CONFIG_ERROR
message_id CONTROLLER CONTROLLER

# The Azure VM, persisted so that the daemon runs on it directly (docs/testing.md, "A
# testbed by hand"), with a watchdog short enough to see fire.
testbed_persist "$build/tests/testbeds"
testbed_unit "$build/tests/emulate/hvtuned-sysfs-kernel.so" WatchdogSec=3s TimeoutAbortSec=2s
printf 'queue = { scheduler = "none"; };\n' > /etc/hvtuned.conf

# start: returns once READY=1 came, which is after the start-up pass.
hvtuned_start
expect "sda scheduler when start returned" "$(active "$sda")" none
expect "sdc scheduler when start returned" "$(active "$sdc")" none
expect "the cap when start returned" "$(cat "$param")" 4
status=$(systemctl show -P StatusText hvtuned)
expect "StatusText" "$status" "4 storvsc disks on 2 controllers: 4 tuned, 0 failed; hw queues: 2 controllers over cap 4, ~169 MiB reclaimable at next boot"
systemctl status hvtuned --no-pager > /opt/out/status.txt
grep -q "Status: \"$status\"" /opt/out/status.txt || fail "systemctl status shows no STATUS: $(cat /opt/out/status.txt)"

# journalctl -o json: one entry per tuned attribute, with the fields and MESSAGE_ID.
journalctl -u hvtuned -o json MESSAGE_ID=$APPLIED > /opt/out/applied.json
got=$(python3 -c '
import json, sys
rows = sorted((e["HVTUNED_DEVICE"], e["HVTUNED_ATTR"], e["HVTUNED_FROM"], e["HVTUNED_TO"], e["HVTUNED_RESULT"])
              for e in map(json.loads, open(sys.argv[1])))
print(";".join(",".join(r) for r in rows))' /opt/out/applied.json)
expect "applied entries" "$got" "hv_storvsc,parameters/storvsc_max_hw_queues,0,4,applied;sda,queue/scheduler,mq-deadline,none,applied;sdc,queue/scheduler,bfq,none,applied"
expect "controller entries" "$(journalctl -u hvtuned -o json MESSAGE_ID=$CONTROLLER | wc -l)" 2

# The catalog, once journalctl knows it.
journalctl --update-catalog || fail "journalctl --update-catalog failed"
journalctl --list-catalog | grep -q "$APPLIED hvtuned" || fail "our catalog is not listed: $(journalctl --list-catalog | grep -c .) entries"
journalctl -x -u hvtuned MESSAGE_ID=$APPLIED --no-pager > /opt/out/catalog.txt
grep -q "as hvtuned.conf asks, and read" /opt/out/catalog.txt || fail "journalctl -x shows no catalog text: $(cat /opt/out/catalog.txt)"
echo "ok: journalctl -x shows the catalog"

# reload: returns once the new values are applied.
printf 'queue = { scheduler = "none"; nr_requests = 128; };\n' > /etc/hvtuned.conf
hvtuned_reload
expect "sda nr_requests when reload returned" "$(cat "$sda/queue/nr_requests")" 128
expect "sdc nr_requests when reload returned" "$(cat "$sdc/queue/nr_requests")" 128

# A bad file: reload fails, the unit stays active on the old values, the journal says why.
printf 'queue = { scheduler = "none"; nr_requests = 99999; };\n' > /etc/hvtuned.conf
systemctl reload hvtuned 2> /opt/out/bad-reload.txt && fail "a reload of a bad file succeeded"
expect "is-active after a bad reload" "$(systemctl is-active hvtuned)" active
expect "sda nr_requests after a bad reload" "$(cat "$sda/queue/nr_requests")" 128
journalctl -u hvtuned MESSAGE_ID=$CONFIG_ERROR -o cat | grep -q '/etc/hvtuned.conf:1: queue.nr_requests: 99999 is out of range' ||
        fail "no configuration error in the journal"
echo "ok: the bad reload is in the journal"
printf 'queue = { scheduler = "none"; nr_requests = 128; };\n' > /etc/hvtuned.conf
hvtuned_reload "the good file again"

# SIGSTOP: the watchdog fires, systemd kills and restarts it, the originals survive.
pid=$(systemctl show -P MainPID hvtuned)
kill -STOP "$pid"
for _ in $(seq 100); do
        now=$(systemctl show -P MainPID hvtuned)
        [ "$now" != "$pid" ] && [ "$now" != 0 ] && [ "$(systemctl is-active hvtuned)" = active ] && break
        sleep 0.1
done
[ "$now" != "$pid" ] || fail "no restart after the watchdog: $(systemctl status hvtuned --no-pager)"
expect "NRestarts" "$(systemctl show -P NRestarts hvtuned)" 1
journalctl -u hvtuned --no-pager | grep -q "Watchdog timeout" || fail "the journal has no watchdog timeout"
echo "ok: the watchdog restarted it (PID $pid -> $now)"
expect "sda scheduler after the restart" "$(active "$sda")" none

# stop: the originals of the first run are back.
hvtuned_stop
expect "sda scheduler after stop" "$(active "$sda")" mq-deadline
expect "sdc scheduler after stop" "$(active "$sdc")" bfq
expect "sda nr_requests after stop" "$(cat "$sda/queue/nr_requests")" 256
expect "the cap after stop" "$(cat "$param")" 0

# Opting out (hvtuned(8), OPTING OUT): the udev rule's SYSTEMD_WANTS=hvtuned.service makes each
# Hyper-V disk's .device unit want the service (systemd.device(5)), enabled or not. No udevd
# runs in a container: a unit with the same Wants= stands for the device. It starts hvtuned,
# and once `systemctl mask --now hvtuned.service` is done, neither it nor a start by name
# does. The mask is a link in /etc, which a reboot keeps.
mkdir -p /run/systemd/system
printf '[Unit]\nWants=hvtuned.service\n[Service]\nType=oneshot\nExecStart=/bin/true\n' > /run/systemd/system/disk-wants.service
systemctl daemon-reload
systemctl start disk-wants.service || fail "the stand-in for a disk's device unit did not start"
for _ in $(seq 100); do [ "$(systemctl is-active hvtuned)" = active ] && break; sleep 0.1; done
expect "is-active after a disk's Wants=" "$(systemctl is-active hvtuned)" active
expect "sda scheduler after a disk's Wants=" "$(active "$sda")" none
# As hvtuned(8) says it: --now stops the running daemon too, which puts the originals back.
systemctl mask --now hvtuned.service || fail "systemctl mask --now hvtuned.service failed"
expect "is-active after mask --now" "$(systemctl is-active hvtuned)" inactive
expect "the mask" "$(readlink /etc/systemd/system/hvtuned.service)" /dev/null
expect "is-enabled when masked" "$(systemctl is-enabled hvtuned)" masked
systemctl start disk-wants.service || fail "the stand-in for a disk's device unit did not start when masked"
sleep 1
expect "is-active after a disk's Wants=, masked" "$(systemctl is-active hvtuned)" inactive
systemctl start hvtuned 2> /opt/out/masked-start.txt && fail "systemctl start hvtuned started a masked unit"
grep -q "masked" /opt/out/masked-start.txt || fail "systemctl start of the masked unit said: $(cat /opt/out/masked-start.txt)"
expect "sda scheduler when masked" "$(active "$sda")" mq-deadline
echo "ok: masked, hvtuned starts neither through a disk's Wants= nor by name"
systemctl unmask hvtuned || fail "systemctl unmask hvtuned failed"
[ -L /etc/systemd/system/hvtuned.service ] && fail "systemctl unmask left the mask"
[ "$(systemctl is-enabled hvtuned)" != masked ] || fail "still masked after systemctl unmask"
journalctl -u hvtuned --no-pager > /opt/out/journal.txt
finish PASS
