# SPDX-License-Identifier: BSD-2-Clause
# TLS helpers for the integration scripts, sourced after lib.sh:
#
#	. "$(dirname "$0")/lib.sh"
#	. "$(dirname "$0")/lib_tls.sh"
#	need_tls			# or skip: built without TLS
#	tls_certs			# $T/tls/ec.* and rsa.*
#	tlspeer_start -c "$EC_CERT" -k "$EC_KEY"	# sets TP_PID, TPADDR
#
# The certificates are made here by openssl req(1), in the script's $T,
# self-signed: EC_CERT/EC_KEY an ECDSA P-256 one for a.test (and
# localhost, 127.0.0.1), RSA_CERT/RSA_KEY an RSA-2048 one for b.test and
# *.b.test.  test/tools/tlspeer is the independent TLS peer (OpenSSL,
# threads, no libtenk).

# shellcheck shell=sh disable=SC2034

# need_tls: skip the script, with the line the build says, when the
# programs were built without OpenSSL (make TLS=no, or no libssl-dev).
need_tls() {
	_nt=$("$TOOLS/tlspeer" 2>&1)
	[ $? -eq 77 ] && skip "${_nt#tlspeer: } (OpenSSL 3 not found:" \
	    "apt install libssl-dev)"
	command -v openssl >/dev/null 2>&1 ||
	    skip "openssl not found (Debian package openssl)"
}

# tls_certs: the two self-signed certificates and their keys in $T/tls.
tls_certs() {
	mkdir -p "$T/tls"
	EC_CERT=$T/tls/ec.pem
	EC_KEY=$T/tls/ec.key
	RSA_CERT=$T/tls/rsa.pem
	RSA_KEY=$T/tls/rsa.key
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
	    -nodes -keyout "$EC_KEY" -out "$EC_CERT" -days 2 \
	    -subj /CN=a.test \
	    -addext "subjectAltName=DNS:a.test,DNS:localhost,IP:127.0.0.1" \
	    >"$T/tls/req.log" 2>&1 ||
	    fail "openssl req (EC): $(cat "$T/tls/req.log")"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$RSA_KEY" \
	    -out "$RSA_CERT" -days 2 -subj /CN=b.test \
	    -addext "subjectAltName=DNS:b.test,DNS:*.b.test" \
	    >"$T/tls/req.log" 2>&1 ||
	    fail "openssl req (RSA): $(cat "$T/tls/req.log")"
}

# tls_pair DIR CN: in DIR, ec.key and ec.pem (ECDSA P-256) and rsa.key
# and rsa.pem (RSA-2048), each self-signed for CN, its one DNS name;
# false if openssl req fails, with TLS_KIND the kind (ec or rsa) it
# failed on.  No lib.sh needed: test/bench/tls-compare.sh uses it too.
tls_pair() {
	mkdir -p "$1"
	for TLS_KIND in ec rsa; do
		if [ "$TLS_KIND" = ec ]; then
			_kopt="-newkey ec -pkeyopt ec_paramgen_curve:P-256"
		else
			_kopt="-newkey rsa:2048"
		fi
		# shellcheck disable=SC2086	# $_kopt is a list of words
		openssl req -x509 $_kopt -nodes -keyout "$1/$TLS_KIND.key" \
		    -out "$1/$TLS_KIND.pem" -days 2 -subj "/CN=$2" \
		    -addext "subjectAltName=DNS:$2" >/dev/null 2>&1 ||
		    return 1
	done
}

# tlspeer_start ARGS...: test/tools/tlspeer server ARGS on 127.0.0.1:0;
# sets TP_PID, TP_LOG and TPADDR.
tlspeer_start() {
	_tool_start tlspeer server "$@"
	TP_PID=$TOOL_PID
	TP_LOG=$TOOL_LOG
	TPADDR=$LISTEN_ADDR
}

# tlspeer_got WHAT BYTES ARGS...: test/tools/tlspeer client ARGS (ending
# in the address) must get BYTES bytes back; prints its line and sets
# TPC_OUT to it.
tlspeer_got() {
	_tw=$1
	_tb=$2
	shift 2
	TPC_OUT=$("$TOOLS/tlspeer" client "$@" 2>&1) ||
	    fail "$_tw: tlspeer client: $TPC_OUT"
	echo "$_tw: $TPC_OUT"
	case $TPC_OUT in
	"got $_tb bytes"*) ;;
	*) fail "$_tw: $TPC_OUT, wanted $_tb bytes" ;;
	esac
}

