# shellcheck shell=bash
# The NVMe stage of the vm-daemon boot: tests/vm/daemon-inside.sh sources it in the guest and
# calls nvme_stage after its storvsc stages (it uses their fail, ok, wait_until, settle, journal,
# config, the message ids and container.sh's message_id and hvtuned_start/stop). No boot of its
# own: the decoy is in the same guest from boot, the stand-in is made here, in ~10 s; hvtuned's
# two lives on it take ~15-30 s under TCG.
#
# The real NVMe host driver on the kernel under test, two ways:
#   - the decoy: QEMU's `-device nvme` (tests/vm/daemon.sh), model "QEMU NVMe Ctrl", which
#     hvtuned must never touch;
#   - Azure's controllers: the kernel's NVMe target (nvmet, configfs) with the subsystem's
#     attr_model set to "MSFT NVMe Accelerator v1.0" (nsid 1 the OS disk, nsid 2 data LUN 0,
#     on scsi_debug disks whose optimal I/O size of 32 MiB nvmet passes on as NOWS, as
#     Azure's accelerator reports it: the kernel then sets read-ahead 65536 itself) and to
#     "Microsoft NVMe Direct Disk v2" (nsid 1, the local disk, on a tmpfs file), connected through the host's fabrics driver by a write to /dev/nvme-fabrics (nvme-cli is
#     not in the releases' roots): nvme-loop where Debian builds it, else nvmet-tcp and
#     nvme-tcp over the guest's loopback.
# One layout a kernel (/vmtest-files/env, from daemon.sh): VMTEST_NVME_LAYOUT "heads" (native
# multipath: nvmet sets CMIC's multi-controller bit, so each namespace is a head
# /sys/devices/virtual/nvme-subsystem/nvme-subsysN/nvmeXnY over a hidden path device
# nvmeXcYnZ) or "direct" (nvme_core.multipath=N on the command line: the namespace is the
# controller's child, /sys/devices/virtual/nvme-fabrics/ctl/nvmeX/nvmeXnY), and
# VMTEST_NVME_TRANSPORT "loop" or "tcp". Only the transports with a blk-mq timeout handler
# (tcp, pci) have queue/io_timeout; nvme-loop's queues and every head have none
# (/work/perf/nvme-facts.md has the table per kernel).

# shellcheck source=tests/vm/nvme-events.sh
. /vmtest-files/nvme-events.sh

NVMET=/sys/kernel/config/nvmet
NQN_ACCEL=nqn.2014-08.org.hvtuned.vmtest:accelerator
NQN_LOCAL=nqn.2014-08.org.hvtuned.vmtest:direct-disk
MODEL_ACCEL="MSFT NVMe Accelerator v1.0"
MODEL_LOCAL="Microsoft NVMe Direct Disk v2"
MODEL_DECOY="QEMU NVMe Ctrl"

