#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The metrics listener within the descriptor budget (issue 22): with a
# limit of 200 descriptors, 195 idle clients of the metrics port once
# made the data path's accept4 fail (EMFILE) and echo clients wait.
# Now at most --metrics-max-clients (16) are held, the rest refused at
# once and counted, their room kept out of --max-conns: every echo
# client is served, accepting never pauses, and /stats, once the idle
# ones timed out, counts the refusals.
# timeout: 90
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c '' 2>/dev/null || skip "no python3"

_fds() {
	find "/proc/$TENKD_PID/fd" -mindepth 1 -maxdepth 1 | wc -l
}
_stats() {
	http_get "http://$METRICS/stats" >"$T/stats.page" 2>/dev/null
}

tenkd_start_nofile 200 echo --threads 1
base=$(_fds)
# 195 idle clients of the metrics port, held open.
"$PY" - "$METRICS" 195 >"$T/idle" 2>&1 <<'PYEOF' &
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
held = [socket.create_connection((host, int(port)), timeout=20)
        for _ in range(int(sys.argv[2]))]
print("ready", len(held), flush=True)
time.sleep(120)
PYEOF
idle=$!
track "$idle"
wait_line 30 "$T/idle" '^ready 195' || fail "idle clients: $(cat "$T/idle")"
"$TKCLI" echo -c 5 -b 1-4k "$ADDR" ||
    fail "echo clients beside 195 metrics clients"
# The metrics' 18 at most, and the echo clients' 5 if not closed yet.
n=$(_fds)
[ "$n" -le $((base + 16 + 2 + 5)) ] ||
    fail "$n descriptors open, $base before the metrics clients came"
grep -q 'pausing accepts' "$TENKD_LOG" &&
    fail "the data path ran out of descriptors: $(grep pausing "$TENKD_LOG")"
# The held ones time out (5 s), then /stats answers again.
wait_for 30 _stats || fail "no /stats after the idle clients"
r=$(sed -n 's/^stats metrics: .* refused \([0-9]*\).*/\1/p' "$T/stats.page")
[ "${r:-0}" -ge 179 ] ||
    fail "refused: $(grep 'stats metrics' "$T/stats.page")"
grep -q "more than 16 clients at once" "$TENKD_LOG" ||
    fail "the refusals not logged"
http_get "http://$METRICS/metrics" | grep -q '^tenkd_metrics_refused_total ' ||
    fail "no tenkd_metrics_refused_total"
kill "$idle"
echo "$base descriptors, $n with 195 metrics clients; refused $r"
pass
