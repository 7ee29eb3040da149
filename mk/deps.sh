#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# deps.sh: find libbsd through pkg-config, installing pkg-config and
# libbsd-dev with apt-get when they are missing and we are root on Debian
# or Ubuntu; find liburing (optional: the io_uring backend); print the
# make variables on stdout.  liburing-dev is installed the same way when
# missing, and a failure there only leaves the backend out.  URING=no
# leaves io_uring out even when liburing is there (how a build without it
# is checked).  OpenSSL 3 (optional: TLS in the three programs) is found
# and installed the same way (libssl-dev); TLS=no leaves it out.
# deps.sh lint: the same for what only `make lint` needs, shellcheck and
# mandoc; print nothing.
# deps.sh test: the same for the test-only tools (the Prometheus text
# parser of python3-prometheus-client, for the system python3, and
# gnuplot, whose charts bench_smoke draws); never fails: a test whose
# tool is missing skips, saying why.
# deps.sh bench: the same for what make bench uses, gnuplot (--plot) and
# strace (--syscalls); never fails: tenkbench goes on without them,
# saying so in one line each.
# deps.sh deb: the same for make deb, which builds the Debian package:
# dpkg-buildpackage, debhelper, lintian and the build dependencies of
# debian/control; fails naming what is missing.
# deps.sh stress: the same for stress-ng, the load of make test-stress.
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

# missing_pkgs PACKAGE...: those not installed, each after a blank.
missing_pkgs() {
	for _p in "$@"; do
		dpkg-query -W -f '${Status}\n' "$_p" 2>/dev/null |
		    grep -q ' installed$' || printf ' %s' "$_p"
	done
}

# link_probe CFLAGS LIBS: whether the C program on stdin compiles and
# links with them, each split into words; what it builds is thrown away.
link_probe() {
	probe=$(mktemp) || return 1
	# shellcheck disable=SC2086 # word splitting of the flags is meant
	${CC:-cc} -x c $1 -o "$probe" - $2 >/dev/null 2>&1
	st=$?
	rm -f "$probe"
	return $st
}

# make_vars NAME CFLAGS LIBS: the make variables NAME_CFLAGS and NAME_LIBS
# (empty for a part left out).
make_vars() {
	echo "$1_CFLAGS :=${2:+ $2}"
	echo "$1_LIBS :=${3:+ $3}"
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
stress)
	command -v stress-ng >/dev/null 2>&1 || apt_install stress-ng
	if ! command -v stress-ng >/dev/null 2>&1; then
		echo "deps: make test-stress needs stress-ng: apt install stress-ng | dnf install stress-ng | apk add stress-ng | brew install stress-ng" >&2
		exit 1
	fi
	exit 0
	;;
test)
	if [ -x /usr/bin/python3 ] && ! have_prom; then
		apt_install python3-prometheus-client
	fi
	command -v gnuplot >/dev/null 2>&1 || ( apt_install gnuplot-nox )
	exit 0
	;;
bench)
	command -v gnuplot >/dev/null 2>&1 || ( apt_install gnuplot-nox )
	command -v strace >/dev/null 2>&1 || ( apt_install strace )
	exit 0
	;;
deb)
	# debian/control's Build-Depends, and what builds and checks it.
	pkgs="build-essential dpkg-dev debhelper lintian pkg-config libbsd-dev
	    liburing-dev libssl-dev"
	# shellcheck disable=SC2086 # lists of package names, split on purpose
	need=$(missing_pkgs $pkgs)
	# shellcheck disable=SC2086
	[ -z "$need" ] || apt_install $need
	# shellcheck disable=SC2086
	need=$(missing_pkgs $pkgs)
	if [ -n "$need" ]; then
		echo "deps: make deb needs$need: as root, apt install$need" >&2
		exit 1
	fi
	exit 0
	;;
'')
	;;
*)
	echo "usage: deps.sh [lint|test|bench|deb|stress]" >&2
	exit 2
	;;
esac

have_bsd || apt_install pkg-config libbsd-dev
if ! have_bsd; then
	echo "deps: libbsd and pkg-config are needed: apt install libbsd-dev pkg-config | dnf install libbsd-devel pkgconf | apk add libbsd-dev pkgconf | brew install libbsd pkg-config" >&2
	exit 1
fi
make_vars BSD "$("$PKG_CONFIG" --cflags libbsd-overlay)" \
    "$("$PKG_CONFIG" --libs libbsd-overlay)"