# model_of DIR: DIR's model with the kernel's padding to 40 bytes trimmed; fails unless the
# kernel padded it to exactly 40 (Azure's rule matches the trimmed string).
model_of() {
        local m
        IFS= read -r m < "$1/model" || return 1
        [ ${#m} = 40 ] || { echo "model of $1 is ${#m} bytes, not 40: '$m'" >&2; return 1; }
        m=${m%"${m##*[! ]}"}
        echo "$m"
}

# nvme_disks: every NVMe block device that is a whole namespace, one a line:
#   NAME ROLE NQN NSID SYSPATH
# ROLE: head (parent of class nvme-subsystem), path (hidden, nvmeXcYnZ), ns (the controller's
# child: the direct layout, and QEMU's, which is never a head).
nvme_disks() {
        local b name p parent role nqn nsid
        for b in /sys/class/block/nvme*; do
                [ -e "$b" ] || continue
                [ -e "$b/partition" ] && continue
                name=${b##*/}
                # Builtins only (cd -P resolves the link): a process is ~0.1 s under TCG.
                cd -P "$b" && p=$PWD && cd / || return 1
                parent=${p%/*}
                if [[ $parent == /sys/devices/virtual/nvme-subsystem/* ]]; then
                        role="head"
                elif [[ $name == nvme*c*n* ]]; then
                        role=path
                else
                        role=ns
                fi
                read -r nqn < "$parent/subsysnqn" && read -r nsid < "$b/nsid" || return 1
                echo "$name $role $nqn $nsid $p"
        done
}
# disk_for NQN NSID ROLE [LIST]: the name of that namespace's device of that role, from
# nvme_disks' LIST (default: the one nvme_list made).
disk_for() {
        local name role nqn nsid p
        while read -r name role nqn nsid p; do
                [ "$nqn $nsid $role" = "$1 $2 $3" ] && echo "$name"
        done <<< "${4-$nvme_list}"
}
# syspath DEV: DEV's directory under /sys/devices; rd FILE: its first line (builtins).
syspath() { cd -P "/sys/class/block/$1" && echo "$PWD" && cd /; }
rd() { local v; IFS= read -r v < "$1" && printf '%s\n' "$v"; }
# nvme_list: nvme_disks, kept in nvme_list.
nvme_list() { nvme_list=$(nvme_disks); }

# nvme_snapshot: every readable queue/ file of every NVMe block device (decoy, stand-in
# heads, hidden paths, namespaces), path:value, sorted, one grep for all (a cat a file is
# seconds a disk under TCG). A file the kernel refuses to read (a 5.10 or 6.1 head's
# wbt_lat_usec: EINVAL) shows as grep's error line: as stable as a value.
nvme_snapshot() {
        find /sys/class/block/nvme*/queue/ -maxdepth 1 -type f -print0 2> /dev/null | LC_ALL=C sort -z |
                xargs -0 grep -H '' 2>&1 | sed 's/^grep: //' | LC_ALL=C sort
}
# of DEV SNAPSHOT: DEV's lines of a snapshot.
of() { grep "^/sys/class/block/$1/queue/" "$2"; }
qattr() { rd "/sys/class/block/$1/queue/$2"; }
qsched() { sed -n 's/.*\[\(.*\)\].*/\1/p' "/sys/class/block/$1/queue/scheduler"; }

# nvmet_ns NQN NSID BACKING: a namespace of that subsystem, enabled: on a block device
# (nvmet's bdev backend, which passes the device's optimal I/O size on as NOWS), or on a file
# of 16 MiB on tmpfs (buffered_io: tmpfs before 6.6 has no O_DIRECT).
nvmet_ns() {
        local n=$NVMET/subsystems/$1/namespaces/$2
        if [[ $3 != /dev/* ]]; then
                truncate -s 16M "$3" || fail "no backing file $3"
        fi
        mkdir "$n" && printf %s "$3" > "$n/device_path" || fail "nvmet: cannot make namespace $2 of $1 on $3"
        if [[ $3 != /dev/* ]]; then
                echo 1 > "$n/buffered_io" || fail "nvmet: buffered_io"
        fi
        echo 1 > "$n/enable" || fail "nvmet: cannot enable namespace $2 of $1 on $3"
}

# nvmet_subsystem NQN MODEL NSID:BACKING...: a subsystem any host may connect to, with that
# model (set before any host connects: nvmet refuses it after) and those namespaces, exported
# on port 1.
nvmet_subsystem() {
        local nqn=$1 model=$2 s n
        shift 2
        s=$NVMET/subsystems/$nqn
        mkdir "$s" || fail "nvmet: cannot make subsystem $nqn"
        echo 1 > "$s/attr_allow_any_host" || fail "nvmet: attr_allow_any_host"
        [ -e "$s/attr_model" ] || fail "nvmet on $VMTEST_KERNEL has no attr_model"
        echo "$model" > "$s/attr_model" || fail "nvmet: cannot set attr_model '$model'"
        [ "$(rd "$s/attr_model")" = "$model" ] || fail "nvmet: attr_model reads '$(rd "$s/attr_model")'"
        for n in "$@"; do
                nvmet_ns "$nqn" "${n%%:*}" "${n#*:}"
        done
        ln -s "$s" "$NVMET/ports/1/subsystems/$nqn" || fail "nvmet: cannot export $nqn on port 1"
}

# nvme_backing N: N more scsi_debug disks, as the accelerator's namespaces' backing: the
# module was loaded (daemon-inside.sh's stage 1) with sector_size=4096 opt_blks=8192, an
# optimal I/O size of 32 MiB, what Azure's accelerator reports (NOWS 65535 at 512-byte
# blocks). Sets nvme_backing to their names. A tmpfs file reports none, and the kernel then
# sets nothing of its own.
nvme_backing() {
        local d before=" " p=/sys/bus/pseudo/drivers/scsi_debug n=0
        [ "$(rd /sys/module/scsi_debug/parameters/sector_size) $(rd /sys/module/scsi_debug/parameters/opt_blks)" = "4096 8192" ] ||
                fail "scsi_debug is not loaded with sector_size=4096 opt_blks=8192"
        for d in $p/adapter*/host*/target*/*/block/*; do before+="${d##*/} "; done
        echo "$1" > $p/add_host || fail "scsi_debug: cannot add $1 hosts"
        settle
        nvme_backing=""
        for d in $p/adapter*/host*/target*/*/block/*; do
                [[ $before == *" ${d##*/} "* ]] || { nvme_backing+="${d##*/} "; n=$((n + 1)); }
        done
        [ $n = "$1" ] || fail "scsi_debug: $n new disks ($nvme_backing), not $1"
        for d in $nvme_backing; do
                [ "$(rd "/sys/block/$d/queue/optimal_io_size")" = 33554432 ] ||
                        fail "scsi_debug's $d: optimal_io_size $(rd "/sys/block/$d/queue/optimal_io_size"), not 32 MiB"
        done
}

# nvme_connect NQN: the host connects to it, as nvme-cli's connect would (one write of the
# option string fabrics.c parses).
nvme_connect() {
        local opts="transport=loop,nqn=$1"
        [ "$VMTEST_NVME_TRANSPORT" = loop ] || opts="transport=tcp,traddr=127.0.0.1,trsvcid=4420,nqn=$1"
        echo "$opts" > /dev/nvme-fabrics || fail "connect to $1 ($opts) failed: $(dmesg | grep -i nvme | tail -n 3)"
}

# The stand-in: nvmet's two subsystems on port 1, the host connected to both. Sets
# nvme_os nvme_data nvme_local (the disks hvtuned is to tune: heads or namespaces), and for
# heads nvme_paths (the hidden path devices).
nvme_standin() {
        local m
        case $VMTEST_NVME_TRANSPORT in
        loop) modprobe nvmet && modprobe nvme-loop || fail "no nvmet or nvme-loop on $VMTEST_KERNEL" ;;
        tcp) modprobe nvmet && modprobe nvmet-tcp && modprobe nvme-tcp || fail "no nvmet-tcp or nvme-tcp on $VMTEST_KERNEL"
                ip link set lo up 2> /dev/null || true ;;
        *) fail "VMTEST_NVME_TRANSPORT is '$VMTEST_NVME_TRANSPORT'" ;;
        esac
        nvme_t_modules=$SECONDS
        mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config || fail "no configfs"
        [ -d $NVMET ] || fail "no $NVMET"
        mkdir $NVMET/ports/1 || fail "nvmet: no port"
        if [ "$VMTEST_NVME_TRANSPORT" = loop ]; then
                echo loop > $NVMET/ports/1/addr_trtype
        else
                echo tcp > $NVMET/ports/1/addr_trtype && echo ipv4 > $NVMET/ports/1/addr_adrfam &&
                        echo 127.0.0.1 > $NVMET/ports/1/addr_traddr && echo 4420 > $NVMET/ports/1/addr_trsvcid ||
                        fail "nvmet: cannot set up the tcp port"
        fi
        # Four: nsid 1 and 2 now, and the two attached later (nvme_controls, nvme_events).
        nvme_backing 4
        set -- $nvme_backing
        nvme_spare="$3 $4"
        nvmet_subsystem $NQN_ACCEL "$MODEL_ACCEL" "1:/dev/$1" "2:/dev/$2"
        nvmet_subsystem $NQN_LOCAL "$MODEL_LOCAL" "1:/tmp/nvmet-direct-disk-1"
        # What the kernel says of the new devices: a hidden path device must say nothing.
        udevadm monitor -k -s block > /tmp/nvme-monitor 2>&1 &
        local monitor=$!
        sleep 0.5
        nvme_t_connect=$SECONDS
        nvme_connect $NQN_ACCEL
        nvme_connect $NQN_LOCAL
        local r=ns
        [ "$VMTEST_NVME_LAYOUT" = heads ] && r="head"
        wait_until 30 "the stand-in's three namespaces" \
                'nvme_list && [ -n "$(disk_for $NQN_ACCEL 1 $r)" ] && [ -n "$(disk_for $NQN_ACCEL 2 $r)" ] && [ -n "$(disk_for $NQN_LOCAL 1 $r)" ]'
        settle
        nvme_list
        sleep 0.5
        kill "$monitor" 2> /dev/null
        wait "$monitor" 2> /dev/null
        nvme_t_up=$SECONDS
        nvme_os=$(disk_for $NQN_ACCEL 1 $r) nvme_data=$(disk_for $NQN_ACCEL 2 $r) nvme_local=$(disk_for $NQN_LOCAL 1 $r)
        nvme_paths=$(awk '$2 == "path" { printf "%s ", $1 }' <<< "$nvme_list")
        for m in "$nvme_os:$MODEL_ACCEL" "$nvme_data:$MODEL_ACCEL" "$nvme_local:$MODEL_LOCAL"; do
                local d=${m%%:*} p
                p=$(syspath "$d")
                [ "$(model_of "${p%/*}")" = "${m#*:}" ] || fail "$d: its parent's model is not '${m#*:}'"
        done
}

# The facts this stage stands on, checked on the kernel under test: where the devices are,
# what they have.
nvme_facts() {
        local d p n
        # The decoy: QEMU's controller, never a head (no CMIC), under its PCI device.
        nvme_decoy=$(awk '$5 ~ /^\/sys\/devices\/pci/ { print $1 }' <<< "$nvme_list")
        [ "$(echo "$nvme_decoy" | wc -w)" = 1 ] || fail "not one QEMU NVMe disk: '$nvme_decoy'"
        p=$(syspath "$nvme_decoy")
        [[ $p == /sys/devices/pci*/nvme/nvme*/"$nvme_decoy" ]] || fail "the decoy $nvme_decoy is at $p, not its controller's child"
        [ "$(model_of "${p%/*}")" = "$MODEL_DECOY" ] || fail "$nvme_decoy: model is not '$MODEL_DECOY'"
        [ -e "/sys/class/block/$nvme_decoy/queue/io_timeout" ] || fail "the decoy $nvme_decoy has no io_timeout"
        for d in $nvme_os $nvme_data $nvme_local; do
                p=$(syspath "$d")
                case $VMTEST_NVME_LAYOUT in
                heads)
                        [[ $p == /sys/devices/virtual/nvme-subsystem/nvme-subsys*/"$d" ]] || fail "the head $d is at $p"
                        [ -e "/sys/class/block/$d/dev" ] && [ -b "/dev/$d" ] || fail "the head $d has no device node"
                        [ ! -e "/sys/class/block/$d/queue/io_timeout" ] || fail "the head $d has an io_timeout"
                        # A head's queue is bio-based: 5.10 and 6.1 still show a scheduler file
                        # (reading "none") and nr_requests; 6.12 and later have neither.
                        case $VMTEST_KERNEL in
                        5.10|6.1) [ "$(qattr "$d" scheduler)" = none ] || fail "the head $d's scheduler reads '$(qattr "$d" scheduler)'" ;;
                        *) [ ! -e "/sys/class/block/$d/queue/scheduler" ] || fail "the head $d has a scheduler on $VMTEST_KERNEL" ;;
                        esac
                        ;;
                direct)
                        [[ $p == /sys/devices/virtual/nvme-fabrics/ctl/nvme*/"$d" ]] || fail "the namespace $d is at $p"
                        if [ "$VMTEST_NVME_TRANSPORT" = tcp ]; then
                                [ "$(qattr "$d" io_timeout)" = 30000 ] || fail "$d: io_timeout is not nvme_core's 30000"
                        else
                                [ ! -e "/sys/class/block/$d/queue/io_timeout" ] || fail "$d has an io_timeout over nvme-loop"
                        fi
                        ;;
                esac
                [ "$(rd "/sys/class/block/$d/hidden")" = 0 ] || fail "$d is hidden"
        done
        # Azure's accelerator as the kernel itself reads it: an optimal I/O size of 32 MiB, and
        # read-ahead twice that, set by the kernel (blk_queue_io_opt() before 6.11, the limits
        # commit's blk_apply_bdi_limits() since), not by anyone here.
        for d in $nvme_os $nvme_data; do
                [ "$(qattr "$d" optimal_io_size) $(qattr "$d" read_ahead_kb)" = "33554432 65536" ] ||
                        fail "$d: optimal_io_size and read_ahead_kb $(qattr "$d" optimal_io_size) $(qattr "$d" read_ahead_kb), want 33554432 65536 (the kernel's)"
        done
        [ "$(rd "/sys/class/block/$nvme_os/nsid") $(rd "/sys/class/block/$nvme_data/nsid")" = "1 2" ] ||
                fail "the accelerator's namespaces are not nsid 1 and 2"
        if [ "$VMTEST_NVME_LAYOUT" = heads ]; then
                [ "$(echo "$nvme_paths" | wc -w)" = 3 ] || fail "not three hidden path devices: $nvme_paths"
                for d in $nvme_paths; do
                        [ "$(rd "/sys/class/block/$d/hidden")" = 1 ] || fail "the path device $d is not hidden"
                        [ ! -e "/sys/class/block/$d/dev" ] && [ ! -e "/dev/$d" ] || fail "the path device $d has a device node"
                        grep -q "/$d " /tmp/nvme-monitor && fail "the hidden $d raised a uevent: $(grep "/$d " /tmp/nvme-monitor)"
                        if [ "$VMTEST_NVME_TRANSPORT" = tcp ]; then
                                [ -e "/sys/class/block/$d/queue/io_timeout" ] || fail "the tcp path device $d has no io_timeout"
                        else
                                [ ! -e "/sys/class/block/$d/queue/io_timeout" ] || fail "the loop path device $d has an io_timeout"
                        fi
                done
        else
                [ -z "$nvme_paths" ] || fail "path devices with nvme_core.multipath=N: $nvme_paths"
        fi
        for d in $nvme_os $nvme_data $nvme_local; do
                grep -q "add .*/$d (block)" /tmp/nvme-monitor || fail "no add uevent for $d: $(cat /tmp/nvme-monitor)"
        done
        n=$(find /sys/class/block/"$nvme_os"/queue/ -maxdepth 1 -type f | wc -l)
        ok "NVMe stand-in ($VMTEST_NVME_LAYOUT over $VMTEST_NVME_TRANSPORT): accelerator nsid 1 $nvme_os, nsid 2 $nvme_data (on scsi_debug: optimal_io_size 32 MiB, the kernel's read_ahead_kb 65536), Direct Disk v2 $nvme_local ($n queue/ files)${nvme_paths:+, hidden paths $nvme_paths(no dev, no uevent)}; decoy $nvme_decoy"
}

