#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A server that starves some connections while it serves the others: the
# latency of the messages that complete looks fine, so tenkload counts
# the active connections with no message in the measured window as
# unserved, in the text report and the JSON, summed over its threads.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

# run NAME UNSERVED FAULTSRV-ARGS...: tenkload -c 8 on 2 threads against
# faultsrv, allowing UNSERVED connections without a reply
run() {
	_run=$1
	_mu=$2
	shift 2
	faultsrv_start "$@"
	timeout 30 "$TENKLOAD" -c 8 -t 2 -d 2s --warmup 500ms \
	    --max-unserved "$_mu" --json "$T/$_run.json" "$FADDR" \
	    >"$T/$_run.out" 2>"$T/$_run.err"
	_rc=$?
	faultsrv_stop
	cat "$T/$_run.out"
	[ "$_rc" -eq 0 ] || fail "$_run: tenkload exited $_rc: $(cat "$T/$_run.err")"
}

run all 0
[ "$(json_get "$T/all.json" connections.unserved)" = 0 ] ||
    fail "every connection served, yet unserved is not 0"
grep -q UNSERVED "$T/all.out" && fail "UNSERVED printed with none unserved"

# every 4th connection accepted is never read: 2 of 8
run starved 2 --starve 4
u=$(json_get "$T/starved.json" connections.unserved)
[ "$u" = 2 ] || fail "unserved $u, want 2"
m=$(json_get "$T/starved.json" traffic.msgs)
[ "$m" -gt 100 ] || fail "the other 6 connections made only $m messages"
[ "$(json_get "$T/starved.json" connections.open_at_end)" = 8 ] ||
    fail "a starved connection was closed"
grep -q '^  UNSERVED: 2 active connections' "$T/starved.out" ||
    fail "no UNSERVED line in the text report"

# tenkload merge adds the counts up, and judges them by its own
# --max-unserved
"$TENKLOAD" merge --max-unserved 2 "$T/starved.json" "$T/starved.json" \
    >"$T/merge2.out" 2>&1
[ $? -eq 1 ] || fail "merge: 4 unserved passed --max-unserved 2"
"$TENKLOAD" merge --max-unserved 4 --json "$T/m.json" "$T/starved.json" \
    "$T/starved.json" >/dev/null 2>"$T/merge.err" ||
    fail "merge: $(cat "$T/merge.err")"
[ "$(json_get "$T/m.json" connections.unserved)" = 4 ] ||
    fail "merged unserved $(json_get "$T/m.json" connections.unserved), want 4"
pass
