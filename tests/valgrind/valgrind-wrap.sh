#!/bin/sh
# The exe_wrapper of the test setup "valgrind" (tests/valgrind/meson.build). meson puts it
# before every test's command: a test program this build made runs under memcheck
# ($HVTUNED_TEST_VALGRIND); a script, or a tool of the system (sh, python3, umockdev-run),
# runs as it is and puts the hvtuned it starts under memcheck itself, from the same
# variable. So do the integration tests' programs, which run natively: what they are made of
# is the harness, glib and umockdev, whose memory the ASan run checks (it builds them with
# the sanitizers), while every hvtuned they start runs under memcheck. Under memcheck
# themselves they took half of the setup's time (the lifecycle tests, now reload, drift and
# originals: 510 s of CPU) for no line of hvtuned's.
# usage: valgrind-wrap.sh BUILD_ROOT COMMAND [ARG...]
set -eu
build=$1
shift
: "${HVTUNED_TEST_VALGRIND:?is not set: run through meson test --setup valgrind}"
case $1 in
"$build"/tests/integration/*)
        exec "$@" ;;
"$build"/*)
        # The variable is a command line: split on blanks (no path in it has one).
        # shellcheck disable=SC2086
        exec $HVTUNED_TEST_VALGRIND "$@" ;;
esac
exec "$@"