# The operator's settings that hvtuned must give back, and that show a write where none
# belongs: the kernel's 64 MiB read-ahead kept on the OS disk (Azure v6's), 64 KiB (below the
# ceiling) on the data disk, the local disk at the kernel's 128; the decoy at 64 MiB with mq-deadline; on heads
# their hidden path devices at 4096 KiB with mq-deadline; on the direct layout the OS disk at
# mq-deadline with 100 requests (the switch to none resets them: a knock-on to put back).
nvme_operator() {
        local d
        echo 64 > "/sys/class/block/$nvme_data/queue/read_ahead_kb" &&
                echo 65536 > "/sys/class/block/$nvme_decoy/queue/read_ahead_kb" &&
                echo mq-deadline > "/sys/class/block/$nvme_decoy/queue/scheduler" || fail "the operator's settings"
        if [ "$VMTEST_NVME_LAYOUT" = heads ]; then
                for d in $nvme_paths; do
                        echo 4096 > "/sys/class/block/$d/queue/read_ahead_kb" &&
                                echo mq-deadline > "/sys/class/block/$d/queue/scheduler" || fail "the operator's settings of $d"
                done
        else
                echo mq-deadline > "/sys/class/block/$nvme_os/queue/scheduler" &&
                        echo 100 > "/sys/class/block/$nvme_os/queue/nr_requests" || fail "the operator's scheduler of $nvme_os"
        fi
        [ "$(qattr "$nvme_os" read_ahead_kb) $(qattr "$nvme_data" read_ahead_kb) $(qattr "$nvme_local" read_ahead_kb)" = "65536 64 128" ] ||
                fail "the operator's read_ahead_kb did not hold"
}

