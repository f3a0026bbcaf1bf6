# shellcheck shell=bash
# The README's operator walk-through (docs/testing.md): every command block of the README's
# operator sections run as written, in order, from install to purge, on Debian 12 booted with
# its own systemd as PID 1, in a root where hvtuned never was. Sourced by package-inside.sh
# (bookworm alone) before its own checks; container.sh's functions are there.
#
# tests/docs/readme-blocks.py gives a block's text by its marker's ID; each walk_block ID below
# runs one, in bash -e, and must exit 0; the lines between are the test's: what each block must
# have done, and the glue an operator's machine has of itself (a Hyper-V disk, node_exporter's
# directory). The docs test readme-walk fails when a command block of an operator section is
# neither run here nor marked with why it cannot be.
#
# Where the commands meet this container:
#  - the .deb lies in the parent of the directory the blocks run in, as dpkg-buildpackage leaves
#    it beside a checkout (package-build.sh ran that same command in this root);
#  - the service runs on an Azure testbed through the testbed drop-in (testbed_unit), and the
#    commands that run hvtuned by hand see that testbed too: `hvtuned` is a function that gives
#    the installed /usr/sbin/hvtuned the same environment (the sysfs shim and umockdev's preload,
#    UMOCKDEV_DIR), exported to the blocks' shells.

# shellcheck disable=SC2154 # container_out, dropin: tests/common/container.sh, which package-inside.sh sourced
walk_tb=/run/tb-walk
walk_dir=/root/walk/hvtuned
walk_shim=/opt/shim/hvtuned-sysfs-kernel.so
# What the package can leave: the before and after of every name of hvtuned's.
walk_where="/etc /run /var/lib/systemd /var/lib/prometheus /lib/systemd /lib/udev /usr/lib /usr/sbin /usr/share/man /usr/share/doc /usr/share/bash-completion"

hvtuned() {
        LD_PRELOAD="$walk_shim:libumockdev-preload.so.0" UMOCKDEV_DIR="$walk_tb" command hvtuned "$@"
}

# walk_block ID: the README's block ID, as written, in bash -e from $walk_dir; its output goes to
# the log (the first lines) and to /opt/out/walk-ID.txt. Its standard input answers yes, as the
# operator does to apt's question before a removal.
walk_block() {
        local id=$1 text rc=0 out=$container_out/walk-$1.txt
        text=$(python3 /opt/readme-blocks.py --block "$id" /opt/README.md) || fail "the README has no block $id"
        echo "--- README block $id:"
        printf '%s\n' "$text" | sed 's/^/    $ /'
        yes 2> /dev/null | (cd "$walk_dir" && bash -e -o pipefail -c "$text") > "$out" 2>&1 || rc=$?
        head -n 12 "$out" | sed 's/^/    | /'
        [ "$rc" = 0 ] || { cat "$out"; fail "README block $id exited $rc"; }
        echo "ok: README block $id exited 0"
}

# walk_originals WHEN: the testbed's disks and the driver have the values they came with.
walk_originals() {
        expect "sda scheduler $1" "$(active "$walk_tb/sys/block/sda")" mq-deadline
        expect "sdc scheduler $1" "$(active "$walk_tb/sys/block/sdc")" bfq
        expect "sda nr_requests $1" "$(cat "$walk_tb/sys/block/sda/queue/nr_requests")" 256
        expect "the cap $1" "$(cat "$walk_tb/sys/module/hv_storvsc/parameters/storvsc_max_hw_queues")" 0
}
# walk_records: the records of originals in the runtime directory (its dot files are no records).
walk_records() { find /run/hvtuned -maxdepth 1 -type f ! -name '.*' -printf '%f ' 2>/dev/null; }
walk_metrics=/var/lib/prometheus/node-exporter/hvtuned.prom

