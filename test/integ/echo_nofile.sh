#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# As many concurrent connections as RLIMIT_NOFILE allows for both the
# client and the server (ulimit -n less a margin, at most 19,800), each
# verified twice while all are open.
# backends: epoll poll
# timeout: 120
. "$(dirname "$0")/lib.sh"

n=$(( $(nofile) - 150 ))
[ "$n" -gt 19800 ] && n=19800
[ "$n" -ge 1000 ] || skip "ulimit -n $(nofile) is too low"
tenkd_start echo --threads 2
grep -q 'max-conns' "$TENKD_LOG" || fail "no max-conns line"

"$TKCLI" echo -c "$n" -r 2 -b 1-64 -P 512 -S 16 -T 90 "$ADDR" >"$T/out" ||
    fail "$n connections"
cat "$T/out"
s=$(tenkd_stats) || exit 1
[ "$(stat_val "$s" accepted)" -eq "$n" ] || fail "accepted: $s"
pass
