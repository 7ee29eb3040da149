#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The end of a drain: held connections are force-closed at
# --drain-timeout and tenkd exits 0; a second SIGTERM (or SIGINT) closes
# them at once, and says how many.
# timeout: 60
. "$(dirname "$0")/lib.sh"

# Deadline.
tenkd_start echo --threads 2 --drain-timeout 1s
"$TKCLI" hold -c 20 "$ADDR" >"$T/h1" 2>&1 &
track $!
wait_line 10 "$T/h1" '^ready 20' || fail "hold: $(cat "$T/h1")"
t0=$(date +%s%N)
kill -TERM "$TENKD_PID"
wait_exit 10 "$TENKD_PID"
t1=$(date +%s%N)
[ "$STATUS" -eq 0 ] || fail "exit status $STATUS after the drain deadline"
ms=$(( (t1 - t0) / 1000000 ))
[ "$ms" -ge 900 ] || fail "exited after $ms ms, before the 1 s deadline"
grep -q 'drain timeout: closing' "$TENKD_LOG" || fail "no drain timeout line"
wait_line 5 "$T/h1" 'closed by server' || fail "holder: $(cat "$T/h1")"

# two_signals THREADS CONNS: tenkd holding CONNS connections outlives a
# first signal (SIGINT) and exits 0 at the second (SIGTERM).
two_signals() {
	tenkd_start echo --threads "$1" --drain-timeout 60s
	"$TKCLI" hold -c "$2" "$ADDR" >"$T/h2" 2>&1 &
	track $!
	wait_line 10 "$T/h2" "^ready $2" || fail "hold: $(cat "$T/h2")"
	kill -INT "$TENKD_PID"
	sleep 0.5
	alive "$TENKD_PID" ||
	    fail "exited at the first signal with clients open"
	kill -TERM "$TENKD_PID"
	wait_exit 5 "$TENKD_PID"
	[ "$STATUS" -eq 0 ] ||
	    fail "exit status $STATUS after a second signal"
}

# Second signal.
two_signals 2 20

# One connection forced closed: the count in the singular.
two_signals 1 1
grep -q 'thread 0: closing 1 connection$' "$TENKD_LOG" ||
    fail "no 'closing 1 connection' line: $(cat "$TENKD_LOG")"

# Nothing open: SIGTERM exits at once.
tenkd_start echo --threads 2
kill -TERM "$TENKD_PID"
wait_exit 5 "$TENKD_PID"
[ "$STATUS" -eq 0 ] || fail "exit status $STATUS when idle"
pass
