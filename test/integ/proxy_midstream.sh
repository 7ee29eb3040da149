#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The upstream is killed in the middle of the sessions: every client is
# closed (its FIN passed on), none is reconnected anywhere (no retry
# once bytes flowed), and the proxy goes on: a new client, with the
# upstream gone, is closed promptly.
# timeout: 60
. "$(dirname "$0")/lib.sh"

upstream_start --threads 1
tenkd_start proxy --threads 2 -u "$UPADDR" --access-log "$T/acc"
"$TKCLI" hold -e -c 6 -d 60 "$ADDR" >"$T/h" 2>&1 &
h=$!
track "$h"
wait_line 20 "$T/h" '^ready 6' || fail "hold: $(cat "$T/h")"
kill -KILL "$UP_PID"
wait_exit 20 "$h"
[ "$STATUS" -eq 0 ] || fail "clients not closed: $(cat "$T/h")"

_lines() {
	[ "$(grep -c "$2" "$1")" -ge "$3" ]
}
wait_for 10 _lines "$T/acc" " proxy $UPADDR .* tries=1 upstream/" 6 ||
    fail "access log: $(cat "$T/acc")"
s=$(tenkd_stats) || exit 1
[ "$(ups_stat "$UPADDR" sessions)" -eq 6 ] || fail "sessions: $s"
[ "$(ups_stat "$UPADDR" fails)" -eq 0 ] || fail "reconnected after the kill"
[ "$(stat_val "$s" active)" -eq 0 ] || fail "active: $s"

px_got "after the kill" 0 -n 10 -T 10 "$ADDR"
alive "$TENKD_PID" || fail "tenkd died"
pass
