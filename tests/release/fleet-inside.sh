#!/bin/bash
# Owns: the walk's Fleets step on a machine without /etc/hvtuned.conf (issue 43), sourced by
# walk-inside.sh in its boot: the packages ship no main file, and README's Fleets block, a
# drop-in alone, is laid over the built-in policy. The scheduler stays none (before 0.2.0 a
# drop-in alone replaced that policy and the reload put every disk's scheduler back), and
# --check-config and --status name where it comes from.
# Uses walk-inside.sh's walk_block, walk_dir, walk_tb and container.sh's container_out,
# expect, fail, active.
# shellcheck disable=SC2154 # walk_dir, walk_tb, container_out: the sourcing script's

fleet_without_main() {
        # The walk's Configure step made /etc/hvtuned.conf: it goes, as on a machine that
        # skipped that step, and the reload takes the built-in policy.
        mv /etc/hvtuned.conf "${walk_dir%/*}/hvtuned.conf.configured"
        systemctl reload hvtuned || fail "systemctl reload hvtuned, without /etc/hvtuned.conf"
        expect "sdc scheduler without /etc/hvtuned.conf" "$(active "$walk_tb/sys/block/sdc")" none
}

# After README's block fleet-dropin (walk-inside.sh runs it, once, where the docs test
# readme-walk sees it).
fleet_check_scheduler() {
        expect "sda scheduler after the drop-in alone" "$(active "$walk_tb/sys/block/sda")" none
        expect "sdc scheduler after the drop-in alone" "$(active "$walk_tb/sys/block/sdc")" none
        grep -q '^queue.scheduler = "none"; *# built-in policy$' "$container_out/walk-fleet-dropin.txt" ||
                fail "hvtuned --check-config does not list the built-in policy's scheduler"
        # The state file may be a second behind the reload (hvtuned(8), --status).
        for _ in $(seq 20); do
                hvtuned --status > "$container_out/walk-fleet-status.txt" 2>&1 ||
                        { cat "$container_out/walk-fleet-status.txt"; fail "hvtuned --status after the drop-in"; }
                grep -q 'queue/read_ahead_kb .*512 .*from /etc/hvtuned.conf.d/' "$container_out/walk-fleet-status.txt" &&
                        break
                sleep 0.25
        done
        grep -q 'queue/scheduler .*from built-in policy' "$container_out/walk-fleet-status.txt" ||
                { cat "$container_out/walk-fleet-status.txt"
                  fail "hvtuned --status does not say the scheduler comes from the built-in policy"; }
        grep -q 'queue/read_ahead_kb .*from /etc/hvtuned.conf.d/50-fleet.conf:2' "$container_out/walk-fleet-status.txt" ||
                fail "hvtuned --status does not name the drop-in's line for read_ahead_kb"
        echo "ok: README's Fleets block without /etc/hvtuned.conf keeps the scheduler none, and says why"
}
