#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The memory budget (--max-memory): clients that send and never read are
# opened until the budget is reached, several times over.  tenkd stays
# alive, its VmRSS stays bounded by the budget rather than by the
# clients, a normal client is still served byte-exact, the connections
# shed are counted under "memory", and each episode is logged once as it
# begins and once as it ends.  The default budget is half the cgroup's
# limit or physical memory; where the machine lets us (root and a memory
# controller) it is checked in a cgroup of our own, with non-reading
# clients that must not get tenkd OOM-killed there, else against the
# cgroup or memory this script runs in.
# backends: epoll io_uring
# timeout: 120
. "$(dirname "$0")/lib.sh"

# --- The default budget. ---

# half BYTES: as tenkd logs it, "N.N MiB".
half() {
	awk -v b="$1" 'BEGIN { printf "%.1f MiB", int(b / 2) / 1048576 }'
}

# The limit of this process's cgroup and its parents, as mem.c reads it.
cg_limit() {
	_line=$(grep -m 1 '^[0-9]*:[^:]*memory[^:]*:' /proc/self/cgroup)
	if [ -n "$_line" ]; then
		_base=/sys/fs/cgroup/memory
		_file=memory.limit_in_bytes
	else
		_line=$(grep -m 1 '^0::' /proc/self/cgroup) || return 0
		_base=/sys/fs/cgroup
		_file=memory.max
	fi
	_dir=${_line#*:*:}
	_min=
	while :; do
		_f=$_base${_dir%/}/$_file
		[ "$_dir" = / ] && _f=$_base/$_file
		_v=$(cat "$_f" 2>/dev/null) || _v=
		case $_v in
		''|max|*[!0-9]*) ;;
		*) if [ -z "$_min" ] || [ "$_v" -lt "$_min" ]; then
			_min=$_v
		   fi ;;
		esac
		[ "$_dir" = / ] && break
		_dir=${_dir%/*}
		[ -z "$_dir" ] && _dir=/
	done
	echo "$_min"
}

phys=$(( $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024 ))
lim=$(cg_limit)
if [ -n "$lim" ] && [ "$lim" -lt "$phys" ]; then
	want="memory budget $(half "$lim") (1/2 of cgroup "
else
	want="memory budget $(half "$phys") (1/2 of physical memory "
fi
"$TENKD" echo --check --listen 127.0.0.1:0 >"$T/check" 2>&1 ||
    fail "--check: $(cat "$T/check")"
grep -qF "$want" "$T/check" ||
    fail "default budget: wanted \"$want\", got: $(grep budget "$T/check")"
echo "default: $(sed -n 's/.*\(memory budget .*)\):.*/\1/p' "$T/check")"

# In a memory cgroup of 64 MiB of our own, if we may make one: the
# default budget is half of it, and tenkd with 4 threads on that budget
# outlives 3,000 clients that each send 1 MiB and never read (on
# io_uring, where the receive rings were outside the budget, it was
# OOM-killed after some 2,400 of them: issue 22).  Under a sanitizer
# its own memory is not tenkd's: the budget line is checked, not that.
if cg_make 64M; then
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$CG" \
	    "$TENKD" echo --check --listen 127.0.0.1:0 >"$T/cgcheck" 2>&1
	grep -q 'memory budget 32.0 MiB (1/2 of cgroup memory' "$T/cgcheck" ||
	    fail "in a 64 MiB cgroup: $(grep budget "$T/cgcheck")"
	echo "in a 64 MiB cgroup (v$CG_V): $(grep -o 'memory budget [^:]*' \
	    "$T/cgcheck")"
	if [ -n "$(sanitizer)" ]; then
		echo "note: under $(sanitizer), no run in the cgroup"
		TENKD_CG=
	else
		cg_noread 3000 echo --threads 4
	fi
else
	echo "note: no cgroup of our own ($CG_WHY): the budget below is" \
	    "--max-memory alone"
fi

# --- Non-reading clients against a 4 MiB budget. ---

# AddressSanitizer's quarantine would keep every freed buffer resident.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1
export ASAN_OPTIONS

budget=4096			# KiB
nc=120				# x 80 KiB each unchecked: 9.4 MiB
tenkd_start echo --threads 2 --buffer-limit 64k --max-memory 4m
grep -q 'memory budget 4.0 MiB (--max-memory)' "$TENKD_LOG" ||
    fail "no budget line"
"$TKCLI" echo -c 4 -b 1m "$ADDR" || fail "warm-up echo"
rss0=$(rss_kb "$TENKD_PID")

noread_clients "$nc"
alive "$TENKD_PID" || fail "tenkd died"
# The clients stall once their own buffers are full, which can be before
# tenkd has read what the kernel holds for it (seen under ASan): wait.
wait_line 20 "$TENKD_LOG" 'memory: .* queued, 90% of the 4.0 MiB budget' ||
    fail "no episode was logged"

# A normal client is served, byte-exact, beside the stuck ones.
"$TKCLI" echo -c 4 -b 1m "$ADDR" || fail "echo beside stuck clients"
"$TKCLI" echo -c 2 -r 200 -b 100 "$ADDR" >/dev/null ||
    fail "ping-pong beside stuck clients"

rss1=$(rss_kb "$TENKD_PID")
# The budget, two threads' spare buffers (2 MiB) and 2 MiB of slack;
# ThreadSanitizer's shadow memory and allocator take 4 to 4.4 times that
# (growth of 30.3 to 35.3 MiB over 5 runs on 2026-11-26), so 5 there.
max=$(( rss0 + budget + 4096 ))
[ "$(sanitizer)" = thread ] && max=$(( rss0 + 5 * (budget + 4096) ))
[ "$rss1" -le "$max" ] ||
    fail "VmRSS $rss0 -> $rss1 KiB, bound $max KiB"

s=$(tenkd_stats) || exit 1
shed=$(stat_val "$s" memory)
[ "${shed:-0}" -gt 0 ] || fail "no connection closed for memory: $s"
m=$(grep 'stats memory:' "$TENKD_STATS" | tail -n 1)
queued=$(stat_val "$m" queued)
ep=$(stat_val "$m" episodes)
tight=$(stat_val "$m" tight)
[ "$queued" -le $(( budget * 1024 )) ] ||
    fail "$queued bytes queued over the budget: $m"
began=$(grep -c 'memory: .* queued, 90% of the' "$TENKD_LOG")
ended=$(grep -c 'memory: .* queued, under 80% of the budget' "$TENKD_LOG")
[ "$began" -eq "$ep" ] || fail "$began episode lines for $ep episodes"
[ "$ended" -eq $(( ep - tight )) ] ||
    fail "$ended end lines for $ep episodes ($tight on)"
[ "$ep" -lt "$shed" ] || [ "$ep" -eq 1 ] ||
    fail "$ep episodes for $shed connections closed: one line each?"
echo "VmRSS $rss0 -> $rss1 KiB with $nc stuck clients; $shed closed" \
    "for memory in $ep episode(s), $queued bytes queued"
pass
