#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Backup upstreams: one marked ",backup" takes no session while a
# primary is up, takes them all while every primary is down (by health
# checks, or by passive health with --fail-max), and none once a
# primary is back.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

usage_error 'every upstream is a backup' "$TENKD" proxy -u 127.0.0.1:1,backup
usage_error 'unknown parameter' "$TENKD" proxy -u 127.0.0.1:1,backupp

# sessions ADDR: sessions of upstream ADDR so far, from /stats.
sessions() {
	tenkd_stats >/dev/null || exit 1
	ups_stat "$1" sessions
}

upstream_start --threads 1
a=$UPADDR
A_PID=$UP_PID
upstream_start --threads 1
b=$UPADDR
tenkd_start proxy --threads 2 -u "$a" -u "$b backup" \
    --check-interval 50ms --check-fall 2 --check-rise 2
"$TKCLI" echo -c 10 -b 1-4k "$ADDR" || fail "primary"
{ [ "$(sessions "$a")" -eq 10 ] && [ "$(sessions "$b")" -eq 0 ]; } ||
    fail "backup used while the primary is up: $(sessions "$b")"

kill -KILL "$A_PID"
wait_line 20 "$TENKD_LOG" "upstream $a is down" || fail "a not down"
"$TKCLI" echo -c 10 -b 1-4k "$ADDR" || fail "backup"
[ "$(sessions "$b")" -eq 10 ] || fail "backup took $(sessions "$b") of 10"

_log=$T/a2.log
"$TENKD" echo --threads 1 -l "$a" 2>"$_log" &
await_listen upstream "$!" "$_log"
wait_line 20 "$TENKD_LOG" "upstream $a is up" || fail "a not up again"
"$TKCLI" echo -c 10 -b 1-4k "$ADDR" || fail "primary again"
{ [ "$(sessions "$a")" -eq 20 ] && [ "$(sessions "$b")" -eq 10 ]; } ||
    fail "after the primary came back: $(sessions "$a") $(sessions "$b")"

# Passive health alone: the dead primary fails one connect, is out,
# and every session goes to the backup.
d=$(dead_addr)
tenkd_start proxy --threads 1 -u "$d" -u "$b,backup" --fail-max 1 \
    --fail-timeout 1m
"$TKCLI" echo -c 10 -b 1-4k "$ADDR" || fail "passive: backup"
[ "$(sessions "$b")" -eq 10 ] || fail "passive: backup took $(sessions "$b")"
pass
