#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Clients that reset their connection (SO_LINGER 0) in the middle of a
# transfer: tenkd closes them quietly (counted as "reset", not logged),
# and goes on serving.
# timeout: 60
. "$(dirname "$0")/lib.sh"

_all_closed() {
	[ "$(stat_val "$(tenkd_stats)" active)" -eq 0 ]
}

tenkd_start echo --threads 2 --buffer-limit 16k
"$TKCLI" rst -c 50 -b 512k "$ADDR" || fail "rst client"
"$TKCLI" echo -c 10 -b 1-1m "$ADDR" || fail "echo after resets"
wait_for 5 _all_closed || fail "connections left open"
s=$(tenkd_stats) || exit 1
[ "$(stat_val "$s" reset)" -eq 50 ] || fail "resets: $s"
[ "$(stat_val "$s" eof)" -eq 10 ] || fail "eofs: $s"
if grep -v 'stats' "$TENKD_LOG" | grep -qi 'reset\|broken pipe'; then
	fail "resets were logged: they should close quietly"
fi
alive "$TENKD_PID" || fail "tenkd died"
pass
