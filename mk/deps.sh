#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# deps.sh: find libbsd through pkg-config, installing pkg-config and
# libbsd-dev with apt-get when they are missing and we are root on Debian
# or Ubuntu; print the make variables on stdout.
# deps.sh lint: the same for what only `make lint` needs, shellcheck and
# mandoc; print nothing.
# deps.sh test: the same for the test-only tools (the Prometheus text
# parser of python3-prometheus-client, for the system python3); never
# fails: a test whose tool is missing skips, saying why.
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

# Debian's module is for /usr/bin/python3; python3 on PATH may be a
# pyenv shim or a virtualenv without it.
have_prom() {
	/usr/bin/python3 -c 'import prometheus_client' >/dev/null 2>&1
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
test)
	if [ -x /usr/bin/python3 ] && ! have_prom; then
		apt_install python3-prometheus-client
	fi
	exit 0
	;;
'')
	;;
*)
	echo "usage: deps.sh [lint|test]" >&2
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
