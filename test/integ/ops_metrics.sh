#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --metrics: /metrics parses as Prometheus text (python3-prometheus-client,
# a real parser) and its counters match a known load and the access log,
# also with --workers 2 (one series per worker, summing to the load, and
# no family with a sum beside them) and after a worker was killed (no
# counter goes back), and a proxy's upstream series and byte counts by
# side; other paths get 404; an oversized or slow request is closed; a
# non-loopback address is warned about once.
# backends: none
# timeout: 120
. "$(dirname "$0")/lib.sh"

# Debian's package is for the system interpreter, not a pyenv shim.
PY=/usr/bin/python3
"$PY" -c 'import prometheus_client' 2>/dev/null ||
    skip "no python3-prometheus-client for $PY (make test installs it as root)"

# scrape OUT: /metrics through the parser, one "name{k=v,...} value" a
# line in OUT (labels sorted, integral values without a fraction).
scrape() {
	http_get "http://$METRICS/metrics" >"$1.txt" || fail "no /metrics"
	"$PY" - "$1.txt" >"$1" <<'PYEOF' || fail "parser: $(head -c 600 "$1.txt")"
import sys
from prometheus_client.parser import text_string_to_metric_families
with open(sys.argv[1]) as f:
    text = f.read()
for fam in text_string_to_metric_families(text):
    for s in fam.samples:
        lab = ",".join("%s=%s" % kv for kv in sorted(s.labels.items()))
        v = s.value
        v = "%d" % v if v == int(v) else repr(v)
        print("%s{%s} %s" % (s.name, lab, v))
PYEOF
}

# val FILE SERIES: the value of one series, as "name{k=v}".
val() {
	awk -v k="$2" '$1 == k { print $2; found = 1 } END { exit !found }' \
	    "$1" || fail "no $2 in $(cat "$1")"
}

_lines() {
	[ -f "$1" ] && [ "$(grep -c . "$1")" -ge "$2" ]
}

# wsum FILE: the series of a scrape under --workers summed over their
# worker label, into FILE.sum ("name{k=v} sum", as val reads them).
# Fails on a series without a worker label: a sum beside the workers'
# own in one family would be counted twice by a query that sums it.
wsum() {
	awk '{
		k = $1
		if (k !~ /[{,]worker=/) {
			print "no worker label: " $0
			bad = 1
			next
		}
		sub(/,?worker=[^,}]*/, "", k)
		sub(/{,/, "{", k)
		s[k] += $2
	}
	END {
		for (k in s)
			if (s[k] == int(s[k]))
				printf "%s %.0f\n", k, s[k]
			else
				printf "%s %.6f\n", k, s[k]
		exit bad
	}' "$1" >"$1.sum" || fail "$(grep 'no worker label' "$1.sum")"
}

tenkd_start echo --threads 2 --access-log "$T/acc"
"$TKCLI" echo -c 30 -b 1-4k "$ADDR" >"$T/out" || fail "echo"
bytes=$(sed -n 's/.* \([0-9][0-9]*\) bytes verified.*/\1/p' "$T/out")
wait_for 10 _lines "$T/acc" 30 || fail "access log"
scrape "$T/m1"
[ "$(val "$T/m1" 'tenkd_connections_accepted_total{}')" -eq 30 ] ||
    fail "accepted: $(grep accepted "$T/m1")"
[ "$(val "$T/m1" 'tenkd_connections_accepted_total{}')" -eq \
    "$(grep -c . "$T/acc")" ] || fail "accepted != access log lines"
[ "$(val "$T/m1" 'tenkd_connections_closed_total{reason=eof}')" -eq 30 ] ||
    fail "closed eof"
[ "$(val "$T/m1" 'tenkd_connections_active{}')" -eq 0 ] || fail "active"
[ "$(val "$T/m1" 'tenkd_received_bytes_total{side=client}')" -eq \
    "$bytes" ] || fail "received != $bytes"
