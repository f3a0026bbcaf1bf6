#!/bin/bash
# The end-to-end system test: `meson install --destdir` of the build, then a real systemd as
# PID 1 in systemd-nspawn (the host's /usr, a tmpfs root) with the installed daemon, unit and
# catalog bound in, and a test unit (inside.sh) that drives hvtuned with systemctl and
# journalctl on a umockdev testbed of an Azure VM. Exits 77 without root or systemd-nspawn.
# usage: run.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1") src=$(realpath "$2")
# shellcheck source=tests/common/container.sh
. "$src/tests/common/container.sh"
need_root systemd-nspawn
need_tools systemd-nspawn

work=$(mktemp -d /tmp/hvtuned-system.XXXXXX)
trap 'rm -rf "$work"' EXIT
dest=$work/dest out=$work/out
mkdir -p "$out"

# meson install lands every file where pkg-config says the distro wants it.
meson install -C "$build" --destdir "$dest" --no-rebuild --quiet
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd)
catalogdir=$(pkg-config --variable=catalogdir systemd)
rulesdir=$(pkg-config --variable=udevdir udev)/rules.d
prefix=$(meson introspect --buildoptions "$build" | python3 -c \
        'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
for f in "$prefix/sbin/hvtuned" "$unitdir/hvtuned.service" "$catalogdir/hvtuned.catalog" \
         "$rulesdir/70-hvtuned.rules" "$prefix/share/man/man8/hvtuned.8" "$prefix/share/man/man5/hvtuned.conf.5"; do
        [ -f "$dest$f" ] || { echo "FAIL: meson install --destdir did not install $f"; find "$dest"; exit 1; }
done
echo "ok: meson install --destdir put the daemon, unit, catalog, rule and man pages in place"

# journalctl --update-catalog reads /usr/local/lib/systemd/catalog and /usr/lib/systemd/catalog
# only; the container's /usr is the host's, read-only, and its /usr/local/lib can be covered.
# The unit goes there too, below /etc as a package's is: `systemctl mask hvtuned` puts its
# /dev/null link in /etc/systemd/system, where a unit bound in would be in the way.
mkdir -p "$work/local-lib/systemd/catalog" "$work/local-lib/systemd/system"
cp "$dest$catalogdir/hvtuned.catalog" "$work/local-lib/systemd/catalog/"
cp "$dest$unitdir/hvtuned.service" "$work/local-lib/systemd/system/"

# Under the test setup "valgrind" (HVTUNED_TEST_VALGRIND) the unit runs hvtuned, and its
# ExecReload= helper, under memcheck: a drop-in that only adds the wrapper, its report in
# /opt/out (one file per process, which must stay empty) and what memcheck itself needs.
valgrind_args=()
if [ -n "${HVTUNED_TEST_VALGRIND:-}" ]; then
        # The suppressions file at a fixed path inside: the unit's PrivateTmp= would hide a
        # checkout below /tmp.
        vg=""
        for word in $HVTUNED_TEST_VALGRIND; do
                case $word in
                --suppressions=*)
                        valgrind_args+=(--bind-ro="${word#--suppressions=}:/opt/valgrind.supp")
                        word=--suppressions=/opt/valgrind.supp ;;
                esac
                vg="$vg $word"
        done
        vg="${vg# } -q --log-file=/opt/out/valgrind.%%p"
        cat > "$work/valgrind.conf" <<UNIT
[Service]
ExecStart=
ExecStart=$vg $prefix/sbin/hvtuned
ExecReload=
ExecReload=$vg $prefix/sbin/hvtuned --reload=\${MAINPID}
# memcheck runs the code it translates from memory it wrote.
MemoryDenyWriteExecute=no
ReadWritePaths=/opt/out
UNIT
        valgrind_args+=(--bind-ro="$work/valgrind.conf:/etc/systemd/system/hvtuned.service.d/valgrind.conf")
fi

rc=0
container_boot systest "$out" "$work/nspawn.log" "$src/tests/system/inside.sh" -D / --volatile=yes \
        --bind-ro="$dest$prefix/sbin:$prefix/sbin" \
        --bind-ro="$work/local-lib:/usr/local/lib" \
        --bind-ro="$build:/opt/build" "${valgrind_args[@]}" || rc=$?
if ! container_verdict "$out" "$work/nspawn.log" "$rc"; then
        [ -z "${HVTUNED_TEST_VALGRIND:-}" ] || { echo "--- memcheck:"; cat "$out"/valgrind.* 2>/dev/null || true; }
        exit 1
fi
if [ -n "${HVTUNED_TEST_VALGRIND:-}" ]; then
        # Two daemons (the watchdog restarts one) and a helper for each reload.
        reports=("$out"/valgrind.*)
        [ "${#reports[@]}" -ge 5 ] || { echo "FAIL: only ${#reports[@]} memcheck reports: ${reports[*]}"; exit 1; }
        for r in "${reports[@]}"; do
                [ ! -s "$r" ] || { echo "FAIL: memcheck found errors in hvtuned:"; cat "$r"; exit 1; }
        done
        echo "ok: memcheck found nothing in ${#reports[@]} processes"
fi
echo "--- systemctl status hvtuned, as it was:"; cat "$out/status.txt"
echo "--- systemctl reload hvtuned of a bad file said:"; cat "$out/bad-reload.txt"
echo "--- systemctl start hvtuned, masked, said:"; cat "$out/masked-start.txt"
echo PASS
