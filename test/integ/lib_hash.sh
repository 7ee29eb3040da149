# SPDX-License-Identifier: BSD-2-Clause
# --balance hash, for the proxy_hash*.sh scripts: clients from many
# loopback addresses, and which upstream each went to, read back from a
# proxy's access log.  Sourced after lib.sh:
#
#	. "$(dirname "$0")/lib.sh"
#	. "$(dirname "$0")/lib_hash.sh"
#	hash_clients 1000 0 "$ADDR"	# 127.0.0.2 to 127.0.3.233
#	hash_map "$T/acc" 1 1000 "$T/m1"	# "127.0.0.2 127.0.0.1:40001"
#	hash_same "$T/m1" "$T/m2" "two proxies"

# shellcheck shell=sh disable=SC2034

# hash_clients N FIRST ADDR [TKCLI-ARGS...]: N clients at once, one
# connection each, from 127.0.0.2 + FIRST on (tkcli echo -S N -O
# FIRST), through ADDR; fails unless every echo comes back whole.  With
# HASH_IN set, its words run the client (nsenter -t PID -n).
hash_clients() {
	_hn=$1
	_hf=$2
	_ha=$3
	shift 3
	# shellcheck disable=SC2086
	${HASH_IN:-} "$TKCLI" echo -c "$_hn" -S "$_hn" -O "$_hf" -P 200 -b 1-64 "$@" \
	    "$_ha" >"$T/hash_clients.out" 2>&1 ||
	    fail "clients of $_ha: $(cat "$T/hash_clients.out")"
}

_hash_lines() {
	[ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]
}

# hash_map LOG FROM N OUT: once the access log LOG has N lines from its
# line FROM on, those N as "ADDRESS UPSTREAM" lines, sorted, into OUT;
# fails if a client address went to two upstreams.
hash_map() {
	wait_for 20 _hash_lines "$1" $(($2 + $3 - 1)) ||
	    fail "$1: $(wc -l <"$1") lines, wanted $(($2 + $3 - 1))"
	tail -n "+$2" "$1" | head -n "$3" |
	    awk '{ a = $2; sub(/:[0-9]*$/, "", a); print a, $4 }' |
	    LC_ALL=C sort -u >"$4"
	_hd=$(awk '{ print $1 }' "$4" | uniq -d | head -n 3)
	[ -z "$_hd" ] || fail "$1: went to two upstreams: $_hd"
}

# hash_same A B WHAT: the maps A and B send every client to the same
# upstream; fails naming WHAT with the first differences otherwise.
hash_same() {
	cmp -s "$1" "$2" && return 0
	diff "$1" "$2" >"$T/hash_diff"
	fail "$3: $(grep -c '^<' "$T/hash_diff") of $(wc -l <"$1")" \
	    "clients differ: $(head -n 6 "$T/hash_diff" | tr '\n' ' ')"
}

# hash_moved A B: the clients whose upstream is not the same in maps A
# and B, as "ADDRESS FROM TO" lines.
hash_moved() {
	LC_ALL=C join "$1" "$2" | awk '$2 != $3'
}

# hash_count MAP UPSTREAM: how many clients MAP sends to UPSTREAM.
hash_count() {
	awk -v u="$2" '$2 == u' "$1" | wc -l
}

# hash_nth K WORD...: the Kth word.
hash_nth() {
	shift "$1"
	echo "$1"
}

# hash_ups PREFIX DIGITS: for each digit K, PREFIX and the Kth address of
# HASH_UPS, a line each ("-u" gives options, "upstream" a -f file's
# lines): the upstreams in that order.
hash_ups() {
	_d=$2
	while [ -n "$_d" ]; do
		# shellcheck disable=SC2086
		printf '%s %s\n' "$1" "$(hash_nth "${_d%"${_d#?}"}" $HASH_UPS)"
		_d=${_d#?}
	done
}

# hash_slots N: the /metrics of the tenkd last started ($METRICS) give N
# upstreams their slots of the table, 262,144 in all (in its only
# process, or its first worker's series under a master); fails
# otherwise.
hash_slots() {
	http_get "http://$METRICS/metrics" >"$T/hash_metrics" ||
	    fail "no /metrics"
	_hs=$(awk '/^tenkd_upstream_hash_slots\{upstream="[^"]*"(,worker="0")?\} / {
	    n++; s += $2 } END { print n + 0, s + 0 }' "$T/hash_metrics")
	[ "$_hs" = "$1 262144" ] || fail "slots: $_hs: $(grep hash_slots \
	    "$T/hash_metrics")"
}
