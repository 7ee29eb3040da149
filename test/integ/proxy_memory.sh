#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The memory budget in proxy mode: clients that send and never read fill
# the queues toward them with what the upstream echoes back.  tenkd
# stays alive, the bytes queued stay within --max-memory, sessions are
# closed for "memory", and a normal client is still served byte-exact.
# Where the machine lets us (root and a memory controller), also in a
# memory cgroup of 64 MiB of our own: 4 threads on the default budget
# (half of it) outlive 1,500 such clients, not OOM-killed.
# backends: epoll io_uring
# timeout: 120
. "$(dirname "$0")/lib.sh"

ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1
export ASAN_OPTIONS

budget=4096			# KiB
nc=120
upstream_start --threads 1
if [ -n "$(sanitizer)" ]; then
	echo "note: under $(sanitizer), no run in a cgroup"
elif cg_make 64M; then
	cg_noread 1500 proxy --threads 4 -u "$UPADDR"
else
	echo "note: no run in a cgroup of our own: $CG_WHY"
fi
tenkd_start proxy --threads 2 --buffer-limit 64k --max-memory 4m \
    -u "$UPADDR"
"$TKCLI" echo -c 4 -b 1m "$ADDR" || fail "warm-up echo"

noread_clients "$nc"
alive "$TENKD_PID" || fail "tenkd died"
# The clients stall once their own buffers are full, which can be before
# tenkd has read what the kernel holds for it (seen under ASan): wait.
wait_line 20 "$TENKD_LOG" 'memory: .* queued, 90% of the 4.0 MiB budget' ||
    fail "no episode was logged"

"$TKCLI" echo -c 4 -b 1m "$ADDR" || fail "echo beside stuck clients"

s=$(tenkd_stats) || exit 1
shed=$(stat_val "$s" memory)
[ "${shed:-0}" -gt 0 ] || fail "no session closed for memory: $s"
m=$(grep 'stats memory:' "$TENKD_STATS" | tail -n 1)
queued=$(stat_val "$m" queued)
[ "$queued" -le $(( budget * 1024 )) ] ||
    fail "$queued bytes queued over the budget: $m"
echo "$nc stuck clients: $shed sessions closed for memory, $queued bytes" \
    "queued"
pass
