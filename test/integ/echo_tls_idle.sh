#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# An idle TLS connection stays small: 1,000 of them to tenkd echo over
# TLS, opened at once, each done with its handshake; a few seconds
# after the burst tenkd's resident memory has grown by under 28 KiB a
# connection (its buffers released at the end of the handshake, the
# heap the handshakes left given back: tk_tls_trim), and tenkload's
# TLS idle connections are served.  Not under a sanitizer, whose
# allocator keeps its own.
# backends: epoll poll io_uring
# timeout: 240
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_tls.sh"

need_tls
[ -z "$(sanitizer)" ] || skip "memory is the sanitizer's here"
[ "$(nofile)" -ge 2100 ] || skip "RLIMIT_NOFILE $(nofile) under 2100"
tls_certs
# The time limits of a connect and a handshake are long: at a load of
# 16, beside stress-ng, 1,000 handshakes took up to 13 s, and dropped
# SYNs were sent again after 1 and 3 s.
tenkd_start echo --threads 1 --tls-cert "$EC_CERT" --tls-key "$EC_KEY" \
    --tls-handshake-timeout 60s
rss0=$(rss_kb "$TENKD_PID")
# shellcheck disable=SC2046
"$TENKLOAD" -q -t 1 -M idle -c 0 --idle 1000 -d 8s $(be_opt) --tls \
    --connect-rate 5000 --connect-timeout 60s --json "$T/idle.json" \
    "$ADDR" >"$T/idle.out" 2>&1 &
LOAD=$!
track "$LOAD"
_all() {
	[ "$(metric tenkd_connections_active)" = 1000 ]
}
wait_for 60 _all || fail "not 1,000 connections: $(cat "$T/idle.out")"
# The trim comes a second or two after the last handshake.
_small() {
	rss1=$(rss_kb "$TENKD_PID")
	[ $(( (rss1 - rss0) * 1024 / 1000 )) -lt 28672 ]
}
wait_for 30 _small ||
    fail "$(( (rss1 - rss0) * 1024 / 1000 )) B a connection ($rss0 kB, then $rss1 kB)"
echo "idle TLS: $(( (rss1 - rss0) * 1024 / 1000 )) B a connection"
wait_exit 90 "$LOAD"
[ "$STATUS" -eq 0 ] || fail "tenkload: $(cat "$T/idle.out")"
load_has idle connections.open_at_end -eq 1000 "not all open at the end"
pass
