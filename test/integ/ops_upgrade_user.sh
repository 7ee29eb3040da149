#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# SIGUSR2 under --user with the access log in a directory only root may
# write (issue 22): the new master runs as the user and could not open
# the log; the old master passes it its root log opener (reopen.c), so
# the upgrade goes through, the new workers write the same log, a
# SIGUSR1 rotation after it works, a second upgrade passes the opener
# on, and the opener leaves with the last master.  A new master told
# to write another log than the opener opens does not use it: it fails
# with one line, and the old one keeps serving.
# backends: none
# timeout: 90
. "$(dirname "$0")/lib.sh"

[ "$(awk '/^Uid:/ { print $3 }' /proc/self/status)" -eq 0 ] ||
    skip "not root: cannot test --user"
id nobody >/dev/null 2>&1 || skip "no user nobody"

_lines() {
	[ "$(grep -c . "$1" 2>/dev/null)" -ge "$2" ]
}
# started OLD: SIGUSR2 to master OLD; sets UP to the new master's pid
# once it is started, and tracks it.
started() {
	_k=$(grep -c "tenkd\\[$1\\] info: upgrade: .* started as pid" \
	    "$TENKD_LOG")
	kill -USR2 "$1"
	_more() {
		[ "$(grep -c "tenkd\\[$1\\] info: upgrade: .* started as pid" \
		    "$TENKD_LOG")" -gt "$_k" ]
	}
	wait_for 10 _more "$1" || fail "$1: no upgrade started"
	UP=$(sed -n "s/.*tenkd\\[$1\\] info: upgrade: .* started as pid \
\\([0-9]*\\).*/\\1/p" "$TENKD_LOG" | tail -n 1)
	track "$UP"
}
# upgraded OLD: SIGUSR2 to master OLD, which must hand over and exit
# (with status 0, when it is our child); sets NEW to the new master.
upgraded() {
	started "$1"
	_ready() {
		grep -q "the new master (pid $UP) is ready" "$TENKD_LOG"
	}
	wait_for 20 _ready || fail "upgrade of $1: $(grep -e upgrade \
	    -e 'access log' -e error "$TENKD_LOG")"
	NEW=$UP
	if [ "$1" = "$old" ]; then
		wait_exit 30 "$1"
		[ "$STATUS" -eq 0 ] || fail "old master $1: status $STATUS"
	else
		wait_for 30 _gone "$1" || fail "old master $1 stayed"
	fi
}

# The -f file where nobody can read it (a reload reads it as nobody);
# the log where only root can write.
chmod 711 "$T"
d=$T/logs
mkdir -m 700 "$d"
f=$T/tenkd.conf
printf 'threads 1\nworkers 2\naccess-log %s/acc\n' "$d" >"$f"
chmod 644 "$f"
tenkd_start echo -f "$f" --user nobody --log-level debug
old=$TENKD_PID
op=$(sed -n 's/.*reopen_init: log opener pid \([0-9]*\).*/\1/p' \
    "$TENKD_LOG")
[ -n "$op" ] || fail "no log opener"
"$TKCLI" echo -c 4 -b 10 "$ADDR" || fail "echo"
wait_for 10 _lines "$d/acc" 4 || fail "access log: $(cat "$d/acc")"

upgraded "$old"
new=$NEW
grep -q "tenkd\\[$new\\] info: access log $d/acc: through the old master's" \
    "$TENKD_LOG" || fail "opener not taken over"
alive "$op" || fail "the opener left with the old master"
"$TKCLI" echo -c 4 -b 10 "$ADDR" || fail "echo after the upgrade"
wait_for 10 _lines "$d/acc" 8 || fail "no lines after: $(cat "$d/acc")"

# A rotation after it: the new master and its workers reopen.
mv "$d/acc" "$d/acc.1"
n=$(grep -c 'SIGUSR1: logs reopened' "$TENKD_LOG")
kill -USR1 "$new"
_both() {
	[ "$(grep -c 'SIGUSR1: logs reopened' "$TENKD_LOG")" -ge $((n + 2)) ]
}
wait_for 10 _both || fail "not reopened: $(grep -e reopen "$TENKD_LOG")"
"$TKCLI" echo -c 3 -b 10 "$ADDR" || fail "echo after the rotation"
wait_for 10 _lines "$d/acc" 3 || fail "new log: $(cat "$d/acc")"
[ "$(grep -c . "$d/acc.1")" -eq 8 ] || fail "old log: $(cat "$d/acc.1")"

# Another log in the file: the opener is not used for it, and the new
# master cannot open it as nobody; the serving one goes on.
printf 'threads 1\nworkers 2\naccess-log %s/other\n' "$d" >"$f"
started "$new"
wait_line 20 "$TENKD_LOG" "the new master (pid $UP) exited with status 1" ||
    fail "no failed upgrade"
grep -q "log opener opens $d/acc: not used" "$TENKD_LOG" ||
    fail "$(grep -e opener -e error "$TENKD_LOG")"
grep -q "error: access log $d/other: Permission denied" "$TENKD_LOG" ||
    fail "$(grep -e error "$TENKD_LOG")"
"$TKCLI" echo -c 2 -b 10 "$ADDR" || fail "echo after a failed upgrade"

# The same file again: a second upgrade passes the opener on.
printf 'threads 1\nworkers 2\naccess-log %s/acc\n' "$d" >"$f"
upgraded "$new"
newer=$NEW
"$TKCLI" echo -c 2 -b 10 "$ADDR" || fail "echo after the second upgrade"
wait_for 10 _lines "$d/acc" 7 || fail "lines: $(cat "$d/acc")"
alive "$op" || fail "the opener left"
kill -TERM "$newer"
wait_for 30 _gone "$newer" || fail "the last master did not stop"
wait_for 10 _gone "$op" || fail "the opener outlived the last master"
[ ! -e "$d/other" ] || fail "$d/other made"
pass
