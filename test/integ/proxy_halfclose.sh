#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Half-close both ways.  The client sends and shuts down its write side;
# the upstream replies 2 s later: the reply arrives whole.  The upstream
# sends first and shuts down; the client, having read it all, sends: the
# upstream receives it all.  A silent half-closed peer is closed at
# --fin-timeout, and the log says so.
# timeout: 60
. "$(dirname "$0")/lib.sh"

pxtool_start upstream -d 2000
tenkd_start proxy --threads 1 -u "$PXTADDR" --access-log "$T/acc"
px_got "client to upstream FIN" 100000 -n 100000 -T 20 "$ADDR"
t=$PX_SECS
awk_true "$t >= 1.5" || fail "the reply came before the upstream sent it"

pxtool_start upstream -f 300000
tenkd_start proxy --threads 1 -u "$PXTADDR" --access-log "$T/acc2"
out=$("$PXTOOL" client -r -n 250000 -T 20 "$ADDR") || fail "client: $out"
echo "upstream to client FIN: $out"
wait_line 10 "$PXT_OUT" '^received 250000$' ||
    fail "upstream received: $(cat "$PXT_OUT")"
access_line "$T/acc2" 'in=250000 out=300000 tries=1 upstream/eof eof'

pxtool_start upstream -s
tenkd_start proxy --threads 1 -u "$PXTADDR" --fin-timeout 1s \
    --access-log "$T/acc3"
px_got "silent upstream" 0 -n 5000 -T 20 "$ADDR"
t=$PX_SECS
awk_true "$t >= 0.8 && $t < 10" || fail "closed after $t s, not at 1s"
access_line "$T/acc3" 'in=5000 out=0 tries=1 timeout/fin fin-timeout'
pass
