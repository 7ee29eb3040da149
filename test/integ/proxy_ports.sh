#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Port exhaustion is not the upstream's fault.  In a network namespace
# of its own (so no global sysctl is touched) with an
# ip_local_port_range of 8 ports, pxtool exhaust uses up every port of
# 127.0.0.2 toward the upstream; a proxy that leaves from 127.0.0.2
# then closes each client at once with "tenkd/connect no-port", counts
# it, and does not mark the upstream down, even with --fail-max 1.
# Once the ports are back, clients are served.  With a second --source
# address the connects go out from it and nobody is turned away.
# timeout: 60
. "$(dirname "$0")/lib_netns.sh"
. "$(dirname "$0")/lib.sh"

[ "$TK_NETNS" = 1 ] || skip "no network namespace (unshare -n)"
ip link set lo up 2>/dev/null || skip "cannot bring lo up in the namespace"
range=/proc/sys/net/ipv4/ip_local_port_range

upstream_start --threads 1
tenkd_start proxy --threads 1 -u "$UPADDR" --source 127.0.0.2 \
    --fail-max 1 --fail-timeout 1h --access-log "$T/acc"
proxy=$ADDR
proxy_pid=$TENKD_PID
proxy_log=$TENKD_LOG
proxy_metrics=$METRICS
proxy_stats=$TENKD_STATS
tenkd_start proxy --threads 1 -u "$UPADDR" --source 127.0.0.2,127.0.0.3 \
    --fail-max 1 --fail-timeout 1h --access-log "$T/acc2"
proxy2=$ADDR
# Above every listener's port (bound from the default range), so that
# the narrow range holds only ports nobody has bound.
echo "61000 61007" >"$range" 2>/dev/null ||
    skip "cannot narrow $range in the namespace"

"$PXTOOL" exhaust -S 127.0.0.2 "$UPADDR" >"$T/ex" 2>&1 &
ex=$!
track "$ex"
wait_line 10 "$T/ex" "^held " || fail "exhaust: $(cat "$T/ex")"
echo "pxtool $(cat "$T/ex") connections from 127.0.0.2"

# Every client is turned away at once, with the new code.
for i in 1 2 3 4 5; do
	px_got "no port $i" 0 -n 10 -T 10 "$proxy" >/dev/null
	awk_true "$PX_SECS < 5" || fail "closed only after $PX_SECS s"
done
access_line "$T/acc" "proxy - .* tries=1 tenkd/connect no-port"
# The five may reach the file in two writes, a second apart.
_noport5() {
	[ "$(grep -c 'tenkd/connect no-port' "$T/acc")" -ge 5 ]
}
wait_for 10 _noport5
[ "$(grep -c 'tenkd/connect no-port' "$T/acc")" -eq 5 ] ||
    fail "access log: $(cat "$T/acc")"
grep -q "no local port toward upstream $UPADDR" "$proxy_log" ||
    fail "no warning in the log"
echo "access log: $(tail -n 1 "$T/acc")"

# Counted, and the upstream is still up with no failure against it.
TENKD_PID=$proxy_pid
TENKD_LOG=$proxy_log
METRICS=$proxy_metrics
TENKD_STATS=$proxy_stats
s=$(tenkd_stats) || exit 1
[ "$(stat_val "$s" no-port)" -eq 5 ] || fail "no-port count: $s"
grep "stats upstream $UPADDR:" "$TENKD_STATS" | tail -n 1 | grep -q ': up ' ||
    fail "upstream marked down: $(grep 'stats upstream' "$TENKD_STATS")"
[ "$(ups_stat "$UPADDR" fails)" -eq 0 ] || fail "fails counted"
! grep -q "is down" "$TENKD_LOG" || fail "a 'down' warning"

# A second source address has its own ports: everyone is served (six
# clients: their own connects to the proxy share the 8 ports).
"$TKCLI" echo -c 6 -b 1-4k "$proxy2" ||
    fail "with a second --source address"

# Ports back: the same proxy serves again, on the same upstream.
kill -TERM "$ex"
wait "$ex" 2>/dev/null
# pxtool's closes left TIME_WAIT on those tuples; connect(2) reuses
# one once it is a second old (net.ipv4.tcp_tw_reuse, on for loopback).
_served() {
	"$PXTOOL" client -n 10 -T 10 "$proxy" 2>&1 | grep -q '^got 10 bytes'
}
sleep 1
wait_for 10 _served || fail "not served once the ports were back"
s=$(tenkd_stats) || exit 1
[ "$(ups_stat "$UPADDR" sessions)" -ge 1 ] || fail "sessions: $s"
pass
