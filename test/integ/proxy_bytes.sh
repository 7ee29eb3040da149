#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Byte-exact through the proxy: random sizes and write sizes, a bulk
# half-closed transfer, and a small --buffer-limit so that backpressure
# runs in both directions.  The access log has one line per session,
# the statistics count the sessions on the upstream and the sockets
# come back to zero.
# timeout: 90
. "$(dirname "$0")/lib.sh"

upstream_start --threads 1
tenkd_start proxy --threads 2 -u "$UPADDR" --access-log "$T/acc"
"$TKCLI" echo -c 50 -b 1-1m -w 1-64k "$ADDR" || fail "random sizes"
"$TKCLI" echo -c 10 -r 5 -b 1-256k "$ADDR" || fail "rounds"
"$TKCLI" echo -H -c 8 -b 1m "$ADDR" || fail "half-close, 1 MiB"
_lines() {
	[ "$(wc -l <"$1")" -ge "$2" ]
}
wait_for 10 _lines "$T/acc" 68 ||
    fail "access log: $(wc -l <"$T/acc") lines"
n=$(grep -c " proxy $UPADDR .* tries=1 client/eof eof\$" "$T/acc")
[ "$n" -eq 68 ] || fail "access log: $n normal lines: $(head -3 "$T/acc")"
s=$(tenkd_stats) || exit 1
[ "$(stat_val "$s" eof)" -eq 68 ] || fail "closes: $s"
[ "$(ups_stat "$UPADDR" sessions)" -eq 68 ] || fail "upstream sessions"
[ "$(ups_stat "$UPADDR" active)" -eq 0 ] || fail "upstream active"
grep 'stats sockets' "$TENKD_STATS" | tail -n 1 | grep -q 'open 0 ' ||
    fail "sockets left open: $(grep 'stats sockets' "$TENKD_STATS")"

tenkd_start proxy --threads 1 -u "$UPADDR" --buffer-limit 1k
"$TKCLI" echo -c 20 -b 1-2m -w 16k-64k "$ADDR" || fail "1k buffer limit"
"$TKCLI" echo -H -c 4 -b 2m "$ADDR" || fail "half-close, 1k limit"
pass
