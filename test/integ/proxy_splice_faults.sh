#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Spliced streams when things go wrong: a client that never reads holds
# at most --buffer-limit per direction, or a pipe's 256k, and costs no CPU
# while stalled; a reset from
# either side in the middle of a spliced stream ends the session and
# gives its pipes back; an empty pipe pool leaves bulk streams copying;
# splice(2) failing with EINVAL, before or after bytes went into the
# pipe, falls back to copying with every byte delivered; and after
# 10,000 spliced sessions the descriptors are back where they were.
# timeout: 300
. "$(dirname "$0")/lib.sh"

upstream_start --threads 1 --buffer-limit 16k

# A slow reader: 20 sessions that send and never read.
n=20
tenkd_start proxy --threads 1 -u "$UPADDR" --buffer-limit 16k
"$TKCLI" noread -c "$n" -n 64m "$ADDR" >"$T/nr" 2>&1 &
nr=$!
track "$nr"
wait_line 60 "$T/nr" '^stalled' || fail "noread: $(cat "$T/nr")"
s=$(tenkd_stats) || exit 1
echo "stalled: $(cat "$T/nr"); $s"
spliced_gt "$s" 0 "slow readers not spliced"
# At most 16k a direction in pool buffers (16k - 64 each), or one
# pipe's 256k spliced; on io_uring's completions, less than one 16k ring
# buffer more (its last receive may pass the limit).
per=2
tenkd_completions && per=3
[ "$(stat_val "$s" piped)" -le $((n * 2 * 262144)) ] || fail "piped: $s"
[ "$(stat_val "$s" bufs)" -le $((n * 2 * per)) ] || fail "buffers: $s"
# Stalled, the proxy waits: a flow whose pipe holds bytes does not
# poll its source (it once spun at full CPU here).
c0=$(cpu_ticks "$TENKD_PID")
sleep 2
c1=$(cpu_ticks "$TENKD_PID")
[ $((c1 - c0)) -lt 50 ] || fail "a stalled proxy used $((c1 - c0)) ticks in 2 s"
kill -KILL "$nr"

# The client resets in the middle of its stream.
"$TKCLI" rst -c 10 -b 8m "$ADDR" || fail "client resets"
# The upstream dies in the middle of a stream: its kernel resets.
tenkd_start echo --threads 1
up2=$ADDR
up2pid=$TENKD_PID
tenkd_start proxy --threads 1 -u "$up2" --access-log "$T/acc"
"$TKCLI" echo -c 2 -b 1g -w 64k "$ADDR" >"$T/big" 2>&1 &
big=$!
track "$big"
sleep 1
kill -KILL "$up2pid"
wait_exit 30 "$big"
[ "$STATUS" -ne 0 ] || fail "the client did not see the upstream go"
# Its kernel resets or, with nothing unread, sends a FIN first.  The
# client exits at the first session's end, and its close may reset the
# second before the proxy reads the upstream's reset: that one may be
# the client's, after the upstream's FIN (client/fin reset), or, with
# nothing unread on the client's side either, its FIN (client/eof eof,
# in= equal to out=, seen on io_uring).
_two() {
	[ "$(grep -c -e ' tries=1 .*/\(data\|fin\) reset$' \
	    -e ' tries=1 upstream/' -e ' tries=1 client/eof eof$' \
	    "$T/acc")" -eq 2 ]
}
wait_for 10 _two || fail "access log: $(cat "$T/acc")"
grep -q ' tries=1 upstream/' "$T/acc" ||
    fail "no session ended by the upstream: $(cat "$T/acc")"
s=$(tenkd_stats) || exit 1
[ "$(stat_val "$s" pipes)" -eq 0 ] || fail "pipes in use after resets: $s"
[ "$(stat_val "$s" active)" -eq 0 ] || fail "sessions left: $s"

# One pipe for four bulk streams: the others copy, byte-exact.
tenkd_start proxy --threads 1 -u "$UPADDR" --splice-pipes 1
"$TKCLI" echo -c 4 -b 16m -w 64k "$ADDR" || fail "pool exhausted"
s=$(tenkd_stats) || exit 1
spliced_gt "$s" 0 "nothing spliced"
[ "$(stat_val "$s" nopipe)" -gt 0 ] || [ "$(stat_val "$s" spliced)" -eq 0 ] ||
    fail "no stream went without: $s"

# splice(2) refused: into the pipe, then out of it once bytes are in.
shim=$TK_BIN/test/splicefail.so
for mode in in out; do
	LD_PRELOAD=$shim SPLICEFAIL=$mode \
	    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	    tenkd_start proxy --threads 1 -u "$UPADDR"
	"$TKCLI" echo -c 4 -b 16m -w 64k "$ADDR" ||
	    fail "splice failing ($mode): bytes lost"
	"$TKCLI" echo -H -c 2 -b 4m -w 64k "$ADDR" ||
	    fail "splice failing ($mode): half-close"
	s=$(tenkd_stats) || exit 1
	[ "$(stat_val "$s" spliced)" -eq 0 ] || fail "spliced ($mode): $s"
done

# 10,000 spliced sessions, 100 at a time: descriptors as they were.
_idle() {
	_s=$(tenkd_stats) && [ "$(stat_val "$_s" active)" -eq 0 ]
}
tenkd_start proxy --threads 1 -u "$UPADDR" --splice-pipes 256
"$TKCLI" echo -c 100 -b 96k -w 64k "$ADDR" || fail "warm-up"
wait_for 10 _idle || fail "sessions left after the warm-up"
fd0=$(find "/proc/$TENKD_PID/fd" -mindepth 1 -maxdepth 1 | wc -l)
i=0
while [ "$i" -lt 100 ]; do
	"$TKCLI" echo -c 100 -b 96k -w 64k "$ADDR" >/dev/null ||
	    fail "round $i"
	i=$((i + 1))
done
wait_for 10 _idle || fail "sessions left"
s=$(tenkd_stats) || exit 1
echo "$s"
# Each session splices most of its 96k both ways.
spliced_gt "$s" $((10100 * 96 << 10)) "sessions not spliced"
[ "$(stat_val "$s" nopipe)" -eq 0 ] || fail "pool too small: $s"
fd1=$(find "/proc/$TENKD_PID/fd" -mindepth 1 -maxdepth 1 | wc -l)
echo "descriptors: $fd0 after warm-up, $fd1 after 10,000 sessions"
[ "$fd1" -eq "$fd0" ] || fail "descriptors: $fd0 -> $fd1"
pass
