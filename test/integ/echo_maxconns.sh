#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --max-conns N: connection N+1 waits in the kernel backlog (it is not
# accepted and closed), and is served as soon as another one leaves.
# Reaching the cap is logged (rate-limited) and counted on "stats caps".
# timeout: 60
. "$(dirname "$0")/lib.sh"

tenkd_start echo --threads 2 --max-conns 5

cap_full 5
s=$(tenkd_stats) || exit 1
[ "$(stat_val "$s" accepted)" -eq 5 ] || fail "accepted beyond the cap: $s"
[ "$(stat_val "$s" active)" -eq 5 ] || fail "active: $s"
grep -q 'reached --max-conns 5: not accepting' "$TENKD_LOG" ||
    fail "no cap line: $(cat "$TENKD_LOG")"
c=$(grep 'stats caps:' "$TENKD_STATS" | tail -n 1)
[ "$(stat_val "$c" max-conns)" -ge 1 ] || fail "cap not counted: $c"
[ "$(stat_val "$c" ip-limit)" -eq 0 ] || fail "ip-limit counted: $c"

# One group leaves: the waiting ones are served, none was dropped.
kill -TERM "$HOLD_PID"
wait_exit 20 "$EXTRA_PID"
[ "$STATUS" -eq 0 ] || fail "waiting clients failed: $(cat "$T/e")"
s=$(tenkd_stats) || exit 1
[ "$(stat_val "$s" accepted)" -eq 7 ] || fail "accepted: $s"
[ "$(stat_val "$s" eof)" -eq 7 ] || fail "every close should be eof: $s"
pass