# haproxy_tls_start CERT KEY UPSTREAM: HAProxy (lib_servers.sh first)
# terminating TLS on a loopback port and passing the plaintext to
# UPSTREAM (host:port) in mode tcp, its files in $T/haproxy; sets
# HAP_PID, HAP_LOG and HAPADDR.
haproxy_tls_start() {
	mkdir -p "$T/haproxy"
	cat "$1" "$2" >"$T/haproxy/cert.pem"
	haproxy_start haproxy "ssl crt $T/haproxy/cert.pem" "$3"
}

# haproxy_start NAME BIND SERVER: HAProxy (lib_servers.sh first) in mode
# tcp on a loopback port, its bind line ending in BIND, passing to one
# server, SERVER (its address and options); its files in $T/NAME; sets
# HAP_PID, HAP_LOG and HAPADDR.
haproxy_start() {
	_hp=$(server_prog haproxy) || fail "no haproxy"
	_hd=$T/$1
	mkdir -p "$_hd"
	HAP_LOG=$_hd/haproxy.log
	serve haproxy "$HAP_LOG" _haproxy_run "$2" "$3" ||
	    fail "haproxy did not start: $(tail -n 5 "$HAP_LOG")"
	HAP_PID=$SERVE_PID
	HAPADDR=127.0.0.1:$SERVE_PORT
}

# _haproxy_run PORT BIND SERVER: haproxy_start's HAProxy on PORT.
_haproxy_run() {
	cat >"$_hd/haproxy.cfg" <<HEOF
global
	maxconn 1000
defaults
	mode tcp
	timeout connect 5s
	timeout client 60s
	timeout server 60s
frontend front
	bind 127.0.0.1:$1 $2
	default_backend up
backend up
	server s1 $3
HEOF
	"$_hp" -f "$_hd/haproxy.cfg" -db >"$HAP_LOG" 2>&1 &
}

# metric SERIES: the value of one series of the /metrics page of the
# tenkd last started, as "tenkd_tls_failures_total{reason=\"eof\"}".
metric() {
	http_get "http://$METRICS/metrics" >"$T/metrics.page" ||
	    fail "no /metrics from http://$METRICS"
	awk -v s="$1" '$1 == s { print $2; f = 1 } END { exit !f }' \
	    "$T/metrics.page" || fail "no $1 in /metrics"
}

# tls_failed REASON N: within 10 s, tenkd counts N TLS failures of
# REASON (tenkd_tls_failures_total).
tls_failed() {
	_tf=0
	for _i in $(seq 200); do
		_tf=$(metric "tenkd_tls_failures_total{reason=\"$1\"}")
		[ "$_tf" -ge "$2" ] && break
		sleep 0.05
	done
	[ "$_tf" -eq "$2" ] ||
	    fail "tenkd_tls_failures_total{reason=\"$1\"} $_tf, want $2"
	echo "tls failures $1: $_tf"
}

# nginx_stream_start NAME BLOCK: nginx (lib_servers.sh first) with its
# stream module and one server block, BLOCK, whose "@PORT@" becomes
# the loopback port picked for it; its files in $T/NAME.  Sets
# NGS_PID and NGSADDR.
nginx_stream_start() {
	_np=$(server_prog nginx) || fail "no nginx"
	_nd=$T/$1
	mkdir -p "$_nd"
	_mod=/usr/lib/nginx/modules/ngx_stream_module.so
	serve nginx "$_nd/stderr" _ngs_run "$2" ||
	    fail "nginx did not start: $(tail -n 5 "$_nd/stderr" \
	    "$_nd/error.log")"
	NGS_PID=$SERVE_PID
	NGSADDR=127.0.0.1:$SERVE_PORT
}

# _ngs_run PORT BLOCK: nginx_stream_start's nginx on PORT.
_ngs_run() {
	{
		[ -e "$_mod" ] && echo "load_module $_mod;"
		cat <<NEOF
daemon off;
master_process off;
worker_processes 1;
pid $_nd/nginx.pid;
error_log $_nd/error.log warn;
events { worker_connections 1024; }
stream {
	server {
$(echo "$2" | sed "s/@PORT@/$1/g")
	}
}
NEOF
	} >"$_nd/nginx.conf"
	"$_np" -p "$_nd" -c "$_nd/nginx.conf" >"$_nd/stderr" 2>&1 &
}