nvme_stage() {
        local t0=$SECONDS
        # The stand-in and the operator's settings first, hvtuned held (daemon-inside.sh's
        # drop-in): udev's rule would start it at the first namespace, before the operator.
        touch /run/vmtest-hold-hvtuned
        nvme_epoch=$(date +%s)
        nvme_standin
        nvme_facts
        nvme_operator
        nvme_snapshot > /tmp/nvme.before
        # rules/70-hvtuned.rules wants hvtuned for an Azure namespace: its start was asked for
        # and skipped by the hold (systemd 247: "Condition check resulted in ... being
        # skipped"; 252 on: "... was skipped because of an unmet condition check").
        systemctl is-active -q hvtuned && fail "hvtuned started while held"
        journalctl --sync
        journalctl -q -b -u hvtuned --since "@$nvme_epoch" -o cat --no-pager | grep -q 'skipped' ||
                fail "no start of hvtuned asked for by the udev rule at the Azure namespaces' add events"
        rm /run/vmtest-hold-hvtuned
        ok "NVMe: the udev rule asked for hvtuned at the namespaces' add events; stand-in and operator's settings in $((SECONDS - t0)) s (modules $((nvme_t_modules - t0)) s, subsystems $((nvme_t_connect - nvme_t_modules)) s, connect and udev $((nvme_t_up - nvme_t_connect)) s): $(grep -c . /tmp/nvme.before) queue/ files of $(wc -l <<< "$nvme_list") NVMe block devices recorded"
        nvme_tuned
}

