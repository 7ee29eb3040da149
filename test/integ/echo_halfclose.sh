#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Half-close: the client sends 1 MiB and shuts down its write side at
# once, with most of it still in flight; tenkd echoes every byte, then
# closes.  Also with a small --buffer-limit, so that the FIN arrives
# while tenkd is in backpressure.
# timeout: 60
. "$(dirname "$0")/lib.sh"

tenkd_start echo --threads 2
"$TKCLI" echo -H -c 8 -b 1m "$ADDR" || fail "half-close, 1 MiB"
"$TKCLI" echo -H -c 20 -b 1-2m -w 1-64k "$ADDR" || fail "half-close, sizes"

tenkd_start echo --threads 1 --buffer-limit 4k
"$TKCLI" echo -H -c 8 -b 1m -w 16k-64k "$ADDR" ||
    fail "half-close with a 4k buffer limit"
s=$(tenkd_stats) || exit 1
[ "$(stat_val "$s" eof)" -eq 8 ] || fail "closes: $s"
pass
