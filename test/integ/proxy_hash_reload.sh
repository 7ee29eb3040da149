#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Three tenkd proxies standing for three machines behind a balancer,
# each with -f and the same five upstreams in its own order, --balance
# hash: each of 2,000 clients (as many loopback addresses) reaches the
# same upstream through each.  A reload that adds a sixth upstream (in a
# different place in each file) moves, by the access log, only clients
# that now go to it, about a sixth of them, and the three still agree;
# a reload that removes one of the five moves only its clients.
# backends: none
# timeout: 180
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_hash.sh"

N=2000

HASH_UPS=""
for _ in 1 2 3 4 5 6; do
	upstream_start --threads 1
	HASH_UPS="$HASH_UPS $UPADDR"
done
# shellcheck disable=SC2086
up2=$(hash_nth 2 $HASH_UPS)
# shellcheck disable=SC2086
up6=$(hash_nth 6 $HASH_UPS)
# conf FILE DIGITS: a -f file of the upstreams numbered, in that order.
conf() {
	printf 'threads 2\nbalance hash\naccess-log %s.log\n' "$1" >"$1"
	hash_ups upstream "$2" >>"$1"
}
_count() {
	[ "$(grep -c "$2" "$1")" -ge "$3" ]
}
conf "$T/p1" 12345
conf "$T/p2" 53142
conf "$T/p3" 24513
addrs=""
pids=""
logs=""
for p in 1 2 3; do
	tenkd_start proxy -f "$T/p$p"
	addrs="$addrs $ADDR"
	pids="$pids $TENKD_PID"
	logs="$logs $TENKD_LOG"
done

# round K: N clients through each proxy, mapped into pP.K, which agree.
round() {
	for p in 1 2 3; do
		# shellcheck disable=SC2086
		hash_clients "$N" 0 "$(hash_nth "$p" $addrs)"
		hash_map "$T/p$p.log" $((($1 - 1) * N + 1)) "$N" "$T/p$p.$1"
	done
	hash_same "$T/p1.$1" "$T/p2.$1" "round $1: proxies 1 and 2"
	hash_same "$T/p1.$1" "$T/p3.$1" "round $1: proxies 1 and 3"
}
# reload K: SIGHUP each proxy, wait for its Kth new generation.
reload() {
	for p in 1 2 3; do
		# shellcheck disable=SC2086
		kill -HUP "$(hash_nth "$p" $pids)"
	done
	for p in 1 2 3; do
		# shellcheck disable=SC2086
		wait_for 20 _count "$(hash_nth "$p" $logs)" \
		    'reload: .* started' "$1" || fail "proxy $p: reload $1"
	done
}

round 1
[ "$(wc -l <"$T/p1.1")" -eq "$N" ] || fail "$(wc -l <"$T/p1.1") clients"
hash_slots 5

# Add the sixth: first in one file, last in another, amid the third.
conf "$T/p1" 123456
conf "$T/p2" 653142
conf "$T/p3" 245613
reload 1
round 2
# The master's /metrics, from the new generation's table.
hash_slots 6
hash_moved "$T/p1.1" "$T/p1.2" >"$T/moved"
n=$(wc -l <"$T/moved")
awk -v u="$up6" '$3 != u' "$T/moved" | head -n 3 >"$T/bad"
[ ! -s "$T/bad" ] || fail "moved elsewhere than to $up6: $(cat "$T/bad")"
[ "$(hash_count "$T/p1.2" "$up6")" -eq "$n" ] || fail "$up6 has others"
# A sixth of 2,000 is 333, sigma 16.7.
echo "adding $up6 moved $n of $N clients, all to it"
{ [ "$n" -ge 250 ] && [ "$n" -le 417 ]; } || fail "$n of $N moved"

# Remove the second: only its clients move.
conf "$T/p1" 13456
conf "$T/p2" 65314
conf "$T/p3" 45613
reload 2
round 3
hash_slots 5
hash_moved "$T/p1.2" "$T/p1.3" >"$T/moved"
awk -v u="$up2" '$2 != u' "$T/moved" | head -n 3 >"$T/bad"
[ ! -s "$T/bad" ] || fail "moved, not from $up2: $(cat "$T/bad")"
n=$(hash_count "$T/p1.2" "$up2")
[ "$(wc -l <"$T/moved")" -eq "$n" ] || fail "$up2 had $n, moved $(wc -l \
    <"$T/moved")"
echo "removing $up2 moved its $n clients and no other"
pass
