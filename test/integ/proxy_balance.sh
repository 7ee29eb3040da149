#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Balancing: weighted round-robin gives each upstream its share exactly;
# leastconn sends new sessions to the upstream with the fewest open;
# source keeps one client address on one upstream.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

upstream_start --threads 1
a=$UPADDR
upstream_start --threads 1
b=$UPADDR

tenkd_start proxy --threads 2 -u "$a,weight=3" -u "$b"
"$TKCLI" echo -c 40 -b 1-4k "$ADDR" || fail "rr"
tenkd_stats >/dev/null || exit 1
sa=$(ups_stat "$a" sessions)
sb=$(ups_stat "$b" sessions)
{ [ "$sa" -eq 30 ] && [ "$sb" -eq 10 ]; } || fail "rr 3:1: $sa and $sb"

# leastconn: six sessions held open are spread three and three.
tenkd_start proxy --threads 1 -u "$a" -u "$b" --balance leastconn
"$TKCLI" hold -c 6 -d 60 "$ADDR" >"$T/h" 2>&1 &
h=$!
track "$h"
wait_line 20 "$T/h" '^ready 6' || fail "hold: $(cat "$T/h")"
tenkd_stats >/dev/null || exit 1
{ [ "$(ups_stat "$a" active)" -eq 3 ] &&
    [ "$(ups_stat "$b" active)" -eq 3 ]; } ||
    fail "leastconn: $(ups_stat "$a" active) and $(ups_stat "$b" active)"
kill -TERM "$h"
wait_exit 20 "$h"

# source: one address, one upstream; four addresses (-S 4), each on one.
tenkd_start proxy --threads 2 -u "$a" -u "$b" --balance source \
    --access-log "$T/acc"
"$TKCLI" echo -c 20 -b 1-4k "$ADDR" || fail "source"
"$TKCLI" echo -S 4 -c 40 -b 1-4k "$ADDR" || fail "source, 4 addresses"
_lines() {
	[ "$(wc -l <"$1")" -ge "$2" ]
}
wait_for 10 _lines "$T/acc" 60 || fail "access log: $(wc -l <"$T/acc")"
n=$(awk '{ split($2, c, ":"); print c[1], $4 }' "$T/acc" | sort -u |
    awk '{ print $1 }' | uniq -d | wc -l)
[ "$n" -eq 0 ] || fail "a client address went to two upstreams"
pass
