#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkload --tls against real servers, each its own process on a
# loopback port picked for it: nginx over HTTPS (keep-alive GET, --reply
# http, ALPN http/1.1, verified against the test's CA; by https:// URL,
# verified for its host, and refused for another name); redis-server on
# its --tls-port (PING and SET/GET, --reply redis, pipelined); HAProxy
# terminating TLS in front of tenkd echo (the verified pattern, and
# --mode connect resuming sessions).  Each part skips, saying why, when
# its server is missing (make test-deps installs them).
# timeout: 180
# RESP's "$3" and the like are lengths, not parameters:
# shellcheck disable=SC2016
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_servers.sh"
. "$(dirname "$0")/lib_tls.sh"

need_tls
tls_certs
TLS_CERT=$EC_CERT
TLS_KEY=$EC_KEY
ran=0

# run NAME ADDR ARGS...: tenkload --tls on this backend for 1 s: exit 0,
# no error, and messages unless in --mode connect.
run() {
	_n=$1
	_a=$2
	shift 2
	# shellcheck disable=SC2046
	load_run "$_n" $(be_opt) -c 4 --tls "$@" "$_a"
	case " $* " in
	*" -M connect "*) ;;
	*) load_has "$_n" traffic.msgs -gt 0 "no messages" ;;
	esac
	echo "$_n: $(grep -E '^(  tls|traffic):' "$T/$_n.out" | tr '\n' ' ')"
}

if server_prog nginx >/dev/null; then
	nginx_start
	run https "$NADDR" -m 'GET /f HTTP/1.1\r\nHost: a.test\r\n\r\n' \
	    --reply http --tls-alpn http/1.1 --tls-ca "$EC_CERT" \
	    --tls-sni a.test --window 1
	[ "$(json_get "$T/https.json" tls.alpn)" = http/1.1 ] ||
	    fail "https: alpn $(json_get "$T/https.json" tls.alpn)"
	# By URL: TLS without --tls, verified for the URL's host (the
	# certificate names 127.0.0.1), and refused for another name.
	# shellcheck disable=SC2046
	load_run url $(be_opt) -c 4 --tls-verify --tls-ca "$EC_CERT" \
	    --window 2 "https://$NADDR/f"
	load_has url traffic.msgs -gt 0 "url: no messages"
	load_has url tls.on -eq 1 "url: tls.on is not 1"
	timeout 30 "$TENKLOAD" -q -t 1 -d 1s -c 1 --tls-ca "$EC_CERT" \
	    --tls-sni other.test "https://$NADDR/f" >"$T/wrong.out" 2>&1 &&
	    fail "url: a name the certificate does not hold was verified"
	grep -q 'tls' "$T/wrong.out" ||
	    fail "url: the refusal is not TLS's: $(cat "$T/wrong.out")"
	nginx_stop
	ran=$((ran + 1))
else
	echo "nginx not found: no HTTPS"
fi

if server_prog redis-server >/dev/null; then
	redis_start
	run ping "$RADDR" -m 'PING\r\n' --reply redis --reply-check +PONG \
	    --window 16
	run set "$RADDR" -m '*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nhi\r\n' \
	    --reply redis --reply-check +OK
	run get "$RADDR" -m '*2\r\n$3\r\nGET\r\n$1\r\nk\r\n' --reply redis \
	    --reply-check '$2\r\nhi\r\n' --window 4
	redis_stop
	ran=$((ran + 1))
else
	echo "redis-server not found: no redis over TLS"
fi

if server_prog haproxy >/dev/null; then
	upstream_start
	haproxy_tls_start "$RSA_CERT" "$RSA_KEY" "$UPADDR"
	run haproxy "$HAPADDR" -s 1:4096 --tls-ca "$RSA_CERT" \
	    --tls-sni b.test
	run hconnect "$HAPADDR" -M connect --tls-resume
	load_has hconnect tls.window_resumed -gt 0 "none resumed"
	ran=$((ran + 1))
else
	echo "haproxy not found: no TLS termination by HAProxy"
fi
[ "$ran" -gt 0 ] ||
    skip "none of nginx, redis-server, haproxy (make test-deps)"
pass
