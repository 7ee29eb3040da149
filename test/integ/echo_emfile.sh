#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# EMFILE: under ulimit -n 64 and --max-conns 0 (no cap but the fd limit),
# tenkd runs out of descriptors; it pauses accepting with a back-off
# instead of spinning (its CPU time grows by less than 5% of the wall
# time while paused), the extra clients wait in the backlog, and they are
# served once the first clients leave.
# timeout: 60
. "$(dirname "$0")/lib.sh"

tenkd_start_nofile 64 echo --threads 1 --max-conns 0

"$TKCLI" hold -c 40 "$ADDR" >"$T/h1" 2>&1 &
h1=$!
track "$h1"
wait_line 10 "$T/h1" '^ready 40' || fail "first 40: $(cat "$T/h1")"

# 30 more do not fit in 64 descriptors.
"$TKCLI" hold -c 30 -T 50 "$ADDR" >"$T/h2" 2>&1 &
h2=$!
track "$h2"
wait_line 10 "$TENKD_LOG" 'pausing accepts' ||
    fail "no EMFILE pause in the log"

c0=$(cpu_ticks "$TENKD_PID")
sleep 2
c1=$(cpu_ticks "$TENKD_PID")
hz=$(getconf CLK_TCK)
# Less than 5% of 2 s.
[ $(( (c1 - c0) * 100 )) -lt $(( hz * 2 * 5 )) ] ||
    fail "tenkd used $(( c1 - c0 )) ticks of CPU in 2 s while paused"
grep -q '^ready' "$T/h2" && fail "the second group was served while full"
alive "$TENKD_PID" || fail "tenkd died"

# The first group leaves; the second gets served.
kill -TERM "$h1"
wait_line 20 "$T/h2" '^ready 30' || fail "second 30 not served: $(cat "$T/h2")"
kill -TERM "$h2"
wait_exit 10 "$h2"
"$TKCLI" echo -c 10 -b 1-100k "$ADDR" || fail "echo afterwards"
pass