[ "$(val "$T/m1" 'tenkd_sent_bytes_total{side=client}')" -eq "$bytes" ] ||
    fail "sent != $bytes"
# Echo has no upstream side, and io_uring's families come only with it
# (the default backend here is another).
grep -q 'side=upstream' "$T/m1" && fail "an upstream side in echo mode"
grep -q '^tenkd_uring_' "$T/m1" && fail "io_uring's families without it"
[ "$(val "$T/m1" 'tenkd_loop_iterations_total{}')" -gt 0 ] ||
    fail "no loop iterations"
for m in process_cpu_seconds_total process_resident_memory_bytes \
    process_open_fds process_max_fds process_start_time_seconds \
    tenkd_buffers_in_use; do
	val "$T/m1" "$m{}" >/dev/null
done
grep -q '^tenkd_.*worker=' "$T/m1" && fail "worker labels without workers"
# /stats is the statistics page.
http_get "http://$METRICS/stats" | grep -q '^stats total: accepted 30 ' ||
    fail "/stats"

# Other paths, a request head over 8 KiB, a request never finished.
"$PY" - "$METRICS" <<'PYEOF' || fail "HTTP edge cases"
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
def ask(data, wait=10):
    s = socket.create_connection((host, int(port)), timeout=wait)
    out = b""
    try:
        s.sendall(data)
        while True:
            b = s.recv(65536)
            if not b:
                return out
            out += b
    except ConnectionResetError:
        return out
