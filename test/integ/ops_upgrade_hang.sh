#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# An upgrade whose new binary hangs and ignores SIGTERM (issue 22): the
# old master stops it at --ready-timeout, kills it --drain-timeout and
# 5 s later, and then serves the metrics again and takes the next
# SIGHUP and SIGUSR2; before, it waited for it for ever.  The same for a
# stop (SIGTERM) while such an upgrade is under way: the old master
# exits.  The binary is a shell script, put where the running tenkd's
# was, that ignores SIGTERM and sleeps.
# backends: none
# timeout: 120
. "$(dirname "$0")/lib.sh"

_count() {
	[ "$(grep -c "$1" "$TENKD_LOG")" -ge "$2" ]
}
_nkids() {
	[ "$(kids | wc -w)" -eq "$1" ]
}
bin=$T/tenkd
cp "$TENKD" "$bin"
f=$T/tenkd.conf
printf 'threads 1\nworkers 2\n' >"$f"
TENKD=$bin tenkd_start echo -f "$f" --ready-timeout 1s --drain-timeout 1s
wait_for 10 _nkids 2 || fail "workers: $(kids)"
binary_put "$bin" '#!/bin/sh
trap "" TERM
exec sleep 600
'
kill -USR2 "$TENKD_PID"
upgrade_started
wait_line 20 "$TENKD_LOG" "new master (pid $UP) not ready in 1s: stopping" ||
    fail "not stopped at --ready-timeout"
alive "$UP" || fail "the script did not ignore SIGTERM"
wait_line 30 "$TENKD_LOG" "new master (pid $UP) still runs 6s after .*SIGKILL" ||
    fail "no SIGKILL: $(grep upgrade "$TENKD_LOG")"
wait_for 10 _gone "$UP" || fail "pid $UP still there"
wait_line 10 "$TENKD_LOG" "new master (pid $UP) killed by signal 9" ||
    fail "its end not logged"
http_get "http://$METRICS/metrics" >/dev/null ||
    fail "no metrics after the killed upgrade"
"$TKCLI" echo -c 10 -b 1-4k "$ADDR" || fail "echo after the killed upgrade"
kill -HUP "$TENKD_PID"
wait_line 20 "$TENKD_LOG" 'reload: 2 workers of generation 2 started' ||
    fail "SIGHUP after the killed upgrade: $(tail -n 5 "$TENKD_LOG")"

# A stop while it hangs: the old master stops it, kills it, exits.
kill -USR2 "$TENKD_PID"
wait_for 10 _count 'upgrade: .* started as pid' 2 || fail "no 2nd upgrade"
upgrade_started
UP2=$UP
kill -TERM "$TENKD_PID"
wait_exit 30 "$TENKD_PID"
[ "$STATUS" -eq 0 ] || fail "old master: status $STATUS"
_gone "$UP2" || fail "the hanging new master outlived the stop"
grep -q "new master (pid $UP2) still runs .*SIGKILL" "$TENKD_LOG" ||
    fail "not killed: $(grep upgrade "$TENKD_LOG" | tail -n 3)"
pass
