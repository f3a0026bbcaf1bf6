#!/bin/bash
# Runs inside the container of run.sh, as a unit of the real systemd there: installs the .deb
# with dpkg as an operator would, runs the installed service on the Azure testbed, purges the
# package and looks for anything left. The operator's steps, finish, fail and expect:
# tests/common/container.sh.
set -u
# shellcheck source=tests/common/container.sh
. /opt/container.sh
build=/opt/build
sda=$tb/sys/block/sda
message_id APPLIED ATTR_APPLIED

# --- install: enabled, but not started on a machine that is no Hyper-V guest.
hvtuned_install /opt/pkg/hvtuned_*.deb
[ -e /etc/hvtuned.conf ] && fail "the package shipped /etc/hvtuned.conf"
[ -f /usr/share/doc/hvtuned/examples/hvtuned.conf ] || fail "no example configuration"
man -w hvtuned.conf > /dev/null 2>&1 || [ -f /usr/share/man/man5/hvtuned.conf.5.gz ] || fail "no hvtuned.conf(5)"
# The shell completions where bash-completion and Debian's zsh load a package's.
[ -f /usr/share/bash-completion/completions/hvtuned ] || fail "no bash completion"
[ -f /usr/share/zsh/vendor-completions/_hvtuned ] || fail "no zsh completion"
# The TuneD profile where TuneD 2.20 to 2.23 and 2.24 on look, and this TuneD lists it.
for d in /usr/lib/tuned /usr/lib/tuned/profiles; do
        [ -f $d/hvtuned-virtual-guest/tuned.conf ] || fail "no $d/hvtuned-virtual-guest/tuned.conf"
done
[ -f /usr/lib/tuned/recommend.d/40-hvtuned.conf ] || fail "no TuneD recommendation"
if command -v tuned-adm > /dev/null; then
        tuned-adm list 2>&1 | grep -q "^- hvtuned-virtual-guest  *- " || fail "tuned-adm list does not show hvtuned-virtual-guest"
        echo "ok: tuned-adm lists hvtuned-virtual-guest"
fi

# --- run the installed service on the testbed, as the system test does (its drop-in only
# points it at the testbed and lifts the condition; the configuration is the built-in one).
testbed_persist "$build/tests/testbeds"
testbed_unit "$build/tests/emulate/hvtuned-sysfs-kernel.so"
hvtuned_start
expect "sda scheduler" "$(active "$sda")" none
status=$(systemctl show -P StatusText hvtuned)
expect "StatusText" "$status" "4 storvsc disks on 2 controllers: 4 tuned, 0 failed; hw queues: 2 controllers over cap 4, ~169 MiB reclaimable at next boot"
systemctl status hvtuned --no-pager > /opt/out/status.txt
expect "journal entries applied" "$(journalctl -u hvtuned -o cat MESSAGE_ID=$APPLIED | sort | tr '\n' ';')" \
        "hv_storvsc parameters/storvsc_max_hw_queues: 0 -> 4 (applied);sda queue/scheduler: mq-deadline -> none (applied);sdc queue/scheduler: bfq -> none (applied);"
journalctl -x -u hvtuned MESSAGE_ID=$APPLIED --no-pager | grep -q "as hvtuned.conf asks" ||
        fail "journalctl -x shows no catalog text"
echo "ok: journalctl -x explains the entries"
journalctl -u hvtuned --no-pager > /opt/out/journal.txt

# --- purge: the service stops (and restores), everything the package put or made goes.
hvtuned_purge
expect "sda scheduler after purge" "$(active "$sda")" mq-deadline
finish PASS
