#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Log lines on stderr start with an RFC 3339 UTC time to the millisecond,
# tenkd[PID], the worker's number under --workers, and the level; with
# --syslog and no /dev/log, one warning says the lines stay on stderr.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

stamp='^[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]'
stamp=$stamp'\.[0-9][0-9][0-9]Z tenkd\[[0-9][0-9]*\]'

tenkd_start echo --threads 1
grep -q "$stamp info: listening on $ADDR\$" "$TENKD_LOG" ||
    fail "no stamped listening line"
kill -TERM "$TENKD_PID"
wait_exit 10 "$TENKD_PID"
bad=$(grep -v "$stamp \(error\|warn\|info\|debug\): " "$TENKD_LOG")
[ -z "$bad" ] || fail "lines without a stamp: $bad"
grep -q "tenkd\[$TENKD_PID\] info: exiting" "$TENKD_LOG" ||
    fail "no pid on the lines"

# Workers number their lines; the master does not.
tenkd_start echo --threads 1 --workers 2
_both() {
	grep -q "$stamp w0 info: echo: " "$TENKD_LOG" &&
	    grep -q "$stamp w1 info: echo: " "$TENKD_LOG"
}
wait_for 10 _both || fail "no w0 and w1 lines"
grep -q "tenkd\[$TENKD_PID\] info: master: 2 workers" "$TENKD_LOG" ||
    fail "master line"
kill -TERM "$TENKD_PID"
wait_exit 10 "$TENKD_PID"

# A facility must be one syslog knows.
usage_error 'syslog-facility' "$TENKD" echo --syslog-facility bogus

if [ -e /dev/log ]; then
	echo "skipping the syslog fallback: this machine has /dev/log"
	pass
fi
tenkd_start echo --threads 1 --syslog-facility local3
[ "$(grep -c 'syslog: /dev/log: .*logging to stderr' "$TENKD_LOG")" -eq 1 ] ||
    fail "not one fallback warning"
grep -q "$stamp warn: syslog" "$TENKD_LOG" || fail "warning not stamped"
kill -TERM "$TENKD_PID"
wait_exit 10 "$TENKD_PID"
grep -q "info: exiting" "$TENKD_LOG" || fail "lines lost after the fallback"
pass
