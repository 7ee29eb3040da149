#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A refused upstream: every client is still served (the connect fails
# over to the next upstream), the dead one is counted and, after
# --fail-max failures, skipped.  With every upstream refused, the client
# is closed promptly and the access log says why.
# timeout: 60
. "$(dirname "$0")/lib.sh"

dead=$(dead_addr)
dead2=$(dead_addr)
upstream_start --threads 1
tenkd_start proxy --threads 2 -u "$dead" -u "$UPADDR" --fail-max 3 \
    --fail-timeout 1h --access-log "$T/acc"
"$TKCLI" echo -c 40 -b 1-64k "$ADDR" || fail "with a refused upstream"
s=$(tenkd_stats) || exit 1
[ "$(ups_stat "$UPADDR" sessions)" -eq 40 ] || fail "sessions: $s"
f=$(ups_stat "$dead" fails)
[ "$f" -ge 3 ] || fail "fails on the dead upstream: $f"
# Down now: the next clients do not even try it.
"$TKCLI" echo -c 40 -b 1-64k "$ADDR" || fail "with a down upstream"
s=$(tenkd_stats) || exit 1
[ "$(ups_stat "$dead" fails)" -eq "$f" ] || fail "a down upstream was tried"
[ "$(ups_stat "$UPADDR" sessions)" -eq 80 ] || fail "sessions: $s"
grep "stats upstream $dead:" "$TENKD_STATS" | tail -n 1 | grep -q ': down ' ||
    fail "dead upstream not marked down"
grep -q "upstream $dead is down" "$TENKD_LOG" || fail "no 'down' warning"
wait_line 10 "$T/acc" "tries=2 client/eof eof" || fail "no failover logged"

# All refused: closed at once, with the reason.
tenkd_start proxy --threads 1 -u "$dead" -u "$dead2" --retries 3 \
    --access-log "$T/acc2"
px_got "all refused" 0 -n 10 -T 10 "$ADDR"
t=$PX_SECS
awk_true "$t < 5" || fail "closed only after $t s"
access_line "$T/acc2" "proxy - .* tries=4 upstream/connect refused"

# All down (marked by passive health): closed at once, "no-upstream".
tenkd_start proxy --threads 1 -u "$dead" --fail-max 1 --fail-timeout 1h \
    --retries 0 --access-log "$T/acc3"
"$PXTOOL" client -n 10 -T 10 "$ADDR" >/dev/null || fail "first client"
px_got "all down" 0 -n 10 -T 10 "$ADDR"
access_line "$T/acc3" "tries=0 tenkd/connect no-upstream"
pass
