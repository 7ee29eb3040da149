#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# deb.sh OUT: build the tenk Debian package from this tree into OUT
# (make deb).  The tree, less build/ and .git, is copied to
# OUT/tenk-VERSION, so that the package is built as from a clean clone
# and dpkg-buildpackage, which writes its results into the parent of the
# tree it builds, writes them into OUT; then lintian checks them and the
# source package, and any error or warning fails
# (debian/tenk.lintian-overrides says why each override is there).  The
# version of debian/changelog must be the Makefile's.  Prints the path
# of the .deb on the last line.
set -eu
cd "$(dirname "$0")/.."
out=${1:?usage: deb.sh OUT}

version=$(sed -n 's/^VERSION[ 	]*=[ 	]*//p' Makefile)
debver=$(dpkg-parsechangelog -S Version)
if [ "$version" != "$debver" ]; then
	echo "deb: debian/changelog says $debver, the Makefile $version:" \
	    "add a changelog entry (dch -v $version)" >&2
	exit 1
fi

rm -rf "$out"
mkdir -p "$out/tenk-$version"
tar -cf - --exclude=./build --exclude=./.git . |
    tar -C "$out/tenk-$version" -xf -
echo "deb: building in $out/tenk-$version (log: $out/build.log)" >&2
# The source package too, from the clean copy, for lintian to read.
if ! ( cd "$out/tenk-$version" && dpkg-source -b . &&
    dpkg-buildpackage -us -uc -b ) >"$out/build.log" 2>&1; then
	tail -n 20 "$out/build.log" >&2
	echo "deb: dpkg-buildpackage failed (log: $out/build.log)" >&2
	exit 1
fi
arch=$(dpkg --print-architecture)
changes=$out/tenk_${version}_$arch.changes
deb=$out/tenk_${version}_$arch.deb
[ -f "$deb" ] || { echo "deb: no $deb" >&2; exit 1; }
# lintian warns once that it runs as root: that line is not a finding.
if ! lintian --fail-on error,warning --display-info \
    "$out/tenk_$version.dsc" "$changes" >"$out/lintian.log" 2>&1; then
	cat "$out/lintian.log" >&2
	echo "deb: lintian found errors or warnings" >&2
	exit 1
fi
grep -v '^running with root privileges' "$out/lintian.log" >&2 || :
echo "deb: lintian: no error, no warning" >&2
echo "$deb"
