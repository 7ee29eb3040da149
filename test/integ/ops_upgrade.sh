#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# SIGUSR2 upgrades the binary (issue 15): the master starts its binary
# again with the listening sockets, and once the new master's workers
# run, the old one drains and exits.  Under a load that opens about
# 2,000 connections a second while 1,000 long sessions echo, verified:
# no error, no session lost; the pidfile then holds the new master's
# pid, the old master and its workers are gone, the metrics are the new
# master's.  A new master that fails (its -f file made bad) leaves the
# old one serving as it was.  Without --workers too (the implicit
# master of -f), where the old master tells systemd MAINPID= of the new.
# backends: none
# timeout: 180
. "$(dirname "$0")/lib.sh"

_nkids() {
	[ "$(kids_of "$1" | wc -w)" -eq "$2" ]
}
_pidfile_is() {
	[ "$(cat "$T/pid" 2>/dev/null)" = "$1" ]
}

f=$T/tenkd.conf
printf 'threads 1\nworkers 2\ndrain-timeout 2m\n' >"$f"
tenkd_start echo -f "$f" --pidfile "$T/pid"
old=$TENKD_PID
wait_for 10 _nkids "$old" 2 || fail "workers: $(kids_of "$old")"
oldkids=$(kids_of "$old")

# A new master that fails: the old one goes on, the same workers serve.
printf 'threads 1\nworkers 2\nbogus 1\n' >"$f"
kill -USR2 "$old"
wait_line 10 "$TENKD_LOG" \
    'upgrade: the new master (pid [0-9]*) exited with status 2 before' ||
    fail "failed upgrade not logged"
grep -q "$f:3: bogus: unknown option" "$TENKD_LOG" ||
    fail "the new master's error not logged"
"$TKCLI" echo -c 20 -b 1-4k "$ADDR" || fail "echo after a failed upgrade"
[ "$(kids_of "$old")" = "$oldkids" ] || fail "workers changed"
_pidfile_is "$old" || fail "pidfile changed: $(cat "$T/pid")"
http_get "http://$METRICS/metrics" >/dev/null ||
    fail "no metrics after a failed upgrade"
printf 'threads 1\nworkers 2\ndrain-timeout 2m\n' >"$f"

# Under load.
loads_start 8s 5s
kill -USR2 "$old"
wait_line 20 "$TENKD_LOG" 'upgrade: the new master (pid [0-9]*) is ready' ||
    fail "upgrade not done"
new=$(sed -n 's/.*upgrade: the new master (pid \([0-9]*\)) is ready.*/\1/p' \
    "$TENKD_LOG")
track "$new"
wait_for 10 _pidfile_is "$new" || fail "pidfile: $(cat "$T/pid"), not $new"
wait_for 10 _nkids "$new" 2 || fail "new workers: $(kids_of "$new")"
newkids=$(kids_of "$new")
loads_clean "$LOAD_CHURN" "$LOAD_LONG"
# The old master leaves once its workers drained.
wait_exit 30 "$old"
[ "$STATUS" -eq 0 ] || fail "old master exit status $STATUS"
for p in $oldkids; do
	! alive "$p" || fail "old worker $p left"
done
alive "$new" || fail "the new master is gone"
_pidfile_is "$new" || fail "pidfile: $(cat "$T/pid"), not $new"
wait_line 10 "$TENKD_LOG" 'pidfile .*: taken over' || fail "pidfile not taken"
"$TKCLI" echo -c 20 -b 1-4k "$ADDR" || fail "echo through the new master"
[ "$(kids_of "$new")" = "$newkids" ] || fail "new workers restarted"
METRICS=$(sed -n 's|.*metrics on http://\([^/]*\)/.*|\1|p' "$TENKD_LOG" |
    tail -n 1)
http_get "http://$METRICS/metrics" >/dev/null ||
    fail "no metrics from the new master"
kill -TERM "$new"
wait_for 30 _gone "$new" || fail "new master did not stop"
[ ! -e "$T/pid" ] || fail "pidfile left behind"

# The implicit master (-f, no --workers): the same, with no load, and
# sd_notify to a datagram socket standing in for systemd's.
notify_start "$T/notify" "$T/notified"
printf 'threads 1\n' >"$f"
NOTIFY_SOCKET=$T/notify tenkd_start echo -f "$f" --pidfile "$T/pid"
old=$TENKD_PID
wait_for 10 _nkids "$old" 1 || fail "implicit: workers: $(kids_of "$old")"
kill -USR2 "$old"
wait_exit 30 "$old"
[ "$STATUS" -eq 0 ] || fail "implicit: old master exit status $STATUS"
new=$(sed -n 's/.*upgrade: the new master (pid \([0-9]*\)) is ready.*/\1/p' \
    "$TENKD_LOG")
[ -n "$new" ] || fail "implicit: no upgrade line"
track "$new"
grep -q "^MAINPID=$new\$" "$T/notified" ||
    fail "implicit: no MAINPID=$new: $(cat "$T/notified")"
wait_for 10 _pidfile_is "$new" || fail "implicit: pidfile: $(cat "$T/pid")"
"$TKCLI" echo -c 20 -b 1-4k "$ADDR" || fail "implicit: echo after upgrade"
# And a reload of the new master.
kill -HUP "$new"
wait_line 10 "$TENKD_LOG" 'reload: 1 worker of generation 2 started' ||
    fail "implicit: no reload after the upgrade"
"$TKCLI" echo -c 20 -b 1-4k "$ADDR" || fail "implicit: echo after reload"
kill -TERM "$new"
wait_for 30 _gone "$new" || fail "implicit: new master did not stop"
# The reloaded worker, which read the options again (main_reparse),
# exited cleanly: under AddressSanitizer a leak is status 1.
rw=$(sed -n 's/.*worker 0 of generation 2: pid \([0-9]*\).*/\1/p' \
    "$TENKD_LOG")
grep -q "worker 0 (pid $rw) exited with status 0" "$TENKD_LOG" ||
    fail "implicit: the reloaded worker: $(grep "pid $rw" "$TENKD_LOG")"
pass
