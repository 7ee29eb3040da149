#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Three machines behind a balancer, each a network namespace of its own
# with a tenkd proxy given the same five upstreams in its own order
# (--balance hash): every client of a sample reaches the same upstream
# whichever machine it lands on (each pair of the three agrees, so all
# three do).  The upstreams live in the namespace this script makes for
# itself, standing for the network, and each machine reaches them over
# a veth pair at 10.98.0.1; the clients come to each machine from the
# same loopback addresses (127.0.0.2 and up), as a balancer that keeps
# the client's address delivers them.  HASH_NS_CLIENTS sets the sample
# (default 2,000; test/bench/chash.sh asks 10,000), taken 2,000 at a
# time.  Everything made lives in that namespace and goes with it; the
# EXIT trap also deletes the links and ends every process.
# backends: none
# timeout: 300
. "$(dirname "$0")/lib_netns.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_hash.sh"

[ "$TK_NETNS" = 1 ] || skip "no network namespace (unshare -n)"
# Only lo here: a namespace of our own, not the machine's.
[ "$(ip -o link show | wc -l)" -eq 1 ] ||
    skip "not in a fresh network namespace"
ip link set lo up 2>/dev/null || skip "cannot bring lo up in a namespace"
ip addr add 10.98.0.1/32 dev lo || skip "cannot add an address to lo"

N=${HASH_NS_CLIENTS:-2000}
M=3
ns_cleanup() {
	_m=1
	while [ "$_m" -le "$M" ]; do
		ip link del "vo$_m" 2>/dev/null
		_m=$((_m + 1))
	done
	cleanup
}
trap ns_cleanup EXIT

# The upstreams, on 10.98.0.1.
HASH_UPS=""
for i in 1 2 3 4 5; do
	: >"$T/up$i.log"
	"$TENKD" echo --threads 1 -l 10.98.0.1:0 2>"$T/up$i.log" &
	await_listen upstream $! "$T/up$i.log"
	HASH_UPS="$HASH_UPS $LISTEN_ADDR"
done

# The machines: a namespace held by a sleep, a veth to this one.
_own_ns() {
	[ "$(readlink "/proc/$1/ns/net")" != "$(readlink /proc/self/ns/net)" ]
}
nss=""
m=1
while [ "$m" -le "$M" ]; do
	unshare -n sleep 600 &
	nss="$nss $!"
	track $!
	wait_for 10 _own_ns $! || fail "machine $m: no namespace"
	ip link add "vo$m" type veth peer name "vm$m" ||
	    skip "cannot make a veth pair"
	ip link set "vm$m" netns $! || fail "machine $m: veth"
	{ ip addr add "10.97.$m.1/24" dev "vo$m" &&
	    ip link set "vo$m" up; } || fail "machine $m: veth address"
	nsenter -t $! -n sh -c "ip link set lo up &&
	    ip addr add 10.97.$m.2/24 dev vm$m && ip link set vm$m up &&
	    ip route add 10.98.0.0/24 via 10.97.$m.1" ||
	    fail "machine $m: its network"
	m=$((m + 1))
done

# machine_start M DIGITS: machine M's proxy, the upstreams in that order.
addrs=""
machine_start() {
	: >"$T/m$1.err"
	# shellcheck disable=SC2046,SC2086
	nsenter -t "$(hash_nth "$1" $nss)" -n "$TENKD" proxy --threads 2 \
	    -l 127.0.0.1:0 --balance hash $(hash_ups -u "$2") \
	    --access-log "$T/m$1.log" 2>"$T/m$1.err" &
	await_listen "machine $1" $! "$T/m$1.err"
	addrs="$addrs $LISTEN_ADDR"
}
machine_start 1 12345
machine_start 2 53142
machine_start 3 24513

m=1
while [ "$m" -le "$M" ]; do
	# shellcheck disable=SC2086
	_ns=$(hash_nth "$m" $nss)
	# shellcheck disable=SC2086
	_a=$(hash_nth "$m" $addrs)
	off=0
	while [ "$off" -lt "$N" ]; do
		b=$((N - off < 2000 ? N - off : 2000))
		HASH_IN="nsenter -t $_ns -n" hash_clients "$b" "$off" "$_a"
		off=$((off + b))
	done
	hash_map "$T/m$m.log" 1 "$N" "$T/map$m"
	m=$((m + 1))
done
[ "$(wc -l <"$T/map1")" -eq "$N" ] || fail "$(wc -l <"$T/map1") clients"
hash_same "$T/map1" "$T/map2" "machines 1 and 2"
hash_same "$T/map1" "$T/map3" "machines 1 and 3"
hash_same "$T/map2" "$T/map3" "machines 2 and 3"
echo "$N clients, each to one upstream through all $M machines:" \
    "$(awk '{ print $2 }' "$T/map1" | sort | uniq -c | tr -s ' \n' ' ')"
pass
