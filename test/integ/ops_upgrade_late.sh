#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# An upgrade that is stopped before its new master is ready leaves the
# old master serving, with the same workers, however the new one ends.
# Before, a new master that got SIGTERM before its workers ran still
# wrote its ready byte, and the old master read it, handed over and
# drained its workers while the new one stopped: nobody served.  And an
# old master that gave up on a late new master (--ready-timeout) still
# took its ready byte when it came.  The binary the upgrade runs is a
# script put where the running tenkd's was, that holds the new master
# back, then executes the real binary:
# - early: SIGTERM is blocked and sent to it before it runs tenkd, which
#   starts with the signal pending: it must never say ready, and exit
#   (its workers, whose mask was blocked the same, drain all the same);
# - late: it waits for the old master's SIGTERM at --ready-timeout (its
#   trap takes it), then runs tenkd, which becomes ready: the old one
#   must ignore that and kill it at --drain-timeout and 5 s later.
# backends: none
# timeout: 120
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c '' 2>/dev/null || skip "no python3"

_nkids() {
	[ "$(kids | wc -w)" -eq "$1" ]
}
_pidfile_is() {
	[ "$(cat "$T/pid" 2>/dev/null)" = "$1" ]
}
# upkids: the new master's workers, gone with the test whatever happens.
upkids() {
	wait_line 20 "$TENKD_LOG" "tenkd\\[$UP\\] info: worker 1: pid" ||
	    fail "the new master started no workers"
	track "$(sed -n "s/.*tenkd\\[$UP\\] info: worker .: pid //p" \
	    "$TENKD_LOG")"
}
# serving OLDKIDS: the old master still runs these workers, not
# draining, and holds the pidfile, and clients are served.
serving() {
	alive "$TENKD_PID" || fail "the old master is gone"
	for p in $1; do
		alive "$p" || fail "worker $p is gone"
		! grep -q "tenkd\\[$p\\] .*SIGTERM: no longer accepting" \
		    "$TENKD_LOG" || fail "worker $p drains"
	done
	# Its children: its workers and the new master, if still there.
	[ "$(kids | wc -w)" -le 3 ] || fail "workers: $1 -> $(kids)"
	_pidfile_is "$TENKD_PID" || fail "pidfile: $(cat "$T/pid")"
	"$TKCLI" echo -c 10 -b 1-4k "$ADDR" || fail "echo"
	! grep -q 'is ready: this one drains' "$TENKD_LOG" ||
	    fail "the old master handed over"
}

real=$T/tenkd.real
cp "$TENKD" "$real"
bin=$T/tenkd
cp "$TENKD" "$bin"
f=$T/tenkd.conf
printf 'threads 1\nworkers 2\n' >"$f"

# early: the default --ready-timeout (30 s) never comes into it.
TENKD=$bin tenkd_start echo -f "$f" --pidfile "$T/pid" --drain-timeout 1s
wait_for 10 _nkids 2 || fail "early: workers: $(kids)"
oldkids=$(kids)
binary_put "$bin" "#!$PY
import os, signal, sys, time
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
open('$T/blocked', 'w').close()
for _ in range(600):
    if signal.SIGTERM in signal.sigpending():
        break
    time.sleep(0.05)
os.execv('$real', ['$real'] + sys.argv[1:])
"
kill -USR2 "$TENKD_PID"
upgrade_started
wait_for 10 test -e "$T/blocked" || fail "early: the script did not run"
kill -TERM "$UP"
upkids
wait_line 20 "$TENKD_LOG" \
    "tenkd\\[$UP\\] info: upgrade: stopped before this master was ready" ||
    fail "early: the new master did not say no"
wait_line 20 "$TENKD_LOG" \
    "new master (pid $UP) exited with status 0 before it was ready" ||
    fail "early: its end: $(grep upgrade "$TENKD_LOG")"
serving "$oldkids"
http_get "http://$METRICS/metrics" >/dev/null || fail "early: no metrics"
kill -TERM "$TENKD_PID"
wait_exit 30 "$TENKD_PID"
[ "$STATUS" -eq 0 ] || fail "early: old master: status $STATUS"

# late: given up at --ready-timeout 1s, SIGKILL 1 + 5 s later.
cp "$TENKD" "$bin"
TENKD=$bin tenkd_start echo -f "$f" --pidfile "$T/pid" \
    --ready-timeout 1s --drain-timeout 1s
wait_for 10 _nkids 2 || fail "late: workers: $(kids)"
oldkids=$(kids)
binary_put "$bin" "#!/bin/sh
trap 'touch $T/termed' TERM
i=0
while [ ! -e $T/termed ] && [ \$i -lt 600 ]; do
	sleep 0.05
	i=\$((i + 1))
done
exec $real \"\$@\"
"
kill -USR2 "$TENKD_PID"
upgrade_started
wait_line 20 "$TENKD_LOG" "new master (pid $UP) not ready in 1s: stopping" ||
    fail "late: not stopped at --ready-timeout"
upkids
wait_line 20 "$TENKD_LOG" "tenkd\\[$UP\\] info: master: 2 workers ready" ||
    fail "late: the new master never became ready"
wait_line 20 "$TENKD_LOG" "new master (pid $UP) is ready" ||
    fail "late: its ready byte not read"
serving "$oldkids"
wait_line 30 "$TENKD_LOG" "new master (pid $UP) still runs 6s after .*SIGKILL" ||
    fail "late: no SIGKILL: $(grep upgrade "$TENKD_LOG")"
wait_line 10 "$TENKD_LOG" "new master (pid $UP) killed by signal 9" ||
    fail "late: its end not logged"
serving "$oldkids"
http_get "http://$METRICS/metrics" >/dev/null || fail "late: no metrics"
pass
