#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkd proxy terminating TLS (--tls-cert) in front of plaintext
# upstreams: tlspeer's megabyte through it to tenkd echo and back
# byte-exact, in 7-byte records and in records cut into 3-byte pieces
# and into single bytes;
# half-close through TLS both ways: the client's close_notify (or its
# FIN alone) reaches the upstream as a FIN and the echo still comes
# back, and an upstream that sends first and closes reaches the client
# as data and close_notify, after which the client's bytes still reach
# it; tenkload's verified pattern and a stream; the access log's tls=
# field; the handshakes counted.
# timeout: 240
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_tls.sh"

need_tls
tls_certs
upstream_start --threads 1
tenkd_start proxy --threads 2 -u "$UPADDR" --tls-cert "$EC_CERT" \
    --tls-key "$EC_KEY" --access-log "$T/access.log"
tlspeer_got big 1048576 -b 1048576 "$ADDR"
tlspeer_got small 100000 -b 100000 -r 7 "$ADDR"
tlspeer_got split 3000 -b 3000 -r 100 -s 3 "$ADDR"
tlspeer_got bytes 200 -b 200 -r 100 -s 1 "$ADDR"
tlspeer_got fin 70000 -b 70000 -F "$ADDR"
case $TPC_OUT in *"end close_notify"*) ;; *) fail "fin: $TPC_OUT" ;; esac

# The upstream closes first: its bytes and its end reach the client,
# whose bytes still reach it.
pxtool_start upstream -f 5000
tenkd_start proxy --threads 1 -u "$PXTADDR" --tls-cert "$EC_CERT" \
    --tls-key "$EC_KEY"
o=$("$TOOLS/tlspeer" client -R -b 3000 "$ADDR") || fail "first: $o"
echo "upstream first: $o"
[ "$o" = "read 5000 bytes first, end close_notify" ] ||
    fail "upstream first: $o"
wait_line 10 "$PXT_OUT" '^received 3000' ||
    fail "the upstream got: $(cat "$PXT_OUT")"

tenkd_start proxy --threads 2 -u "$UPADDR" --tls-cert "$EC_CERT" \
    --tls-key "$EC_KEY" --access-log "$T/access2.log"
# shellcheck disable=SC2046
load_run load $(be_opt) -c 8 --tls "$ADDR"
load_has load traffic.msgs -gt 0 "no messages"
# shellcheck disable=SC2046
load_run stream $(be_opt) -c 2 -M stream -s 16k --tls "$ADDR"
[ "$(metric tenkd_tls_handshakes_total)" -ge 10 ] ||
    fail "handshakes: $(metric tenkd_tls_handshakes_total)"
access_line "$T/access.log" 'tls=TLSv1.3/TLS_AES_256_GCM_SHA384 eof'
alive "$UP_PID" || fail "the upstream died"
pass
