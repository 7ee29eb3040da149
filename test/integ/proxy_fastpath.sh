#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --fastpath sockmap: the kernel forwards established sessions.  Byte-
# exact both ways (small messages many rounds, random sizes, bulk with
# its FIN), half-close both ways, clients that reset with bytes in
# flight, and the counts: the access log's in= and out= are what the
# clients sent and got, and /stats shows the kernel moved bytes.  An
# idle session is closed at --idle-timeout while one that talks only
# through the kernel is not.  Skips, saying why, where tenkd cannot
# load the program (not built in, no CAP_BPF).
# backends: epoll poll
# timeout: 180
. "$(dirname "$0")/lib.sh"

# fp_start ARGS...: the proxy with --fastpath sockmap, or skip.
fp_start() {
	tenkd_start proxy --fastpath sockmap "$@"
	grep -q 'sessions forwarded by the kernel' "$TENKD_LOG" ||
	    skip "$(grep -- '--fastpath' "$TENKD_LOG")"
}

# fp_bytes: the bytes the kernel forwarded, from /stats.
fp_bytes() {
	_s=$(tenkd_stats) || exit 1
	stat_val "$_s" fastpath-bytes
}

upstream_start --threads 1
fp_start --threads 2 -u "$UPADDR" --access-log "$T/acc"
"$TKCLI" echo -c 20 -r 300 -b 1-300 "$ADDR" || fail "small messages"
k=$(fp_bytes)
echo "kernel forwarded $k bytes of small messages"
[ "$k" -gt 0 ] || fail "the kernel forwarded nothing: $(tenkd_stats)"
"$TKCLI" echo -c 30 -b 1-1m -w 1-64k "$ADDR" || fail "random sizes"
"$TKCLI" echo -H -c 8 -b 1m "$ADDR" || fail "half-close, 1 MiB"
"$TKCLI" rst -c 20 -b 100000 "$ADDR" >/dev/null 2>&1
"$TKCLI" echo -c 10 -b 1-64k "$ADDR" || fail "echo after the resets"
_lines() {
	[ "$(grep -c 'tries=1 client/eof eof$' "$1")" -ge "$2" ]
}
wait_for 10 _lines "$T/acc" 68 ||
    fail "access log: $(grep -c . "$T/acc") lines"
# Echoed: what each client sent is what it got, both counted.
bad=$(awk '/client\/eof eof$/ {
	for (i = 1; i <= NF; i++) {
		if ($i ~ /^in=/) a = substr($i, 4)
		if ($i ~ /^out=/) b = substr($i, 5)
	}
	if (a != b || a == 0) print
}' "$T/acc" | head -n 3)
[ -z "$bad" ] || fail "in/out differ: $bad"

# Half-close both ways (as proxy_halfclose.sh): the reply after the
# client's FIN arrives whole; the upstream's FIN first, then the client
# sends and the upstream gets it all.
pxtool_start upstream -d 1000
fp_start --threads 1 -u "$PXTADDR" --access-log "$T/acc2"
px_got "client to upstream FIN" 100000 -n 100000 -T 20 "$ADDR"
pxtool_start upstream -f 300000
fp_start --threads 1 -u "$PXTADDR" --access-log "$T/acc3"
out=$("$PXTOOL" client -r -n 250000 -T 20 "$ADDR") || fail "client: $out"
echo "upstream to client FIN: $out"
wait_line 10 "$PXT_OUT" '^received 250000$' ||
    fail "upstream received: $(cat "$PXT_OUT")"
access_line "$T/acc3" 'in=250000 out=300000 tries=1 upstream/eof eof'
[ "$(fp_bytes)" -gt 0 ] || fail "nothing forwarded by the kernel"

# Clients that send and never read: the kernel holds at most a window
# per direction in the redirect (unit/fastpath_slow_reader measures it),
# tenkd at most --buffer-limit, and others are served meanwhile.
n=20
fp_start --threads 1 -u "$UPADDR" --buffer-limit 16k
"$TKCLI" noread -c "$n" "$ADDR" >"$T/nr" 2>&1 &
nr=$!
track "$nr"
wait_line 60 "$T/nr" '^stalled' || fail "noread: $(cat "$T/nr")"
"$TKCLI" echo -c 10 -b 1-256k "$ADDR" || fail "others starved"
s=$(tenkd_stats) || exit 1
echo "slow readers: $(cat "$T/nr"); $s"
[ "$(stat_val "$s" bufs)" -le $((n * 4 + 8)) ] || fail "pool buffers: $s"
kill -KILL "$nr"

# Idle timeout: silent sessions go; talking ones, whose bytes only the
# kernel sees, stay.
fp_start --threads 1 -u "$UPADDR" --idle-timeout 2s --access-log "$T/acc4"
"$TKCLI" echo -c 3 -r 8 -i 0.5 -b 1-300 "$ADDR" || fail "talkers closed"
[ "$(fp_bytes)" -gt 0 ] || fail "talkers not forwarded by the kernel"
grep -q 'idle$' "$T/acc4" && fail "a talker timed out: $(cat "$T/acc4")"
"$TKCLI" hold -e -c 2 -d 20 "$ADDR" >"$T/h" 2>&1 || fail "hold: $(cat "$T/h")"
access_line "$T/acc4" 'tries=1 timeout/data idle'
pass
