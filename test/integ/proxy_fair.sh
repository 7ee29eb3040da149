#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Fairness under bulk: one session streaming 1 MiB messages through a
# one-thread proxy must not starve ping-pong clients at a fixed rate
# beside it.  Asserts only that every one of them was served (tenkload's
# connections.unserved is 0); the p99 with and without the bulk stream,
# and their ratio, are reported, not judged (docs/BENCHMARKS.md,
# "Fairness under bulk", has the figures on a quiet machine).
# timeout: 120
. "$(dirname "$0")/lib.sh"

upstream_start --threads 1
tenkd_start proxy --threads 1 -u "$UPADDR"

# mice NAME: 200 clients, 2,000 messages/s in all, 3 s measured; sets P99.
mice() {
	"$TENKLOAD" -q -t 1 --mode rate -R 2000 -c 200 --warmup 1s -d 3s \
	    --json "$T/$1.json" "$ADDR" >"$T/$1.out" 2>&1 ||
	    fail "$1: $(tail -n 5 "$T/$1.out")"
	u=$(json_get "$T/$1.json" connections.unserved) ||
	    fail "$1: no connections.unserved"
	[ "$u" -eq 0 ] || fail "$1: $u clients unserved"
	P99=$(json_get "$T/$1.json" latency.p99)
}

mice alone
alone=$P99
"$TENKLOAD" -q -t 1 --mode stream -s 1m -c 1 -d 60s "$ADDR" \
    >"$T/bulk.out" 2>&1 &
bulk=$!
track "$bulk"
sleep 1
alive "$bulk" || fail "bulk: $(cat "$T/bulk.out")"
mice beside
beside=$P99
alive "$bulk" || fail "the bulk stream ended first: $(cat "$T/bulk.out")"
kill "$bulk"
echo "mice p99 alone $alone ns, beside a bulk stream $beside ns:" \
    "ratio $(awk "BEGIN { printf \"%.2f\", $beside / $alone }")"
pass
