# SPDX-License-Identifier: BSD-2-Clause
# Real servers for the integration scripts that load them with tenkload
# (load_redis.sh, load_http.sh).  Sourced after lib.sh:
#
#	. "$(dirname "$0")/lib.sh"
#	. "$(dirname "$0")/lib_servers.sh"
#	need_prog redis-server redis-server	# or skip, saying why
#	redis_start				# sets REDIS_PID, RADDR
#
# The servers are not part of tenk: `make test-deps` installs them, and a
# plain `make test` without them skips these scripts with one line
# naming what is missing (exit 77, lib.sh's skip).  Each runs as the
# script's own process in the foreground, on a loopback port picked for
# it, with its files in the script's $T; lib.sh's EXIT trap kills it by
# PID (nginx runs as one process, master_process off, so that killing
# that PID leaves no worker behind).

# shellcheck shell=sh disable=SC2034

# server_prog NAME: the path of program NAME, from PATH or from the sbin
# directories a user's PATH lacks (Debian's nginx is /usr/sbin/nginx);
# TK_SBIN overrides that list ("" to look on PATH only).
server_prog() {
	command -v "$1" 2>/dev/null && return 0
	for _d in ${TK_SBIN-/usr/sbin /sbin}; do
		if [ -x "$_d/$1" ]; then
			echo "$_d/$1"
			return 0
		fi
	done
	return 1
}

# need_prog NAME PACKAGE: skip the script, saying why, unless program
# NAME is there.
need_prog() {
	server_prog "$1" >/dev/null ||
	    skip "$1 not found (Debian package $2; make test-deps installs it)"
}

# port_listening PORT: something listens on 127.0.0.1:PORT (or on any
# IPv4 address) by /proc/net/tcp, whose ports are in hex and whose
# state 0A is LISTEN.
port_listening() {
	awk -v p="$(printf ':%04X' "$1")" '
	$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 }
	END { exit !f }' /proc/net/tcp
}

# _serve_wait NAME PID PORT LOG: wait (10 s at most) until PID listens on
# PORT; 0 when it does, 1 when PID exited first (the port was taken),
# fail when it neither listens nor exits.
_serve_wait() {
	_n=200
	while [ "$_n" -gt 0 ]; do
		if port_listening "$3"; then
			alive "$2" && return 0
		fi
		alive "$2" || return 1
		sleep 0.05
		_n=$((_n - 1))
	done
	fail "$1 did not listen on port $3 in 10 s: $(tail -n 5 "$4")"
}

# The servers bind lib.sh's free_port, which another process may take
# first, so each *_start helper below tries three ports (serve).

# serve NAME LOG FUNC ARGS...: FUNC PORT ARGS... starts server NAME in
# the background on 127.0.0.1:PORT, its output in LOG, for up to three
# free ports until it listens there (_serve_wait); sets SERVE_PID and
# SERVE_PORT, or returns 1 when none took.
serve() {
	_sn=$1
	_sl=$2
	_sf=$3
	shift 3
	for _try in 1 2 3; do
		SERVE_PORT=$(free_port)
		"$_sf" "$SERVE_PORT" "$@"
		SERVE_PID=$!
		track "$SERVE_PID"
		_serve_wait "$_sn" "$SERVE_PID" "$SERVE_PORT" "$_sl" &&
		    return 0
		wait "$SERVE_PID" 2>/dev/null
	done
	return 1
}

# redis_start [ARGS...]: redis-server on 127.0.0.1 with no persistence,
# its files in $T/redis; sets REDIS_PID, REDIS_PORT, REDIS_LOG and RADDR
# (host:port).  With TLS_CERT and TLS_KEY set, the port speaks TLS only
# (--tls-port; clients need no certificate).
redis_start() {
	_prog=$(server_prog redis-server) || fail "no redis-server"
	mkdir -p "$T/redis"
	REDIS_LOG=$T/redis/redis.log
	serve redis-server "$REDIS_LOG" _redis_run "$@" ||
	    fail "redis-server did not start: $(tail -n 5 "$REDIS_LOG")"
	REDIS_PID=$SERVE_PID
	REDIS_PORT=$SERVE_PORT
	RADDR=127.0.0.1:$REDIS_PORT
}

# _redis_run PORT ARGS...: redis_start's redis-server on PORT.
_redis_run() {
	_rp="--port $1"
	[ -n "${TLS_CERT:-}" ] && _rp="--port 0 --tls-port $1
	    --tls-cert-file $TLS_CERT --tls-key-file $TLS_KEY
	    --tls-ca-cert-file $TLS_CERT --tls-auth-clients no"
	shift
	# shellcheck disable=SC2086 # $_rp is a list of words
	"$_prog" $_rp --bind 127.0.0.1 --save '' --appendonly no \
	    --daemonize no --dir "$T/redis" "$@" >"$REDIS_LOG" 2>&1 &
}

# redis_stop: end the redis-server started last.
redis_stop() {
	kill -TERM "$REDIS_PID" 2>/dev/null
	wait "$REDIS_PID" 2>/dev/null
}

