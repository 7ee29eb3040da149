#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# SIGHUP reloads the -f file (issue 15): 20 reloads under a load that
# opens about 2,000 connections a second while 1,000 long sessions echo,
# verified: no error, no session lost, every old worker gone once its
# sessions end.  A bad file is refused with FILE:LINE and the workers go
# on; so is a change a reload cannot apply (--threads); a fixed file
# reloads.  sd_notify says RELOADING=1 (with MONOTONIC_USEC) then
# READY=1.  A proxy's new upstream list takes effect, 64 long names
# too.  Without -f there is no master and SIGHUP reopens the logs, as
# before.  A stop while an old generation drains leaves its sessions be.
# backends: none
# timeout: 180
. "$(dirname "$0")/lib.sh"

_nkids() {
	[ "$(kids | wc -w)" -eq "$1" ]
}
_count() {
	[ "$(grep -c "$2" "$1")" -ge "$3" ]
}
# metric NAME: its value from /metrics, the sum of the workers' series
# (NAME{labels} as written, without the worker label).
metric() {
	http_get "http://$METRICS/metrics" | awk -v n="$1" '{
		k = $1
		sub(/,?worker="[^"]*"/, "", k)
		sub(/{,/, "{", k)
		sub(/{}$/, "", k)
	}
	k == n { s += $2; found = 1 }
	END { if (found) printf "%.0f\n", s }'
}
# reload N: SIGHUP, then wait for the Nth "reload: ... started" line.
reload() {
	kill -HUP "$TENKD_PID"
	wait_for 20 _count "$TENKD_LOG" 'reload: .* started' "$1" ||
	    fail "reload $1 not done"
}

# sd_notify: a datagram socket standing in for systemd's.
notify_start "$T/notify" "$T/notified"

f=$T/tenkd.conf
printf 'threads 1\nworkers 2\ndrain-timeout 2m\nidle-timeout 5m\n' >"$f"
NOTIFY_SOCKET=$T/notify tenkd_start echo -f "$f" --pidfile "$T/pid"
wait_for 10 _nkids 2 || fail "workers: $(kids)"
wait_line 10 "$T/notified" '^READY=1$' || fail "no READY=1"
[ "$(cat "$T/pid")" -eq "$TENKD_PID" ] || fail "pidfile is not the master's"

# The long sessions (1,000 in all at 1,000 messages a second) and the
# churn (a connection a message, 2,000 a second), both verified.
loads_start 14s 10s
olds=""
last=0
i=1
while [ "$i" -le 20 ]; do
	olds="$olds $(kids)"
	reload "$i"
	sleep 0.3
	# The sum of the counters never goes back across a reload.
	if [ $((i % 5)) -eq 0 ]; then
		a=$(metric tenkd_connections_accepted_total)
		[ "$a" -ge "$last" ] || fail "accepted went back: $last, $a"
		last=$a
	fi
	i=$((i + 1))
done
grep -q 'reload: 2 workers of generation 21 started; generation 20 draining' \
    "$TENKD_LOG" || fail "no reload log line"
loads_clean "$LOAD_CHURN" "$LOAD_LONG"
[ "$(json_get "$T/churn.json" connections.reconnects)" -gt 10000 ] ||
    fail "churn: too few connections: $(cat "$T/churn.out")"
# Their sessions ended: every old worker drained and exited.
_olds_gone() {
	for p in $olds; do
		! alive "$p" || return 1
	done
}
wait_for 30 _olds_gone || fail "old workers left: $olds / now $(kids)"
# Every connection made is counted, old workers' too.
made=$(($(json_get "$T/churn.json" connections.reconnects) + 1050))
a=$(metric tenkd_connections_accepted_total)
if [ "$a" -lt "$last" ] || [ "$a" -lt "$made" ]; then
	fail "accepted after the drain: $a, before $last, made $made"
fi
_nkids 2 || fail "not two workers after the reloads: $(kids)"
grep -q 'worker 0 of generation 1 (pid [0-9]*) exited with status 0' \
    "$TENKD_LOG" || fail "no exit line for an old worker"
grep -q 'restarting in' "$TENKD_LOG" && fail "a worker was restarted"

# sd_notify: each reload RELOADING=1 with MONOTONIC_USEC, then READY=1.
[ "$(grep -c '^RELOADING=1$' "$T/notified")" -eq 20 ] ||
    fail "not 20 RELOADING=1: $(cat "$T/notified")"
[ "$(grep -c '^MONOTONIC_USEC=[0-9][0-9]*$' "$T/notified")" -eq 20 ] ||
    fail "not 20 MONOTONIC_USEC: $(cat "$T/notified")"
[ "$(grep -c '^READY=1$' "$T/notified")" -eq 21 ] ||
    fail "not 21 READY=1: $(cat "$T/notified")"
[ "$(grep -E '^(READY|RELOADING)=1$' "$T/notified" | tail -n 2 |
    tr '\n' ' ')" = "RELOADING=1 READY=1 " ] ||
    fail "not RELOADING=1 then READY=1: $(cat "$T/notified")"

# A bad file: FILE:LINE logged, the same workers go on.
before=$(kids)
printf 'threads 1\nworkers 2\nidle-timeout 5x\n' >"$f"
kill -HUP "$TENKD_PID"
wait_line 10 "$TENKD_LOG" "reload: $f:3: idle-timeout 5x: bad unit" ||
    fail "bad file not logged with FILE:LINE"
wait_line 10 "$TENKD_LOG" 'reload refused: generation 21 keeps serving' ||
    fail "no refusal line"
