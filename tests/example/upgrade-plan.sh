#!/bin/sh
# Upgrading changes no existing /etc/hvtuned.conf's plan: `hvtuned --dry-run` plans the same
# writes on the binary of 1fa4ed8 (the last commit before the layers of 0.2.0) and on this
# one, for the packaged example (examples/hvtuned.conf), for a main file that names no
# scheduler and for one that says platform_defaults = false, on both bundled VMs. The plan,
# not its wording: each "NAME GROUP/ATTR: A -> B" (an unchanged "A (unchanged)" is A -> A),
# from stdout and stderr together, sorted.
# usage: upgrade-plan.sh SRCDIR HVTUNED SHIM TESTBEDS_DIR
set -eu
srcdir=$1 hvtuned=$2 shim=$3 testbeds=$4
old_commit=1fa4ed8

# Missing git or the commit: a skip, but a failure where CI requires the releases.
cannot() {
        echo "$1"
        [ "${HVTUNED_REQUIRE_RELEASES:-0}" = 1 ] && { echo "(HVTUNED_REQUIRE_RELEASES=1: a failure)"; exit 1; }
        exit 77
}
command -v git > /dev/null || cannot "no git: the old binary is built from commit $old_commit"
command -v umockdev-run > /dev/null || cannot "no umockdev-run"
git -C "$srcdir" cat-file -e "$old_commit^{commit}" 2> /dev/null ||
        cannot "$srcdir has no commit $old_commit (a shallow clone or a release tarball)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
git -C "$srcdir" archive "$old_commit" | tar -C "$work/src" -xf -
meson setup "$work/build" "$work/src" -Dtests=false > "$work/setup.log" 2>&1 ||
        { cat "$work/setup.log"; echo "meson setup of $old_commit failed"; exit 1; }
ninja -C "$work/build" daemon/hvtuned > "$work/ninja.log" 2>&1 ||
        { cat "$work/ninja.log"; echo "the build of $old_commit failed"; exit 1; }
old=$work/build/daemon/hvtuned

# hvtuned refuses a configuration others could write.
install -m 0644 "$srcdir/examples/hvtuned.conf" "$work/example.conf"
printf 'queue = { nr_requests = 128; };\n' > "$work/no-scheduler.conf"
# platform_defaults = false drops the platform values, as in 0.1.0: in a main file the plan
# stays the same.
printf 'platform_defaults = false;\nqueue = { nr_requests = 128; };\n' > "$work/no-builtin.conf"
chmod 0644 "$work/no-scheduler.conf" "$work/no-builtin.conf"

# plan BINARY VM KERNEL CONF: the sorted plan of BINARY's dry run on VM.
plan() {
        # shellcheck disable=SC2016 # expanded by the inner sh
        RUNTIME_DIRECTORY=$work/run umockdev-run -d "$srcdir/examples/$2.umockdev" -- sh -c '
                tar -C "$UMOCKDEV_DIR" -xf "$1" && shift &&
                LD_PRELOAD="$1:${LD_PRELOAD:-}" "$2" --dry-run -v -c "$3"' sh "$testbeds/$3.kernel.tar" "$shim" "$1" "$4" \
                > "$work/out" 2>&1 || { cat "$work/out"; echo "$1 --dry-run failed on $2 with $4"; exit 1; }
        sed -n -E -e 's/^([a-z0-9]+ [a-z_]+\/[a-z_]+): ([^ ]+) -> ([^ ]+)( .*)?$/\1: \2 -> \3/p' \
                  -e 's/^([a-z0-9]+ [a-z_]+\/[a-z_]+): ([^ ]+) \(unchanged\)$/\1: \2 -> \2/p' "$work/out" | sort
}

failed=0
for vm in azure-d32s:azure-gen2 azure-v6:azure-v6; do
        for conf in example no-scheduler no-builtin; do
                mkdir -m 0700 "$work/run"
                plan "$old" "${vm%%:*}" "${vm#*:}" "$work/$conf.conf" > "$work/old.plan"
                rm -rf "$work/run" && mkdir -m 0700 "$work/run"
                plan "$hvtuned" "${vm%%:*}" "${vm#*:}" "$work/$conf.conf" > "$work/new.plan"
                rm -rf "$work/run"
                # An empty plan would compare equal and prove nothing.
                if [ ! -s "$work/old.plan" ]; then
                        echo "${vm%%:*}, $conf: the old binary planned nothing"
                        failed=1
                elif ! diff -u "$work/old.plan" "$work/new.plan"; then
                        echo "${vm%%:*}, $conf: the plans differ (above: - $old_commit, + this build)"
                        failed=1
                else
                        echo "${vm%%:*}, $conf: the same $(wc -l < "$work/new.plan") settings"
                fi
        done
done
exit $failed
