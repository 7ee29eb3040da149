#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkd's TLS against real TLS software, each its own process on a
# loopback port picked for it: nginx's stream module originating TLS to
# tenkd echo (proxy_ssl, verified), and terminating TLS as an upstream
# of tenkd proxy (-u ...,tls, verified); HAProxy the same both ways
# (server ... ssl verify required; bind ... ssl crt); and tenkd routing
# by name (--sni-route) to nginx and HAProxy terminating TLS, each with
# its own certificate, which the client verifies.  Each part skips,
# saying why, without its server (make test-deps installs them).
# timeout: 240
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_servers.sh"
. "$(dirname "$0")/lib_tls.sh"

# tls_up WHAT UPSTREAM SNI CA: tenkd proxy to UPSTREAM over TLS,
# verified by the name SNI against CA, carries 100000 bytes there and
# back.
tls_up() {
	tenkd_start proxy --threads 1 -u "$2,tls,sni=$3,ca=$4"
	px_got "$1" 100000 -n 100000 "$ADDR"
}

need_tls
tls_certs
ran=0
upstream_start --threads 1
if server_prog nginx >/dev/null &&
    { [ -e /usr/lib/nginx/modules/ngx_stream_module.so ] ||
    "$(server_prog nginx)" -V 2>&1 | grep -q -e '--with-stream '; }; then
	# nginx originates TLS to tenkd echo over TLS.
	tenkd_start echo --threads 1 --tls-cert "$EC_CERT" --tls-key "$EC_KEY"
	nginx_stream_start ngx1 "listen 127.0.0.1:@PORT@;
		proxy_pass $ADDR;
		proxy_ssl on;
		proxy_ssl_name a.test;
		proxy_ssl_server_name on;
		proxy_ssl_verify on;
		proxy_ssl_trusted_certificate $EC_CERT;
		proxy_half_close on;"
	px_got nginx-to-tenkd 100000 -n 100000 "$NGSADDR"
	# nginx terminates TLS as tenkd's upstream.
	nginx_stream_start ngx2 "listen 127.0.0.1:@PORT@ ssl;
		ssl_certificate $EC_CERT;
		ssl_certificate_key $EC_KEY;
		proxy_half_close on;
		proxy_pass $UPADDR;"
	NGX2=$NGSADDR
	tls_up tenkd-to-nginx "$NGX2" a.test "$EC_CERT"
	ran=$((ran + 1))
else
	echo "nginx with its stream module not found: no nginx parts"
fi
if server_prog haproxy >/dev/null; then
	# HAProxy originates TLS to tenkd echo over TLS.
	tenkd_start echo --threads 1 --tls-cert "$RSA_CERT" \
	    --tls-key "$RSA_KEY"
	srv="$ADDR ssl verify required ca-file $RSA_CERT"
	haproxy_start hp "" "$srv sni str(b.test) verifyhost b.test"
	px_got haproxy-to-tenkd 100000 -n 100000 "$HAPADDR"
	# HAProxy terminates TLS as tenkd's upstream.
	haproxy_tls_start "$RSA_CERT" "$RSA_KEY" "$UPADDR"
	HAP=$HAPADDR
	tls_up tenkd-to-haproxy "$HAP" b.test "$RSA_CERT"
	ran=$((ran + 1))
else
	echo "haproxy not found: no HAProxy parts"
fi
if [ "$ran" -eq 2 ]; then
	# Routing by name, TLS passed through to nginx and HAProxy.
	tenkd_start proxy --threads 1 -u "$NGX2" -u "$HAP" \
	    --sni-route "a.test=$NGX2,*=$HAP"
	# shellcheck disable=SC2046
	load_run route-a $(be_opt) -c 4 --tls --tls-ca "$EC_CERT" \
	    --tls-sni a.test "$ADDR"
	# shellcheck disable=SC2046
	load_run route-b $(be_opt) -c 4 --tls --tls-ca "$RSA_CERT" \
	    --tls-sni b.test "$ADDR"
	echo "routed: a.test to nginx, b.test to HAProxy, both verified"
fi
[ "$ran" -gt 0 ] || skip "neither nginx (stream) nor haproxy (make test-deps)"
pass
