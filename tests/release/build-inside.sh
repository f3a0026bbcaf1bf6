#!/bin/sh
# Runs inside a release's root under systemd-nspawn (tests/release/build.sh), in the copy of
# the source at /src: configure, build and test with this release's meson, gcc and libraries,
# then configure and build with its clang. Every option that makes a warning an error is on:
# meson's own (a feature newer than meson_version, a deprecated call) and the compilers'.
# Each step's output goes to stdout; the testlogs to /out for the host's skip check.
set -eu
umask 022
# The tests' runtime files and meson's own go to /tmp of the overlay, not the host's.
export TMPDIR=/tmp

step() { echo "== $HVTUNED_RELEASE: $*"; }
step "meson $(meson --version), $(gcc --version | head -n 1), $(clang --version | head -n 1)"

step "gcc: meson setup --fatal-meson-warnings -Dwerror=true"
meson setup build-release-gcc --fatal-meson-warnings -Dwerror=true
step "gcc: meson compile"
meson compile -C build-release-gcc
# The integration suite runs the daemon on umockdev testbeds through this release's libudev
# and umockdev; it needs root and private mount namespaces, which nspawn's root has.
step "gcc: meson test --suite unit --suite integration"
rc=0
meson test -C build-release-gcc --print-errorlogs --suite unit --suite integration || rc=$?
cp build-release-gcc/meson-logs/testlog.json /out/testlog-gcc.json
[ "$rc" = 0 ] || exit "$rc"

step "clang: meson setup --fatal-meson-warnings -Dwerror=true"
CC=clang meson setup build-release-clang --fatal-meson-warnings -Dwerror=true
step "clang: meson compile"
meson compile -C build-release-clang
step "passed"
