#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkd echo over TLS (--tls-cert, two pairs): tlspeer (OpenSSL on its
# own) gets a megabyte back byte-exact, in 16 KiB records and in 7-byte
# ones, and records cut into 3-byte pieces and into single bytes; its
# close_notify, or its FIN alone, ends the echo, which ends with
# close_notify of its own; openssl s_client is served the certificate
# of the name it asks for; kTLS probed and said in one line; tenkload's
# verified pattern over TLS, and --mode connect resuming sessions from
# tickets, counted in /metrics.
# timeout: 240
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_tls.sh"

need_tls
tls_certs
tenkd_start echo --threads 2 --tls-cert "$EC_CERT" --tls-key "$EC_KEY" \
    --tls-cert "$RSA_CERT" --tls-key "$RSA_KEY"
grep -q 'TLS: 2 certificates, TLS 1.2 and 1.3' "$TENKD_LOG" ||
    fail "no TLS start-up line"
# kTLS probed at start, said in that line: on, or why not (this
# machine's kernel has no CONFIG_TLS) and that records stay in user
# space.
grep -Eq 'kTLS: (on|.+: records in user space)$' "$TENKD_LOG" ||
    fail "no kTLS line: $(grep 'TLS: ' "$TENKD_LOG")"
grep 'kTLS: ' "$TENKD_LOG"

tlspeer_got big 1048576 -b 1048576 -a "$EC_CERT" -n a.test "$ADDR"
case $TPC_OUT in *"end close_notify"*) ;; *) fail "big: $TPC_OUT" ;; esac
tlspeer_got small 100000 -b 100000 -r 7 "$ADDR"
tlspeer_got split 3000 -b 3000 -r 100 -s 3 "$ADDR"
tlspeer_got bytes 200 -b 200 -r 100 -s 1 "$ADDR"
tlspeer_got fin 50000 -b 50000 -F "$ADDR"
case $TPC_OUT in *"end close_notify"*) ;; *) fail "fin: $TPC_OUT" ;; esac

# The name asked for chooses the certificate.
for n in a.test x.b.test; do
	echo | timeout 10 openssl s_client -connect "$ADDR" -servername "$n" \
	    >"$T/sc.$n" 2>&1
	grep -E -q "subject=.*CN ?= ?${n#x.}" "$T/sc.$n" ||
	    fail "s_client $n: $(grep -E 'subject|error' "$T/sc.$n")"
	echo "s_client $n: $(grep -E 'subject=' "$T/sc.$n")"
done

# shellcheck disable=SC2046
load_run load $(be_opt) -c 8 --tls --tls-ca "$EC_CERT" --tls-sni a.test \
    "$ADDR"
load_has load traffic.msgs -gt 0 "no messages"
# shellcheck disable=SC2046
load_run resume $(be_opt) -c 4 -M connect --tls --tls-resume "$ADDR"
load_has resume tls.window_resumed -gt 0 "no resumption"
r=$(metric tenkd_tls_resumed_total)
[ "$r" -gt 0 ] || fail "tenkd counts no resumed handshake"
echo "resumed: $(grep '^  tls:' "$T/resume.out"); tenkd: $r"
alive "$TENKD_PID" || fail "tenkd died"
pass
