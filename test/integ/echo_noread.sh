#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Clients that send and never read: tenkd's memory (VmRSS) grows by no
# more than connections x --buffer-limit plus a margin, and another
# client's echo, bulk and ping-pong, still works meanwhile.
# timeout: 60
. "$(dirname "$0")/lib.sh"

nc=20
tenkd_start echo --threads 2 --buffer-limit 64k
"$TKCLI" echo -c 4 -b 1m "$ADDR" || fail "warm-up echo"
rss0=$(rss_kb "$TENKD_PID")

"$TKCLI" noread -c "$nc" "$ADDR" >"$T/noread" 2>&1 &
track $!
wait_line 20 "$T/noread" stalled || fail "the clients never stalled"

# Others are served while those are stuck.
"$TKCLI" echo -c 10 -b 1m "$ADDR" || fail "bulk echo beside stuck clients"
"$TKCLI" echo -c 1 -r 300 -b 64 -T 20 "$ADDR" >"$T/pp" ||
    fail "ping-pong beside stuck clients"

rss1=$(rss_kb "$TENKD_PID")
# Buffers come in 16 KiB pool units, so allow 5 per 64k, plus 4 MiB;
# ThreadSanitizer's shadow memory and allocator take about 4 times that.
# The pool count below is exact under any build.  On io_uring's
# completions a flow's last receive may pass the limit by less than one
# 16k ring buffer: one unit more.
per=5
tenkd_completions && per=6
max=$(( rss0 + nc * per * 16 + 4096 ))
[ "$(sanitizer)" = thread ] && max=$(( rss0 + 4 * (nc * per * 16 + 4096) ))
[ "$rss1" -le "$max" ] ||
    fail "VmRSS $rss0 -> $rss1 KiB, bound $max KiB"
s=$(tenkd_stats) || exit 1
b=$(stat_val "$s" bufs)
{ [ "$b" -gt 0 ] && [ "$b" -le $(( nc * per )) ]; } ||
    fail "pool buffers in use $b, wanted 1 to $(( nc * per )): $s"
echo "VmRSS $rss0 -> $rss1 KiB with $nc stuck clients, $b buffers"
pass
