#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# SIGHUP reloads the TLS certificates with the -f file, under TLS load
# (100 verified sessions and a churn of a connection a message): the
# new generation serves the new certificate (an RSA one where there was
# an ECDSA one, both for reload.test), the sessions of the old one go
# on, and no connection fails; the churn resumes its sessions across
# the reload (the ticket keys come from a secret the generations share);
# a file whose key does not match its certificate is refused as a reload
# and the workers go on serving.
# timeout: 180
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_tls.sh"

need_tls
tls_pair "$T/tls" reload.test || fail "openssl req ($TLS_KIND)"
cat "$T/tls/ec.pem" "$T/tls/rsa.pem" >"$T/tls/both.pem"

# conf KIND [KEY]: the -f file, serving KIND's certificate (and KEY).
conf() {
	printf 'threads 1\ndrain-timeout 1m\ntls-cert %s\ntls-key %s\n' \
	    "$T/tls/$1.pem" "$T/tls/${2:-$1}.key" >"$T/tenkd.conf"
}
# served KIND: openssl s_client gets KIND's certificate.
served() {
	echo | timeout 10 openssl s_client -connect "$ADDR" \
	    -servername reload.test >"$T/sc" 2>&1
	case $1 in
	ec)	grep -q 'Server public key is 256 bit' "$T/sc" ;;
	rsa)	grep -q 'Server public key is 2048 bit' "$T/sc" ;;
	esac || fail "not $1's certificate: $(grep -i 'public key' "$T/sc")"
}
_count() {
	[ "$(grep -c "$2" "$1")" -ge "$3" ]
}

conf ec
tenkd_start echo -f "$T/tenkd.conf"
served ec
TLS="--tls --tls-ca $T/tls/both.pem --tls-sni reload.test"
# shellcheck disable=SC2086	# $TLS is a list of words
"$TENKLOAD" -q -t 1 -c 100 -R 1000 -d 6s $TLS --json "$T/long.json" \
    "$ADDR" >"$T/long.out" 2>&1 &
LONG=$!
track "$LONG"
# shellcheck disable=SC2086
"$TENKLOAD" -q -t 1 -c 20 -R 400 -d 5s --conn-lifetime 1 $TLS --tls-resume \
    --json "$T/churn.json" "$ADDR" >"$T/churn.out" 2>&1 &
CHURN=$!
track "$CHURN"
sleep 1.5

conf rsa
kill -HUP "$TENKD_PID"
wait_for 30 _count "$TENKD_LOG" 'reload: .* started' 1 ||
    fail "no reload: $(grep reload "$TENKD_LOG")"
served rsa
sleep 1
conf rsa ec
kill -HUP "$TENKD_PID"
wait_line 30 "$TENKD_LOG" 'reload: .*does not match' ||
    fail "a bad key was not refused: $(grep reload "$TENKD_LOG")"
grep 'reload: .*does not match' "$TENKD_LOG" | sed 's/.*reload/reload/'
served rsa

for r in long churn; do
	[ "$r" = long ] && p=$LONG || p=$CHURN
	wait_exit 60 "$p"
	[ "$STATUS" -eq 0 ] || fail "$r: $(cat "$T/$r.out")"
	load_has "$r" errors.total -eq 0 "errors"
	load_has "$r" connections.failed -eq 0 "connects failed"
	load_has "$r" connections.closed_early -eq 0 "sessions lost"
	echo "$r: $(grep -E '^(  tls|errors):' "$T/$r.out" | tr '\n' ' ')"
done
load_has long connections.open_at_end -eq 100 "sessions not all open"
[ "$(json_get "$T/churn.json" connections.reconnects)" -gt 50 ] ||
    fail "churn: too few connections: $(cat "$T/churn.out")"
# A new generation opens the old one's tickets: after the ramp's full
# handshakes, none in the window, across the reload.
load_has churn tls.window_new -eq 0 "full handshakes in the window"
pass
