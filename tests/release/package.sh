#!/bin/bash
# The release package test: hvtuned's .deb built, linted, installed and run with another
# Debian release's own tools and its own systemd. In that release's root (tools/fetch-release),
# always through an overlay whose writes land on a tmpfs, so the cached root stays as made:
#  1. under systemd-nspawn, not booted (package-build.sh): dpkg-buildpackage -us -uc -b of a
#     copy of the working tree as it is, lintian --fail-on error,warning of the result, and the
#     testbed's sysfs shim compiled with that release's compiler against its C library;
#  2. on a fresh overlay, booted with the release's systemd as PID 1 (package-inside.sh): the
#     .deb installed with dpkg and checked on the Azure testbed, the unit verified, its
#     exposure rated, the package removed, purged and the RPM's %preun run (its text from
#     rpmspec, on this machine), each after a --once and each putting the originals back;
#     on bookworm, before that, the README's operator sections run as written from install
#     to purge (walk-inside.sh, docs/testing.md).
# The .deb, its .changes, lintian's and systemd-analyze's reports stay in
# BUILD_DIR/release/SUITE/, one build a run, for what boots the release next (a QEMU guest).
# A missing root skips (77) with the command that makes it; with HVTUNED_REQUIRE_RELEASES=1
# (CI) it fails instead. Exits 77 without root or systemd-nspawn.
# usage: package.sh SUITE BUILD_DIR SOURCE_DIR
set -euo pipefail
suite=$1 build=$(realpath "$2") src=$(realpath "$3")
# shellcheck source=tests/common/container.sh
. "$src/tests/common/container.sh"
release_root "$suite"
need_tools rpmspec
container_timeout=600
# systemd 256 and later refuse to boot on the hybrid cgroup hierarchy some hosts still mount
# (/sys/fs/cgroup a tmpfs with cgroup2 at unified/); nspawn gives the container a cgroup2-only
# tree of its own when told to. Older systemd runs on either.
export SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1

work=$(mktemp -d /var/tmp/hvtuned-release-package.XXXXXX)
trap 'container_umount "$work/build"; container_umount "$work/boot"; rm -rf "$work"' EXIT
keep=$build/release/$suite
rm -rf "$keep"
mkdir -p "$keep"
version=$(project_version "$build")
echo "ok: $suite root made $(sed -n 's/^made: //p' "$root/.hvtuned-release-complete")"

# --- 1. build and lint, as that release's maintainer would (the source: what a release
# tarball holds, the working tree as it is, no build trees).
mkdir -p "$work/out-build"
copy_source "$src" "$work/src/hvtuned-$version"
container_overlay "$root" "$work/build"
rc=0
container_run "build-$suite" "$work/out-build" "$work/build.log" "$src/tests/release/package-build.sh" \
        -D "$work/build/root" --private-network --bind="$work/src:/opt/src" \
        --setenv=HVTUNED_RELEASE="$suite" --chdir="/opt/src/hvtuned-$version" || rc=$?
container_umount "$work/build"
cp "$work/out-build"/lintian.txt "$work/out-build"/dpkg-buildpackage.txt "$keep/" 2>/dev/null || true
container_verdict "$work/out-build" "$work/build.log" "$rc" || exit 1
cp "$work/src"/*_"$version"_*.deb "$work/src"/hvtuned_"$version"_*.changes \
   "$work/src"/hvtuned_"$version"_*.buildinfo "$work/src"/hvtuned_"$version".* "$keep/"
deb=$(echo "$keep"/hvtuned_"$version"_*.deb)
[ -f "$deb" ] || { ls "$keep"; echo "FAIL: no .deb in $keep"; exit 1; }

# The RPM's %preun as rpm's own parse of the spec puts it in the package's header (what
# `rpm -qp --scripts` shows of the RPM tests/package builds, which checks that they match),
# for package-inside.sh to run as rpm runs it, with its interpreter: rpm is no tool of a
# Debian root, and Debian's rpm on this machine parses the spec as rpmbuild does.
spec=$work/src/hvtuned-$version/hvtuned.spec
prog=$(rpmspec -q --qf '%{PREUNPROG}' "$spec")
[ "$prog" = /bin/sh ] || { echo "FAIL: the spec's %preun runs under '$prog', not /bin/sh"; exit 1; }
rpmspec -q --qf '%{PREUN}\n' "$spec" > "$keep/hvtuned.spec.preun"

# --- 2. boot the release, install, run, purge.
mkdir -p "$work/out-boot" "$work/shim"
cp "$work/out-build/hvtuned-sysfs-kernel.so" "$work/shim/"
container_overlay "$root" "$work/boot"
rc=0
container_boot "boot-$suite" "$work/out-boot" "$work/boot.log" "$src/tests/release/package-inside.sh" \
        -D "$work/boot/root" --private-network \
        --bind-ro="$keep:/opt/pkg" --bind-ro="$work/shim:/opt/shim" \
        --bind-ro="$build/tests/testbeds:/opt/testbeds" \
        --bind-ro="$work/src/hvtuned-$version/README.md:/opt/README.md" \
        --bind-ro="$work/src/hvtuned-$version/tests/docs/readme-blocks.py:/opt/readme-blocks.py" \
        --bind-ro="$work/src/hvtuned-$version/tests/release/fleet-inside.sh:/opt/fleet-inside.sh" \
        --bind-ro="$work/src/hvtuned-$version/tests/release/walk-inside.sh:/opt/walk-inside.sh" \
        --bind-ro="$work/src/hvtuned-$version/tests/release/restart-inside.sh:/opt/restart-inside.sh" || rc=$?
cp "$work/out-boot"/verify.txt "$work/out-boot"/security.txt "$keep/" 2>/dev/null || true
container_verdict "$work/out-boot" "$work/boot.log" "$rc" || exit 1
echo "--- systemd-analyze security hvtuned.service under $suite's systemd:"
cat "$work/out-boot/security.txt"
echo PASS