# nvme_fields FIELD...: of journalctl -o export on stdin, each entry's FIELDs on a line (awk:
# a python is a second under TCG). The fields read here are text, never export's binary form.
nvme_fields() {
        awk -v fields="$*" '
                BEGIN { n = split(fields, f, " ") }
                $0 == "" { if (v[f[1]] != "") { line = v[f[1]]; for (i = 2; i <= n; i++) line = line " " v[f[i]]; print line }
                           delete v; next }
                { k = substr($0, 1, index($0, "=") - 1); v[k] = substr($0, index($0, "=") + 1) }
                END { if (v[f[1]] != "") { line = v[f[1]]; for (i = 2; i <= n; i++) line = line " " v[f[i]]; print line } }'
}

# nvme_untouched WHEN: the decoy and the hidden path devices exactly as recorded before
# hvtuned: every queue/ file.
nvme_untouched() {
        local d
        nvme_snapshot > /tmp/nvme.now
        for d in $nvme_decoy $nvme_paths; do
                if ! diff -u <(of "$d" /tmp/nvme.before) <(of "$d" /tmp/nvme.now) > /tmp/nvme.diff; then
                        cat /tmp/nvme.diff
                        fail "$1: $d, which hvtuned must never write, changed"
                fi
        done
}

# nvme_expect WHEN SCHED_NONE NOMERGES [READ_AHEAD]: the Azure namespaces as hvtuned's defaults
# make them: read_ahead_kb at most 128 (READ_AHEAD of the OS, data and local disk; default
# "128 64 128": 65536 lowered, 64 and 128 kept); io_timeout 240000 where the
# namespace has one (the direct layout over tcp; a head never has one); on the direct layout
# the OS disk's scheduler none when SCHED_NONE is 1, else the operator's mq-deadline with its
# 100 requests; nomerges NOMERGES.
nvme_expect() {
        local d got want
        got="$(qattr "$nvme_os" read_ahead_kb) $(qattr "$nvme_data" read_ahead_kb) $(qattr "$nvme_local" read_ahead_kb)"
        want=${4:-128 64 128}
        [ "$got" = "$want" ] || fail "$1: read_ahead_kb of $nvme_os $nvme_data $nvme_local: $got, want $want"
        for d in $nvme_os $nvme_data $nvme_local; do
                if [ -e "/sys/class/block/$d/queue/io_timeout" ]; then
                        [ "$(qattr "$d" io_timeout)" = 240000 ] || fail "$1: $d's io_timeout is $(qattr "$d" io_timeout), not 240000"
                fi
                [ "$(qattr "$d" nomerges)" = "$3" ] || fail "$1: $d's nomerges is $(qattr "$d" nomerges), not $3"
        done
        if [ "$VMTEST_NVME_LAYOUT" = direct ]; then
                want="mq-deadline 100"
                [ "$2" = 0 ] || want="none $(rd "/sys/class/block/$nvme_os/mq/0/nr_tags")"
                got="$(qsched "$nvme_os") $(qattr "$nvme_os" nr_requests)"
                [ "$got" = "$want" ] || fail "$1: $nvme_os's scheduler and nr_requests: $got, want $want"
        fi
}

