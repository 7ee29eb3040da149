#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# TLS that cannot work: at start, a certificate or key that is missing,
# a directory, empty or no PEM, a key that does not match, a count of
# keys that does not match the certificates, each one line naming it
# and exit 2, nothing bound; at run time, garbage instead of a
# handshake, a plaintext client, a handshake that never finishes (past
# --tls-handshake-timeout) and a client that leaves mid-way, each
# closed and counted by its kind in /metrics and in the access log.
# timeout: 120
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_tls.sh"

need_tls
tls_certs

# bad WORD ARGS...: tenkd echo ARGS is refused with one line naming WORD.
bad() {
	_w=$1
	shift
	usage_error "$_w" "$TENKD" echo -l 127.0.0.1:0 "$@"
}
bad "$T/none.pem: No such file" --tls-cert "$T/none.pem" --tls-key "$EC_KEY"
bad "$T/none.key: No such file" --tls-cert "$EC_CERT" --tls-key "$T/none.key"
mkdir "$T/dir"
bad "$T/dir" --tls-cert "$T/dir" --tls-key "$EC_KEY"
: >"$T/empty.pem"
bad "empty.pem: not a PEM certificate" --tls-cert "$T/empty.pem" \
    --tls-key "$EC_KEY"
echo junk >"$T/junk.pem"
bad "junk.pem: not a PEM private key" --tls-cert "$EC_CERT" \
    --tls-key "$T/junk.pem"
bad "rsa.key does not match $EC_CERT" --tls-cert "$EC_CERT" \
    --tls-key "$RSA_KEY"
bad "one --tls-key for each --tls-cert" --tls-cert "$EC_CERT" \
    --tls-key "$EC_KEY" --tls-cert "$RSA_CERT"
bad "need a certificate" --tls-ticket-period 1h
bad "--tls-version" --tls-cert "$EC_CERT" --tls-key "$EC_KEY" \
    --tls-version 1.1
bad "--tls-ciphers" --tls-cert "$EC_CERT" --tls-key "$EC_KEY" \
    --tls-ciphers NOSUCH

tenkd_start echo --threads 1 --tls-cert "$EC_CERT" --tls-key "$EC_KEY" \
    --tls-handshake-timeout 1s --access-log "$T/access.log"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
# send BYTES [fin]: connect, send BYTES (a Python bytes literal), with
# fin the FIN too, then read until tenkd closes; prints "closed".
send() {
	"$PY" - "$ADDR" "$@" <<'PYEOF'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=20)
s.sendall(eval(sys.argv[2]))
if len(sys.argv) > 3:
    s.shutdown(socket.SHUT_WR)
while s.recv(4096):
    pass
print("closed")
PYEOF
}
[ "$(send 'bytes(range(7, 107))')" = closed ] || fail "garbage not closed"
[ "$(send 'b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"')" = closed ] ||
    fail "plaintext not closed"
tls_failed not-tls 2
o=$("$TOOLS/tlspeer" client -p 10 -T 20 "$ADDR") || fail "slow: $o"
echo "slow handshake: $o"
awk_true "$(echo "$o" | awk '{ print $3 }') >= 0.9" ||
    fail "closed before the handshake timeout: $o"
tls_failed timeout 1
# The start of a ClientHello, then the FIN.
[ "$(send 'b"\x16\x03\x01\x00\x40\x01\x00"' fin)" = closed ] ||
    fail "half a hello not closed"
tls_failed eof 1
[ "$(metric 'tenkd_connections_closed_total{reason="tls"}')" -eq 4 ] ||
    fail "not 4 connections closed for tls"
wait_line 10 "$T/access.log" 'tls=fail/timeout' ||
    fail "no tls=fail/timeout: $(cat "$T/access.log")"
[ "$(grep -c 'tls=fail/not-tls tls$' "$T/access.log")" -eq 2 ] ||
    fail "access log: $(cat "$T/access.log")"
tlspeer_got after 1000 -b 1000 "$ADDR"
alive "$TENKD_PID" || fail "tenkd died"
pass
