#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# make c1m's path in seconds: test/bench/c1m.sh with the open-file limit
# lowered to 1024, so that 2,500 connections need several tenkd workers
# and several tenkload processes, as a million do under 20,000.  Every
# connection must be established and verified, with no error, and the
# report must carry every figure the big run prints.
# backends: none
# timeout: 60
# ulimit -H and -n are not POSIX; dash, bash and busybox sh have them.
# shellcheck disable=SC3045
. "$(dirname "$0")/lib.sh"

[ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 1024 ] ||
    skip "ulimit -Hn $(ulimit -Hn) is below 1024"
(
	ulimit -S -n 1024 && ulimit -H -n 1024 || exit 99
	exec sh "$TK_SRC/test/bench/c1m.sh" -b "$TK_BIN" -o "$T/c1m" \
	    -n 2500 -a 100 -d 2 -R 2000 -r 5000
) >"$T/out" 2>&1
st=$?
[ $st -ne 99 ] || skip "cannot lower ulimit -n here"
[ $st -eq 0 ] || fail "exit $st: $(cat "$T/out")"
grep -q 'tenkd echo --workers [2-9]' "$T/out" ||
    fail "one tenkd worker: $(cat "$T/out")"
grep -q 'established 2500 of 2500, errors 0, unserved 0 (tenkload [2-9]' \
    "$T/out" || fail "not all established, or one process: $(cat "$T/out")"
for w in 'connects/s' 'msgs/s, p50' 'B per connection' \
    'B per socket' 'c1m: PASS'; do
	grep -q "$w" "$T/out" || fail "no '$w' in: $(cat "$T/out")"
done
pass
