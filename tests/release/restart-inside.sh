# shellcheck shell=bash
# Restarts that change nothing (issue 43), under this release's own systemd as PID 1: sourced
# by package-inside.sh while the installed service runs on the Azure testbed, and leaves it
# running as it found it. A restart, a try-restart, a restart over a configuration that no
# longer manages an attribute, and a package upgrade (dpkg -i of the same .deb at a higher
# version: its postinst restarts the unit) each:
#  - write no attribute of the testbed between the old process's SIGTERM and the new one's
#    READY=1 (systemctl returns after it): no file under the testbed's /sys is newer than
#    before (tmpfs: every write sets its mtime), but those of an attribute the new
#    configuration no longer manages;
#  - leave no restore entry in the old process's journal, and one "restart: restoring nothing";
#  - keep the record files as they were (their inodes), but a record the new start rewrote.
# A plain systemctl stop still restores, and says so in its summary.
# container.sh's functions, $tb, $sda, $container_out and $APPLIED are package-inside.sh's.

# shellcheck disable=SC2154 # tb, sda, container_out, APPLIED: container.sh and package-inside.sh

message_id RESTORED ATTR_RESTORED
message_id RESTART_KEPT RESTART_KEPT
message_id STOPPED STOPPED
restart_conf=$(cat /etc/hvtuned.conf)
restart_began=$(date +%s.%N)
restart_mark=/run/hvtuned-restart.mark

# NAME:INODE of each record of originals (its dot files are no records).
record_inodes() { find /run/hvtuned -maxdepth 1 -type f ! -name '.*' -printf '%f:%i\n' 2>/dev/null | sort; }
# entries PID MESSAGE_ID: that process's entries with that MESSAGE_ID, one line each: DEVICE
# ATTR TO, or MESSAGE. By _PID: a process is one start and one stop.
entries() {
        journalctl --sync 2> /dev/null || true
        journalctl --no-pager -o json _PID="$1" MESSAGE_ID="$2" | python3 -c '
import json, sys
for e in map(json.loads, sys.stdin):
    print(" ".join((e["HVTUNED_DEVICE"], e["HVTUNED_ATTR"], e["HVTUNED_TO"])) if "HVTUNED_ATTR" in e else e["MESSAGE"])'
}
# The files of the testbed's /sys written since the mark whose name does not match $1 (an
# extended regular expression; "" matches none).
written_since_mark() {
        find "$tb/sys" -type f -newer "$restart_mark" -printf '%P\n' | sort |
                if [ -n "$1" ]; then grep -vE "/($1)\$"; else cat; fi
}

# restart_check WHAT MAY_WRITE RESTORED_AT_START COMMAND...: runs COMMAND, which must restart
# the running service; MAY_WRITE the names of the attribute files that may be written meanwhile
# (a regular expression, "" none), and RESTORED_AT_START what the new start restores, one
# "DEVICE ATTR TO" a line.
restart_check() {
        local what=$1 may_write=$2 want_restored=$3 old new inodes got restored_before
        shift 3
        old=$(systemctl show -P MainPID hvtuned)
        restored_before=$(entries "$old" "$RESTORED")  # its start's, if any
        inodes=$(record_inodes)
        [ -n "$inodes" ] || fail "no records before $what"
        # Every restart is a start, and systemd allows 5 in 10 s (StartLimitBurst=): these come
        # faster on a fast machine. The counter goes with reset-failed.
        systemctl reset-failed hvtuned
        touch "$restart_mark"
        sleep 0.01  # a write within the mark's own timestamp tick would not be newer
        "$@" > "$container_out/restart.txt" 2>&1 || { cat "$container_out/restart.txt"; fail "$what failed"; }
        new=$(systemctl show -P MainPID hvtuned)
        [ "$new" != "$old" ] || fail "$what did not restart hvtuned"
        expect "is-active after $what" "$(systemctl is-active hvtuned)" active
        expect "attributes written by $what" "$(written_since_mark "$may_write")" ""
        expect "restore entries of the stop of $what" "$(entries "$old" "$RESTORED")" "$restored_before"
        got=$(entries "$old" "$RESTART_KEPT")
        [[ $got =~ ^restart:\ restoring\ nothing\;\ [0-9]+\ records?\ kept\ for\ the\ next\ start$ ]] ||
                fail "the stop of $what said '$got', not restart: restoring nothing"
        expect "the summary of the stop of $what" "$(entries "$old" "$STOPPED" | sed 's/:.*//')" "Stopped (restart)"
        expect "applied entries of the start after $what" "$(entries "$new" "$APPLIED")" ""
        expect "restore entries of the start after $what" "$(entries "$new" "$RESTORED")" "$want_restored"
        if [ -z "$want_restored" ]; then
                expect "records (name:inode) after $what" "$(record_inodes)" "$inodes"
        fi
        expect "sda scheduler after $what" "$(active "$sda")" none
        echo "ok: $what: $got; nothing written before READY=1${want_restored:+ but what the new configuration dropped}"
}

