#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkd proxy --sni-route: TLS routed by the name in the ClientHello,
# without decrypting: a.test to the tlspeer holding a.test's
# certificate, *.b.test to the one holding b.test's, an unknown name and
# no name to the "*" route; each client verifies the certificate it
# gets, so it reached the upstream its name routes to, and its bytes
# came back through the untouched TLS session.  Without a "*" route an
# unknown name is closed (no-route).  Garbage, an oversized ClientHello
# and one that never ends are closed and counted.  Then tenkload and a
# megabyte through a route.
# timeout: 180
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_tls.sh"

need_tls
tls_certs
tlspeer_start -c "$EC_CERT" -k "$EC_KEY"
A=$TPADDR
tlspeer_start -c "$RSA_CERT" -k "$RSA_KEY"
B=$TPADDR
# The default holds its own certificate, for c.test.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$T/tls/c.key" -out "$T/tls/c.pem" -days 2 -subj /CN=c.test \
    -addext "subjectAltName=DNS:c.test,DNS:unknown.test" >/dev/null 2>&1 ||
    fail "openssl req (c.test)"
tlspeer_start -c "$T/tls/c.pem" -k "$T/tls/c.key"
C=$TPADDR

tenkd_start proxy --threads 2 -u "$A" -u "$B" -u "$C" \
    --sni-route "a.test=$A,*.b.test=$B,*=$C" --tls-handshake-timeout 1s \
    --access-log "$T/access.log"
tlspeer_got a 20000 -b 20000 -a "$EC_CERT" -n a.test "$ADDR"
tlspeer_got b 20000 -b 20000 -a "$RSA_CERT" -n x.b.test "$ADDR"
tlspeer_got default 20000 -b 20000 -a "$T/tls/c.pem" -n unknown.test \
    "$ADDR"
tlspeer_got noname 20000 -b 20000 "$ADDR"
# A route is not a certificate: b.test itself is not *.b.test.
o=$("$TOOLS/tlspeer" client -a "$RSA_CERT" -n b.test -b 10 "$ADDR" 2>&1) &&
    fail "b.test went to b.test's upstream: $o"
tlspeer_got big 1048576 -b 1048576 -s 0 -a "$EC_CERT" -n A.Test "$ADDR"
# shellcheck disable=SC2046
load_run load $(be_opt) -c 8 --tls --tls-ca "$EC_CERT" --tls-sni a.test \
    "$ADDR"
access_line "$T/access.log" "sni=a.test eof"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
# raw BYTES: send BYTES (Python) to tenkd and read until it closes.
raw() {
	"$PY" - "$ADDR" "$1" <<'PYEOF' || fail "raw: not closed"
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=20)
s.sendall(eval(sys.argv[2]))
while s.recv(4096):
    pass
PYEOF
}
raw 'b"GET / HTTP/1.1\r\n\r\n"'
tls_failed not-tls 1
# A record of 16385 bytes; then a ClientHello over 16 KiB in two.
raw 'b"\x16\x03\x01\x40\x01" + bytes(16385)'
raw 'b"\x16\x03\x01\x40\x00\x01\x00\x50\x00" + bytes(16380) + b"\x16\x03\x01\x40\x00" + bytes(16384)'
tls_failed protocol 2
o=$("$TOOLS/tlspeer" client -p 20 -T 20 "$ADDR") || fail "slow: $o"
echo "slow: $o"
tls_failed timeout 1

tenkd_start proxy --threads 1 -u "$A" --sni-route "a.test=$A"
o=$("$TOOLS/tlspeer" client -n other.test -b 10 "$ADDR" 2>&1) &&
    fail "other.test was routed: $o"
echo "no route: $o"
pass
