#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkload --tls against tlspeer (OpenSSL on its own, no libtenk): the
# verified echo pattern in ping-pong, pipelined with sizes from 1 byte
# to 64 KiB and in stream mode, over ECDSA and RSA certificates and
# both versions; records that arrive in 3-byte pieces; the framings
# (line, prefix, bytes, until, http) through tlspeer -u to replysrv;
# the handshakes counted in the report and the JSON.
# timeout: 240
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_tls.sh"

need_tls
tls_certs

# run NAME ADDR ARGS...: tenkload --tls on this backend for 1 s; it must
# exit 0 with messages, every connection served and no error.
run() {
	_n=$1
	_a=$2
	shift 2
	# shellcheck disable=SC2046
	load_run "$_n" $(be_opt) --tls "$@" "$_a"
	load_has "$_n" traffic.msgs -gt 0 "no messages"
	load_has "$_n" connections.unserved -eq 0 "unserved connections"
	load_has "$_n" tls.on -eq 1 "tls.on is not 1"
}

tlspeer_start -c "$EC_CERT" -k "$EC_KEY"
EC=$TPADDR
run echo "$EC" -c 8
load_has echo tls.handshakes_new -eq 8 "8 handshakes, all new"
load_has echo tls.handshakes_resumed -eq 0 "no resumption asked for"
[ "$(json_get "$T/echo.json" tls.version)" = TLSv1.3 ] ||
    fail "echo: version $(json_get "$T/echo.json" tls.version)"
grep -q '^  tls: TLSv1.3 ' "$T/echo.out" ||
    fail "echo: no tls line: $(cat "$T/echo.out")"
grep -q '^  handshake latency (ms): min ' "$T/echo.out" ||
    fail "echo: no handshake latency: $(cat "$T/echo.out")"
[ "$(json_buckets "$T/echo.json" handshake_latency | wc -l)" -gt 0 ] ||
    fail "echo: no handshake latency in the JSON"
run sizes "$EC" -c 4 -s 1:65536 --window 4
run stream "$EC" -c 2 -M stream -s 16k
run v12 "$EC" -c 4 --tls-version 1.2 --tls-ciphers \
    ECDHE-ECDSA-AES128-GCM-SHA256
[ "$(json_get "$T/v12.json" tls.cipher)" = ECDHE-ECDSA-AES128-GCM-SHA256 ] ||
    fail "v12: cipher $(json_get "$T/v12.json" tls.cipher)"

tlspeer_start -c "$RSA_CERT" -k "$RSA_KEY"
run rsa "$TPADDR" -c 4 --tls-ca "$RSA_CERT" --tls-sni x.b.test

# Records cut into 3-byte pieces, a millisecond apart.
tlspeer_start -s 3 -c "$EC_CERT" -k "$EC_KEY"
run split "$TPADDR" -c 2 -s 1:200

# The framings, through tlspeer to replysrv in plaintext.
CR=$(printf '\r')
NL='
'
framing() {
	_fn=$1
	shift
	replysrv_start "$@"
	tlspeer_start -c "$EC_CERT" -k "$EC_KEY" -u "$RSADDR"
}
framing line --line
run line "$TPADDR" -c 4 -m 'PING\r\n' --reply line --reply-check +OK \
    --window 4
run until "$TPADDR" -c 2 -m 'PING\r\n' --reply 'until:\r\n'
run bytes "$TPADDR" -c 2 -m 'PING\r\n' --reply bytes:5
framing prefix --prefix u16be
run prefix "$TPADDR" -c 4 -m '\x00\x05hello' --reply prefix:u16be --window 4
framing http "--line=HTTP/1.1 200 OK$CR${NL}Content-Length: 4$CR$NL$CR${NL}hi"
run http "$TPADDR" -c 4 -m 'GET / HTTP/1.1\n' --reply http
pass
