#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Clients that send and never read: the proxy queues at most
# --buffer-limit per direction, stops reading the side that fills it,
# and the upstream's own backpressure does the rest.  Its memory stays
# bounded and other clients are served meanwhile.
# timeout: 90
. "$(dirname "$0")/lib.sh"

n=50
upstream_start --threads 1 --buffer-limit 16k
tenkd_start proxy --threads 1 -u "$UPADDR" --buffer-limit 16k
"$TKCLI" echo -c 10 -b 64k "$ADDR" || fail "warm-up"
rss0=$(rss_kb "$TENKD_PID")
"$TKCLI" noread -c "$n" "$ADDR" >"$T/nr" 2>&1 &
nr=$!
track "$nr"
wait_line 60 "$T/nr" '^stalled' || fail "noread: $(cat "$T/nr")"
sleep 1
"$TKCLI" echo -c 20 -b 1-256k "$ADDR" || fail "others starved"
rss1=$(rss_kb "$TENKD_PID")
s=$(tenkd_stats) || exit 1
bufs=$(stat_val "$s" bufs)
echo "rss $rss0 -> $rss1 KiB, pool buffers $bufs, $(cat "$T/nr")"
# Two queues of at most 16k (two pool buffers each) per session; on
# io_uring's completions a queue's last receive may pass the limit by
# less than one 16k ring buffer: three each.
per=4
tenkd_completions && per=6
[ "$bufs" -le $((n * per + 8)) ] || fail "pool buffers: $s"
# ThreadSanitizer's shadow memory and allocator take about 4 times more;
# the pool count above is exact under any build.  AddressSanitizer keeps
# what is freed in a quarantine (256 MiB), which the completion path's
# queue, filled and emptied for every message, runs through: no bound
# on RSS there.
slack=1
[ "$(sanitizer)" = thread ] && slack=4
if [ "$(sanitizer)" = address-undefined ] && tenkd_completions; then
	echo "RSS not bounded under AddressSanitizer's quarantine"
else
	awk_true "$rss1 - $rss0 < $slack * ($n * $per * 16 + 4096)" ||
	    fail "RSS grew from $rss0 to $rss1 KiB"
fi
kill -KILL "$nr"
pass
