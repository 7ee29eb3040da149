#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Fairness: with one thread busy echoing two bulk streams as fast as
# loopback goes, 100 ping-pong clients still get their 100 rounds each
# through, long before the bulk transfer ends.
# timeout: 60
. "$(dirname "$0")/lib.sh"

tenkd_start echo --threads 1
"$TKCLI" echo -c 2 -b 8g -w 64k -T 50 "$ADDR" >"$T/bulk" 2>&1 &
bulk=$!
track "$bulk"
sleep 0.5
alive "$bulk" || fail "bulk: $(cat "$T/bulk")"
"$TKCLI" echo -c 100 -r 100 -b 64 -w 64 -T 30 "$ADDR" >"$T/pp" ||
    fail "ping-pong starved: $(cat "$T/pp")"
alive "$bulk" || fail "bulk ended first: $(cat "$T/bulk")"
echo "beside the bulk streams: $(cat "$T/pp")"
pass