"$TKCLI" echo -c 20 -b 1-4k "$ADDR" || fail "echo after a bad file"
[ "$(kids)" = "$before" ] || fail "workers changed: $before / $(kids)"
# What a reload cannot apply, named.
printf 'threads 2\nworkers 2\n' >"$f"
kill -HUP "$TENKD_PID"
wait_line 10 "$TENKD_LOG" \
    "reload: 'threads' changed: needs a restart or an upgrade (SIGUSR2)" ||
    fail "--threads change not refused"
[ "$(kids)" = "$before" ] || fail "workers changed: $before / $(kids)"
# Fixed: it reloads.
printf 'threads 1\nworkers 2\nidle-timeout 1m\n' >"$f"
reload 21
"$TKCLI" echo -c 20 -b 1-4k "$ADDR" || fail "echo after the fixed file"
wait_line 10 "$TENKD_LOG" 'idle timeout 60s' ||
    fail "the new idle timeout not in use"
kill -TERM "$TENKD_PID"
wait_exit 30 "$TENKD_PID"
[ "$STATUS" -eq 0 ] || fail "master exit status $STATUS"
[ ! -e "$T/pid" ] || fail "pidfile left behind"
# Every worker exited cleanly, a reload's too, which read the options
# again (main_reparse): under AddressSanitizer a leak is status 1.
grep -E 'exited with status [1-9]|killed by signal' "$TENKD_LOG" &&
    fail "a worker did not exit cleanly"

# A proxy (the implicit master: -f, no --workers): a reload moves new
# sessions to the new upstream.
pxtool_start upstream -P
A=$PXTADDR
A_OUT=$PXT_OUT
pxtool_start upstream -P
B=$PXTADDR
B_OUT=$PXT_OUT
printf 'upstream %s\n' "$A" >"$f"
tenkd_start proxy -f "$f" --threads 1
wait_for 10 _nkids 1 || fail "proxy: no implicit worker: $(kids)"
wait_line 10 "$TENKD_LOG" 'master: 1 worker' || fail "proxy: no master"
"$TKCLI" echo -c 5 -b 1-4k "$ADDR" || fail "proxy: echo through A"
[ "$(grep -c peer "$A_OUT")" -eq 5 ] || fail "proxy: A: $(cat "$A_OUT")"
printf 'upstream %s\n' "$B" >"$f"
reload 1
"$TKCLI" echo -c 5 -b 1-4k "$ADDR" || fail "proxy: echo through B"
[ "$(grep -c peer "$A_OUT")" -eq 5 ] || fail "proxy: A still used"
[ "$(grep -c peer "$B_OUT")" -eq 5 ] || fail "proxy: B: $(cat "$B_OUT")"
# The metrics name the new upstream, its series counted from the reload.
[ "$(metric "tenkd_upstream_sessions_total{upstream=\"$B\"}")" = 5 ] ||
    fail "proxy: metrics: $(http_get "http://$METRICS/metrics" |
	grep upstream_sessions_total)"
http_get "http://$METRICS/metrics" | grep -q "upstream=\"$A\"" &&
    fail "proxy: A still in the metrics"
kill -TERM "$TENKD_PID"
wait_exit 30 "$TENKD_PID"
[ "$STATUS" -eq 0 ] || fail "proxy master exit status $STATUS"

# The most upstreams, 64, with long names: the reload's check hands the
# master the whole list, whose names label the metrics.
: >"$f"
i=100
while [ "$i" -lt 164 ]; do
	printf 'upstream [::ffff:127.100.100.%d]:40%d\n' "$i" "$i" >>"$f"
	i=$((i + 1))
done
tenkd_start proxy -f "$f" --threads 1
reload 1
ups=$(http_get "http://$METRICS/metrics" |
    grep '^tenkd_upstream_sessions_total{upstream="[^"]*",worker="0"}')
[ "$(printf '%s\n' "$ups" | grep -c .)" -eq 64 ] ||
    fail "64 upstreams: after the reload: $(grep 'upstreams now' \
	"$TENKD_LOG")"
printf '%s\n' "$ups" | grep -q '"\[::ffff:127.100.100.163\]:40163"' ||
    fail "64 upstreams: the last one: $(printf '%s\n' "$ups" | tail -n 1)"
kill -TERM "$TENKD_PID"
wait_exit 30 "$TENKD_PID"

# SIGTERM to the master while an old generation drains: that one's
# sessions go on to their end (a second SIGTERM to them would force).
printf 'threads 1\ndrain-timeout 2m\n' >"$f"
tenkd_start echo -f "$f"
"$TENKLOAD" -q -t 1 -c 20 -R 40 -d 3s --max-errors 0 --json "$T/term.json" \
    "$ADDR" >"$T/term.out" 2>&1 &
lp=$!
track "$lp"
sleep 0.5
reload 1
kill -TERM "$TENKD_PID"
wait_exit 30 "$lp"
[ "$STATUS" -eq 0 ] || fail "sessions through the stop: $(cat "$T/term.out")"
[ "$(json_get "$T/term.json" connections.closed_early)" -eq 0 ] ||
    fail "sessions closed by the stop: $(cat "$T/term.out")"
wait_exit 30 "$TENKD_PID"
[ "$STATUS" -eq 0 ] || fail "master exit status $STATUS after the stop"

# No -f: no master, and SIGHUP reopens the logs as before.
tenkd_start echo --threads 1
_nkids 0 || fail "a master without -f: $(kids)"
kill -HUP "$TENKD_PID"
wait_line 10 "$TENKD_LOG" 'SIGHUP: logs reopened' || fail "SIGHUP: no reopen"
"$TKCLI" echo -c 5 -b 1-4k "$ADDR" || fail "echo after SIGHUP"
pass
