# shellcheck shell=bash
# Owns: the kernel's own re-applications of read-ahead in the vm-daemon boot, and hvtuned's
# repair of them. tests/vm/nvme-stage.sh sources it in the guest (after the first of
# hvtuned's two lives on the NVMe stand-in) and uses its disks, its helpers and
# daemon-inside.sh's fail, ok, settle, journal and config.
#
# The events (issue 42): a namespace attached to the running accelerator's subsystem (an
# Azure data disk added), its controller's reset_controller (host servicing) and
# rescan_controller; QEMU's PCIe decoy's reset (the PCIe path's revalidation, which hvtuned
# must leave alone); and a stand-in storvsc disk's device/rescan, which re-applies limits on
# 6.12 and later only. Each one twice:
#   - nvme_controls, hvtuned stopped: what the kernel writes, on which disks (the siblings that
#     were not attached included), after how long, with which uevents. A control with hvtuned
#     running could not see a value that hvtuned puts back faster than a poll.
#   - nvme_events, in hvtuned's second life (verify_interval 60 s in its file for the events
#     with a uevent, then 3 s, reloaded, for those without): every value back within the
#     bound (2 s after the change where the kernel sends a uevent for the event, else the
#     periodic re-check's verify_interval + 1 s), and the journal's repair
#     with the kernel as the writer (KERNEL_REAPPLIED, HVTUNED_WRITER=kernel) for each of
#     those disks.
# Every timing is taken by nvme_watch with bash's builtins only: a process costs ~0.1 s under
# TCG, a poll that forked would miss a repair faster than that.

# The periodic re-check's interval in the second life's file, and its bound. The events that
# send a uevent run first with an interval far beyond their bound: what puts their values back
# within it is the re-check the event causes, not a periodic check that happened to be near.
NVME_VERIFY_INTERVAL=3
NVME_QUIET_INTERVAL=60
NVME_PERIODIC_BOUND=$((NVME_VERIFY_INTERVAL + 1))
# The bound after an event with a uevent: the settle re-check 1 s after the burst, and a pass.
NVME_UEVENT_BOUND=2

# nvme_nap: 20 ms without a process: a read with a timeout on a fifo no one writes.
nvme_nap() { read -r -t 0.02 -u "$nvme_napfd" _ || :; }
# nvme_now VAR: the realtime clock in µs (journald's __REALTIME_TIMESTAMP clock) into VAR.
nvme_now() { printf -v "$1" %s "${EPOCHREALTIME//[!0-9]/}"; }
# nvme_s US: µs as seconds with two decimals, for the reports.
nvme_s() { printf '%d.%02d' $(($1 / 1000000)) $(($1 % 1000000 / 10000)); }