# nginx_conf DIR PORT PROG [CONNS]: an nginx.conf in DIR for nginx PROG,
# one process of CONNS connections (2048), serving DIR/html on
# 127.0.0.1:PORT over HTTP/1.1 with keep-alive, and /ok, which answers
# any method (a POST's body read and dropped) with "ok", every path nginx
# writes in DIR; over TLS 1.2 and 1.3 with TLS_CERT and TLS_KEY set.
# nginx creates the temporary directory of each module it was
# built with at start-up: where nginx -V names one (an absolute path,
# /var/lib/nginx/... on Debian, not ours to write) it gets one in DIR;
# the others default to the prefix, which -p makes DIR.  Needs no lib.sh:
# test/bench/load-compare.sh's nginx is this one too.
nginx_conf() {
	_temps=
	for _m in client-body fastcgi proxy scgi uwsgi; do
		if "$3" -V 2>&1 | grep -q -e "--http-$_m-temp-path"; then
			_temps="$_temps	$(echo "$_m" | tr - _)_temp_path $1/tmp-$_m;
"
		fi
	done
	_ssl=
	[ -n "${TLS_CERT:-}" ] && _ssl=" ssl;
		ssl_certificate $TLS_CERT;
		ssl_certificate_key $TLS_KEY;
		ssl_protocols TLSv1.2 TLSv1.3"
	cat >"$1/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $1/nginx.pid;
error_log $1/error.log warn;
events {
	worker_connections ${4:-2048};
}
http {
	access_log off;
	default_type application/octet-stream;
	keepalive_timeout 60s;
	keepalive_requests 100000000;
$_temps	server {
		listen 127.0.0.1:$2$_ssl;
		root $1/html;
		location = /ok {
			return 200 "ok\n";
		}
	}
}
EOF
}

# nginx_start: nginx serving $T/nginx/html/f (NGINX_FILE: 64 bytes) on a
# loopback port; sets NGINX_PID, NGINX_PORT, NGINX_LOG and NADDR.
NGINX_FILE=f
nginx_start() {
	_prog=$(server_prog nginx) || fail "no nginx"
	_dir=$T/nginx
	mkdir -p "$_dir/html"
	printf '%063d\n' 0 >"$_dir/html/$NGINX_FILE"
	NGINX_LOG=$_dir/error.log
	serve nginx "$_dir/stderr" _nginx_run ||
	    fail "nginx did not start: $(tail -n 5 "$_dir/stderr" \
	    "$NGINX_LOG")"
	NGINX_PID=$SERVE_PID
	NGINX_PORT=$SERVE_PORT
	NADDR=127.0.0.1:$NGINX_PORT
}

# _nginx_run PORT: nginx_start's nginx on PORT.
_nginx_run() {
	nginx_conf "$_dir" "$1" "$_prog"
	"$_prog" -p "$_dir" -c "$_dir/nginx.conf" >"$_dir/stderr" 2>&1 &
}

# nginx_stop: end the nginx started last.
nginx_stop() {
	kill -TERM "$NGINX_PID" 2>/dev/null
	wait "$NGINX_PID" 2>/dev/null
}

# server_load NAME ADDR ARGS...: tenkload for 1 s against ADDR; its
# exit status in RC, its report in $T/NAME.out, its JSON in
# $T/NAME.json.
server_load() {
	_n=$1
	_a=$2
	shift 2
	timeout 30 "$TENKLOAD" -q -d 1s "$@" \
	    --json "$T/$_n.json" "$_a" >"$T/$_n.out" 2>"$T/$_n.err"
	RC=$?
}

# served NAME: the run exited 0 with messages and no error.
served() {
	[ "$RC" -eq 0 ] ||
	    fail "$1: tenkload exited $RC: $(cat "$T/$1.out" "$T/$1.err")"
	_m=$(json_get "$T/$1.json" traffic.msgs) || fail "$1: no traffic.msgs"
	[ "$_m" -gt 0 ] || fail "$1: no message counted"
	_e=$(json_get "$T/$1.json" errors.total)
	[ "$_e" = 0 ] || fail "$1: $_e errors: $(cat "$T/$1.out")"
	echo "$1: $_m msgs, 0 errors"
}

# refused NAME WHAT: the run NAME failed its --reply-check: exit 1, a
# mismatch counted, a FAIL result, the mismatch logged once.  WHAT
# names the case in the messages.
refused() {
	[ "$RC" -eq 1 ] ||
	    fail "$2: tenkload exited $RC, want 1: $(cat "$T/$1.err")"
	_mm=$(json_get "$T/$1.json" errors.mismatch) || fail "$2: no JSON"
	[ "$_mm" -gt 0 ] || fail "$2: no mismatch counted"
	grep -q '^result: FAIL' "$T/$1.out" ||
	    fail "$2: no 'result: FAIL' line: $(cat "$T/$1.out")"
	[ "$(grep -c 'mismatch at' "$T/$1.err")" = 1 ] ||
	    fail "$2: the mismatch is not logged once: $(cat "$T/$1.err")"
	echo "$2: $_mm mismatches, exit 1"
}
