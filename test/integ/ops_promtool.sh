#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# /metrics passes Prometheus' own linter, promtool check metrics, in each
# shape the page takes after traffic: echo, echo under --workers 2, a
# proxy (upstream series, the connect-time histogram, both sides' bytes),
# a proxy under --workers 2, with --balance hash too (the table's slots),
# and echo on io_uring (its own families) where the kernel serves it.
# promtool comes with Debian's prometheus package, which starts a
# service: make test-deps installs it.
# backends: none
# timeout: 120
. "$(dirname "$0")/lib.sh"

command -v promtool >/dev/null 2>&1 ||
    skip "no promtool (make test-deps installs Debian's prometheus as root)"

# lint NAME: the page, through promtool; its findings fail the test.
lint() {
	http_get "http://$METRICS/metrics" >"$T/$1.txt" || fail "$1: no /metrics"
	grep -q '^tenkd_connections_accepted_total' "$T/$1.txt" ||
	    fail "$1: not the page: $(head -c 300 "$T/$1.txt")"
	promtool check metrics <"$T/$1.txt" >"$T/$1.lint" 2>&1 ||
	    fail "$1: promtool: $(head -n 20 "$T/$1.lint")"
}

# shape NAME MODE ARGS...: tenkd MODE ARGS, 10 clients, the page linted.
shape() {
	_shape=$1
	shift
	tenkd_start "$@"
	"$TKCLI" echo -c 10 -b 1-4k "$ADDR" >/dev/null || fail "$_shape: echo"
	lint "$_shape"
	kill -TERM "$TENKD_PID"
	wait_exit 20 "$TENKD_PID"
}

upstream_start --threads 1
shape echo echo --threads 2
shape echo-workers echo --threads 1 --workers 2
shape proxy proxy --threads 2 -u "$UPADDR"
grep -q '^tenkd_upstream_connect_duration_seconds_bucket' "$T/proxy.txt" ||
    fail "proxy: no histogram"
grep -q 'side="upstream"' "$T/proxy.txt" || fail "proxy: no upstream side"
shape proxy-workers proxy --threads 1 --workers 2 -u "$UPADDR"
shape proxy-hash proxy --threads 1 --workers 2 --balance hash -u "$UPADDR"
grep -q '^tenkd_upstream_hash_slots{' "$T/proxy-hash.txt" ||
    fail "--balance hash: no tenkd_upstream_hash_slots"
if "$TENKD" echo --check --backend io_uring >/dev/null 2>&1; then
	shape uring echo --threads 1 --backend io_uring
	grep -q '^tenkd_uring_ring_dry_total' "$T/uring.txt" ||
	    fail "io_uring: no tenkd_uring_ families"
fi
kill -TERM "$UP_PID"
pass
