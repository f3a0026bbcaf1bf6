#!/bin/bash
# Runs inside a release's root under systemd-nspawn, not booted (see package.sh), in a copy of
# the source tree at /opt/src/hvtuned-VERSION: builds the .deb with that release's
# dpkg-buildpackage and debhelper, holds it to that release's lintian, and compiles the
# testbed's sysfs shim with that release's compiler against its C library (the host's build
# may need a newer glibc than the release has). deb_build, finish, fail:
# tests/common/container.sh.
set -u
# shellcheck source=tests/common/container.sh
. /opt/container.sh
suite=$HVTUNED_RELEASE

echo "ok: $suite: $(dpkg-query -W -f='dpkg ${Version}' dpkg), $(dpkg-query -W -f='debhelper ${Version}' debhelper), $(dpkg-query -W -f='lintian ${Version}' lintian), $(gcc --version | head -1)"
# The source package too, from the clean tree, for lintian's source checks (Standards-Version,
# debian/control, debian/rules): a binary-only .changes has none.
here=${PWD##*/}
(cd .. && dpkg-source -b "$here") > /opt/out/dpkg-source.txt 2>&1 ||
        { cat /opt/out/dpkg-source.txt; fail "dpkg-source -b"; }
deb_build . /opt/out/dpkg-buildpackage.txt || fail "dpkg-buildpackage"
echo "ok: dpkg-buildpackage built $(cd .. && echo hvtuned_*.deb)"

# debian/ is written for the newest release; what an older lintian cannot judge is suppressed
# there only, each tag with its reason:
# - newer-standards-version (bullseye): debian/control declares the Standards-Version the
#   package follows, checked by trixie's lintian; bullseye's lintian knows policy up to
#   4.5.1 and can only say that a newer one is unknown to it, not that anything is wrong.
suppress=""
case $suite in
bullseye) suppress=newer-standards-version ;;
esac
if ! lintian --fail-on error,warning ${suppress:+--suppress-tags "$suppress"} ../hvtuned_*.dsc ../hvtuned_*.changes \
        > /opt/out/lintian.txt 2>&1; then
        cat /opt/out/lintian.txt; fail "lintian"
fi
echo "ok: $suite's lintian reports no error and no warning${suppress:+ (suppressed: $suppress)}"
sed 's/^/    /' /opt/out/lintian.txt

gcc -std=gnu11 -D_GNU_SOURCE -shared -fPIC -O2 -Ilib -o /opt/out/hvtuned-sysfs-kernel.so tests/emulate/sysfs-kernel.c \
        lib/readahead-rule.c lib/parse.c -ldl ||
        fail "cannot build the testbed's sysfs shim"
finish PASS