# nvme_watch MODE SECONDS WANT DISK:FILE[=WANT]...: reads each disk's queue/FILE every 20 ms
# from now (nvme_t_event is the event's time, taken by the caller just before it) for up to
# SECONDS, and records for each (in order): when it first read other than its WANT (w_changed,
# µs after the event; -1 never) and what it read then (w_seen), when it read its WANT again
# after that (w_back; -1 never), and what it read last (w_last). MODE "kernel" ends once every one
# has read other than WANT; "repair" once every one that did has read WANT again and SECONDS
# have passed since the event, or earlier when every one changed and came back.
nvme_watch() {
        local mode=$1 seconds=$2 want=$3 i n now end v all
        shift 3
        n=$#
        w_disks=() w_want=() w_changed=() w_seen=() w_back=() w_last=()
        for ((i = 0; i < n; i++)); do
                v=$1
                shift
                w_disks[i]=${v%%=*} w_want[i]=$want
                [[ $v != *=* ]] || w_want[i]=${v#*=}
                w_changed[i]=-1 w_back[i]=-1 w_seen[i]="" w_last[i]=""
        done
        end=$((nvme_t_event + seconds * 1000000))
        while :; do
                nvme_now now
                all=1
                for ((i = 0; i < n; i++)); do
                        IFS= read -r v < "/sys/class/block/${w_disks[i]%%:*}/queue/${w_disks[i]#*:}" || v="<unreadable>"
                        w_last[i]=$v
                        if [ "${w_changed[i]}" = -1 ]; then
                                if [ "$v" != "${w_want[i]}" ]; then
                                        w_changed[i]=$((now - nvme_t_event)) w_seen[i]=$v
                                else
                                        all=0
                                fi
                        elif [ "${w_back[i]}" = -1 ]; then
                                if [ "$v" = "${w_want[i]}" ]; then
                                        w_back[i]=$((now - nvme_t_event))
                                else
                                        all=0
                                fi
                        fi
                done
                if [ "$mode" = kernel ]; then
                        # Every one changed: the kernel is done with them.
                        all=1
                        for ((i = 0; i < n; i++)); do [ "${w_changed[i]}" != -1 ] || all=0; done
                fi
                [ $all = 1 ] && [ "$mode" = kernel ] && break
                [ $all = 1 ] && [ "$mode" = repair ] && { nvme_all_back && break; }
                [ "$now" -ge "$end" ] && break
                nvme_nap
        done
        w_end=$((now - nvme_t_event))
}
# Every watched one was seen changed and back: nothing more for a repair watch to wait for.
nvme_all_back() {
        local i
        for ((i = 0; i < ${#w_disks[@]}; i++)); do
                [ "${w_back[i]}" != -1 ] || return 1
        done
}

# nvme_uevents_since SEQNUM: the kernel's uevents after SEQNUM of those the monitor (started
# by nvme_controls) has written, "ACTION DEVPATH[ NVME_EVENT=...]" a line.
nvme_uevents_since() {
        awk -v from="$1" '
                /^$/ { if (seq > from && action != "") print action " " devpath (ev != "" ? " NVME_EVENT=" ev : "")
                       seq = 0; action = devpath = ev = ""; next }
                /^ACTION=/ { action = substr($0, 8) }
                /^DEVPATH=/ { devpath = substr($0, 9) }
                /^NVME_EVENT=/ { ev = substr($0, 12) }
                /^SEQNUM=/ { seq = substr($0, 8) + 0 }' /tmp/nvme-uevents
}

# The controllers: the accelerator's (by its NQN, not QEMU's) and the decoy's.
nvme_controllers() {
        local c nqn p
        nvme_accel_ctl=""
        for c in /sys/class/nvme/nvme*; do
                IFS= read -r nqn < "$c/subsysnqn" || continue
                [ "$nqn" = "$NQN_ACCEL" ] && nvme_accel_ctl=${c##*/}
        done
        [ -n "$nvme_accel_ctl" ] || fail "no controller of $NQN_ACCEL"
        p=$(syspath "$nvme_decoy")
        p=${p%/*}
        nvme_decoy_ctl=${p##*/}
        [ -e "/sys/class/nvme/$nvme_decoy_ctl/reset_controller" ] || fail "the decoy's controller $nvme_decoy_ctl has no reset_controller"
}

# nvme_standin_scsi: the stand-in storvsc disk whose device/rescan the events use: controller
# C's LUN 0 (daemon-inside.sh's stage 3), rotational and without an optimal size, as Azure's.
nvme_standin_scsi() {
        nvme_scsi=$(disk_of "$C" 0)
        [ -n "$nvme_scsi" ] || fail "no stand-in disk on controller C"
        [ "$(qattr "$nvme_scsi" rotational) $(qattr "$nvme_scsi" optimal_io_size)" = "1 0" ] ||
                fail "$nvme_scsi: rotational and optimal_io_size $(qattr "$nvme_scsi" rotational) $(qattr "$nvme_scsi" optimal_io_size), want 1 0"
}

# nvme_rule_ra DISK: the read-ahead the kernel's rule gives DISK at a limits commit, for a
# disk whose current value is below it (tests/emulate/sysfs-kernel.c has the same rule): twice
# the optimal I/O size and at least 128 KiB; on 7.3 (from 6.17) a rotational disk without an
# optimal size takes twice max_sectors_kb.
nvme_rule_ra() {
        local opt ra
        opt=$(qattr "$1" optimal_io_size)
        ra=$((2 * opt / 1024))
        if [ "$opt" = 0 ] && [ "$VMTEST_KERNEL" = 7.3 ] && [ "$(qattr "$1" rotational)" = 1 ]; then
                ra=$((2 * $(qattr "$1" max_sectors_kb)))
        fi
        [ $ra -ge 128 ] || ra=128
        echo $ra
}

# nvme_event NAME: sets it off (builtins only: its time is nvme_t_event). NAME: attach:NSID
# (the namespace made and its device path set beforehand: the write of enable is the event),
# reset, rescan, decoy-reset, scsi-rescan.
nvme_event() {
        nvme_now nvme_t_event
        case $1 in
        attach:*) echo 1 > "$NVMET/subsystems/$NQN_ACCEL/namespaces/${1#attach:}/enable" ;;
        reset) echo 1 > "/sys/class/nvme/$nvme_accel_ctl/reset_controller" ;;
        rescan) echo 1 > "/sys/class/nvme/$nvme_accel_ctl/rescan_controller" ;;
        decoy-reset) echo 1 > "/sys/class/nvme/$nvme_decoy_ctl/reset_controller" ;;
        scsi-rescan) echo 1 > "/sys/block/$nvme_scsi/device/rescan" ;;
        esac || fail "$1: the event's write failed"
}

