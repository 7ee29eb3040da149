#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A blackholed upstream (a listener that never accepts, its backlog
# full, so SYNs go unanswered): each attempt on it ends at
# --connect-timeout and the session fails over to the next upstream.
# With only blackholes, the client is closed after the attempts, and the
# log says timeout/connect.
# timeout: 60
. "$(dirname "$0")/lib.sh"

pxtool_start blackhole
hole=$PXTADDR
upstream_start --threads 1
tenkd_start proxy --threads 1 -u "$hole" -u "$UPADDR" \
    --connect-timeout 500ms --fail-max 1000 --access-log "$T/acc"
"$TKCLI" echo -c 10 -b 1-64k -T 30 "$ADDR" || fail "with a blackhole"
s=$(tenkd_stats) || exit 1
[ "$(ups_stat "$UPADDR" sessions)" -eq 10 ] || fail "sessions: $s"
[ "$(ups_stat "$hole" fails)" -ge 1 ] || fail "no timeout on the blackhole"
wait_line 10 "$T/acc" "tries=2 client/eof eof" || fail "no failover logged"

tenkd_start proxy --threads 1 -u "$hole" --connect-timeout 300ms \
    --retries 2 --access-log "$T/acc2"
px_got "only a blackhole" 0 -n 10 -T 20 "$ADDR"
t=$PX_SECS
awk_true "$t >= 0.8 && $t < 10" || fail "closed after $t s"
access_line "$T/acc2" "tries=3 timeout/connect connect-timeout"
pass