r = ask(b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
assert r.startswith(b"HTTP/1.1 404 "), r[:80]
head, _, body = r.partition(b"\r\n\r\n")
assert body == b"not found: try /metrics or /stats\n", body
assert b"Content-Length: %d\r\n" % len(body) in head, head
r = ask(b"POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
assert r.startswith(b"HTTP/1.1 405 "), r[:80]
r = ask(b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 9000)
assert r == b"", r[:80]
r = ask(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
assert r == b"", r[:80]
PYEOF
kill -TERM "$TENKD_PID"
wait_exit 10 "$TENKD_PID"

# A non-loopback address: one warning.
"$TENKD" echo --threads 1 --listen 127.0.0.1:0 --metrics 0.0.0.0:0 \
    2>"$T/wild" &
wp=$!
track "$wp"
wait_line 10 "$T/wild" 'listening on' || fail "no start: $(cat "$T/wild")"
[ "$(grep -c 'not a loopback address' "$T/wild")" -eq 1 ] ||
    fail "no warning: $(cat "$T/wild")"
kill -TERM "$wp"
wait_exit 10 "$wp"

# Proxy: the upstream's series and the connect-time histogram.
upstream_start --threads 1
tenkd_start proxy --threads 2 -u "$UPADDR"
"$TKCLI" echo -c 10 -b 1-4k "$ADDR" >"$T/pout" || fail "echo through the proxy"
bytes=$(sed -n 's/.* \([0-9][0-9]*\) bytes verified.*/\1/p' "$T/pout")
scrape "$T/p1"
# Each byte crosses both sides once each way: the clients' bytes apart
# from the upstream's, and each side's equal to what the clients sent.
for m in received sent; do
	for side in client upstream; do
		[ "$(val "$T/p1" "tenkd_${m}_bytes_total{side=$side}")" -eq \
		    "$bytes" ] || fail "$m on the $side side != $bytes:" \
		    "$(grep _bytes_total "$T/p1")"
	done
done
[ "$(val "$T/p1" "tenkd_upstream_sessions_total{upstream=$UPADDR}")" -eq 10 ] ||
    fail "upstream sessions: $(grep upstream_sessions "$T/p1")"
[ "$(val "$T/p1" "tenkd_upstream_up{upstream=$UPADDR}")" -eq 1 ] ||
    fail "upstream not up"
[ "$(val "$T/p1" \
    'tenkd_upstream_connect_duration_seconds_count{}')" -eq 10 ] ||
    fail "connect histogram: $(grep duration "$T/p1")"
[ "$(val "$T/p1" \
    'tenkd_upstream_connect_duration_seconds_bucket{le=+Inf}')" -eq 10 ] ||
    fail "connect histogram +Inf"
kill -TERM "$TENKD_PID" "$UP_PID"
wait_exit 10 "$TENKD_PID"

# wscrape NAME N: once the access log has N lines (N clients served),
# the page in $T/NAME, its sums over the workers in $T/NAME.sum, which
# must count N accepted.
wscrape() {
	wait_for 10 _lines "$T/wacc" "$2" || fail "$1: access log"
	scrape "$T/$1"
	wsum "$T/$1"
	[ "$(val "$T/$1.sum" 'tenkd_connections_accepted_total{}')" -eq \
	    "$2" ] || fail "$1: accepted: $(grep accepted "$T/$1")"
}

# --workers 2: one page with each worker's series, which sum to what
# the clients did, and no sum beside them; process_* of each process,
# the master's too; a killed worker's counters stay in its slot.
tenkd_start echo --threads 1 --workers 2 --access-log "$T/wacc"
"$TKCLI" echo -c 40 -b 1-4k "$ADDR" >"$T/wout" || fail "echo with workers"
bytes=$(sed -n 's/.* \([0-9][0-9]*\) bytes verified.*/\1/p' "$T/wout")
wscrape w1 40
[ "$(val "$T/w1.sum" 'tenkd_connections_closed_total{reason=eof}')" -eq \
    40 ] || fail "workers: closed: $(grep closed "$T/w1")"
[ "$(val "$T/w1.sum" 'tenkd_received_bytes_total{side=client}')" -eq \
    "$bytes" ] || fail "workers: received != $bytes"
[ "$(val "$T/w1.sum" 'tenkd_sent_bytes_total{side=client}')" -eq \
    "$bytes" ] || fail "workers: sent != $bytes"
[ "$(val "$T/w1.sum" 'tenkd_connections_active{}')" -eq 0 ] ||
    fail "workers: active"
w0=$(val "$T/w1" 'tenkd_connections_accepted_total{worker=0}')
w1=$(val "$T/w1" 'tenkd_connections_accepted_total{worker=1}')
[ $((w0 + w1)) -eq 40 ] || fail "workers: $w0 + $w1 != 40"
for m in process_cpu_seconds_total process_resident_memory_bytes \
    process_open_fds process_max_fds process_start_time_seconds; do
	for w in master 0 1; do
		val "$T/w1" "$m{worker=$w}" >/dev/null
	done
done
kid=$(pgrep -P "$TENKD_PID" | head -n 1)
[ -n "$kid" ] || fail "no worker"
kill -KILL "$kid"
wait_line 10 "$TENKD_LOG" 'killed by signal 9; restarting' ||
    fail "no restart"
_nkids() {
	[ "$(pgrep -c -P "$TENKD_PID")" -eq 2 ]
}
wait_for 10 _nkids || fail "worker not restarted"
"$TKCLI" echo -c 10 -b 1-4k "$ADDR" || fail "echo after the kill"
wscrape w2 50
[ "$(val "$T/w2.sum" 'tenkd_connections_accepted_total{}')" -eq \
    "$(grep -c . "$T/wacc")" ] || fail "workers: != access log lines"
# Every counter of each worker is at least what it was.
"$PY" - "$T/w1" "$T/w2" <<'PYEOF' || fail "a counter went backwards"
import sys
def load(p):
    d = {}
    for line in open(p):
        k, v = line.rsplit(" ", 1)
        d[k] = float(v)
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
bad = [k for k in a if (k.split("{")[0].endswith("_total") and
       not k.startswith("process_") and b.get(k, -1) < a[k])]
if bad:
    print(bad)
    sys.exit(1)
PYEOF
kill -TERM "$TENKD_PID"
wait_exit 20 "$TENKD_PID"
pass
