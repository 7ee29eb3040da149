#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --pidfile (written, locked against a second instance, removed at exit)
# and --user/--group (dropped after binding, verified in /proc).
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
kill -TERM "$first"
wait_exit 5 "$first"
[ "$STATUS" -eq 0 ] || fail "exit status $STATUS"
[ ! -e "$pf" ] || fail "pidfile left behind"

[ "$(id -u)" -eq 0 ] || skip "not root: cannot test --user"
id nobody >/dev/null 2>&1 || skip "no user nobody"
uid=$(id -u nobody)
grp=$(id -gn nobody)
gid=$(id -g nobody)
tenkd_start echo --threads 2 --user nobody --group "$grp"
st=/proc/$TENKD_PID/status
grep -q "^Uid:[[:space:]]*${uid}[[:space:]]*${uid}[[:space:]]*${uid}" "$st" ||
    fail "uid: $(grep Uid "$st")"
grep -q "^Gid:[[:space:]]*${gid}[[:space:]]*${gid}[[:space:]]*${gid}" "$st" ||
    fail "gid: $(grep Gid "$st")"
grep -q "^Groups:[[:space:]]*${gid}[[:space:]]*$" "$st" ||
    fail "groups: $(grep Groups "$st")"
"$TKCLI" echo -c 5 -b 1-10k "$ADDR" || fail "echo as nobody"
pass
