#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Active health checks: an upstream that stops accepting is marked down
# after --check-fall failed checks and up again after --check-rise
# passed ones; with --check-send/--check-expect, one that accepts but
# does not answer (stopped, or silent: down at --check-timeout, not
# --connect-timeout), or answers wrong, is down too; the options' usage
# errors.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

bad() {
	_bw=$1
	shift
	usage_error "$_bw" "$TENKD" "$@"
}
bad '--check-interval 5ms: too small' proxy -u 127.0.0.1:1 \
    --check-interval 5ms
bad '--check-interval 2h' proxy -u 127.0.0.1:1 --check-interval 2h
bad '--check-rise 0' proxy -u 127.0.0.1:1 --check-rise 0
bad '--check-fall x' proxy -u 127.0.0.1:1 --check-fall x
bad '--check-send: empty text' proxy -u 127.0.0.1:1 --check-send ''
bad '--check-expect: needs --check-send' proxy -u 127.0.0.1:1 \
    --check-expect PONG
bad '--check-interval: only with tenkd proxy' echo --check-interval 1s

# echo_on ADDR: a tenkd echo upstream on ADDR exactly; sets A_PID.
echo_on() {
	_log=$T/a.$$.$(date +%s%N).log
	"$TENKD" echo --threads 1 -l "$1" 2>"$_log" &
	A_PID=$!
	await_listen upstream "$A_PID" "$_log"
}

# TCP connect checks: killed, the upstream is down after 2; listening
# again, up after 3.
upstream_start --threads 1
a=$UPADDR
A_PID=$UP_PID
tenkd_start proxy --threads 1 -u "$a" --check-interval 50ms \
    --check-fall 2 --check-rise 3
kill -KILL "$A_PID"
wait_line 20 "$TENKD_LOG" "upstream $a is down: 2 health checks failed" ||
    fail "not marked down"
grep -q "upstream $a is up" "$TENKD_LOG" && fail "up while dead"
echo_on "$a"
wait_line 20 "$TENKD_LOG" "upstream $a is up: 3 health checks passed" ||
    fail "not marked up again"
"$TKCLI" echo -c 4 -b 1-4k "$ADDR" || fail "echo after coming back"
tenkd_stats >/dev/null || exit 1
grep 'stats upstream' "$T/stats.page" | grep -q "stats upstream $a: up" ||
    fail "stats: $(grep 'stats upstream' "$T/stats.page")"

# A line and the reply's first bytes: an upstream that accepts but does
# not answer within --connect-timeout (SIGSTOP: the kernel still
# completes the handshake) is down, then up again once it answers.
tenkd_start proxy --threads 1 -u "$a" --check-interval 50ms \
    --check-fall 2 --check-rise 2 --check-send PING --check-expect PI \
    --connect-timeout 300ms
kill -STOP "$A_PID"
wait_line 20 "$TENKD_LOG" "upstream $a is down: 2 health checks failed \
(last: timed out)" || { kill -CONT "$A_PID"; fail "stopped: not down"; }
kill -CONT "$A_PID"
wait_line 20 "$TENKD_LOG" "upstream $a is up: 2 health checks passed" ||
    fail "answering again: not up"

# A silent upstream (it accepts, never reads nor answers) is down at
# --check-timeout, whatever --connect-timeout: with an hour's, a check
# used to wait that long before it failed.  The default timeout is the
# interval.
faultsrv_start --starve 1
for to in '' '--check-timeout 200ms'; do
	# shellcheck disable=SC2086
	tenkd_start proxy --threads 1 -u "$FADDR" --check-interval 100ms \
	    --check-fall 2 --check-send PING --check-expect PONG \
	    --connect-timeout 1h $to
	wait_line 20 "$TENKD_LOG" "upstream $FADDR is down: 2 health checks \
failed (last: timed out)" || fail "silent upstream ($to): not down"
	kill -TERM "$TENKD_PID"
	wait_exit 20 "$TENKD_PID"
done
faultsrv_stop
bad '--check-timeout 1ms' proxy -u 127.0.0.1:1 --check-timeout 1ms
bad '--check-timeout: only with tenkd proxy' echo --check-timeout 1s

# A wrong reply is a failure.
tenkd_start proxy --threads 1 -u "$a" --check-interval 50ms \
    --check-fall 1 --check-send PING --check-expect PONG
wait_line 20 "$TENKD_LOG" "upstream $a is down: 1 health check failed \
(last: unexpected reply)" || fail "wrong reply: not down"
pass
