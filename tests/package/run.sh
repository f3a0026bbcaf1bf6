#!/bin/bash
# The package test: builds the .deb (dpkg-buildpackage) and the RPM (rpmbuild, with Debian's
# rpm) from a copy of the source tree, holds them to lintian and rpmlint, then installs the
# .deb with dpkg into a systemd-nspawn container running a real systemd (the host's root
# under a throw-away overlay, so nothing reaches the host), runs the installed service on the
# Azure testbed as the system test does, purges the package and checks that nothing is left.
# Exits 77 without root or a tool it needs (tools/install-deps installs them all).
# usage: run.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1") src=$(realpath "$2")
# shellcheck source=tests/common/container.sh
. "$src/tests/common/container.sh"
need_root "systemd-nspawn and dpkg inside it"
need_tools dpkg-buildpackage dh lintian rpmbuild rpmlint rpmspec systemd-nspawn umockdev-run
if dpkg-query -W -f='${Status}' hvtuned 2>/dev/null | grep -q 'ok installed'; then
        echo "FAIL: hvtuned is installed on this host: the container would not start clean"; exit 1
fi

work=$(mktemp -d /tmp/hvtuned-package.XXXXXX)
trap 'container_umount "$work"; rm -rf "$work"' EXIT
version=$(project_version "$build")

# --- the .deb
copy_source "$src" "$work/deb/hvtuned-$version"
deb_build "$work/deb/hvtuned-$version" "$work/deb.log" || { echo "FAIL: dpkg-buildpackage"; exit 1; }
deb=$work/deb/hvtuned_${version}_$(dpkg --print-architecture).deb
[ -f "$deb" ] || { ls "$work/deb"; echo "FAIL: no $deb"; exit 1; }
echo "ok: dpkg-buildpackage built $(basename "$deb")"
if ! lintian --fail-on error,warning "$work/deb"/hvtuned_*.changes > "$work/lintian.txt" 2>&1; then
        cat "$work/lintian.txt"; echo "FAIL: lintian"; exit 1
fi
echo "ok: lintian reports no error and no warning"

# --- the RPM
mkdir -p "$work/rpm/SOURCES"
copy_source "$src" "$work/rpm/stage/hvtuned-$version"
tar -C "$work/rpm/stage" -czf "$work/rpm/SOURCES/hvtuned-$version.tar.gz" "hvtuned-$version"
# --nodeps: Debian's rpm has no database of the build dependencies, which apt installed.
rpmbuild --define "_topdir $work/rpm" --nodeps -bb "$src/hvtuned.spec" > "$work/rpm.log" 2>&1 ||
        { tail -40 "$work/rpm.log"; echo "FAIL: rpmbuild"; exit 1; }
rpm=$(echo "$work"/rpm/RPMS/*/hvtuned-"$version"-*.rpm)
[ -f "$rpm" ] || { echo "FAIL: rpmbuild made no package"; exit 1; }
echo "ok: rpmbuild built $(basename "$rpm")"
rpm -qlp "$rpm" > "$work/rpm-files.txt"
for f in /usr/sbin/hvtuned /usr/lib/systemd/system/hvtuned.service /usr/lib/udev/rules.d/70-hvtuned.rules \
         /usr/lib/systemd/catalog/hvtuned.catalog /usr/share/bash-completion/completions/hvtuned \
         /usr/share/zsh/site-functions/_hvtuned /usr/lib/tuned/hvtuned-virtual-guest/tuned.conf \
         /usr/lib/tuned/profiles/hvtuned-virtual-guest/tuned.conf /usr/lib/tuned/recommend.d/40-hvtuned.conf; do
        grep -qx "$f" "$work/rpm-files.txt" || { cat "$work/rpm-files.txt"; echo "FAIL: the RPM lacks $f"; exit 1; }
done
rpm -qp --scripts "$rpm" > "$work/rpm-scripts.txt"
grep -q "preset hvtuned.service" "$work/rpm-scripts.txt" || { echo "FAIL: the RPM's %post does not preset the unit"; exit 1; }
# The release tier runs the spec's %preun as rpmspec reads it (tests/release/package.sh): it
# must be the one the RPM carries.
if [ "$(rpm -qp --qf '%{PREUN}' "$rpm")" != "$(rpmspec -q --qf '%{PREUN}' "$src/hvtuned.spec")" ]; then
        echo "FAIL: the RPM's %preun is not the one rpmspec reads from hvtuned.spec"; exit 1
fi
rpmlint -r "$src/hvtuned.rpmlintrc" "$rpm" "$src/hvtuned.spec" > "$work/rpmlint.txt" 2>&1 || true
grep -q " 0 errors" "$work/rpmlint.txt" || { cat "$work/rpmlint.txt"; echo "FAIL: rpmlint reports errors"; exit 1; }
echo "ok: rpmlint reports no error ($(grep -o '[0-9]* warnings' "$work/rpmlint.txt"))"

# --- install, run, purge, in a container with a real systemd: the host's root, under an
# overlay whose writes land on a tmpfs.
mkdir -p "$work/pkg" "$work/out"
cp "$deb" "$work/pkg/"
container_overlay / "$work"
rc=0
container_boot pkgtest "$work/out" "$work/nspawn.log" "$src/tests/package/inside.sh" -D "$work/root" \
        --bind-ro="$work/pkg:/opt/pkg" --bind-ro="$build:/opt/build" || rc=$?
container_verdict "$work/out" "$work/nspawn.log" "$rc" || exit 1
echo PASS
