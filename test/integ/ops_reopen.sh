#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# SIGUSR1 reopens the access log (logrotate's postrotate): after a
# rename, new lines go to a new file; also after --user nobody, in a
# directory only root may write.  A reopen that fails warns, keeps the
# old file and does not say "logs reopened".  Under a master, a worker
# it restarts after a rotation writes to the new file.
# backends: none
# timeout: 90
. "$(dirname "$0")/lib.sh"

_lines() {
	[ -f "$1" ] && [ "$(grep -c . "$1")" -ge "$2" ]
}

# rotate LOG WHAT: 5 connections, rename LOG, SIGUSR1, 3 more, which
# must go to a new LOG while the renamed one keeps its 5.
rotate() {
	"$TKCLI" echo -c 5 -b 100 "$ADDR" || fail "$2: echo"
	wait_for 10 _lines "$1" 5 || fail "$2: access log: $(cat "$1")"
	mv "$1" "$1.1"
	_rn=$(grep -c 'SIGUSR1: logs reopened' "$TENKD_LOG")
	kill -USR1 "$TENKD_PID"
	wait_for 10 _reopened "$_rn" || fail "$2: no reopen on SIGUSR1"
	"$TKCLI" echo -c 3 -b 10 "$ADDR" || fail "$2: echo after SIGUSR1"
	wait_for 10 _lines "$1" 3 || fail "$2: no new access log"
	[ "$(grep -c . "$1.1")" -eq 5 ] || fail "$2: the old log changed"
	[ "$(grep -c . "$1")" -eq 3 ] || fail "$2: new log: $(cat "$1")"
}

_reopened() {
	[ "$(grep -c 'SIGUSR1: logs reopened' "$TENKD_LOG")" -gt "$1" ]
}

# refuse LOG WHAT: a directory where LOG was cannot be opened: one
# warning, no "reopened", and lines still go to the old file.
refuse() {
	mv "$1" "$1.2"
	mkdir "$1"
	_rn=$(grep -c 'SIGUSR1: logs reopened' "$TENKD_LOG")
	_w=$(grep -c 'reopening access log' "$TENKD_LOG")
	kill -USR1 "$TENKD_PID"
	_warned() {
		[ "$(grep -c 'reopening access log' "$TENKD_LOG")" -gt "$_w" ]
	}
	wait_for 10 _warned || fail "$2: no warning for a failed reopen"
	[ "$(grep -c 'SIGUSR1: logs reopened' "$TENKD_LOG")" -eq "$_rn" ] ||
	    fail "$2: said reopened after a failure"
	"$TKCLI" echo -c 2 -b 10 "$ADDR" || fail "$2: echo"
	wait_for 10 _lines "$1.2" 5 || fail "$2: lines lost: $(cat "$1.2")"
	alive "$TENKD_PID" || fail "$2: tenkd died"
}

d=$T/plain
mkdir "$d"
tenkd_start echo --threads 2 --access-log "$d/acc"
rotate "$d/acc" plain
refuse "$d/acc" plain
kill -TERM "$TENKD_PID"
wait_exit 10 "$TENKD_PID"

# SIGHUP reopens as well until it reloads (issue 15).
d=$T/hup
mkdir "$d"
tenkd_start echo --threads 1 --access-log "$d/acc"
"$TKCLI" echo -c 1 -b 10 "$ADDR" || fail "hup: echo"
wait_for 10 _lines "$d/acc" 1 || fail "hup: no line"
mv "$d/acc" "$d/acc.1"
kill -HUP "$TENKD_PID"
wait_line 10 "$TENKD_LOG" 'SIGHUP: logs reopened' || fail "no reopen on SIGHUP"
kill -TERM "$TENKD_PID"
wait_exit 10 "$TENKD_PID"

# Under a master (--workers): it reopens as well, so that a worker it
# restarts after the rotation inherits the new file, and no process of
# tenkd keeps the renamed one open.
_nkids() {
	[ "$(kids | wc -w)" -eq "$1" ]
}
# holds PID FILE: PID has FILE open.
holds() {
	for _fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$_fd" 2>/dev/null)" = "$2" ] && return 0
	done
	return 1
}
d=$T/master
mkdir "$d"
tenkd_start echo --threads 1 --workers 2 --access-log "$d/acc"
wait_for 10 _nkids 2 || fail "master: workers: $(kids)"
mv "$d/acc" "$d/acc.1"
n=$(grep -c 'SIGUSR1: logs reopened' "$TENKD_LOG")
kill -USR1 "$TENKD_PID"
# _both: both workers logged a reopen since the count n was taken.
_both() {
	[ "$(grep -c 'SIGUSR1: logs reopened' "$TENKD_LOG")" -ge $((n + 2)) ]
}
wait_for 10 _both || fail "master: not reopened by both workers"
k=$(kids | awk '{ print $1 }')
kill -KILL "$k"
_restarted() {
	_nkids 2 && ! kids | grep -qw "$k"
}
wait_for 10 _restarted || fail "master: worker $k not restarted: $(kids)"
for p in "$TENKD_PID" $(kids); do
	! holds "$p" "$d/acc.1" || fail "master: pid $p holds the renamed log"
done
"$TKCLI" echo -c 20 -b 10 "$ADDR" || fail "master: echo after"
wait_for 10 _lines "$d/acc" 20 || fail "master: new log: $(cat "$d/acc")"
[ ! -s "$d/acc.1" ] || fail "master: old log written: $(cat "$d/acc.1")"
kill -TERM "$TENKD_PID"
wait_exit 10 "$TENKD_PID"

if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1; then
	echo "skipping --user nobody: needs root and a user nobody"
	pass
fi
# $T is root's, mode 0700: nobody could not create a file there.
d=$T/priv
mkdir "$d"
chmod 700 "$d"
tenkd_start echo --threads 2 --user nobody --access-log "$d/acc"
rotate "$d/acc" "--user nobody"
refuse "$d/acc" "--user nobody"
kill -TERM "$TENKD_PID"
wait_exit 10 "$TENKD_PID"

# The same under --workers: each worker asks the opener.
d=$T/wk
mkdir "$d"
tenkd_start echo --threads 1 --workers 2 --user nobody --access-log "$d/acc"
"$TKCLI" echo -c 10 -b 100 "$ADDR" || fail "workers: echo"
wait_for 10 _lines "$d/acc" 10 || fail "workers: access log"
mv "$d/acc" "$d/acc.1"
n=$(grep -c 'SIGUSR1: logs reopened' "$TENKD_LOG")
kill -USR1 "$TENKD_PID"
wait_for 10 _both || fail "workers: not reopened by both"
"$TKCLI" echo -c 10 -b 10 "$ADDR" || fail "workers: echo after"
wait_for 10 _lines "$d/acc" 10 || fail "workers: new log: $(cat "$d/acc")"
[ "$(grep -c . "$d/acc.1")" -eq 10 ] || fail "workers: old log changed"
kill -TERM "$TENKD_PID"
wait_exit 10 "$TENKD_PID"
pass
