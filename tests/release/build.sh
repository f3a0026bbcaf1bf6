#!/bin/bash
# The release build test: hvtuned built and tested with another Debian release's own tools.
# A copy of the source tree as it is (what a release tarball holds: uncommitted changes
# included, no build trees) goes into that release's root (tools/fetch-release), run through
# an overlay whose writes land on a tmpfs, so the cached root stays as it was made. There,
# under systemd-nspawn (not booted: no init is needed to build), build-inside.sh configures
# with --fatal-meson-warnings -Dwerror=true, builds with the release's gcc and runs the unit
# and integration suites (the unit suite alone in the host's own release), then builds
# again with its clang. Every testlog.json made inside is
# copied to BUILD_DIR/meson-logs/release-SUITE/, where .ci/run's skip check reads it.
# A missing root skips (77) with the command that makes it; with HVTUNED_REQUIRE_RELEASES=1
# (CI) it fails instead. Exits 77 without root or systemd-nspawn.
# usage: build.sh SUITE BUILD_DIR SOURCE_DIR
set -euo pipefail
suite=$1 build=$(realpath "$2") src=$(realpath "$3")
# shellcheck source=tests/common/container.sh
. "$src/tests/common/container.sh"
release_root "$suite"

work=$(mktemp -d /var/tmp/hvtuned-release-build.XXXXXX)
trap 'container_umount "$work"; rm -rf "$work"' EXIT

# What a release tarball holds, as tests/package/run.sh copies it: the working tree, not HEAD.
mkdir -p "$work/out"
copy_source "$src" "$work/src"

# The root under an overlay whose writes land on a tmpfs: it keeps the root's /etc and /var,
# which nspawn's --volatile=overlay would not.
container_overlay "$root" "$work"

# The integration suite needs that release's libudev and umockdev; in the host's own release
# the plain build's run has done it with the very same ones, so only the unit suite runs.
suites="unit integration"
# shellcheck disable=SC1091
host_codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
if [ "$host_codename" = "$suite" ]; then
        suites="unit"
        echo "ok: $suite is this host's release: its integration suite runs in the plain build"
fi

# The builds live in the bound copy, on disk, not on the overlay's tmpfs. --private-network:
# nothing here needs a network, and a test that reached out would pass here only by luck.
echo "ok: $suite root made $(sed -n 's/^made: //p' "$root/.hvtuned-release-complete")"
rc=0
timeout 1500 systemd-nspawn -D "$work/root" --register=no --keep-unit -M "hvtuned-rel-$suite-$$" \
        --private-network --console=pipe --bind="$work/src:/src" --bind="$work/out:/out" \
        --setenv=HVTUNED_RELEASE="$suite" --setenv=HVTUNED_RELEASE_SUITES="$suites" --chdir=/src \
        -- /bin/sh /src/tests/release/build-inside.sh || rc=$?

# The skip check reads these whatever the result: a test that skipped in the root is a failure too.
mkdir -p "$build/meson-logs/release-$suite"
rm -f "$build/meson-logs/release-$suite"/*.json
cp "$work/out"/*.json "$build/meson-logs/release-$suite/" 2>/dev/null || true
if [ "$rc" != 0 ]; then
        echo "FAIL: the $suite build or its tests (exit status $rc)"
        exit 1
fi
echo PASS
