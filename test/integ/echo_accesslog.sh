#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The access log: one line per connection at close, reopened on SIGHUP
# (after the file was moved away, new lines go to a new file).
# timeout: 60
. "$(dirname "$0")/lib.sh"

_lines() {
	[ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]
}

log=$T/access.log
tenkd_start echo --threads 2 --access-log "$log"
"$TKCLI" echo -c 5 -b 1000 "$ADDR" || fail "echo"
wait_for 5 _lines "$log" 5 || fail "access log: $(cat "$log")"
re=' echo [0-9.]*s accept=[0-9T:.-]*Z tc=- active=[0-9]* in=1000 out=1000 eof$'
[ "$(grep -c "$re" "$log")" -eq 5 ] ||
    fail "access log lines: $(cat "$log")"

mv "$log" "$log.1"
kill -HUP "$TENKD_PID"
wait_line 5 "$TENKD_LOG" 'reopened' || fail "no reopen on SIGHUP"
"$TKCLI" echo -c 3 -b 10 "$ADDR" || fail "echo after SIGHUP"
wait_for 5 _lines "$log" 3 || fail "no new access log after SIGHUP"
[ "$(wc -l <"$log.1")" -eq 5 ] || fail "old log changed"
alive "$TENKD_PID" || fail "tenkd died on SIGHUP"
pass
