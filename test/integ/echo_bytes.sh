#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Byte-exact echo of random sizes from 1 B to 4 MiB, sent in random-size
# writes (from 1 B up), on several connections at once, with stats
# agreeing on bytes in and out.
# timeout: 60
. "$(dirname "$0")/lib.sh"

tenkd_start echo --threads 2
seed=$(( $$ % 1000 + 1 ))

"$TKCLI" echo -c 1 -b 1 -s "$seed" "$ADDR" || fail "1 byte"
"$TKCLI" echo -c 1 -b 4m -s "$seed" "$ADDR" || fail "4 MiB"
"$TKCLI" echo -c 24 -b 1-4m -w 1-64k -s "$seed" "$ADDR" ||
    fail "random sizes, seed $seed"
"$TKCLI" echo -c 4 -b 64k-256k -w 1-300 -s "$seed" "$ADDR" ||
    fail "small writes, seed $seed"
"$TKCLI" echo -c 50 -r 4 -b 1-100k -s "$seed" "$ADDR" ||
    fail "rounds, seed $seed"

s=$(tenkd_stats) || exit 1
in=$(stat_val "$s" in)
out=$(stat_val "$s" out)
{ [ "$in" -gt 0 ] && [ "$in" = "$out" ]; } || fail "bytes in $in, out $out"
alive "$TENKD_PID" || fail "tenkd died"
pass
