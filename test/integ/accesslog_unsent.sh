#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The access log's out= is what the kernel took, never bytes whose send
# failed: a client that resets before tenkd echoes (echo), or before the
# upstream's answer comes back (proxy), gets out= no more than it read
# (rstout.py), with in= all tenkd read.  Before, out= was what was read
# less what was still queued, and a send that failed queued nothing: on
# readiness backends out= counted the reset client's 1,000 bytes.  A
# clean run logs out= equal to in= on every line.  The reset clients
# again over TLS, whose failed record writes keep their plaintext queued.
# timeout: 90
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c '' 2>/dev/null || skip "no python3"
command -v ss >/dev/null 2>&1 || skip "no ss (iproute2)"
RSTOUT=$TK_SRC/test/integ/rstout.py

_lines() {
	[ -f "$1" ] && [ "$(grep -c . "$1")" -ge "$2" ]
}
# clean LOG N: N lines, each with out= equal to in=.
clean() {
	wait_for 10 _lines "$1" "$2" || fail "access log: $(cat "$1")"
	awk '{
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^in=/)
				in_ = substr($i, 4)
			if ($i ~ /^out=/)
				out = substr($i, 5)
		}
		if (in_ == "" || in_ != out)
			bad++
	} END { exit bad > 0 }' "$1" || fail "in= and out= differ: $(cat "$1")"
}
# unsent LOG N GOT: line N is the reset client's: in=1001 (its byte,
# then 1,000), out= at most GOT ("received K", what it read), reset.
unsent() {
	wait_for 10 _lines "$1" "$2" || fail "no line for the reset client"
	_l=$(sed -n "${2}p" "$1")
	_k=${3#received }
	_in=$(printf '%s\n' "$_l" | sed -n 's/.* in=\([0-9]*\) .*/\1/p')
	_out=$(printf '%s\n' "$_l" | sed -n 's/.* out=\([0-9]*\) .*/\1/p')
	echo "$_l"
	[ "$_in" = 1001 ] || fail "in= not 1001: $_l"
	[ -n "$_out" ] || fail "no out= in: $_l"
	[ "$_out" -le "$_k" ] ||
	    fail "out= more than the client could have read ($_k): $_l"
	case $_l in
	*reset*)	;;
	*)		fail "not a reset: $_l" ;;
	esac
}

log=$T/echo.log
tenkd_start echo --threads 1 --access-log "$log"
"$TKCLI" echo -c 5 -b 1-64k "$ADDR" || fail "echo"
clean "$log" 5
got=$("$PY" "$RSTOUT" "$ADDR" "$TENKD_PID") || fail "echo: rstout"
unsent "$log" 6 "$got"

log=$T/proxy.log
upstream_start --threads 1
tenkd_start proxy --threads 1 -u "$UPADDR" --access-log "$log"
"$TKCLI" echo -c 5 -b 1-64k "$ADDR" || fail "echo through the proxy"
clean "$log" 5
got=$("$PY" "$RSTOUT" "$ADDR" "$UP_PID" "${UPADDR##*:}") ||
    fail "proxy: rstout"
unsent "$log" 6 "$got"

# The same over TLS (tenkd --tls-cert): a record write that fails
# leaves its plaintext queued too.
. "$(dirname "$0")/lib_tls.sh"
"$TOOLS/tlspeer" >/dev/null 2>&1
[ $? -eq 77 ] && { echo "no TLS: the rest skipped"; pass; }
tls_certs
log=$T/echo_tls.log
tenkd_start echo --threads 1 --access-log "$log" --tls-cert "$EC_CERT" \
    --tls-key "$EC_KEY"
got=$("$PY" "$RSTOUT" --tls "$ADDR" "$TENKD_PID") || fail "echo: rstout"
unsent "$log" 1 "$got"
log=$T/proxy_tls.log
tenkd_start proxy --threads 1 -u "$UPADDR" --access-log "$log" \
    --tls-cert "$EC_CERT" --tls-key "$EC_KEY"
got=$("$PY" "$RSTOUT" --tls "$ADDR" "$UP_PID" "${UPADDR##*:}") ||
    fail "proxy: rstout"
unsent "$log" 1 "$got"
pass
