#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkd proxy speaking TLS to its upstreams (-u HOST:PORT,tls,...):
# plaintext clients reach tlspeer's TLS echo byte-exact, its
# certificate verified against ca= for sni=, sessions resumed; a
# certificate that fails verification (another name, or no ca= for a
# self-signed one) fails every connect, counted against the upstream,
# the reason logged, and the client closed; noverify takes it anyway;
# TLS at both ends (--tls-cert and a tls upstream) carries the bytes
# through two TLS sessions.
# timeout: 180
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_tls.sh"

need_tls
tls_certs
tlspeer_start -c "$EC_CERT" -k "$EC_KEY"
UP=$TPADDR

tenkd_start proxy --threads 1 -u "$UP,tls,sni=a.test,ca=$EC_CERT"
px_got verified 100000 -n 100000 "$ADDR"
# shellcheck disable=SC2046
load_run plain $(be_opt) -c 8 "$ADDR"
load_has plain traffic.msgs -gt 0 "no messages"
[ "$(metric "tenkd_upstream_connect_failures_total{upstream=\"$UP\"}")" \
    -eq 0 ] || fail "connect failures with a good certificate"

# refused NAME -u ...: every client closed, the failure logged, counted.
refused() {
	_rn=$1
	shift
	tenkd_start proxy --threads 1 --retries 0 "$@"
	PX_OUT=$("$PXTOOL" client -n 100 "$ADDR") || true
	echo "$_rn: $PX_OUT"
	case $PX_OUT in "got 0 bytes"*) ;; *) fail "$_rn: $PX_OUT" ;; esac
	wait_line 10 "$TENKD_LOG" "TLS handshake failed: certificate verify" ||
	    fail "$_rn: no verify failure logged"
	_f=$(metric "tenkd_upstream_connect_failures_total{upstream=\"$UP\"}")
	[ "$_f" -ge 1 ] || fail "$_rn: no connect failure counted"
	grep 'TLS handshake failed' "$TENKD_LOG" | tail -n 1
}
refused wrongname -u "$UP,tls,sni=wrong.test,ca=$EC_CERT"
refused noca -u "$UP,tls,sni=a.test"

tenkd_start proxy --threads 1 -u "$UP,noverify"
px_got noverify 5000 -n 5000 "$ADDR"

# TLS at both ends, through two sessions.
tenkd_start proxy --threads 2 -u "$UP,tls,sni=a.test,ca=$EC_CERT" \
    --tls-cert "$RSA_CERT" --tls-key "$RSA_KEY"
tlspeer_got bridge 1048576 -b 1048576 -a "$RSA_CERT" -n b.test "$ADDR"
tlspeer_got bridgefin 30000 -b 30000 -F -s 5 -r 1000 "$ADDR"
pass
