#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --splice auto: small ping-pong keeps the copy path (nothing spliced),
# bulk streams both ways move by splice(2) and arrive byte-exact, a
# half-close in the middle of a spliced stream passes the FIN on after
# the last byte, and at the end no pipe is in use and none holds bytes;
# the spare pipes are closed after an idle while, and tenkd's
# descriptors come back to what they were before the bulk streams; and
# no splice asks for more than a pass's budget (128 KiB), so that a bulk
# stream takes its share of a pass and no more (issue 22).  The size is
# what the splicefail shim (test/shim) saw asked.
# timeout: 180
. "$(dirname "$0")/lib.sh"

upstream_start --threads 1
tenkd_start proxy --threads 1 -u "$UPADDR" --access-log "$T/acc"
"$TKCLI" echo -c 50 -r 20 -b 64 "$ADDR" || fail "ping-pong"
s=$(tenkd_stats) || exit 1
[ "$(stat_val "$s" spliced)" -eq 0 ] || fail "64-byte messages spliced: $s"
fds() {
	find "/proc/$TENKD_PID/fd" -mindepth 1 -maxdepth 1 | wc -l
}
fd0=$(fds)

"$TKCLI" echo -c 4 -b 32m -w 64k "$ADDR" || fail "bulk, spliced"
s=$(tenkd_stats) || exit 1
sp=$(stat_val "$s" spliced)
# Both ways, 4 x 32 MiB each: most of it spliced.
spliced_gt "$s" $((4 * 2 * 16 << 20)) "bulk not spliced"
[ "$(stat_val "$s" in)" -eq "$(stat_val "$s" out)" ] ||
    fail "bytes in and out differ: $s"

"$TKCLI" echo -H -c 4 -b 16m -w 64k "$ADDR" || fail "half-close, spliced"
s=$(tenkd_stats) || exit 1
spliced_gt "$s" "$sp" "half-close not spliced"
[ "$(stat_val "$s" pipes)" -eq 0 ] || fail "pipes in use at rest: $s"
[ "$(stat_val "$s" piped)" -eq 0 ] || fail "bytes left in pipes: $s"
[ "$(stat_val "$s" eof)" -eq 58 ] || fail "closes: $s"
# Records are written out up to a second after the close.
_lines() {
	[ "$(grep -c . "$T/acc")" -ge 58 ]
}
wait_for 10 _lines || fail "access log: $(grep -c . "$T/acc") lines"
n=$(grep -c " in=33554432 out=33554432 tries=1 client/eof eof\$" "$T/acc")
[ "$n" -eq 4 ] || fail "access log of the bulk sessions: $n lines"
n=$(grep -c " in=16777216 out=16777216 tries=1 client/eof eof\$" "$T/acc")
[ "$n" -eq 4 ] || fail "access log of the half-closed sessions: $n lines"

# The spare pipes go after 5 s unused (DP_PIPE_IDLE).
fd1=$(fds)
tenkd_completions || [ "$fd1" -gt "$fd0" ] ||
    fail "no spare pipe kept: $fd0 descriptors before, $fd1 after"
_fds_back() {
	[ "$(fds)" -le "$fd0" ]
}
wait_for 20 _fds_back ||
    fail "descriptors $fd0 before the bulk streams, $(fds) 20 s after"
echo "descriptors: $fd0 before the bulk streams, $fd1 after, $(fds) at" \
    "rest"

LD_PRELOAD=$TK_BIN/test/splicefail.so SPLICEMAX=$T/most \
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
    tenkd_start proxy --threads 1 -u "$UPADDR"
"$TKCLI" echo -c 2 -b 32m -w 64k "$ADDR" || fail "bulk, spliced, shim"
if tenkd_completions; then
	[ ! -s "$T/most" ] || fail "spliced on completions: $(cat "$T/most")"
else
	[ -s "$T/most" ] || fail "no splice seen"
	[ "$(cat "$T/most")" -le 131072 ] ||
	    fail "a splice of up to $(cat "$T/most") bytes: past the budget"
	echo "the biggest splice asked for $(cat "$T/most") bytes"
fi
pass
