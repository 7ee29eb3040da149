#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --max-conns N: connection N+1 waits in the kernel backlog (it is not
# accepted and closed), and is served as soon as another one leaves.
# timeout: 60
. "$(dirname "$0")/lib.sh"

tenkd_start echo --threads 2 --max-conns 5

cap_full 5
s=$(tenkd_stats) || exit 1
[ "$(stat_val "$s" accepted)" -eq 5 ] || fail "accepted beyond the cap: $s"
[ "$(stat_val "$s" active)" -eq 5 ] || fail "active: $s"

# One group leaves: the waiting ones are served, none was dropped.
kill -TERM "$HOLD_PID"
wait_exit 20 "$EXTRA_PID"
[ "$STATUS" -eq 0 ] || fail "waiting clients failed: $(cat "$T/e")"
s=$(tenkd_stats) || exit 1
[ "$(stat_val "$s" accepted)" -eq 7 ] || fail "accepted: $s"
[ "$(stat_val "$s" eof)" -eq 7 ] || fail "every close should be eof: $s"
pass