restart_check "systemctl restart" "" "" systemctl restart hvtuned
restart_check "systemctl try-restart" "" "" systemctl try-restart hvtuned

# A restart over a configuration that no longer manages the LUNs' timeout: the start after it
# puts that original back (the old stop did not), with the knock-on it carried.
printf '%s\ndevice = { timeout = 300; };\n' "$restart_conf" > /etc/hvtuned.conf
hvtuned_reload "device.timeout"
expect "sda device/timeout after the reload" "$(cat "$sda/device/timeout")" 300
printf '%s\n' "$restart_conf" > /etc/hvtuned.conf
restart_check "systemctl restart over a file without device.timeout" "timeout|io_timeout" \
        "$(printf '%s device/timeout 180\n' sda sdb sdc sdd)" systemctl restart hvtuned
expect "sda device/timeout after the restart" "$(cat "$sda/device/timeout")" 180

# A package upgrade: the .deb again at a higher version, as dpkg-deb builds it. Its postinst
# restarts the running unit: which command debhelper wrote into it on this release is said.
rm -rf /root/upgrade && mkdir -p /root/upgrade
dpkg-deb -R /opt/pkg/hvtuned_*.deb /root/upgrade/pkg
sed -i 's/^Version: \(.*\)$/Version: \1+upgrade1/' /root/upgrade/pkg/DEBIAN/control
dpkg-deb -b /root/upgrade/pkg /root/upgrade/hvtuned_upgrade.deb > /dev/null
how=$(grep -oE "deb-systemd-invoke [\$a-z_-]+ |_dh_action=[a-z-]+" /root/upgrade/pkg/DEBIAN/postinst | sort -u | tr '\n' ' ')
echo "ok: $VERSION_CODENAME's debhelper postinst restarts with: $how"
restart_check "dpkg -i of $(sed -n 's/^Version: //p' /root/upgrade/pkg/DEBIAN/control)" "" "" \
        dpkg -i /root/upgrade/hvtuned_upgrade.deb
expect "the version after the upgrade" "$(dpkg-query -W -f='${Version}' hvtuned)" \
        "$(sed -n 's/^Version: //p' /root/upgrade/pkg/DEBIAN/control)"

# A plain stop still restores, and says what it did.
old=$(systemctl show -P MainPID hvtuned)
hvtuned_stop
expect "sda scheduler after a plain stop" "$(active "$sda")" mq-deadline
[ -n "$(entries "$old" "$RESTORED")" ] || fail "a plain stop restored nothing"
got=$(entries "$old" "$STOPPED")
[[ $got =~ ^Stopped\ \(stop\):\ [1-9][0-9]*\ attributes?\ restored,\ 0\ kept,\ 0\ left\ as\ tuned,\ on\ [1-9] ]] ||
        fail "a plain stop's summary: '$got'"
echo "ok: a plain stop restored: $got"
expect "records after a plain stop" "$(record_inodes)" ""
systemctl reset-failed hvtuned
hvtuned_start "after the restarts"
rm -rf /root/upgrade "$restart_mark"
echo "ok: the restarts checked in $(awk -v a="$restart_began" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
