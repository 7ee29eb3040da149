#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --max-conns-per-ip: the extra client from a capped address is closed
# at once (logged as tenkd/connect ip-limit), another address is not
# affected, and the count comes back when the clients leave.
# timeout: 60
. "$(dirname "$0")/lib.sh"

upstream_start --threads 1
tenkd_start proxy --threads 2 -u "$UPADDR" --max-conns-per-ip 5 \
    --access-log "$T/acc"
"$TKCLI" hold -c 5 -d 60 "$ADDR" >"$T/h" 2>&1 &
h=$!
track "$h"
wait_line 20 "$T/h" '^ready 5' || fail "hold: $(cat "$T/h")"
out=$("$PXTOOL" client -n 10 -T 10 "$ADDR") || fail "client: $out"
echo "$out" | grep -q '^got 0 bytes' || fail "sixth client: $out"
wait_line 10 "$T/acc" 'tries=0 tenkd/connect ip-limit' ||
    fail "access log: $(cat "$T/acc")"
"$TKCLI" echo -S 1 -c 5 -b 1-10k "$ADDR" || fail "from 127.0.0.2"
kill -TERM "$h"
wait_exit 20 "$h"
_idle() {
	[ "$(stat_val "$(tenkd_stats)" active)" -eq 0 ]
}
wait_for 20 _idle || fail "sessions left"
"$TKCLI" echo -c 5 -b 1-10k "$ADDR" || fail "after the holders left"
pass