# liburing 2.3 or later (io_uring_submit_and_get_events): optional.  A
# compile and link probe rather than pkg-config alone, so a liburing too
# old for uring.c counts as missing instead of failing the build.
have_uring() {
	flags=$("$PKG_CONFIG" --cflags liburing 2>/dev/null)
	libs=$("$PKG_CONFIG" --libs liburing 2>/dev/null) || libs=-luring
	printf '%s\n' '#include <liburing.h>' \
	    'int main(void) { struct io_uring r;' \
	    'if (io_uring_queue_init(1, &r, 0) != 0) return 1;' \
	    '(void)io_uring_register_ring_fd(&r);' \
	    'return io_uring_submit_and_get_events(&r); }' |
	    link_probe "$flags" "$libs"
}

# found NAME SETTING PACKAGE: whether have_NAME succeeds, unless SETTING
# is no; where it fails, PACKAGE is installed like libbsd-dev where we
# may (root, apt-get), and probed again.  Optional: if the install
# fails, the build goes on without the part, saying so.
found() {
	[ "$2" != no ] || return 1
	"have_$1" && return 0
	( apt_install "$3" ) || true
	"have_$1"
}

if found uring "${URING-}" liburing-dev; then
	make_vars URING "-DTENK_HAVE_URING $flags" "$libs"
else
	echo "deps: liburing (2.3 or later) not found: building without the io_uring backend (apt install liburing-dev)" >&2
	make_vars URING
fi

# OpenSSL 3.0 or later (libssl, libcrypto): optional, for TLS.  A
# compile and link probe as for liburing, so an OpenSSL 1.1 counts as
# missing.
have_tls() {
	tflags=$("$PKG_CONFIG" --cflags openssl 2>/dev/null)
	tlibs=$("$PKG_CONFIG" --libs openssl 2>/dev/null) ||
	    tlibs="-lssl -lcrypto"
	printf '%s\n' '#include <openssl/ssl.h>' \
	    '#if OPENSSL_VERSION_MAJOR < 3' '#error OpenSSL 3 needed' \
	    '#endif' \
	    'int main(void) { SSL_CTX *c = SSL_CTX_new(TLS_method());' \
	    'SSL_CTX_free(c); return 0; }' |
	    link_probe "$tflags" "$tlibs"
}

if found tls "${TLS-}" libssl-dev; then
	make_vars TLS "-DTENK_HAVE_TLS $tflags" "$tlibs"
else
	if [ "${TLS-}" = no ]; then
		echo "deps: TLS=no: building without TLS" >&2
	else
		echo "deps: OpenSSL 3 not found: building without TLS (apt install libssl-dev)" >&2
	fi
	make_vars TLS
fi

# The fast path: clang that compiles for the BPF target, bpftool for the
# skeleton, libbpf (0.6 or later: bpf_map__set_max_entries) to load it.
# BPF's programs include <linux/bpf.h>, whose <asm/types.h> lives in the
# multiarch directory of the host's headers.
have_fastpath() {
	[ "${FASTPATH-}" != no ] || return 1
	bclang=${BPF_CLANG:-clang}
	command -v "$bclang" >/dev/null 2>&1 || return 1
	bpftool=$(command -v bpftool 2>/dev/null) || bpftool=/usr/sbin/bpftool
	[ -x "$bpftool" ] || return 1
	"$bpftool" version >/dev/null 2>&1 || return 1
	fflags=$("$PKG_CONFIG" --cflags libbpf 2>/dev/null) || return 1
	flibs=$("$PKG_CONFIG" --libs libbpf 2>/dev/null) || return 1
	march=$(${CC:-cc} -print-multiarch 2>/dev/null)
	[ -n "$march" ] || march=$(${CC:-cc} -dumpmachine 2>/dev/null)
	bflags=
	[ -d "/usr/include/$march" ] && bflags="-I/usr/include/$march"
	# shellcheck disable=SC2086 # word splitting of the flags is meant
	printf '%s\n' '#include <linux/bpf.h>' '#include <bpf/bpf_helpers.h>' \
	    'SEC("sk_skb/stream_verdict") int v(struct __sk_buff *s)' \
	    '{ return SK_PASS; }' 'char LICENSE[] SEC("license") = "GPL";' |
	    "$bclang" -O2 -target bpf $bflags -x c -c -o /dev/null - \
	    >/dev/null 2>&1 &&
	    printf '%s\n' '#include <bpf/libbpf.h>' \
	    'int main(void) { return bpf_map__set_max_entries(0, 1); }' |
	    link_probe "$fflags" "$flibs"
}

if have_fastpath; then
	make_vars FP "-DTENK_HAVE_FASTPATH $fflags" "$flibs"
	echo "BPF_CLANG := $bclang"
	echo "BPF_CFLAGS := $bflags"
	echo "BPFTOOL := $bpftool"
else
	[ "${FASTPATH-}" = no ] ||
	    echo "deps: clang, libbpf or bpftool not found: building without the proxy's --fastpath (make test-deps, or apt install clang libbpf-dev bpftool)" >&2
	make_vars FP
fi
