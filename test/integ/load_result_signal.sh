#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# SIGTERM or SIGINT in the middle of a run: the report is still printed
# and written, says "interrupted after X s" and by which signal, the
# JSON carries the signal and when, and the exit status is 128 + the
# signal.  In one process and over several (the parent forwards it).
# backends: none
# timeout: 90
. "$(dirname "$0")/lib.sh"

faultsrv_start

_running() {
	grep -q 'msgs/s' "$1" 2>/dev/null
}

# interrupt NAME SIGNAL WANT ARGS...: start a 30 s run, wait for its
# first progress line, send SIGNAL, and check what it leaves.
interrupt() {
	in_n=$1
	in_sig=$2
	in_want=$3
	shift 3
	"$TENKLOAD" -c 4 -t 2 -d 30s --json "$T/$in_n.json" "$@" "$FADDR" \
	    >"$T/$in_n.out" 2>"$T/$in_n.err" &
	in_pid=$!
	track "$in_pid"
	wait_for 20 _running "$T/$in_n.err" ||
	    fail "$in_n: no progress line: $(cat "$T/$in_n.err")"
	kill "-$in_sig" "$in_pid"
	wait_exit 20 "$in_pid"
	[ "$STATUS" -eq "$in_want" ] ||
	    fail "$in_n: exit $STATUS, wanted $in_want: $(cat "$T/$in_n.err")"
	grep -q "^  interrupted after [0-9.]* s by SIG$in_sig:" "$T/$in_n.out" ||
	    fail "$in_n: the text report is not marked"
	grep -q "^result: interrupted after [0-9.]* s by SIG$in_sig; ok: " \
	    "$T/$in_n.out" || fail "$in_n: result: $(tail -n 1 "$T/$in_n.out")"
	s=$(json_get "$T/$in_n.json" time.interrupted) ||
	    fail "$in_n: no time.interrupted in the JSON"
	[ "$s" -eq "$(kill -l "$in_sig" 2>/dev/null || echo 0)" ] ||
	    [ "$s" -eq $((in_want - 128)) ] ||
	    fail "$in_n: time.interrupted $s"
	at=$(json_get "$T/$in_n.json" time.interrupted_at_us)
	st=$(json_get "$T/$in_n.json" time.start_us)
	en=$(json_get "$T/$in_n.json" time.end_us)
	awk_true "$at > $st && $at <= $en" ||
	    fail "$in_n: interrupted_at_us $at outside $st..$en"
	[ "$(json_get "$T/$in_n.json" traffic.msgs)" -gt 0 ] ||
	    fail "$in_n: no messages before the signal"
}

interrupt term TERM 143
interrupt int INT 130
interrupt procs TERM 143 --procs 2
[ "$(json_get "$T/procs.json" header.procs)" = 2 ] ||
    fail "procs: not two processes"
pass
