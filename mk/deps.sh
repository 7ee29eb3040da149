#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# deps.sh: find libbsd through pkg-config, installing pkg-config and
# libbsd-dev with apt-get when they are missing and we are root on Debian
# or Ubuntu; print the make variables on stdout.
# deps.sh lint: the same for what only `make lint` needs, shellcheck and
# mandoc; print nothing.
# On failure one line on stderr naming the packages, and exit 1.
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

# apt_install PACKAGE...: install with apt-get if we are root and have it.
apt_install() {
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "deps: installing $* with apt-get" >&2
		export DEBIAN_FRONTEND=noninteractive
		{ apt-get update -qq && apt-get install -y -qq "$@"; } >&2 ||
		    { echo "deps: apt-get install $* failed" >&2; exit 1; }
	fi
}

have_bsd() {
	command -v "$PKG_CONFIG" >/dev/null 2>&1 &&
	    "$PKG_CONFIG" --exists libbsd-overlay 2>/dev/null
}

have_lint() {
	command -v shellcheck >/dev/null 2>&1 &&
	    command -v mandoc >/dev/null 2>&1
}

case ${1-} in
lint)
	have_lint || apt_install shellcheck mandoc
	if ! have_lint; then
		echo "deps: make lint needs shellcheck and mandoc: apt install shellcheck mandoc | dnf install ShellCheck mandoc | apk add shellcheck mandoc | brew install shellcheck mandoc" >&2
		exit 1
	fi
	exit 0
	;;
'')
	;;
*)
	echo "usage: deps.sh [lint]" >&2
	exit 2
	;;
esac

have_bsd || apt_install pkg-config libbsd-dev
if ! have_bsd; then
	echo "deps: libbsd and pkg-config are needed: apt install libbsd-dev pkg-config | dnf install libbsd-devel pkgconf | apk add libbsd-dev pkgconf | brew install libbsd pkg-config" >&2
	exit 1
fi
echo "BSD_CFLAGS := $("$PKG_CONFIG" --cflags libbsd-overlay)"
echo "BSD_LIBS := $("$PKG_CONFIG" --libs libbsd-overlay)"
