#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --idle-timeout: a session with no byte either way is closed, logged as
# timeout/data idle; a session that keeps talking is not.  SIGTERM lets
# open sessions finish, then tenkd exits 0.
# timeout: 60
. "$(dirname "$0")/lib.sh"

upstream_start --threads 1
tenkd_start proxy --threads 1 -u "$UPADDR" --idle-timeout 3s \
    --access-log "$T/acc" --metrics 127.0.0.1:0
"$TKCLI" hold -e -c 3 -d 20 "$ADDR" >"$T/h" 2>&1 || fail "hold: $(cat "$T/h")"
access_line "$T/acc" 'tries=1 timeout/data idle'
"$TKCLI" echo -c 3 -r 5 -i 0.5 -b 1-1k "$ADDR" || fail "slow talkers closed"

"$TKCLI" echo -c 5 -r 20 -i 0.1 -b 1-1k "$ADDR" >"$T/e" 2>&1 &
e=$!
track "$e"
# The drain begins with the five sessions open.
_five() {
	[ "$(stat_val "$(tenkd_stats)" active)" = 5 ]
}
wait_for 20 _five || fail "not 5 sessions: $(tenkd_stats)"
kill -TERM "$TENKD_PID"
wait_exit 20 "$e"
[ "$STATUS" -eq 0 ] || fail "sessions cut by the drain: $(cat "$T/e")"
wait_exit 20 "$TENKD_PID"
[ "$STATUS" -eq 0 ] || fail "exit status $STATUS"
pass
