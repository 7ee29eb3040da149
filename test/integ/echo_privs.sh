#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --pidfile (written, locked against a second instance, removed at exit),
# --check opening the pidfile and access-log paths (one line and exit 1
# when it cannot, nothing left behind when it can), and --user/--group
# (dropped after binding, verified in /proc: ids, only the target group,
# NoNewPrivs set).
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

pf=$T/tenkd.pid
tenkd_start echo --threads 1 --pidfile "$pf"
[ "$(cat "$pf")" = "$TENKD_PID" ] || fail "pidfile holds '$(cat "$pf")'"
first=$TENKD_PID
"$TENKD" echo --threads 1 --listen 127.0.0.1:0 --pidfile "$pf" \
    2>"$T/e2" && fail "a second instance started on the same pidfile"
grep -q 'already running' "$T/e2" || fail "second: $(cat "$T/e2")"

# --check beside the running instance: its locked pidfile is fine and
# left as it was.
"$TENKD" echo --check --pidfile "$pf" --access-log "$T/acc" 2>"$T/c1" ||
    fail "--check beside a running tenkd: $(cat "$T/c1")"
[ "$(cat "$pf")" = "$first" ] || fail "--check changed the pidfile"
[ ! -e "$T/acc" ] || fail "--check left the access log it created"
kill -TERM "$first"
wait_exit 5 "$first"
[ "$STATUS" -eq 0 ] || fail "exit status $STATUS"
[ ! -e "$pf" ] || fail "pidfile left behind"

# check_bad WHAT OPTION PATH: --check fails with one line naming it.
check_bad() {
	"$TENKD" echo --check "$2" "$3" >"$T/c" 2>&1 &&
	    fail "--check $2 $3 said OK: $(cat "$T/c")"
	[ "$(grep -c "$1 $3" "$T/c")" -eq 1 ] ||
	    fail "--check $2 $3: $(cat "$T/c")"
}
check_bad pidfile --pidfile "$T/nodir/tenkd.pid"
check_bad pidfile --pidfile "$T"
check_bad "access log" --access-log "$T/nodir/access.log"
check_bad "access log" --access-log "$T"
# An existing access log is opened for append, not truncated.
echo kept >"$T/acc"
"$TENKD" echo --check --access-log "$T/acc" 2>"$T/c" ||
    fail "--check on an existing log: $(cat "$T/c")"
[ "$(cat "$T/acc")" = kept ] || fail "--check changed the access log"

# The effective uid from the kernel: id(1) may be wrapped.
[ "$(awk '/^Uid:/ { print $3 }' /proc/self/status)" -eq 0 ] ||
    skip "not root: cannot test --user"
pw=$(getent passwd nobody) || skip "no user nobody"
uid=$(echo "$pw" | cut -d: -f3)
gid=$(echo "$pw" | cut -d: -f4)
grp=$(getent group "$gid" | cut -d: -f1)
[ -n "$grp" ] || skip "nobody's group $gid has no name"

# privs WHAT [GID]: tenkd's ids, groups (nobody's, or GID) and
# NoNewPrivs in /proc.
privs() {
	st=/proc/$TENKD_PID/status
	g=${2:-$gid}
	grep -q "^Uid:[[:space:]]*${uid}[[:space:]]*${uid}[[:space:]]*${uid}" \
	    "$st" || fail "$1: uid: $(grep Uid "$st")"
	grep -q "^Gid:[[:space:]]*${g}[[:space:]]*${g}[[:space:]]*${g}" \
	    "$st" || fail "$1: gid: $(grep Gid "$st")"
	grep -q "^Groups:[[:space:]]*${g}[[:space:]]*$" "$st" ||
	    fail "$1: groups: $(grep Groups "$st")"
	grep -q "^NoNewPrivs:[[:space:]]*1$" "$st" ||
	    fail "$1: $(grep NoNewPrivs "$st")"
}

tenkd_start echo --threads 2 --user nobody --group "$grp"
privs "--user --group"
"$TKCLI" echo -c 5 -b 1-10k "$ADDR" || fail "echo as nobody"
kill -TERM "$TENKD_PID"
wait_exit 5 "$TENKD_PID"

# --user alone: its primary group only, none of root's groups.
tenkd_start echo --threads 1 --user nobody
privs "--user"
"$TKCLI" echo -c 5 -b 1-10k "$ADDR" || fail "echo as nobody (--user)"
kill -TERM "$TENKD_PID"
wait_exit 5 "$TENKD_PID"

# --group before --user keeps that group, not the user's primary one.
og=$(getent group daemon | cut -d: -f3)
if [ -n "$og" ] && [ "$og" != "$gid" ]; then
	tenkd_start echo --threads 1 --group daemon --user nobody
	privs "--group --user" "$og"
fi
pass
