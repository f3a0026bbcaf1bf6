# shellcheck shell=bash
# The shell the tiers that run hvtuned as an operator would share: sourced by the container
# tests (tests/system, tests/package, tests/release) on both sides of systemd-nspawn, by
# tests/prometheus, and by tests/vm on the host and in its guests. A container's two sides
# meet in a directory bound at /opt/out: the inside writes inside.log, result (PASS, or the
# first failure) and, on a failure, hvtuned's journal; the outside reads them back and gives
# the verdict. A container exits 0 whatever happened inside, so the result file, not nspawn's
# exit status, is what a test goes by.
#
# Outside (the host): skip, need_root, need_tools, release_root, copy_source,
# project_version, deb_build, container_overlay, container_umount, container_boot,
# container_run, container_verdict.
# Inside (a container's root, bound at /opt/container.sh with daemon/messages.h beside it,
# or a guest's, copied in): finish, fail, expect, active, message_id, testbed_persist,
# testbed_unit, hvtuned_install, hvtuned_start, hvtuned_reload, hvtuned_stop, hvtuned_purge.

container_sh=$(realpath "${BASH_SOURCE[0]}")
container_timeout=${container_timeout:-300}
# daemon/messages.h: the checkout's, or in a root or guest the copy beside this file.
messages_h=$(realpath -m "${container_sh%/*}/../../daemon/messages.h")
[ -f "$messages_h" ] || messages_h=${container_sh%/*}/messages.h
# Where the inside's functions leave what they read, for the outside to show.
container_out=${container_out:-/opt/out}
# The testbed an installed service runs on, and the drop-in that points it there.
tb=${tb:-/run/tb}
dropin=/etc/systemd/system/hvtuned.service.d/testbed.conf

# --- outside -------------------------------------------------------------------------------

# skip WHY: this machine cannot run the test: 77 for meson, saying what to do. Where a skip
# would hide a machine set up wrong, skip_fails names why it fails instead (release_root:
# HVTUNED_REQUIRE_RELEASES=1, CI's, whose roots are made on purpose).
skip() {
        if [ -n "${skip_fails:-}" ]; then echo "FAIL: $* ($skip_fails)"; exit 1; fi
        echo "SKIP: $*"
        exit 77
}

# need_root WHY: root, which WHY needs (nspawn, mounts, dpkg in a root).
need_root() {
        [ "$(id -u)" = 0 ] || skip "needs root for $*"
}

# need_tools TOOL...: each TOOL on PATH; tools/install-deps installs every one a test uses.
need_tools() {
        local tool
        for tool in "$@"; do
                command -v "$tool" > /dev/null || skip "no $tool (tools/install-deps installs it)"
        done
}

# release_root SUITE: sets cache and root to SUITE's root (tools/fetch-release), once this
# machine can run a release test: root, systemd-nspawn and the root itself. Without one of
# them it skips (77) saying what to do, or fails under HVTUNED_REQUIRE_RELEASES=1 (CI).
release_root() {
        cache=${HVTUNED_RELEASE_CACHE:-/var/cache/hvtuned-releases}
        root=$cache/$1
        [ "${HVTUNED_REQUIRE_RELEASES:-0}" != 1 ] || skip_fails="HVTUNED_REQUIRE_RELEASES=1"
        need_root "systemd-nspawn and the overlay mount"
        need_tools systemd-nspawn
        [ -f "$root/.hvtuned-release-complete" ] || skip "no $1 root in $cache: tools/fetch-release $1 makes it"
}

# copy_source SRC DEST: what a release tarball of the tree at SRC holds, into DEST: the
# working tree as it is (uncommitted changes too), without build trees, .git or a fuzzer's
# crash files.
copy_source() {
        mkdir -p "$2"
        (cd "$1" && tar --exclude='./build*' --exclude=./.git --exclude='./crash-*' -cf - .) | tar -C "$2" -xf -
}

# project_version BUILD: the project's version as the configured build BUILD has it from
# meson.build: what the package, its tarball and hvtuned_build_info are named after.
project_version() {
        meson introspect --projectinfo "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])'
}

# deb_build DIR LOG [ARG...]: the .deb of the source tree at DIR, as its maintainer builds it
# (dpkg-buildpackage -us -uc -b ARG...), on the host or in a release's root; it lands beside
# DIR. The output goes to LOG; on a failure its end is shown and the status is 1.
deb_build() {
        local dir=$1 log=$2
        shift 2
        (cd "$dir" && dpkg-buildpackage -us -uc -b "$@") > "$log" 2>&1 && return 0
        tail -n 40 "$log"
        return 1
}

# container_overlay LOWER DIR: DIR/root becomes LOWER under an overlay whose writes land on a
# tmpfs (DIR/ov), so that neither the host's root nor a cached release root is ever written.
# nspawn's own --volatile=overlay refuses the host's root directory.
container_overlay() {
        mkdir -p "$2/ov" "$2/root"
        mount -t tmpfs -o mode=0755 hvtuned-test "$2/ov"
        mkdir "$2/ov/upper" "$2/ov/work"
        mount -t overlay hvtuned-test -o "lowerdir=$1,upperdir=$2/ov/upper,workdir=$2/ov/work" "$2/root"
}

# container_umount DIR: undoes container_overlay DIR, if it was done; for an EXIT trap.
container_umount() {
        umount "$1/root" 2>/dev/null || true
        umount "$1/ov" 2>/dev/null || true
}

# container_boot NAME OUT LOG INSIDE NSPAWN_ARGS...: boots a real systemd as PID 1 (the root
# is among NSPAWN_ARGS: -D, --volatile...) whose one test unit runs INSIDE (a script that
# sources /opt/container.sh) and powers the container off; OUT is bound at /opt/out, the
# console goes to LOG (the test unit beside it, LOG.service). Returns nspawn's exit status:
# 124 when it ran past container_timeout.
container_boot() {
        local name=$1 out=$2 log=$3 inside=$4
        shift 4
        printf '[Unit]\nDescription=hvtuned %s\n[Service]\nType=oneshot\nExecStart=/opt/inside.sh\n' \
                "$name" > "$log.service"
        timeout "$container_timeout" systemd-nspawn -b --register=no --keep-unit -M "hvtuned-$name-$$" \
                --bind-ro="$log.service:/etc/systemd/system/hvtuned-test.service" \
                --bind-ro="$container_sh:/opt/container.sh" --bind-ro="$messages_h:/opt/messages.h" \
                --bind-ro="$inside:/opt/inside.sh" --bind="$out:/opt/out" "$@" \
                -- systemd.firstboot=off systemd.wants=hvtuned-test.service > "$log" 2>&1
}

# container_run NAME OUT LOG INSIDE NSPAWN_ARGS...: runs INSIDE as the container's command,
# no init (a build, not a boot); otherwise as container_boot.
container_run() {
        local name=$1 out=$2 log=$3 inside=$4
        shift 4
        timeout "$container_timeout" systemd-nspawn -q --register=no --keep-unit -M "hvtuned-$name-$$" \
                --bind-ro="$container_sh:/opt/container.sh" --bind-ro="$messages_h:/opt/messages.h" \
                --bind-ro="$inside:/opt/inside.sh" --bind="$out:/opt/out" "$@" -- /opt/inside.sh > "$log" 2>&1
}

# container_verdict OUT LOG STATUS: prints what the inside said; unless it said PASS, prints
# the failure (or that there was no result, with nspawn's STATUS), the console's end and
# hvtuned's journal, and returns 1.
container_verdict() {
        local out=$1 log=$2 rc=$3 result
        cat "$out/inside.log" 2>/dev/null || true
        result=$(cat "$out/result" 2>/dev/null || echo "no result (container exit status $rc)")
        [ "$result" = PASS ] && return 0
        echo "$result"
        echo "--- container console:"; tail -40 "$log"
        echo "--- hvtuned's journal:"; cat "$out/journal.txt" 2>/dev/null || true
        return 1
}

# --- inside --------------------------------------------------------------------------------

# Sourcing this inside a container sends everything after to the log the outside prints.
if [ -d /opt/out ] && [ "${BASH_SOURCE[0]}" = /opt/container.sh ]; then
        exec > /opt/out/inside.log 2>&1
fi

# finish RESULT: the verdict, then the end: a booted container powers off, a command exits.
finish() {
        echo "$1" > "$container_out/result"
        if [ -d /run/systemd/system ]; then
                systemctl --no-block poweroff
        fi
        exit 0
}
# fail WHY: hvtuned's journal for the outside to show (when there is one), and the verdict.
# (A guest's test defines its own.)
fail() {
        if [ -d /run/systemd/system ]; then
                journalctl -u hvtuned --no-pager > "$container_out/journal.txt" 2>&1
        fi
        finish "FAIL: $*"
}
# expect WHAT GOT WANT
expect() {
        [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
        echo "ok: $1 = $3"
}
# active DISK_DIR: the scheduler in brackets
active() { sed 's/.*\[\([^]]*\)\].*/\1/' "$1/queue/scheduler"; }

# message_id VAR NAME: VAR becomes the MESSAGE_ID daemon/messages.h defines as
# HVT_MESSAGE_NAME (ATTR_APPLIED, CONFIG_ERROR, ...), read from the file itself, so that a
# test never looks for an id the daemon no longer logs. Not $(message_id): fail must end the
# test, not a subshell.
message_id() {
        local found
        found=$(sed -n "s/^#define HVT_MESSAGE_$2 *\"\([0-9a-f]\{32\}\)\"$/\1/p" "$messages_h")
        [ -n "$found" ] || fail "$messages_h defines no HVT_MESSAGE_$2"
        printf -v "$1" %s "$found"
}

# testbed_persist TESTBEDS: the Azure VM of the build's testbeds (TESTBEDS/azure-gen2.umockdev)
# made for good at $tb, with what its kernel has beside the devices (azure-gen2.kernel.tar:
# BTF and osrelease, the estimates' layout): umockdev-run's own testbed goes when it exits,
# and the service under test outlives it.
testbed_persist() {
        # shellcheck disable=SC2016 # the inner shell expands them, in umockdev-run's testbed
        if ! umockdev-run -d "$1/azure-gen2.umockdev" -- sh -c 'cp -a "$UMOCKDEV_DIR" "$1"' sh "$tb" ||
                ! tar -C "$tb" -xf "$1/azure-gen2.kernel.tar"; then
                fail "cannot make the testbed at $tb from $1"
        fi
}

# testbed_unit SHIM [LINE...]: a drop-in ($dropin) that runs hvtuned.service on the testbed
# at $tb and nothing else: the kernel's write semantics (SHIM: tests/emulate/sysfs-kernel.c)
# before umockdev's preload, no ConditionVirtualization= (systemd-detect-virt says
# systemd-nspawn here), and each LINE (WatchdogSec=3s) in [Service]; then daemon-reload.
testbed_unit() {
        local shim=$1
        shift
        mkdir -p "${dropin%/*}"
        {
                printf '[Unit]\nConditionVirtualization=\n[Service]\n'
                printf 'Environment=LD_PRELOAD=%s:libumockdev-preload.so.0\n' "$shim"
                printf 'Environment=UMOCKDEV_DIR=%s ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0\n' "$tb"
                printf 'ReadWritePaths=%s\n' "$tb"
                [ $# = 0 ] || printf '%s\n' "$@"
        } > "$dropin"
        systemctl daemon-reload
}

# hvtuned_install DEB: dpkg -i as an operator runs it, on a root where hvtuned never was: the
# service is enabled, not started (the machine is no Hyper-V guest), and dpkg's trigger of
# systemd indexed the journal catalog. What the root held of hvtuned's name before is kept
# for hvtuned_purge.
hvtuned_install() {
        local applied
        message_id applied ATTR_APPLIED
        dpkg-query -W hvtuned > /dev/null 2>&1 && fail "hvtuned is installed before the test"
        # A build host in a container may forbid services to start or stop from maintainer
        # scripts (policy-rc.d exiting 101); a machine the package is for does not.
        rm -f /usr/sbin/policy-rc.d
        # man-db's trigger would rebuild the root's whole index: minutes in a TCG guest.
        rm -f /var/lib/man-db/auto-update
        find /etc /run /var/lib/systemd -name '*hvtuned*' 2>/dev/null | sort > "$container_out/before.txt"
        dpkg -i "$1" > "$container_out/dpkg.txt" 2>&1 || { cat "$container_out/dpkg.txt"; fail "dpkg -i $1 failed"; }
        echo "ok: dpkg -i installed $(dpkg-query -W -f='${Package} ${Version}' hvtuned)"
        dpkg -L hvtuned > "$container_out/files.txt"
        expect "is-enabled after install" "$(systemctl is-enabled hvtuned)" enabled
        expect "is-active after install (ConditionVirtualization)" "$(systemctl is-active hvtuned)" inactive
        expect "condition result" "$(systemctl show -P ConditionResult hvtuned)" no
        journalctl --list-catalog | grep -q "$applied hvtuned" || fail "the catalog is not in journalctl's database"
        echo "ok: dpkg's trigger indexed the journal catalog"
}

# hvtuned_start, hvtuned_reload, hvtuned_stop [WHAT]: systemctl as an operator runs it. Each
# returns once hvtuned is done (READY=1 after the start-up pass, after the reload's pass; the
# restore at stop); a failure fails the test with WHAT (which of a test's starts it was) and
# the unit's status.
hvtuned_start() {
        systemctl start hvtuned ||
                fail "systemctl start hvtuned${1:+ ($1)} failed: $(systemctl status hvtuned --no-pager)"
        expect "is-active after start${1:+ ($1)}" "$(systemctl is-active hvtuned)" active
}
hvtuned_reload() {
        systemctl reload hvtuned ||
                fail "systemctl reload hvtuned${1:+ ($1)} failed: $(systemctl status hvtuned --no-pager)"
}
hvtuned_stop() {
        systemctl stop hvtuned ||
                fail "systemctl stop hvtuned${1:+ ($1)} failed: $(systemctl status hvtuned --no-pager)"
}

# hvtuned_purge: dpkg --purge as an operator runs it, once the test's own drop-in and
# configuration are gone (a running service stops, and restores); then nothing the package
# put or made may be left: its files, unit links, runtime directory, the catalog's entries,
# anything of hvtuned's name hvtuned_install did not find.
hvtuned_purge() {
        local applied f left
        message_id applied ATTR_APPLIED
        rm -rf "${dropin%/*}" /etc/hvtuned.conf
        systemctl daemon-reload
        dpkg --purge hvtuned > "$container_out/dpkg.txt" 2>&1 || { cat "$container_out/dpkg.txt"; fail "dpkg --purge failed"; }
        dpkg-query -W hvtuned > /dev/null 2>&1 && fail "dpkg still knows hvtuned"
        while read -r f; do
                [ -d "$f" ] && continue
                [ -e "$f" ] && fail "$f is left after purge"
        done < "$container_out/files.txt"
        find /etc /run /var/lib/systemd -name '*hvtuned*' 2>/dev/null | sort > "$container_out/after.txt"
        left=$(comm -13 "$container_out/before.txt" "$container_out/after.txt" | tr '\n' ' ')
        [ -z "$left" ] || fail "left after purge: $left"
        [ -e /run/hvtuned ] && fail "/run/hvtuned is left after purge"
        expect "unit after purge" "$(systemctl show -P LoadState hvtuned)" not-found
        journalctl --list-catalog | grep -q "$applied" && fail "the catalog database still has hvtuned's entries"
        echo "ok: purge left nothing (files, unit links, runtime directory, catalog)"
}