walk() {
        local tb_saved=$tb left start=$SECONDS
        echo "--- the README's operator walk-through ($(python3 /opt/readme-blocks.py --list /opt/README.md | tr '\n' ' '))"
        # The machine: a Hyper-V guest's disks (the testbed), the service pointed at them, and the
        # directory Debian's prometheus-node-exporter makes. No hvtuned yet.
        tb=$walk_tb
        testbed_persist /opt/testbeds
        testbed_unit "$walk_shim"
        tb=$tb_saved
        mkdir -p /var/lib/prometheus/node-exporter
        export walk_tb walk_shim
        export -f hvtuned
        # As hvtuned_install: no policy-rc.d of a build root, no man-db index rebuilt in the boot.
        rm -f /usr/sbin/policy-rc.d /var/lib/man-db/auto-update
        dpkg-query -W hvtuned > /dev/null 2>&1 && fail "hvtuned is installed before the walk"
        # shellcheck disable=SC2086 # the list of places
        find $walk_where -name '*hvtuned*' 2>/dev/null | sort > "$container_out/walk-before.txt"
        mkdir -p "$walk_dir"
        cp /opt/pkg/hvtuned_*.deb "${walk_dir%/*}/"

        # --- Install
        walk_block deb-build-deps
        walk_block deb-install
        expect "the package after apt install" "$(dpkg-query -W -f='${Status}' hvtuned)" "install ok installed"
        expect "is-enabled after the install, masked first" "$(systemctl is-enabled hvtuned)" masked
        expect "is-active after the install, masked first" "$(systemctl is-active hvtuned)" inactive
        walk_originals "after a masked install"

        # --- Try it safely
        walk_block try
        grep -q "sda queue/scheduler: mq-deadline -> none" "$container_out/walk-try.txt" ||
                fail "--dry-run did not say what it would change on sda"
        walk_originals "after --dry-run"
        expect "records after --dry-run" "$(walk_records)" ""
        walk_block try-start
        expect "is-enabled after unmask and enable --now" "$(systemctl is-enabled hvtuned)" enabled
        expect "is-active after unmask and enable --now" "$(systemctl is-active hvtuned)" active
        expect "sda scheduler after start" "$(active "$walk_tb/sys/block/sda")" none
        expect "the cap after start" "$(cat "$walk_tb/sys/module/hv_storvsc/parameters/storvsc_max_hw_queues")" 4

        # --- Configure: the packaged example (128 requests; read-ahead 1024 on the disks of
        # role data: sdc and sdd).
        walk_block configure
        expect "sda nr_requests after the example's reload" "$(cat "$walk_tb/sys/block/sda/queue/nr_requests")" 128
        expect "sdc read_ahead_kb after the example's reload" "$(cat "$walk_tb/sys/block/sdc/queue/read_ahead_kb")" 1024

        # --- Operate
        walk_block status
        for d in sda sdb sdc sdd; do
                grep -qw "$d" "$container_out/walk-status.txt" || fail "hvtuned --status does not show $d"
        done
        hvtuned --status --json | python3 -c 'import json, sys; json.load(sys.stdin)' ||
                fail "hvtuned --status --json is not one JSON object"
        echo "ok: hvtuned --status shows sda, sdb, sdc and sdd, and --json parses"
        walk_block journal
        grep -q "sda queue/scheduler: mq-deadline -> none" "$container_out/walk-journal.txt" ||
                fail "journalctl -u hvtuned does not show sda's scheduler change"
        walk_block reload
        expect "ReloadResult" "$(systemctl show -P ReloadResult hvtuned)" success
        walk_block stop
        expect "is-active after stop" "$(systemctl is-active hvtuned)" inactive
        walk_originals "after stop"
        # What --restore is for: a pass by hand left its records (a crash leaves the same).
        hvtuned --once > "$container_out/walk-once.txt" 2>&1 || { cat "$container_out/walk-once.txt"; fail "hvtuned --once"; }
        expect "sda scheduler after --once" "$(active "$walk_tb/sys/block/sda")" none
        [ -n "$(walk_records)" ] || fail "hvtuned --once left no records in /run/hvtuned"
        walk_block restore
        walk_originals "after --restore"
        expect "records after --restore" "$(walk_records)" ""
        systemctl start hvtuned || fail "systemctl start hvtuned, after --restore"

        # --- Fleets: a drop-in with the metrics file and a later override (512 on data disks),
        # on a machine without /etc/hvtuned.conf (fleet-inside.sh).
        # shellcheck source=tests/release/fleet-inside.sh
        . /opt/fleet-inside.sh && fleet_without_main
        walk_block fleet-dropin
        fleet_check_scheduler
        expect "ReloadResult after the drop-in" "$(systemctl show -P ReloadResult hvtuned)" success
        expect "sdc read_ahead_kb after the drop-in" "$(cat "$walk_tb/sys/block/sdc/queue/read_ahead_kb")" 512
        grep -qx 'hvtuned_disks{result="tuned"} 4' "$walk_metrics" ||
                fail "no hvtuned_disks{result=\"tuned\"} 4 in $walk_metrics: $(cat "$walk_metrics" 2>&1)"
        echo "ok: the drop-in is applied and the metrics file written"

        # --- Uninstall and roll back
        walk_block mask
        expect "is-active after mask --now" "$(systemctl is-active hvtuned)" inactive
        expect "is-enabled after mask --now" "$(systemctl is-enabled hvtuned)" masked
        walk_originals "after mask --now"
        [ -e "$walk_metrics" ] && fail "$walk_metrics is left after the stop"
        # What the udev rule's SYSTEMD_WANTS does with each disk: a start job, which a mask refuses.
        systemctl start hvtuned 2> /dev/null && fail "a masked hvtuned.service started"
        echo "ok: a masked hvtuned.service cannot be started"
        walk_block unmask
        expect "is-enabled after unmask" "$(systemctl is-enabled hvtuned)" enabled
        expect "is-active after unmask" "$(systemctl is-active hvtuned)" active
        expect "sda scheduler after unmask" "$(active "$walk_tb/sys/block/sda")" none
        # The test's own drop-in goes before the purge, as the operator's machine has none.
        rm -rf "${dropin%/*}"
        systemctl daemon-reload
        walk_block remove
        expect "is-active after the removal" "$(systemctl is-active hvtuned)" inactive
        dpkg-query -W hvtuned > /dev/null 2>&1 && fail "dpkg still knows hvtuned after apt purge"
        walk_originals "after the removal"
        # shellcheck disable=SC2086 # the list of places
        find $walk_where -name '*hvtuned*' 2>/dev/null | sort > "$container_out/walk-after.txt"
        left=$(comm -13 "$container_out/walk-before.txt" "$container_out/walk-after.txt" | tr '\n' ' ')
        [ -z "$left" ] || fail "left after the README's removal: $left"
        expect "unit after the removal" "$(systemctl show -P LoadState hvtuned)" not-found
        echo "ok: the README's removal left nothing of hvtuned's"
        echo "ok: the README's operator walk-through passed in $((SECONDS - start)) s"

        # The root as it was for package-inside.sh's own checks.
        rm -rf "${walk_dir%/*}" "$walk_tb" /var/lib/prometheus
        systemctl daemon-reload
}
walk
