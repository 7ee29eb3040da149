#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A slow access log never stalls the data path (issue 22): its write(2)
# was made on the worker threads, so a log path that stops answering
# (here an LD_PRELOAD shim holds every write to it) stopped every
# client.  Now the writer thread waits alone: 2,000 echo clients are
# served meanwhile, the records past --access-log-buffer are dropped
# and counted (log-dropped, tenkd_access_log_dropped_total), and once
# the path answers again every record is written or counted.
# timeout: 120
. "$(dirname "$0")/lib.sh"

# _all: every record of $1 connections is in the file or dropped.
_all() {
	s=$(tenkd_stats) || return 1
	d=$(stat_val "$s" log-dropped)
	[ $(($(wc -l <"$T/acc") + d)) -eq "$1" ]
}

touch "$T/stall"
SLOWWRITE_PATH=$T/acc SLOWWRITE_STALL=$T/stall \
    LD_PRELOAD=$TK_BIN/test/slowwrite.so \
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
    tenkd_start echo --threads 2 --access-log "$T/acc" \
    --access-log-buffer 32k
i=0
while [ "$i" -lt 40 ]; do
	"$TKCLI" echo -c 50 -b 1-64 -T 30 "$ADDR" >/dev/null ||
	    fail "round $i: echo clients not served while the log stalls"
	i=$((i + 1))
done
[ ! -s "$T/acc" ] || fail "written while the log stalls"
s=$(tenkd_stats) || exit 1
d=$(stat_val "$s" log-dropped)
[ "$(stat_val "$s" accepted)" -eq 2000 ] || fail "accepted: $s"
[ "${d:-0}" -gt 0 ] || fail "none dropped: $s"
grep -q 'access log behind by --access-log-buffer 32768' "$TENKD_LOG" ||
    fail "the drops not said"
# The workers' next flushes may drop more meanwhile.
m=$(http_get "http://$METRICS/metrics" |
    sed -n 's/^tenkd_access_log_dropped_total \([0-9]*\)$/\1/p')
[ "${m:-0}" -ge "$d" ] || fail "metrics: $m dropped, /stats said $d"
rm "$T/stall"
wait_for 20 _all 2000 ||
    fail "$(wc -l <"$T/acc") records written, $d dropped, of 2000"
echo "$(wc -l <"$T/acc") records written, $d dropped"
kill -TERM "$TENKD_PID"
wait_exit 20 "$TENKD_PID"
[ "$STATUS" -eq 0 ] || fail "exit status $STATUS"
pass
