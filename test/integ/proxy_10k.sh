#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# 10,000 proxied clients, all open at once: 20,000 sockets, more than
# one process may hold here, so --workers 2.  tenkload opens them at a
# bounded rate, ping-pongs verified messages for a few seconds, and
# every one must be established and served without error.
# backends: epoll
# timeout: 180
. "$(dirname "$0")/lib.sh"

n=10000
lim=$(nofile)
[ "$lim" = unlimited ] || [ "$lim" -ge $((n + 200)) ] ||
    skip "ulimit -n $lim: need $((n + 200)) per process"

upstream_start --threads 2
tenkd_start proxy --workers 2 --threads 1 -u "$UPADDR"
timeout 150 "$TENKLOAD" -M pingpong -c "$n" -t 2 --connect-rate 5000 \
    -d 5s -s 64 --json "$T/r.json" "$ADDR" >"$T/out" 2>"$T/err" ||
    fail "tenkload: $(tail -n 5 "$T/out" "$T/err")"
for k in requested established open_at_end; do
	v=$(json_get "$T/r.json" connections.$k)
	[ "$v" -eq "$n" ] || fail "connections.$k is $v, not $n"
done
[ "$(json_get "$T/r.json" errors.total)" -eq 0 ] ||
    fail "errors: $(cat "$T/out")"
grep -i 'msgs/s' "$T/out" | head -n 2
tenkd_stats >/dev/null || exit 1
"$TKCLI" echo -c 10 -b 1-64k "$ADDR" || fail "echo after the load"
pass
