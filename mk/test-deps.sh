#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# test-deps.sh: the real servers and the peer clients that the tests and
# the benchmark against them need (test/integ/load_redis.sh, load_http.sh,
# proxy_peers.sh, ops_promtool.sh, test/bench/load-compare.sh,
# proxy-iperf.sh): redis-server, redis-benchmark, nginx (and its stream
# module), wrk, haproxy, iperf3, promtool (Debian's prometheus
# package, whose server is a service too), openssl (the TLS tests'
# certificates); and what the proxy's --fastpath is built with (clang,
# libbpf-dev, bpftool: large, so never a plain make's), so that its
# tests run.
# Installs the missing ones with apt-get when we are root on Debian or
# Ubuntu, with their services kept from starting (see below); otherwise
# one line on stderr naming the packages, and exit 1.
#
# Only `make test-deps` runs this, never `make test`: these packages come
# with system services that their installation would start on the user's
# machine.  While apt-get runs, a policy-rc.d that exits 101 ("action
# forbidden") tells invoke-rc.d and deb-systemd-invoke not to start them;
# it is ours only if none was there, and removed afterwards even when the
# installation fails.  The services stay enabled for the next boot, as
# the packages install them.
POLICY=/usr/sbin/policy-rc.d

# have PROGRAM: on PATH or in the sbin directories a user's PATH lacks
# (Debian's nginx is /usr/sbin/nginx).
have() {
	command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] ||
	    [ -x "/sbin/$1" ]
}

# missing: the packages of the programs not found, on one line.
missing() {
	_m=
	have redis-server || _m="$_m redis-server"
	have redis-benchmark || _m="$_m redis-tools"
	have nginx || _m="$_m $NGINX_PKG"
	have wrk || _m="$_m wrk"
	# nginx's stream module (the L4 proxy), a package of its own.
	[ -e /usr/lib/nginx/modules/ngx_stream_module.so ] ||
	    ! command -v apt-get >/dev/null 2>&1 ||
	    _m="$_m libnginx-mod-stream"
	have haproxy || _m="$_m haproxy"
	have iperf3 || _m="$_m iperf3"
	have promtool || _m="$_m prometheus"
	# The TLS tests make their certificates with openssl req.
	have openssl || _m="$_m openssl"
	have clang || _m="$_m clang"
	have bpftool || _m="$_m bpftool"
	[ -e /usr/include/bpf/libbpf.h ] ||
	    ! command -v apt-get >/dev/null 2>&1 || _m="$_m libbpf-dev"
	echo "${_m# }"
}

# The small nginx: nginx-light where it is a package of its own (Debian
# 11, Ubuntu), nginx where nginx-light is gone or only points at it.
NGINX_PKG=nginx
if command -v apt-cache >/dev/null 2>&1 &&
    apt-cache show nginx-light 2>/dev/null | grep -q '^Package: nginx-light'
then
	NGINX_PKG=nginx-light
fi

need=$(missing)
if [ -z "$need" ]; then
	echo "test-deps: redis-server, redis-benchmark, nginx, wrk, haproxy," \
	    "iperf3, promtool, openssl, clang, libbpf and bpftool found"
	exit 0
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	if [ ! -e "$POLICY" ]; then
		echo "test-deps: installing $need with apt-get," \
		    "services not started" >&2
		trap 'rm -f "$POLICY"' EXIT
		trap 'exit 1' INT TERM HUP
		if ! { printf '#!/bin/sh\n# make test-deps: %s\nexit 101\n' \
		    'no service starts' >"$POLICY" && chmod 755 "$POLICY"; }
		then
			echo "test-deps: cannot write $POLICY" >&2
			exit 1
		fi
	else
		echo "test-deps: installing $need with apt-get," \
		    "services as $POLICY says" >&2
	fi
	export DEBIAN_FRONTEND=noninteractive
	# $need is a list of package names, split on purpose.
	# shellcheck disable=SC2086
	{ apt-get update -qq && apt-get install -y -qq $need; } >&2 ||
	    { echo "test-deps: apt-get install $need failed" >&2; exit 1; }
	need=$(missing)
	if [ -z "$need" ]; then
		echo "test-deps: redis-server, redis-benchmark, nginx, wrk," \
		    "haproxy, iperf3, promtool, clang, libbpf and bpftool installed"
		exit 0
	fi
fi
echo "test-deps: missing $need: as root, apt install $need | dnf install redis nginx wrk haproxy iperf3 golang-github-prometheus | apk add redis nginx wrk haproxy iperf3 prometheus | brew install redis nginx wrk haproxy iperf3 prometheus" >&2
exit 1
