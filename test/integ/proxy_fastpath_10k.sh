#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --fastpath sockmap at scale: 10,000 sessions open at once (as
# proxy_10k.sh: --workers 2, whose processes share the map),
# ping-ponging verified messages through the kernel, every one served
# without error.  No bulk stream here: on Linux 6.18 a passed segment
# was delivered twice under load (8 and 64 MiB each way through four
# sessions, 1 to 7 runs in 60; BENCHMARKS.md), which no fix in tenkd
# reaches; proxy_fastpath and proxy_fastpath_duplex stream 1 and 4 MiB.
# Sized from RLIMIT_NOFILE; skips where tenkd cannot load the program.
# backends: epoll
# timeout: 300
. "$(dirname "$0")/lib.sh"

n=10000
lim=$(nofile)
if [ "$lim" != unlimited ] && [ "$lim" -lt $((n + 200)) ]; then
	n=$((lim - 200))
	echo "ulimit -n $lim: $n sessions"
fi
mu=0
[ "$(sanitizer)" = thread ] && mu=$((n / 10))
upstream_start --threads 2
tenkd_start proxy --workers 2 --threads 1 -u "$UPADDR" --fastpath sockmap
grep -q 'sessions forwarded by the kernel' "$TENKD_LOG" ||
    skip "$(grep -- '--fastpath' "$TENKD_LOG")"
pingpong_all "$n" "$mu"
# Both workers' figures: /metrics has a series for each.
m=$(http_get "http://$METRICS/metrics") || fail "no /metrics"
fs=$(echo "$m" | awk '/^tenkd_fastpath_sessions_total[{ ]/ { n += $NF }
    END { print n + 0 }')
fb=$(echo "$m" | awk '/^tenkd_fastpath_bytes_total[{ ]/ { n += $NF }
    END { print n + 0 }')
echo "10,000 sessions: $fs in the map, $fb bytes by the kernel"
[ "$fs" -ge "$n" ] || fail "sessions in the map: $fs of $n"
[ "$fb" -gt 0 ] || fail "no byte forwarded by the kernel"
"$TKCLI" echo -c 10 -b 1-64k "$ADDR" || fail "echo after the load"
pass
