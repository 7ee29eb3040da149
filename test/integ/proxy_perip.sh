#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --max-conns-per-ip: the extra client from a capped address is closed
# at once (logged as tenkd/connect ip-limit); 127.0.0.1, 127.0.0.2 and
# ::1 are counted apart, each up to the cap; and once the clients leave
# every count is back to zero: the cap is whole again, not one more.
# Each refusal is counted on "stats caps" and logged, at most once a
# second.
# timeout: 90
. "$(dirname "$0")/lib.sh"

# hold_from NAME ARGS...: tkcli hold in the background until it says
# "ready"; sets HOLD_PID.
hold_from() {
	_name=$1
	shift
	"$TKCLI" hold -c 5 -d 60 "$@" >"$T/$_name" 2>&1 &
	HOLD_PID=$!
	track "$HOLD_PID"
	wait_line 20 "$T/$_name" '^ready 5' ||
	    fail "hold $_name: $(cat "$T/$_name")"
}

# refused ADDR: one more client to ADDR is closed without a byte.
refused() {
	px_got "extra client" 0 -n 10 -T 10 "$1"
}

# The two helpers below are called through wait_for.
# _held_or_gone PID FILE: tkcli echo -v has all five through its round,
# or has ended (failed).
# shellcheck disable=SC2317
_held_or_gone() {
	_has_line "$2" 'round 1 done: 5 connections' || ! alive "$1"
}

# shellcheck disable=SC2317
_active() {
	[ "$(stat_val "$(tenkd_stats)" active)" -eq "$1" ]
}

upstream_start --threads 1
if [ -r /proc/net/if_inet6 ] && grep -q '^0*1 ' /proc/net/if_inet6; then
	tenkd_start proxy --threads 2 -u "$UPADDR" --max-conns-per-ip 5 \
	    --access-log "$T/acc" --listen '[::1]:0'
else
	tenkd_start proxy --threads 2 -u "$UPADDR" --max-conns-per-ip 5 \
	    --access-log "$T/acc"
fi
ADDR=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' \
    "$TENKD_LOG" | head -n 1)
ADDR6=$(sed -n 's/.*listening on \(\[::1\]:[0-9]*\).*/\1/p' \
    "$TENKD_LOG" | head -n 1)
[ -n "$ADDR" ] || fail "no IPv4 listener: $(cat "$TENKD_LOG")"

# 127.0.0.1 at its cap: the sixth is refused.
hold_from h1 "$ADDR"
h1=$HOLD_PID
refused "$ADDR"
access_line "$T/acc" '^[^ ]* 127\.0\.0\.1:[0-9]* .*tenkd/connect ip-limit'
grep -q 'client 127\.0\.0\.1 reached --max-conns-per-ip 5: session refused' \
    "$TENKD_LOG" || fail "no cap line: $(cat "$TENKD_LOG")"
tenkd_stats >/dev/null || exit 1
c=$(grep 'stats caps:' "$TENKD_STATS" | tail -n 1)
[ "$(stat_val "$c" ip-limit)" -eq 1 ] || fail "refusal not counted: $c"

# 127.0.0.2 has a count of its own: five held, the sixth refused.
"$TKCLI" echo -v -S 1 -c 5 -b 16 -d 60 "$ADDR" >"$T/h2" 2>&1 &
h2=$!
track "$h2"
wait_for 20 _held_or_gone "$h2" "$T/h2"
_has_line "$T/h2" 'round 1 done: 5 connections' ||
    fail "127.0.0.2 not held: $(cat "$T/h2")"
out=$("$TKCLI" echo -a 0 -S 1 -c 1 -b 16 "$ADDR" 2>&1) ||
    fail "from 127.0.0.2: $out"
echo "$out" | grep -q ' 1 closed by server' ||
    fail "sixth from 127.0.0.2 served: $out"
access_line "$T/acc" '^[^ ]* 127\.0\.0\.2:[0-9]* .*tenkd/connect ip-limit'

# ::1, where the machine has it: a third count.
if [ -n "$ADDR6" ]; then
	hold_from h6 "$ADDR6"
	h6=$HOLD_PID
	refused "$ADDR6"
	wait_line 10 "$T/acc" \
	    '^[^ ]* \[::1\]:[0-9]* .*tenkd/connect ip-limit' ||
	    fail "access log: $(cat "$T/acc")"
	kill -TERM "$h6"
	wait_exit 20 "$h6"
fi

kill -TERM "$h1" "$h2"
wait_exit 20 "$h1"
wait_exit 20 "$h2"
wait_for 20 _active 0 || fail "sessions left"

# Back to zero: five again from 127.0.0.1, and again not six.
hold_from h1b "$ADDR"
h1=$HOLD_PID
refused "$ADDR"
kill -TERM "$h1"
wait_exit 20 "$h1"
wait_for 20 _active 0 || fail "sessions left"
# Every refusal counted, the lines rate-limited: no more than refusals.
tenkd_stats >/dev/null || exit 1
c=$(grep 'stats caps:' "$TENKD_STATS" | tail -n 1)
n=$(stat_val "$c" ip-limit)
[ "$n" -ge 3 ] || fail "refusals not counted: $c"
[ "$(grep -c 'reached --max-conns-per-ip' "$TENKD_LOG")" -le "$n" ] ||
    fail "more cap lines than refusals"
"$TKCLI" echo -c 5 -b 1-10k "$ADDR" || fail "after the holders left"
"$TKCLI" echo -S 1 -c 5 -b 1-10k "$ADDR" || fail "127.0.0.2 after"
pass
