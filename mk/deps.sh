#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Find libbsd through pkg-config, installing pkg-config and libbsd-dev with
# apt-get when they are missing and we are root on Debian or Ubuntu.
# Prints the make variables on stdout; on failure one line on stderr.
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

have() {
	command -v "$PKG_CONFIG" >/dev/null 2>&1 &&
	    "$PKG_CONFIG" --exists libbsd-overlay 2>/dev/null
}

if ! have; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "deps: installing pkg-config and libbsd-dev with apt-get" >&2
		export DEBIAN_FRONTEND=noninteractive
		{ apt-get update -qq &&
		    apt-get install -y -qq pkg-config libbsd-dev; } >&2 ||
		    { echo "deps: apt-get install pkg-config libbsd-dev failed" >&2; exit 1; }
	fi
fi
if ! have; then
	echo "deps: libbsd and pkg-config are needed: apt install libbsd-dev pkg-config | dnf install libbsd-devel pkgconf | apk add libbsd-dev pkgconf | brew install libbsd pkg-config" >&2
	exit 1
fi
echo "BSD_CFLAGS := $("$PKG_CONFIG" --cflags libbsd-overlay)"
echo "BSD_LIBS := $("$PKG_CONFIG" --libs libbsd-overlay)"
