#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --max-conns counts both sockets of a session: with 10, five sessions
# are open and the sixth client waits in the backlog until one leaves,
# the cap logged and counted.
# After churn (normal closes and resets) the count is back to zero; the
# drain line counts sessions.
# timeout: 90
. "$(dirname "$0")/lib.sh"

upstream_start --threads 1
tenkd_start proxy --threads 2 -u "$UPADDR" --max-conns 10
cap_full 5 -d 60
s=$(tenkd_stats) || exit 1
[ "$(stat_val "$s" accepted)" -le 6 ] || fail "accepted beyond the cap: $s"
grep -q 'reached --max-conns 10: not accepting' "$TENKD_LOG" ||
    fail "no cap line: $(cat "$TENKD_LOG")"
c=$(grep 'stats caps:' "$TENKD_STATS" | tail -n 1)
[ "$(stat_val "$c" max-conns)" -ge 1 ] || fail "cap not counted: $c"
kill -TERM "$HOLD_PID"
wait_exit 20 "$EXTRA_PID"
[ "$STATUS" -eq 0 ] || fail "waiting clients failed: $(cat "$T/e")"

# Churn: sessions that end normally, and resets mid-transfer (tkcli
# echo keeps its connections to the end of the round: at most five).
i=0
while [ "$i" -lt 5 ]; do
	"$TKCLI" echo -c 5 -b 1-64k -T 40 "$ADDR" || fail "churn round $i"
	"$TKCLI" rst -c 4 -b 100000 "$ADDR" >/dev/null 2>&1
	i=$((i + 1))
done
_zero() {
	_s=$(tenkd_stats) || exit 1
	[ "$(stat_val "$_s" active)" -eq 0 ] &&
	    grep 'stats sockets' "$TENKD_STATS" | tail -n 1 | grep -q 'open 0 '
}
wait_for 20 _zero || fail "not back to zero: $(grep 'stats' "$TENKD_STATS" |
    tail -n 4)"
[ "$(ups_stat "$UPADDR" active)" -eq 0 ] || fail "upstream active"

# Messages count sessions, not sockets: three open drain as three.
"$TKCLI" hold -c 3 -d 60 "$ADDR" >"$T/h3" 2>&1 &
h3=$!
track "$h3"
wait_line 20 "$T/h3" '^ready 3' || fail "hold: $(cat "$T/h3")"
_three() {
	[ "$(stat_val "$(tenkd_stats)" active)" -eq 3 ]
}
wait_for 20 _three || fail "three sessions not open"
kill -TERM "$TENKD_PID"
wait_line 10 "$TENKD_LOG" 'draining 3 sessions for' ||
    fail "drain line: $(grep 'SIGTERM' "$TENKD_LOG")"
kill -TERM "$h3"
wait_exit 20 "$TENKD_PID"
[ "$STATUS" -eq 0 ] || fail "exit status $STATUS"
pass
