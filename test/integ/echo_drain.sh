#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# SIGTERM with 1,000 active connections: tenkd stops accepting at once
# (a new connect is refused), lets the connections go on until their
# clients finish (every round verified, no echo lost), then exits 0
# well before the drain timeout.
# timeout: 90
. "$(dirname "$0")/lib.sh"

nc=1000
[ "$(nofile)" -ge $(( nc + 100 )) ] || skip "ulimit -n $(nofile) is too low"
tenkd_start echo --threads 2 --drain-timeout 60s

"$TKCLI" echo -v -c "$nc" -r 20 -b 512-8k -T 60 "$ADDR" >"$T/out" \
    2>"$T/progress" &
cl=$!
track "$cl"
wait_line 30 "$T/progress" 'round 2 done' ||
    fail "load did not start: $(cat "$T/progress")"
kill -TERM "$TENKD_PID"
wait_line 5 "$TENKD_LOG" 'draining' || fail "no drain message"

# Not accepting any more: each worker closes its listener when it gets
# the drain message, so this may take a moment.
_refused() {
	! "$TKCLI" echo -c 1 -T 2 "$ADDR" >/dev/null 2>"$T/refused" &&
	    grep -q 'refused' "$T/refused"
}
wait_for 10 _refused || fail "new connections still served during the drain"

wait_exit 60 "$cl"
[ "$STATUS" -eq 0 ] || fail "echo lost during the drain: $(cat "$T/out" \
    "$T/progress" | tail -n 3)"
grep -q "^echo: $nc connections, 20 rounds" "$T/out" ||
    fail "client: $(cat "$T/out")"
tail -n 1 "$T/progress" | grep -q 'round 20 done' ||
    fail "not all rounds: $(tail -n 1 "$T/progress")"
wait_exit 15 "$TENKD_PID"
[ "$STATUS" -eq 0 ] || fail "tenkd exit status $STATUS"
if grep -q 'drain timeout: closing' "$TENKD_LOG"; then
	fail "the drain hit the deadline"
fi
pass
