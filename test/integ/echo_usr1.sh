#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# 10,000 SIGUSR1 (reopen the logs) during load: tenkd survives, the load
# goes on verified to the end, and the reopens are logged (coalesced,
# not one per signal); the statistics come from /stats.
# timeout: 90
. "$(dirname "$0")/lib.sh"

_loaded() {
	[ "$(stat_val "$(tenkd_stats)" active)" -eq 100 ]
}

tenkd_start echo --threads 2
"$TKCLI" echo -c 100 -r 1000000 -b 1-4k -T 120 "$ADDR" >"$T/out" 2>&1 &
cl=$!
track "$cl"
wait_for 10 _loaded || fail "load did not start: $(cat "$T/out")"
i=0
while [ "$i" -lt 10000 ]; do
	kill -USR1 "$TENKD_PID" || fail "tenkd gone after $i signals"
	i=$((i + 1))
done
alive "$TENKD_PID" || fail "tenkd died"
alive "$cl" || fail "the load ended early: $(cat "$T/out")"

# The client stops after its current round; everything was verified.
kill -TERM "$cl"
wait_exit 20 "$cl"
[ "$STATUS" -eq 0 ] || fail "load failed: $(cat "$T/out")"
grep -q '^echo: 100 connections' "$T/out" || fail "load: $(cat "$T/out")"
"$TKCLI" echo -c 20 -b 1-256k "$ADDR" || fail "echo after the signals"
s=$(tenkd_stats) || exit 1
[ "$(stat_val "$s" accepted)" -eq 120 ] || fail "stats: $s"
n=$(grep -c 'SIGUSR1: logs reopened' "$TENKD_LOG")
[ "$n" -ge 1 ] || fail "no reopen logged"
echo "$n reopens for 10000 signals; $(cat "$T/out")"
pass
