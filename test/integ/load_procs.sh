#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# More connections than one process's RLIMIT_NOFILE: tenkload forks
# enough processes, every connection is established, and the merged report
# says how many processes held them.  select is no reason to fork: its fd
# sets grow past FD_SETSIZE.
# backends: none
# timeout: 60
# ulimit -H, -S and -n are not POSIX; dash, bash and busybox sh have them.
# shellcheck disable=SC3045
. "$(dirname "$0")/lib.sh"

[ "$(nofile)" -ge 3200 ] || skip "ulimit -n $(nofile): faultsrv needs 3200"
faultsrv_start

# The client alone runs under a limit of 1024 (hard too, so that it
# cannot raise it back) and asks for 1500 connections.
(
	ulimit -S -n 1024 && ulimit -H -n 1024 || exit 99
	exec timeout 40 "$TENKLOAD" -M idle -c 1500 -t 2 --connect-rate 5000 \
	    -d 1s --json "$T/r.json" "$FADDR"
) >"$T/out" 2>"$T/err"
st=$?
[ $st -ne 99 ] || skip "cannot lower ulimit -n here"
[ $st -eq 0 ] || fail "exit $st: $(cat "$T/out" "$T/err")"
grep -q 'using [0-9]* processes' "$T/err" || fail "no line about processes"
p=$(json_get "$T/r.json" header.procs)
[ "$p" -ge 2 ] || fail "only $p process(es)"
for k in requested attempted established open_at_end; do
	n=$(json_get "$T/r.json" connections.$k)
	[ "$n" -eq 1500 ] || fail "connections.$k is $n, not 1500"
done
[ "$(json_get "$T/r.json" errors.total)" -eq 0 ] || fail "errors"
n=$(json_get "$T/r.json" latency.count)
grep -q "requested 1500, established 1500" "$T/out" || fail "text report"

# Forced into one process, the shortfall is reported, never silent.
(
	ulimit -S -n 1024 && ulimit -H -n 1024 || exit 99
	exec timeout 40 "$TENKLOAD" -M idle -c 1500 -t 2 --procs 1 \
	    --connect-rate 5000 -d 1s --json "$T/s.json" "$FADDR"
) >"$T/out" 2>"$T/err"
st=$?
[ $st -eq 1 ] || fail "one process: exit $st, want 1"
e=$(json_get "$T/s.json" connections.established)
f=$(json_get "$T/s.json" errors.fdlimit)
[ "$e" -lt 1500 ] || fail "one process held 1500 under 1024 fds?"
[ $((e + f)) -eq 1500 ] || fail "established $e + fdlimit $f != 1500"
grep -q 'SHORTFALL' "$T/out" || fail "no SHORTFALL line"

# select watches fds past FD_SETSIZE: 1200 connections on it fit in the
# one process the open-file limit allows.
if "$TENKLOAD" --backend list | grep -q '^select$'; then
	timeout 40 "$TENKLOAD" -q --backend select -M idle -c 1200 -t 2 \
	    --connect-rate 5000 -d 1s --json "$T/sel.json" "$FADDR" \
	    >"$T/out" 2>"$T/err" || fail "select: $(cat "$T/out" "$T/err")"
	[ "$(json_get "$T/sel.json" header.procs)" -eq 1 ] ||
	    fail "select: more than one process"
	[ "$(json_get "$T/sel.json" connections.established)" -eq 1200 ] ||
	    fail "select: not all 1200 established"
fi
pass
