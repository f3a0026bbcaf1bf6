# Sourced by every container test (tests/system, tests/package, tests/release), on both sides
# of systemd-nspawn. The two sides meet in a directory bound at /opt/out: the inside writes
# inside.log, result (PASS, or the first failure) and, on a failure, hvtuned's journal; the
# outside reads them back and gives the verdict. A container exits 0 whatever happened inside,
# so the result file, not nspawn's exit status, is what a test goes by.
#
# Outside (run.sh): release_root, container_overlay, container_umount, container_boot,
# container_run, container_verdict. Inside (bound at /opt/container.sh): finish, fail, expect, active.

# --- outside -------------------------------------------------------------------------------

container_sh=$(realpath "${BASH_SOURCE[0]}")
container_timeout=${container_timeout:-300}

# release_root SUITE: sets cache and root to SUITE's root (tools/fetch-release), once this
# machine can run a release test: root, systemd-nspawn and the root itself. Without one of
# them it skips (77) saying what to do, or fails under HVTUNED_REQUIRE_RELEASES=1 (CI).
release_root() {
        cache=${HVTUNED_RELEASE_CACHE:-/var/cache/hvtuned-releases}
        root=$cache/$1
        if [ "$(id -u)" != 0 ]; then release_skip "needs root for systemd-nspawn and the overlay mount"; fi
        command -v systemd-nspawn > /dev/null || release_skip "no systemd-nspawn (package systemd-container)"
        [ -f "$root/.hvtuned-release-complete" ] || release_skip "no $1 root in $cache: tools/fetch-release $1 makes it"
}

release_skip() {
        if [ "${HVTUNED_REQUIRE_RELEASES:-0}" = 1 ]; then echo "FAIL: $* (HVTUNED_REQUIRE_RELEASES=1)"; exit 1; fi
        echo "SKIP: $*"; exit 77
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
# console goes to LOG (the test unit beside it, LOG.service). Returns nspawn's exit status: 124 when it ran past container_timeout.
container_boot() {
        local name=$1 out=$2 log=$3 inside=$4
        shift 4
        printf '[Unit]\nDescription=hvtuned %s\n[Service]\nType=oneshot\nExecStart=/opt/inside.sh\n' \
                "$name" > "$log.service"
        timeout "$container_timeout" systemd-nspawn -b --register=no --keep-unit -M "hvtuned-$name-$$" \
                --bind-ro="$log.service:/etc/systemd/system/hvtuned-test.service" \
                --bind-ro="$container_sh:/opt/container.sh" --bind-ro="$inside:/opt/inside.sh" \
                --bind="$out:/opt/out" "$@" \
                -- systemd.firstboot=off systemd.wants=hvtuned-test.service > "$log" 2>&1
}

# container_run NAME OUT LOG INSIDE NSPAWN_ARGS...: runs INSIDE as the container's command,
# no init (a build, not a boot); otherwise as container_boot.
container_run() {
        local name=$1 out=$2 log=$3 inside=$4
        shift 4
        timeout "$container_timeout" systemd-nspawn -q --register=no --keep-unit -M "hvtuned-$name-$$" \
                --bind-ro="$container_sh:/opt/container.sh" --bind-ro="$inside:/opt/inside.sh" \
                --bind="$out:/opt/out" "$@" -- /opt/inside.sh > "$log" 2>&1
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

# Sourcing this inside sends everything after to the log the outside prints.
if [ -d /opt/out ] && [ "${BASH_SOURCE[0]}" = /opt/container.sh ]; then
        exec > /opt/out/inside.log 2>&1
fi

# finish RESULT: the verdict, then the end: a booted container powers off, a command exits.
finish() {
        echo "$1" > /opt/out/result
        if [ -d /run/systemd/system ]; then
                systemctl --no-block poweroff
        fi
        exit 0
}
# fail WHY: hvtuned's journal for the outside to show (when there is one), and the verdict.
fail() {
        if [ -d /run/systemd/system ]; then
                journalctl -u hvtuned --no-pager > /opt/out/journal.txt 2>&1
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
