#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --fastpath sockmap where it cannot be, or stops being: run as a user
# without privileges (no root, no capability), tenkd says so in one line
# and proxies by copying; loaded as root before --user drops the
# privileges, the kernel still forwards; with io_uring's completions it
# is refused in one line; and a session whose map updates start failing
# half-way (a shim makes bpf(2) say ENOMEM) goes on by copying with every
# byte exact and counted.
# backends: none
# timeout: 120
. "$(dirname "$0")/lib.sh"

upstream_start --threads 1

# No privileges at all: one line, then a proxy that copies.
command -v setpriv >/dev/null 2>&1 || skip "no setpriv"
log=$T/unpriv.log
setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
    --bounding-set=-all "$TENKD" proxy --threads 1 -u "$UPADDR" \
    --fastpath sockmap --listen 127.0.0.1:0 2>"$log" &
await_listen tenkd $! "$log"
[ "$(grep -c -- '--fastpath' "$log")" -eq 1 ] ||
    fail "not one line: $(grep -- '--fastpath' "$log")"
grep -q -- '--fastpath sockmap: .*; off$' "$log" ||
    fail "the line: $(grep -- '--fastpath' "$log")"
grep -q 'sessions forwarded by the kernel' "$log" && fail "loaded anyway"
"$TKCLI" echo -c 10 -r 20 -b 1-64k "$LISTEN_ADDR" || fail "unprivileged"
echo "unprivileged: $(grep -- '--fastpath' "$log" | sed 's/.*warn: //')"

tenkd_start proxy --threads 1 -u "$UPADDR" --fastpath sockmap
grep -q 'sessions forwarded by the kernel' "$TENKD_LOG" ||
    skip "$(grep -- '--fastpath' "$TENKD_LOG")"

# io_uring's completion data path: refused, in one line.
"$TENKD" proxy --threads 1 -u "$UPADDR" --backend io_uring \
    --fastpath sockmap --listen 127.0.0.1:0 2>"$T/ur.log" &
p=$!
track "$p"
wait_line 10 "$T/ur.log" 'listening on\|backend' ||
    fail "io_uring: $(cat "$T/ur.log")"
if ! grep -q 'io_uring.*not' "$T/ur.log"; then
	[ "$(grep -c -- '--fastpath' "$T/ur.log")" -eq 1 ] ||
	    fail "io_uring: $(grep -- '--fastpath' "$T/ur.log")"
	grep -q -- "--fastpath sockmap: not with io_uring" "$T/ur.log" ||
	    fail "io_uring: $(grep -- '--fastpath' "$T/ur.log")"
fi
kill "$p"

# Loaded as root, then --user nobody: map updates need no privilege.
tenkd_start proxy --threads 1 -u "$UPADDR" --fastpath sockmap --user nobody
grep -q 'running as user nobody' "$TENKD_LOG" || fail "not dropped"
"$TKCLI" echo -c 5 -r 300 -b 1-300 "$ADDR" || fail "after --user"
s=$(tenkd_stats) || exit 1
[ "$(stat_val "$s" fastpath-bytes)" -gt 0 ] || fail "--user: $s"

# Map updates fail from the 12th on: 8 set one session up and grant its
# two directions, then a few grants and revokes go through, then none.
LD_PRELOAD=$TK_BIN/test/bpffail.so BPFFAIL=12 \
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
    tenkd_start proxy --threads 1 -u "$UPADDR" --fastpath sockmap \
    --access-log "$T/acc"
"$TKCLI" echo -c 1 -r 3000 -b 1-300 "$ADDR" >"$T/e" ||
    fail "mid-stream fall-back: $(cat "$T/e")"
cat "$T/e"
s=$(tenkd_stats) || exit 1
k=$(stat_val "$s" fastpath-bytes)
in=$(stat_val "$s" in)
echo "kernel $k of $in bytes, then copied"
if [ "$k" -eq 0 ] || [ "$k" -ge "$in" ]; then
	fail "fall-back: $s"
fi
b=$(sed -n 's/.* \([0-9]*\) bytes verified.*/\1/p' "$T/e")
wait_line 10 "$T/acc" "in=$b out=$b tries=1 client/eof eof" ||
    fail "counts: $b verified, $(cat "$T/acc")"
pass
