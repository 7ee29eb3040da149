#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkload on a unix: socket of a real redis-server, started here as the
# script's own process (its TCP port picked for it, its socket in $T):
# PING from two processes; then exactly -n 20000 SETs of random keys
# among 5,000 from two processes and three threads, after which DBSIZE
# is within 1% of what the uniform distribution predicts (a check that
# the keys really varied, and that -n sent exactly its requests); GETs
# of Zipf-distributed keys; and bad unix: targets refused.  Skipped,
# saying why, without redis-server and redis-cli (make test-deps).
# backends: none
# timeout: 120
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_servers.sh"

need_prog redis-server redis-server
need_prog redis-cli redis-tools
redis_start --unixsocket "$T/redis/r.sock" --unixsocketperm 700
S=unix:$T/redis/r.sock
CLI=$(server_prog redis-cli)

load_run ping -c 6 --procs 2 -m 'PING\r\n' --reply redis --reply-check +PONG \
    "$S"
load_has ping traffic.msgs -gt 0 "no messages"
load_has ping header.procs -eq 2 "not two processes"
grep -q "to $S, 6 connections" "$T/ping.out" ||
    fail "ping: the target is not named: $(head -n 1 "$T/ping.out")"

"$CLI" -s "$T/redis/r.sock" flushall >/dev/null || fail "flushall"
timeout 60 "$TENKLOAD" -q -c 8 -t 3 --procs 2 -n 20000 --reply redis \
    --reply-check +OK -m 'SET key:{rand:000000-004999} x\r\n' \
    --json "$T/set.json" "$S" >"$T/set.out" 2>"$T/set.err" ||
    fail "set: $(cat "$T/set.out" "$T/set.err")"
load_has set traffic.msgs -eq 20000 "not exactly 20000 replies"
load_has set errors.total -eq 0 "errors"
n=$("$CLI" -s "$T/redis/r.sock" dbsize) || fail "dbsize"
# 5000 (1 - (1 - 1/5000)^20000) = 4908.4 keys expected
awk_true "$n >= 4908.4 * 0.99 && $n <= 4908.4 * 1.01" ||
    fail "DBSIZE $n after 20000 SETs of 5000 keys, not within 1% of 4908"
echo "set: DBSIZE $n, predicted 4908"
c=$("$CLI" -s "$T/redis/r.sock" info stats |
    sed -n 's/^total_commands_processed:\([0-9]*\).*/\1/p')
# the PINGs, flushall, these SETs, dbsize and info
[ "$c" -ge 20000 ] || fail "set: redis saw $c commands"

# "$3" and "$13" are RESP's lengths, not parameters
# shellcheck disable=SC2016
load_run get -c 4 --reply redis -m \
    '*2\r\n$3\r\nGET\r\n$13\r\nkey:{zipf:000005000:1.1}\r\n' "$S"
load_has get traffic.msgs -gt 0 "no messages"

load_bad 'unix:: unix: needs a path' unix:
load_bad "unix:$T/$(printf '%0120d' 0): unix: path longer than 107 bytes" \
    "unix:$T/$(printf '%0120d' 0)"
load_bad '--source: not with a unix: target' --source 127.0.0.1 "$S"
timeout 20 "$TENKLOAD" -q -c 1 -d 1s "unix:$T/none" >"$T/none.out" 2>&1
[ $? -eq 1 ] || fail "a missing socket: not exit 1"
grep -q 'failed 1' "$T/none.out" || fail "missing socket: $(cat "$T/none.out")"

alive "$REDIS_PID" || fail "redis-server died: $(tail -n 5 "$REDIS_LOG")"
redis_stop
pass
