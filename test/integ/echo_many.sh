#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# 2,000 concurrent connections, all verified in two rounds with all of
# them open.  Descriptors pass FD_SETSIZE (1024) on every backend: select
# too serves them (its fd sets are sized at run time), with no FD_SETSIZE
# warning and no connection closed for an error.
# timeout: 60
. "$(dirname "$0")/lib.sh"

[ "$(nofile)" -ge 2200 ] || skip "ulimit -n $(nofile) is below 2200"
tenkd_start echo --threads 2

"$TKCLI" echo -c 2000 -r 2 -b 1-2k "$ADDR" >"$T/out" ||
    fail "2000 connections on $TK_BACKEND: $(cat "$T/out")"
! grep -q 'FD_SETSIZE' "$TENKD_LOG" || fail "FD_SETSIZE warning in the log"
s=$(tenkd_stats) || exit 1
[ "$(stat_val "$s" error)" -eq 0 ] || fail "closed for an error: $s"
# Still serving afterwards.
"$TKCLI" echo -c 10 -b 1-64k "$ADDR" || fail "echo after the load"
alive "$TENKD_PID" || fail "tenkd died"
pass