# nvme_timeouts_held WHEN: a stop leaves an Azure namespace's io_timeout whose original is under
# Azure's 120 s host retry window at hvtuned's 240000, with its record, and says so in one
# entry naming them (hvtuned(8), SIGNALS); `hvtuned --restore` then leaves them too and deletes
# the records. The operator (this test) writes the originals back, for nvme_restored.
nvme_timeouts_held() {
        local d f orig held="" got want
        for f in /run/hvtuned/nvme*; do
                [ -e "$f" ] || continue
                orig=$(sed -n 's/^queue\/io_timeout=//p' "$f")
                [ -n "$orig" ] || continue
                d=${f##*/}
                [ "$orig" -lt 120000 ] || fail "$1: $d's recorded io_timeout $orig is no short one"
                [ "$(qattr "$d" io_timeout)" = 240000 ] || fail "$1: $d's io_timeout went back to $(qattr "$d" io_timeout)"
                held+="$d $orig "
        done
        message_id TIMEOUT_KEPT NVME_TIMEOUT_KEPT
        got=$(journal -o export MESSAGE_ID="$TIMEOUT_KEPT" | nvme_fields HVTUNED_DEVICES | tail -n 1 | tr -d ',' |
              tr ' ' '\n' | LC_ALL=C sort | tr '\n' ' ')
        want=$(printf '%s %s\n' $held | cut -d' ' -f1 | LC_ALL=C sort | tr '\n' ' ')
        [ -z "$held" ] || [ "$got" = "$want" ] || fail "$1: the entry of the timeouts left names '$got', want '$want'"
        /usr/sbin/hvtuned --restore > /tmp/nvme.restore 2>&1 || fail "$1: hvtuned --restore: $(cat /tmp/nvme.restore)"
        set -- $held
        while [ $# -ge 2 ]; do
                [ "$(qattr "$1" io_timeout)" = 240000 ] || fail "hvtuned --restore put $1's io_timeout back"
                echo "$2" > "/sys/class/block/$1/queue/io_timeout"
                shift 2
        done
        nvme_held_said=${held:+, io_timeout left at 240000 on ${want% } and by --restore}
}

# nvme_restored WHEN: after stop every queue/ file of every NVMe block device exactly as
# before hvtuned, knock-ons (nr_requests after the scheduler) included, and no record left. A
# device attached since (nvme_events') has no lines before: it is left out.
nvme_restored() {
        nvme_snapshot | awk -F/ 'NR == FNR { had[$5]; next } $5 in had' /tmp/nvme.before - > /tmp/nvme.after
        if ! diff -u /tmp/nvme.before /tmp/nvme.after; then
                fail "$1: after stop an NVMe queue/ file differs from what the operator left"
        fi
        [ -z "$(ls /run/hvtuned)" ] || fail "$1: records left: $(ls /run/hvtuned)"
}

# hvtuned on them: once with no configuration file (the platform defaults and the scheduler
# none), once with a file that names another attribute (the platform defaults still apply,
# the scheduler is the operator's) and a short verify_interval, through the kernel's events
# (tests/vm/nvme-events.sh).
nvme_tuned() {
        local d t0=$SECONDS io="" got want
        for d in $nvme_os $nvme_data $nvme_local; do
                [ -e "/sys/class/block/$d/queue/io_timeout" ] && io=" io_timeout 240000"
        done
        rm -f /etc/hvtuned.conf
        hvtuned_start "for NVMe, with no configuration file"
        wait_until 30 "$nvme_os's read-ahead lowered" '[ "$(qattr "$nvme_os" read_ahead_kb)" = 128 ]'
        settle
        nvme_expect "no file" 1 0
        nvme_untouched "no file"
        # The journal: one disk-found entry each, with its kind and role (Azure's rule: nsid 1
        # of the accelerator is the OS disk, nsid n >= 2 data, a Direct Disk local); none for
        # the decoy or a path device. One read: journalctl is seconds under TCG.
        journal -o export MESSAGE_ID="$FOUND" | nvme_fields HVTUNED_DEVICE HVTUNED_KIND HVTUNED_ROLE > /tmp/nvme.found
        for d in "$nvme_os nvme-accelerator os" "$nvme_data nvme-accelerator data" "$nvme_local nvme-direct-v2 local"; do
                [ "$(grep -c "^${d%% *} " /tmp/nvme.found)" = 1 ] && grep -qx "$d" /tmp/nvme.found ||
                        fail "no one disk-found entry '$d': $(grep "^${d%% *} " /tmp/nvme.found)"
        done
        for d in $nvme_decoy $nvme_paths; do
                grep -q "^$d " /tmp/nvme.found && fail "hvtuned found $d, which is not Azure's"
                [ ! -e "/run/hvtuned/$d" ] || fail "a record of $d"
        done
        grep -qx "queue/read_ahead_kb=65536" "/run/hvtuned/$nvme_os" || fail "the record of $nvme_os lacks read_ahead_kb=65536: $(cat "/run/hvtuned/$nvme_os")"
        hvtuned_stop "NVMe, no file"
        # Each 30 s timeout is left at 240000 at stop (a head has none), and none put back
        # below 240000 with a warning.
        nvme_timeouts_held "NVMe, no file"
        [ -z "$io" ] || [ -n "$nvme_held_said" ] || fail "NVMe, no file: no io_timeout left at 240000 at stop"
        message_id TIMEOUT_SHORT NVME_TIMEOUT_SHORT
        got=$(journal -o export MESSAGE_ID="$TIMEOUT_SHORT" | nvme_fields HVTUNED_DEVICE | LC_ALL=C sort | tr '\n' ' ')
        [ -z "$got" ] || fail "warnings of an io_timeout put back below 240000 for '$got': none goes back"
        nvme_restored "NVMe, no file"
        local what=" (heads)"
        [ "$VMTEST_NVME_LAYOUT" = heads ] || what=", scheduler none (nr_requests put back at stop)"
        ok "NVMe, no configuration file: read_ahead_kb 65536 -> 128 (64 and 128 kept)${io:+,$io}$what, kind and role in the journal$nvme_held_said; decoy $nvme_decoy${nvme_paths:+ and paths ${nvme_paths% }} untouched; after stop all $(grep -c . /tmp/nvme.after) queue/ files as before"

        # The kernel's own re-applications, hvtuned stopped, then in its second life.
        nvme_controls
        nvme_events
        ok "NVMe, the second life: after stop all as before ($((SECONDS - t0)) s)"
}
