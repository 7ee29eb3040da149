#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --send-proxy v1 and v2: the test upstream parses the PROXY protocol
# header (client address and port, and the proxy address the client
# connected to), then the bytes flow as usual.  Over IPv4, and over IPv6
# when the machine has ::1.
# timeout: 60
. "$(dirname "$0")/lib.sh"

_lines() {
	[ "$(wc -l <"$1")" -ge "$2" ]
}
for v in v1 v2; do
	pxtool_start upstream -p
	tenkd_start proxy --threads 1 -u "$PXTADDR" --send-proxy "$v"
	out=$("$PXTOOL" client -n 5000 -T 10 "$ADDR") || fail "client: $out"
	echo "$out" | grep -q '^got 5000 bytes' || fail "$v echo: $out"
	"$TKCLI" echo -c 10 -b 1-64k "$ADDR" || fail "$v echo"
	wait_for 10 _lines "$PXT_OUT" 11 || fail "headers: $(cat "$PXT_OUT")"
	grep -v "^PROXY $v TCP4 127\.0\.0\.1 127\.0\.0\.1 [0-9]* $PORT\$" \
	    "$PXT_OUT" && fail "$v: bad header line"
	echo "$v: $(head -n 1 "$PXT_OUT")"
done

grep -q '^0*1 ' /proc/net/if_inet6 2>/dev/null || pass
for v in v1 v2; do
	pxtool_start upstream -p
	tenkd_start proxy --threads 1 -u "$PXTADDR" --send-proxy "$v" \
	    --listen '[::1]:0'
	a6=$(sed -n 's/.*listening on \(\[::1\]:[0-9]*\).*/\1/p' \
	    "$TENKD_LOG" | head -n 1)
	[ -n "$a6" ] || fail "no [::1] listener: $(cat "$TENKD_LOG")"
	px_got "$v over IPv6" 5000 -n 5000 -T 10 "$a6"
	wait_for 10 _lines "$PXT_OUT" 1 || fail "header: $(cat "$PXT_OUT")"
	grep -v "^PROXY $v TCP6 ::1 ::1 [0-9]* ${a6##*:}\$" "$PXT_OUT" &&
	    fail "$v: bad IPv6 header line"
	echo "$v: $(head -n 1 "$PXT_OUT")"
done
pass
