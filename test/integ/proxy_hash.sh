#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --balance hash (and its alias source): two proxies given the same five
# upstreams in different orders send each of 1,000 clients (as many
# loopback addresses) to the same upstream, and every upstream gets its
# share.  An upstream that goes down (SIGSTOP: its health checks time
# out) moves only its own clients, each to an upstream both proxies
# agree on, and they come back when it does.  With --accept-proxy the
# key is the client a PROXY header carries: a third proxy, given 200 of
# those addresses in headers sent from 127.0.0.1, agrees with the two.
# --hash-key source-port spreads the sessions of one address.
# backends: epoll io_uring
# timeout: 150
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_hash.sh"

need_ppsend
N=1000

HASH_UPS=""
for i in 1 2 3 4 5; do
	upstream_start --threads 1
	HASH_UPS="$HASH_UPS $UPADDR"
	[ "$i" -ne 3 ] || upid3=$UP_PID
done
# shellcheck disable=SC2086
up3=$(hash_nth 3 $HASH_UPS)
# Health by the checks alone, which time out after --check-timeout:
# long enough that no burst of clients fails one (by default a check
# has the interval, 100 ms, which a burst can pass).
checks="--check-interval 100ms --check-fall 1 --check-rise 1
    --check-send ping --check-expect ping --check-timeout 2s
    --fail-max 1000"
# shellcheck disable=SC2046,SC2086
tenkd_start proxy --threads 2 --balance hash $(hash_ups -u 12345) $checks \
    --access-log "$T/a"
pa=$ADDR
la=$TENKD_LOG
# shellcheck disable=SC2046,SC2086
tenkd_start proxy --threads 2 --balance source $(hash_ups -u 53142) $checks \
    --access-log "$T/b"
pb=$ADDR
lb=$TENKD_LOG

# run K: the Kth round of N clients through both, mapped into aK, bK,
# which must agree.
run() {
	hash_clients "$N" 0 "$pa"
	hash_map "$T/a" $(((${1} - 1) * N + 1)) "$N" "$T/a$1"
	hash_clients "$N" 0 "$pb"
	hash_map "$T/b" $(((${1} - 1) * N + 1)) "$N" "$T/b$1"
	hash_same "$T/a$1" "$T/b$1" "round $1: the two proxies"
}

run 1
[ "$(wc -l <"$T/a1")" -eq "$N" ] || fail "$(wc -l <"$T/a1") clients"
# The table's shares, on /metrics and /stats.
hash_slots 5
tenkd_stats >/dev/null
grep -q "stats upstream $up3: up .* hash $up3 slots [0-9]* share [0-9.]*%$" \
    "$TENKD_STATS" || fail "/stats: $(grep 'stats upstream' "$TENKD_STATS")"
for u in $HASH_UPS; do
	n=$(hash_count "$T/a1" "$u")
	echo "upstream $u: $n clients"
	# A fifth is 200, sigma 12.6.
	{ [ "$n" -ge 140 ] && [ "$n" -le 260 ]; } || fail "$u: $n of $N"
done

# Down: only its clients move, all of them, and both proxies agree.
kill -STOP "$upid3"
wait_line 20 "$la" "upstream $up3 is down" || fail "a: $up3 not down"
wait_line 20 "$lb" "upstream $up3 is down" || fail "b: $up3 not down"
run 2
hash_moved "$T/a1" "$T/a2" >"$T/moved"
n=$(hash_count "$T/a1" "$up3")
[ "$(wc -l <"$T/moved")" -eq "$n" ] ||
    fail "$(wc -l <"$T/moved") moved, $up3 had $n: $(head -n 5 "$T/moved")"
awk -v u="$up3" '$2 != u || $3 == u' "$T/moved" | head -n 3 >"$T/bad"
[ ! -s "$T/bad" ] || fail "moved, not from $up3: $(cat "$T/bad")"
echo "$up3 down: its $n clients moved, to $(awk '{ print $3 }' "$T/moved" |
    sort | uniq -c | tr -s ' \n' ' ')"

# Up again: back as before.
kill -CONT "$upid3"
wait_line 20 "$la" "upstream $up3 is up" || fail "a: $up3 not up"
wait_line 20 "$lb" "upstream $up3 is up" || fail "b: $up3 not up"
run 3
hash_same "$T/a1" "$T/a3" "after $up3 came back"

# The PROXY header's client is the key.
cat >"$T/ppmany.py" <<'EOF'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
for i in range(int(sys.argv[2])):
    a = "127.0.%d.%d" % ((i + 2) // 256, (i + 2) % 256)
    s = socket.create_connection((host, int(port)), timeout=20)
    s.sendall(("PROXY TCP4 %s 127.0.0.1 %d %s\r\nhi" %
               (a, 1000 + i, port)).encode())
    s.shutdown(socket.SHUT_WR)
    got = b""
    while True:
        b = s.recv(4096)
        if not b:
            break
        got += b
    if got != b"hi":
        sys.exit("%s: got %r" % (a, got))
    s.close()
EOF
# shellcheck disable=SC2046
tenkd_start proxy --threads 1 --balance hash $(hash_ups -u 41523) \
    --accept-proxy --access-log "$T/c"
"$PY" "$T/ppmany.py" "$ADDR" 200 || fail "PROXY clients"
hash_map "$T/c" 1 200 "$T/c1"
LC_ALL=C join "$T/c1" "$T/a1" >"$T/cj"
[ "$(wc -l <"$T/cj")" -eq 200 ] || fail "PROXY: $(head -n 3 "$T/c1")"
awk '$2 != $3' "$T/cj" | head -n 3 >"$T/bad"
[ ! -s "$T/bad" ] || fail "PROXY clients elsewhere: $(cat "$T/bad")"

# source-port: one address, its sessions over every upstream.
# shellcheck disable=SC2046
tenkd_start proxy --threads 1 --balance hash --hash-key source-port \
    $(hash_ups -u 12345) --access-log "$T/d"
"$TKCLI" echo -c 200 -b 1-64 "$ADDR" >"$T/d.out" 2>&1 ||
    fail "source-port clients: $(cat "$T/d.out")"
wait_for 20 _hash_lines "$T/d" 200 || fail "access log: $(wc -l <"$T/d")"
n=$(awk '{ print $4 }' "$T/d" | sort -u | wc -l)
[ "$n" -eq 5 ] || fail "source-port: $n upstreams for 200 sessions"
pass