# nvme_attach_prepare NSID BACKING: the namespace made, not yet enabled.
nvme_attach_prepare() {
        local n=$NVMET/subsystems/$NQN_ACCEL/namespaces/$1
        mkdir "$n" && printf %s "/dev/$2" > "$n/device_path" || fail "nvmet: cannot make namespace $1 on /dev/$2"
}

# nvme_accel_disks: the accelerator's namespaces now (heads or the controller's children).
nvme_accel_disks() {
        local r=ns n
        [ "$VMTEST_NVME_LAYOUT" = heads ] && r="head"
        nvme_list
        nvme_accel=""
        for n in 1 2 3 4; do
                nvme_accel+="$(disk_for "$NQN_ACCEL" $n $r) "
        done
        nvme_accel=$(echo $nvme_accel)
}

# nvme_control NAME WANT PREPARED DISK...: hvtuned stopped: each DISK's read_ahead_kb
# written to PREPARED, the event, and then every DISK must read WANT (the kernel's value)
# within 10 s. Records the kernel's delay (ctl_delay[NAME], µs: the slowest disk) and the
# uevents (ctl_uevents[NAME]) and adds a line to the report.
nvme_control() {
        local name=$1 want=$2 prep=$3 d i seq files=() got="" slow=0
        shift 3
        for d in "$@"; do
                echo "$prep" > "/sys/class/block/$d/queue/read_ahead_kb" || fail "control $name: cannot write $prep to $d"
                files+=("$d:read_ahead_kb")
        done
        IFS= read -r seq < /sys/kernel/uevent_seqnum
        nvme_event "$name"
        nvme_watch kernel 10 "$prep" "${files[@]}"
        for ((i = 0; i < ${#w_disks[@]}; i++)); do
                got+="${w_disks[i]%%:*}=${w_last[i]} "
                [ "${w_last[i]}" = "$want" ] ||
                        fail "control $name on $VMTEST_KERNEL: ${w_disks[i]%%:*} reads ${w_last[i]} $(nvme_s "$w_end") s after the event, want the kernel's $want (prepared: $prep)"
                [ "${w_changed[i]}" -le "$slow" ] || slow=${w_changed[i]}
        done
        # The uevents the kernel sent, once it is done (a scan runs in a work queue).
        settle
        ctl_delay[$name]=$slow
        ctl_uevents[$name]=$(nvme_uevents_since "$seq")
        nvme_control_report+="  $name: ${got% } after $(nvme_s "$slow") s; uevents: $(printf '%s\n' "${ctl_uevents[$name]}" | sed 's#/devices/virtual/nvme-fabrics/ctl/##; s#/devices/virtual/nvme-subsystem/##' | paste -sd, -)"$'\n'
}

# nvme_controls: every event with hvtuned stopped, on the disks as the first life left them
# (the operator's): the kernel's value appears on every disk the event touches.
nvme_controls() {
        local t0=$SECONDS monitor want ra
        declare -gA ctl_delay=() ctl_uevents=()
        nvme_control_report=""
        # The rule starts hvtuned at an Azure namespace's add: held while the controls run.
        touch /run/vmtest-hold-hvtuned
        mkfifo /tmp/nvme-nap && exec {nvme_napfd}<> /tmp/nvme-nap || fail "no fifo for the poll"
        nvme_controllers
        nvme_standin_scsi
        udevadm monitor -k -p > /tmp/nvme-uevents 2>&1 &
        monitor=$!
        sleep 0.5
        # A namespace attached: the ones there before it get the kernel's 65536 back.
        set -- $nvme_spare
        nvme_attach_prepare 3 "$1"
        nvme_control attach:3 65536 128 $nvme_os $nvme_data
        nvme_accel_disks
        [ "$(echo $nvme_accel | wc -w)" = 3 ] || fail "control attach: namespaces $nvme_accel, not three"
        nvme_ns3=${nvme_accel##* }
        [ "$(qattr "$nvme_ns3" read_ahead_kb)" = 65536 ] || fail "the attached $nvme_ns3 reads $(qattr "$nvme_ns3" read_ahead_kb)"
        printf '%s\n' "${ctl_uevents[attach:3]}" | grep -q "^add .*/$nvme_ns3$" || fail "control attach: no add uevent for $nvme_ns3"
        nvme_control reset 65536 128 $nvme_accel
        # A reconnect goes through blk_mq_update_nr_hw_queues(), which may take the elevator
        # off and back (and reset nr_requests): what the direct layout's OS disk shows after.
        nvme_ctl_nr_reset=""
        if [ "$VMTEST_NVME_LAYOUT" = direct ]; then
                nvme_ctl_nr_reset=$(qattr "$nvme_os" nr_requests)
                nvme_control_report+="  reset: $nvme_os's scheduler and nr_requests after it: $(qsched "$nvme_os") $nvme_ctl_nr_reset (the operator's: mq-deadline 100)"$'\n'
        fi
        nvme_control rescan 65536 128 $nvme_accel
        # The decoy (no optimal size): the PCIe path's revalidation sets the kernel's 128 over
        # a lower value on every kernel (5.10 and 6.1 set it, 6.12 and later raise to it).
        nvme_control decoy-reset 128 64 $nvme_decoy
        # The stand-in storvsc disk: sd re-applies its limits at a rescan from 6.12 on.
        ra=$(nvme_rule_ra "$nvme_scsi")
        case $VMTEST_KERNEL in
        5.10|6.1)
                echo 64 > "/sys/block/$nvme_scsi/queue/read_ahead_kb"
                nvme_event scsi-rescan
                settle
                [ "$(qattr "$nvme_scsi" read_ahead_kb)" = 64 ] || fail "control scsi-rescan on $VMTEST_KERNEL: $nvme_scsi reads $(qattr "$nvme_scsi" read_ahead_kb), not the 64 written before"
                nvme_control_report+="  scsi-rescan: $nvme_scsi=64 stays"$'\n'
                ;;
        *) nvme_control scsi-rescan "$ra" 64 "$nvme_scsi" ;;
        esac
        kill "$monitor" 2> /dev/null
        wait "$monitor" 2> /dev/null
        systemctl is-active -q hvtuned && fail "hvtuned started while held, during the controls"
        rm /run/vmtest-hold-hvtuned
        # What the bound of each event is: a reset's uevent (the controller's change,
        # NVME_EVENT=connected) comes on 6.1 and later, none on 5.10; a rescan sends none.
        nvme_ctl_path=$(cd -P "/sys/class/nvme/$nvme_accel_ctl" && echo "${PWD#/sys}")
        if printf '%s\n' "${ctl_uevents[reset]}" | grep -qx "change $nvme_ctl_path NVME_EVENT=connected"; then
                [ "$VMTEST_KERNEL" != 5.10 ] || fail "control reset: 5.10 sent the controller's change"
                nvme_reset_bound=$NVME_UEVENT_BOUND
        else
                [ "$VMTEST_KERNEL" = 5.10 ] || fail "control reset on $VMTEST_KERNEL: no change uevent of $nvme_ctl_path: ${ctl_uevents[reset]}"
                nvme_reset_bound=$NVME_PERIODIC_BOUND
        fi
        printf '%s\n' "${ctl_uevents[rescan]}" | grep -q "nvme" && fail "control rescan: a uevent of NVMe: ${ctl_uevents[rescan]}"
        ok "NVMe, hvtuned stopped: the kernel's own read-ahead after each event, on every disk it touched ($((SECONDS - t0)) s):"$'\n'"${nvme_control_report%$'\n'}"
}

# nvme_journal_since US: hvtuned's entries from then on that name a disk, one a line:
# DEVICE REALTIME_US ATTR WRITER MESSAGE_ID ("-" where an entry has no such field). Only
# those fields: export's binary form of a field (a MESSAGE of several lines) would break the
# lines up.
nvme_journal_since() {
        journal -o export --output-fields=HVTUNED_DEVICE,HVTUNED_ATTR,HVTUNED_WRITER,MESSAGE_ID \
                --since "@$(($1 / 1000000))" | awk '
                function out() { if (v["HVTUNED_DEVICE"] != "")
                                         print v["HVTUNED_DEVICE"], v["__REALTIME_TIMESTAMP"], f("HVTUNED_ATTR"), f("HVTUNED_WRITER"), f("MESSAGE_ID")
                                 delete v }
                function f(k) { return v[k] == "" ? "-" : v[k] }
                $0 == "" { out(); next }
                { v[substr($0, 1, index($0, "=") - 1)] = substr($0, index($0, "=") + 1) }
                END { out() }'
}

# nvme_repair NAME WANT BOUND DISK...: hvtuned running: the event, then each DISK's
# read_ahead_kb watched (and the files of nvme_also, DISK:FILE=WANT): one the poll saw the
# kernel change must read its WANT again within BOUND s of that; one it never saw changed
# (hvtuned was faster than the poll) must read WANT, and the journal (nvme_events) must show
# its repair. Records the event in ev_*.
nvme_repair() {
        local name=$1 want=$2 bound=$3 d i files=() got="" secs unseen=""
        shift 3
        for d in "$@"; do files+=("$d:read_ahead_kb"); done
        files+=(${nvme_also-})
        # Long enough for the kernel's own delay (the control's) and the bound after it.
        secs=$(((${ctl_delay[$name]:-0} + 999999) / 1000000 + bound + 1))
        nvme_event "$name"
        nvme_watch repair "$secs" "$want" "${files[@]}"
        for ((i = 0; i < ${#w_disks[@]}; i++)); do
                d=${w_disks[i]}
                [ "${w_last[i]}" = "${w_want[i]}" ] ||
                        fail "$name with hvtuned: $d reads ${w_last[i]} $(nvme_s "$w_end") s after the event, want ${w_want[i]} back within $bound s"
                if [ "${w_changed[i]}" != -1 ]; then
                        [ $((w_back[i] - w_changed[i])) -le $((bound * 1000000)) ] ||
                                fail "$name with hvtuned: $d read ${w_seen[i]} at $(nvme_s "${w_changed[i]}") s, ${w_want[i]} again only at $(nvme_s "${w_back[i]}") s: more than $bound s"
                        got+="${d%:read_ahead_kb} ${w_seen[i]} at $(nvme_s "${w_changed[i]}") s, ${w_want[i]} at $(nvme_s "${w_back[i]}") s; "
                else
                        got+="${d%:read_ahead_kb} never seen changed; "
                        [[ $d != *:read_ahead_kb ]] || unseen+="${d%%:*} "
                fi
        done
        ev_names+=("$name") ev_t+=("$nvme_t_event") ev_disks+=("$*") ev_bound+=("$bound") ev_unseen+=("$unseen")
        nvme_events_report+="  $name (bound $bound s): ${got%; }"$'\n'
}

# nvme_events: hvtuned's second life (a file naming nomerges and verify_interval; an explicit
# read_ahead_kb 64 for the stand-in disk nvme_scsi, which the kernel's rule raises on 6.12 and
# 7.3), each event of nvme_controls again.
nvme_events() {
        local t0=$SECONDS d i j n t_life ts dev attr writer mid end got
        ev_names=() ev_t=() ev_disks=() ev_bound=() ev_unseen=()
        nvme_events_report=""
        nvme_snapshot > /tmp/nvme.before
        # On the direct layout the OS disk's scheduler is managed too, not none: a reset's
        # reconnect takes the elevator off and back (blk_mq_update_nr_hw_queues()), which puts
        # nr_requests at the scheduler's default (nvme_controls saw it), for hvtuned to repair.
        local os_queue="" also=""
        if [ "$VMTEST_NVME_LAYOUT" = direct ]; then
                os_queue=", { match = { kind = \"nvme-accelerator\"; role = \"os\"; }; queue = { scheduler = \"mq-deadline\"; nr_requests = 100; }; }"
                also="$nvme_os:nr_requests=100"
        fi
        nvme_events_config() {
                config <<CONF
verify_interval = $1;
queue = { nomerges = 1; };
override = ( { match = { controller = "{$C}"; lun = 0; }; queue = { read_ahead_kb = 64; }; }$os_queue );
CONF
        }
        nvme_events_config $NVME_QUIET_INTERVAL
        nvme_now t_life
        hvtuned_start "for NVMe, with a configuration file"
        wait_until 30 "$nvme_local's nomerges" '[ "$(qattr "$nvme_local" nomerges)" = 1 ]'
        wait_until 30 "$nvme_os's read-ahead lowered" '[ "$(qattr "$nvme_os" read_ahead_kb)" = 128 ]'
        wait_until 30 "$nvme_scsi's read-ahead 64" '[ "$(qattr "$nvme_scsi" read_ahead_kb)" = 64 ]'
        settle
        # The data disk and the namespace attached in the control now have the kernel's 65536
        # (the events put it there): lowered as the OS disk's.
        nvme_expect "a file naming nomerges" 0 1 "128 128 128"
        [ "$(qattr "$nvme_ns3" read_ahead_kb)" = 128 ] || fail "the attached $nvme_ns3 reads $(qattr "$nvme_ns3" read_ahead_kb), not 128"
        nvme_untouched "a file naming nomerges"
        ok "NVMe, a file naming nomerges and verify_interval = $NVME_QUIET_INTERVAL: nomerges 1 and the platform defaults (read-ahead ceiling${io:+,$io}) applied${also:+, $nvme_os at mq-deadline with 100 requests}, the others' schedulers the operator's"

        set -- $nvme_spare
        nvme_attach_prepare 4 "$2"
        nvme_also=$also
        nvme_repair attach:4 128 $NVME_UEVENT_BOUND $nvme_accel
        nvme_accel_disks
        nvme_ns4=${nvme_accel##* }
        [ "$(echo $nvme_accel | wc -w)" = 4 ] || fail "attach with hvtuned: namespaces $nvme_accel, not four"
        wait_until $NVME_UEVENT_BOUND "the attached $nvme_ns4 tuned" '[ "$(qattr "$nvme_ns4" read_ahead_kb)" = 128 ]'
        [ "$nvme_reset_bound" != "$NVME_UEVENT_BOUND" ] || nvme_repair reset 128 "$nvme_reset_bound" $nvme_accel
        # What sends no uevent is for the periodic re-check: its interval short now.
        nvme_events_config $NVME_VERIFY_INTERVAL
        hvtuned_reload "verify_interval = $NVME_VERIFY_INTERVAL"
        [ "$nvme_reset_bound" = "$NVME_UEVENT_BOUND" ] || nvme_repair reset 128 "$nvme_reset_bound" $nvme_accel
        nvme_repair rescan 128 $NVME_PERIODIC_BOUND $nvme_accel
        nvme_also=""
        # The decoy: the kernel's 128 over 64, and hvtuned leaves it there.
        echo 64 > "/sys/class/block/$nvme_decoy/queue/read_ahead_kb" || fail "cannot write the decoy's read-ahead"
        nvme_event decoy-reset
        nvme_watch kernel 10 64 "$nvme_decoy:read_ahead_kb"
        [ "${w_last[0]}" = 128 ] || fail "decoy-reset with hvtuned: $nvme_decoy reads ${w_last[0]}, not the kernel's 128"
        settle
        nvme_events_report+="  decoy-reset: $nvme_decoy 64 -> the kernel's 128 after $(nvme_s "${w_changed[0]}") s"$'\n'
        case $VMTEST_KERNEL in
        5.10|6.1) ;;
        *) nvme_repair scsi-rescan 64 $NVME_PERIODIC_BOUND "$nvme_scsi" ;;
        esac
        nvme_untouched "the events"

        # The journal, one read: for each event, a repair with the kernel as the writer of
        # every disk it touched, before the next event; nothing of the decoy at all.
        message_id KERNEL_REAPPLIED KERNEL_REAPPLIED
        nvme_journal_since "$t_life" > /tmp/nvme.journal
        while read -r dev ts attr writer mid; do
                [ "$dev" != "$nvme_decoy" ] || fail "hvtuned logged of the decoy: $dev $attr $writer $mid"
        done < /tmp/nvme.journal
        n=${#ev_names[@]}
        for ((i = 0; i < n; i++)); do
                end=$((ev_t[i] + 60000000))
                [ $((i + 1)) -ge $n ] || end=${ev_t[i + 1]}
                got=""
                for d in ${ev_disks[i]}; do
                        j=$(awk -v d="$d" -v a="${ev_t[i]}" -v b="$end" -v mid="$KERNEL_REAPPLIED" '
                                $1 == d && $2 >= a && $2 < b && $3 == "queue/read_ahead_kb" && $4 == "kernel" && $5 == mid { if (!n++) t = $2 }
                                END { print n + 0, (n ? t - a : -1) }' /tmp/nvme.journal)
                        [ "${j% *}" -ge 1 ] ||
                                fail "${ev_names[i]}: no repair of $d's read_ahead_kb with HVTUNED_WRITER=kernel (MESSAGE_ID $KERNEL_REAPPLIED) in the journal: $(awk -v d="$d" '$1 == d' /tmp/nvme.journal | tail -n 5)"
                        # A repair the poll never saw: its journal entry's time (journald's, on
                        # receipt) within the kernel's delay (the control's), the bound and 1 s.
                        [[ " ${ev_unseen[i]} " != *" $d "* ]] ||
                                [ "${j#* }" -le $((${ctl_delay[${ev_names[i]}]:-0} + (ev_bound[i] + 1) * 1000000)) ] ||
                                fail "${ev_names[i]}: $d's repair logged $(nvme_s "${j#* }") s after the event: beyond the kernel's delay and the bound of ${ev_bound[i]} s"
                        got+="$d ${j% *} at $(nvme_s "${j#* }") s, "
                done
                nvme_events_report+="  ${ev_names[i]} journal (repairs by the kernel, the first's time): ${got%, }"$'\n'
        done
        # The elevator's knock-on of the reset, repaired (its writer is no rule of the kernel's
        # read-ahead: not named the kernel).
        if [ -n "$also" ] && [ "$nvme_ctl_nr_reset" != 100 ]; then
                awk -v d="$nvme_os" '$1 == d && $3 == "queue/nr_requests"' /tmp/nvme.journal | grep -q . ||
                        fail "reset: no repair of $nvme_os's nr_requests (the kernel put $nvme_ctl_nr_reset) in the journal"
        fi
        ok "NVMe, hvtuned running: every value back within its bound after each event, the kernel named as the writer ($((SECONDS - t0)) s):"$'\n'"${nvme_events_report%$'\n'}"
        hvtuned_stop "NVMe, with a file"
        nvme_timeouts_held "NVMe, with a file"
        # The namespace attached in this life has no line in the snapshot before it.
        nvme_restored "NVMe, with a file" "$nvme_ns4"
        rm -f /etc/hvtuned.conf
}
