#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --workers 2: one "listening on" line, two worker processes sharing the
# port.  A worker killed with SIGKILL is restarted by the master while
# the other keeps serving; SIGUSR1 (reopen) reaches the workers; SIGTERM stops
# them all and the master exits 0.
# backends: none
# timeout: 90
. "$(dirname "$0")/lib.sh"

kids() {
	cat "/proc/$TENKD_PID/task/$TENKD_PID/children" 2>/dev/null
}
_nkids() {
	[ "$(kids | wc -w)" -eq "$1" ]
}

upstream_start --threads 1
tenkd_start proxy --workers 2 --threads 2 -u "$UPADDR" --pidfile "$T/pid"
[ "$(grep -c 'listening on' "$TENKD_LOG")" -eq 1 ] ||
    fail "not one 'listening on' line"
wait_for 10 _nkids 2 || fail "workers: $(kids)"
[ "$(cat "$T/pid")" -eq "$TENKD_PID" ] || fail "pidfile is not the master's"
old=$(kids)
"$TKCLI" echo -c 40 -b 1-64k "$ADDR" || fail "before the kill"

# Load through the kill: connections on the other worker go on.
"$TKCLI" echo -c 20 -a 1 -r 1000000 -b 1-4k -T 120 "$ADDR" >"$T/load" 2>&1 &
ld=$!
track "$ld"
sleep 1
victim=${old%% *}
kill -KILL "$victim"
_restarted() {
	_k=$(kids)
	[ "$(echo "$_k" | wc -w)" -eq 2 ] &&
	    ! echo " $_k " | grep -q " $victim "
}
wait_for 20 _restarted || fail "worker $victim not restarted: $(kids)"
grep -q "killed by signal 9; restarting" "$TENKD_LOG" || fail "no log line"
i=0
while [ "$i" -lt 5 ]; do
	"$TKCLI" echo -c 40 -b 1-64k "$ADDR" || fail "after the restart ($i)"
	i=$((i + 1))
done
# The killed worker's sessions were closed; the other worker's went on
# to the end, verified (-a 1: at least one survived).
alive "$ld" || fail "the load ended: $(cat "$T/load")"
kill -TERM "$ld"
wait_exit 20 "$ld"
[ "$STATUS" -eq 0 ] || fail "load: $(cat "$T/load")"
echo "load through the kill: $(cat "$T/load")"

n=$(grep -c 'SIGUSR1: logs reopened' "$TENKD_LOG")
kill -USR1 "$TENKD_PID"
_two() {
	[ "$(grep -c 'SIGUSR1: logs reopened' "$TENKD_LOG")" -ge $((n + 2)) ]
}
wait_for 10 _two || fail "SIGUSR1 not passed on to both workers"

kill -TERM "$TENKD_PID"
wait_exit 30 "$TENKD_PID"
[ "$STATUS" -eq 0 ] || fail "master exit status $STATUS"
[ ! -e "$T/pid" ] || fail "pidfile left behind"

# Echo too.
tenkd_start echo --workers 3 --threads 1
wait_for 10 _nkids 3 || fail "echo workers: $(kids)"
"$TKCLI" echo -c 60 -b 1-64k "$ADDR" || fail "echo with --workers 3"
kill -TERM "$TENKD_PID"
wait_exit 30 "$TENKD_PID"
[ "$STATUS" -eq 0 ] || fail "echo master exit status $STATUS"
pass
