#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Signals never kill a process that is exiting (issue 22).  Once its
# loop ended, tenkd gave its signals their default actions back, so a
# SIGUSR1 (logrotate's, or the master's passed on), a SIGHUP passed on
# or a second SIGTERM killed it before the end of its exit: a lone
# tenkd then left its exit status and pidfile behind, an old worker of
# a reload was "killed by signal".  Each case floods the process with
# the signal across its exit.
# backends: none
# timeout: 120
. "$(dirname "$0")/lib.sh"

# flood SIG PID...: send SIG to each PID until it is gone (one sender
# a PID, as the master's relay is); unflood stops the senders.
FLOOD=""
flood() {
	_sig=$1
	shift
	for _p in "$@"; do
		( while kill "-$_sig" "$_p" 2>/dev/null; do :; done ) &
		FLOOD="$FLOOD $!"
		track $!
	done
}
unflood() {
	for _p in $FLOOD; do
		kill "$_p" 2>/dev/null
		wait "$_p" 2>/dev/null
	done
	FLOOD=""
}
_nkids() {
	[ "$(kids | wc -w)" -eq "$1" ]
}
_count() {
	[ "$(grep -c "$2" "$1")" -ge "$3" ]
}

# A lone tenkd, SIGUSR1 through its drain and exit: exit status 0, its
# last line written, its pidfile removed.
i=1
while [ "$i" -le 3 ]; do
	tenkd_start echo --threads 2 --pidfile "$T/pid"
	flood USR1 "$TENKD_PID"
	sleep 0.2
	kill -TERM "$TENKD_PID"
	wait_exit 30 "$TENKD_PID"
	unflood
	[ "$STATUS" -eq 0 ] || fail "SIGUSR1 at exit: status $STATUS"
	grep -q 'info: exiting' "$TENKD_LOG" || fail "no exit line"
	[ ! -e "$T/pid" ] || fail "pidfile left behind"
	i=$((i + 1))
done

# Under a master: SIGUSR1, to the master, which passes it on to every
# worker, and to the old generation of each reload as it exits; then
# SIGTERM, a second one of which the master passes on to all.
f=$T/tenkd.conf
printf 'threads 1\nworkers 2\n' >"$f"
tenkd_start echo -f "$f"
i=1
while [ "$i" -le 3 ]; do
	wait_for 10 _nkids 2 || fail "workers: $(kids)"
	# shellcheck disable=SC2046
	flood USR1 "$TENKD_PID" $(kids)
	kill -HUP "$TENKD_PID"
	wait_for 30 _count "$TENKD_LOG" \
	    'worker 1 of generation [0-9]* (pid [0-9]*) exited' "$i" ||
	    fail "reload $i: the old workers did not exit:" \
		"$(grep -e 'generation' -e signal "$TENKD_LOG" | tail -n 5)"
	unflood
	i=$((i + 1))
done
grep 'killed by signal' "$TENKD_LOG" &&
    fail "SIGUSR1 killed an exiting worker"
"$TKCLI" echo -c 10 -b 1-4k "$ADDR" || fail "echo after the reloads"
# shellcheck disable=SC2046
flood TERM "$TENKD_PID" $(kids)
wait_exit 30 "$TENKD_PID"
unflood
[ "$STATUS" -eq 0 ] || fail "master: status $STATUS"
grep 'killed by signal' "$TENKD_LOG" &&
    fail "a second SIGTERM killed an exiting worker"

tenkd_start echo --threads 1 --workers 2
wait_for 10 _nkids 2 || fail "--workers 2: workers: $(kids)"
ws=$(kids)
# shellcheck disable=SC2086
flood HUP "$TENKD_PID" $ws
sleep 0.2
kill -TERM "$TENKD_PID"
wait_exit 30 "$TENKD_PID"
unflood
[ "$STATUS" -eq 0 ] || fail "--workers 2: master: status $STATUS"
for p in $ws; do
	grep -q "(pid $p) exited with status 0" "$TENKD_LOG" ||
	    fail "SIGHUP at exit: $(grep "pid $p" "$TENKD_LOG")"
done
pass
