#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# 1,100 concurrent connections, all verified in two rounds with all of
# them open.  On select, descriptors at or above FD_SETSIZE (1024) cannot
# be watched: tenkd closes those connections with a rate-limited warning,
# serves the rest, and keeps serving.
# timeout: 60
. "$(dirname "$0")/lib.sh"

[ "$(nofile)" -ge 1200 ] || skip "ulimit -n $(nofile) is below 1200"
tenkd_start echo --threads 2

if [ "$TK_BACKEND" = select ]; then
	"$TKCLI" echo -c 1100 -r 2 -b 1-2k -a 900 "$ADDR" >"$T/out" ||
	    fail "1100 connections on select: $(cat "$T/out")"
	grep -q 'FD_SETSIZE' "$TENKD_LOG" ||
	    fail "no FD_SETSIZE warning in the log"
	# At most one a second per thread, not one per refused connection.
	n=$(grep -c 'FD_SETSIZE' "$TENKD_LOG")
	[ "$n" -le 10 ] || fail "$n FD_SETSIZE warnings: not rate-limited"
	s=$(tenkd_stats) || exit 1
	[ "$(stat_val "$s" fdlimit)" -gt 0 ] || fail "no fdlimit close: $s"
else
	"$TKCLI" echo -c 1100 -r 2 -b 1-2k "$ADDR" ||
	    fail "1100 connections"
fi
# Still serving afterwards.
"$TKCLI" echo -c 10 -b 1-64k "$ADDR" || fail "echo after the load"
alive "$TENKD_PID" || fail "tenkd died"
pass
