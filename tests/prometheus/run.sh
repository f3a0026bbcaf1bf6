#!/bin/bash
# The fleet-view test: hvtuned as a daemon on the Azure testbed writes its metrics file; the
# file passes promtool check metrics; the real prometheus-node-exporter serves it on
# 127.0.0.1 from its textfile collector; a real Prometheus scrapes that and, asked over its
# HTTP API (PromQL), gives back the figures hvtuned reported, and holds the alert of a
# controller over the cap pending. contrib/prometheus/hvtuned.rules.yml passes promtool's
# own rule tests. Exits 77 when a tool is missing (tools/install-deps installs them).
# usage: run.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
# The configuration it writes must be 0644 in a 0755 directory: hvtuned refuses others.
umask 022
build=$(realpath "$1") src=$(realpath "$2")
# shellcheck source=tests/common/container.sh
. "$src/tests/common/container.sh"
need_tools promtool prometheus prometheus-node-exporter umockdev-run curl python3

work=$(mktemp -d /tmp/hvtuned-prometheus.XXXXXX)
pids=()
cleanup() {
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
        wait 2>/dev/null || true
        rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for l in "$work"/*.log; do echo "--- $l"; tail -20 "$l"; done; exit 1; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# query PROMQL: the first sample's value, or nothing.
query() {
        curl -sf --get "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$1" |
                python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
# wait_query PROMQL WANT: until Prometheus answers WANT (60 s at most).
wait_query() {
        local got=""
        for _ in $(seq 120); do
                got=$(query "$1" || true)
                [ "$got" = "$2" ] && { echo "ok: $1 = $2"; return 0; }
                sleep 0.5
        done
        fail "Prometheus answers '$got' to $1, want '$2'"
}

echo "== promtool test rules contrib/prometheus/hvtuned.rules.test.yml"
(cd "$src/contrib/prometheus" && promtool test rules hvtuned.rules.test.yml) || fail "promtool test rules"

# --- hvtuned writes its file
mkdir -p "$work/textfile" "$work/conf"
# 0700, as the unit's RuntimeDirectoryMode= makes it: hvtuned warns of one others may open.
mkdir -m 0700 "$work/runtime"
cat > "$work/conf/hvtuned.conf" <<CONF
queue = { scheduler = "none"; };
metrics_file = "$work/textfile/hvtuned.prom";
CONF
chmod 0644 "$work/conf/hvtuned.conf"
# On the Azure VM made for good, as the installed service of the system test runs: the shim
# (the attributes answer writes as the kernel does) before umockdev's preload.
tb=$work/tb
testbed_persist "$build/tests/testbeds"
RUNTIME_DIRECTORY=$work/runtime UMOCKDEV_DIR=$tb \
        LD_PRELOAD="$build/tests/emulate/hvtuned-sysfs-kernel.so:libumockdev-preload.so.0" \
        "$build/daemon/hvtuned" -c "$work/conf/hvtuned.conf" > "$work/hvtuned.log" 2>&1 &
hvtuned_pid=$!
pids+=("$hvtuned_pid")
for _ in $(seq 200); do [ -s "$work/textfile/hvtuned.prom" ] && break; sleep 0.1; done
[ -s "$work/textfile/hvtuned.prom" ] || fail "hvtuned wrote no metrics file"
promtool check metrics < "$work/textfile/hvtuned.prom" || fail "promtool check metrics"
echo "ok: promtool check metrics passes on hvtuned.prom"

# --- node_exporter serves it, Prometheus scrapes it. This machine is no Microsoft VM, and the
# dmi collector is off: a file beside hvtuned's says it is one, for HvtunedNotReporting.
printf '# TYPE node_dmi_info gauge\nnode_dmi_info{product_name="Virtual Machine",system_vendor="Microsoft Corporation"} 1\n' \
        > "$work/textfile/dmi.prom"
ne_port=$(free_port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$ne_port" --collector.disable-defaults \
        --collector.textfile --collector.textfile.directory="$work/textfile" > "$work/node-exporter.log" 2>&1 &
pids+=("$!")
prom_port=$(free_port)
cp "$src/contrib/prometheus/hvtuned.rules.yml" "$work/"
cat > "$work/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $work/hvtuned.rules.yml
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ["127.0.0.1:$ne_port"]
YML
promtool check config "$work/prometheus.yml" > /dev/null || fail "promtool check config"
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
        --web.listen-address="127.0.0.1:$prom_port" > "$work/prometheus.log" 2>&1 &
pids+=("$!")

wait_query 'hvtuned_disks{result="tuned"}' 4
wait_query 'hvtuned_disks{result="failed"}' 0
wait_query 'hvtuned_hw_queue_cap' 4
# Each disk's scheduler, and the platform's read-ahead ceiling (a file that does not name
# read_ahead_kb gets it): 2 an Azure disk.
wait_query 'sum(hvtuned_attributes)' 8
wait_query 'sum(hvtuned_disks_managed{kind="scsi"})' 4
wait_query 'count(hvtuned_controller_hw_queues > on(instance, job) group_left hvtuned_hw_queue_cap)' 2
# The memory the cap would win back, as STATUS says it (~169 MiB), to the byte.
want=$(awk '/^hvtuned_controller_preallocated_bytes/ {a += $2} /^hvtuned_controller_capped_preallocated_bytes/ {b += $2} END {print a - b}' "$work/textfile/hvtuned.prom")
wait_query 'sum(hvtuned_controller_preallocated_bytes - hvtuned_controller_capped_preallocated_bytes)' "$want"
echo "   ($((want / 1048576)) MiB reclaimable, as hvtuned's STATUS says)"
wait_query 'count(ALERTS{alertname="HvtunedControllerOverCap",alertstate="pending"})' 2
wait_query 'count(ALERTS{alertname="HvtunedDiskFailed"}) or vector(0)' 0
wait_query 'hvtuned_build_info{version="'"$(project_version "$build")"'"}' 1
# The file as the alert finds it in node_exporter's own label, fresh, and no alert.
wait_query 'count(node_textfile_mtime_seconds{file=~"(.*/)?hvtuned\\.prom"} > time() - 300)' 1
wait_query 'count(ALERTS{alertname="HvtunedNotReporting"}) or vector(0)' 0

# A reload is counted, and Prometheus sees it.
kill -HUP "$hvtuned_pid"
wait_query 'hvtuned_config_reloads_total' 1
wait_query 'hvtuned_config_last_reload_success' 1

# Stopped, hvtuned takes its file away: node_exporter no longer serves stale figures.
kill -TERM "$hvtuned_pid"
wait "$hvtuned_pid" || fail "hvtuned exited with $?"
[ ! -e "$work/textfile/hvtuned.prom" ] || fail "hvtuned.prom is left after stop"
wait_query 'absent(hvtuned_disks)' 1
wait_query 'count(ALERTS{alertname="HvtunedNotReporting",alertstate="pending",reason="missing"})' 1
echo PASS
