#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# c1m.sh: hold N concurrent verified echo connections on this machine,
# with traffic over them, and say what they cost.  `make c100k` and
# `make c1m` run it; test/integ/c1m_smoke.sh runs it small.
#
#   test/bench/c1m.sh [-n N] [-p] [-a N] [-d SECS] [-R RATE] [-r RATE]
#                     [-b DIR] [-o DIR]
#
#   -n N      connections (clients with -p; default 1000000)
#   -p        through `tenkd proxy --workers` to a `tenkd echo --workers`
#             upstream: four sockets per client
#   -a N      active connections, the rest idle (default 1000, at most N)
#   -d SECS   measured seconds of rate traffic (default 30)
#   -R RATE   messages per second in all (default 20000)
#   -r RATE   connects per second in all (default 20000)
#   -b DIR    tenk build directory (default: build/ next to test/)
#   -o DIR    where logs and the JSON report go (default: a fresh
#             temporary directory)
#
# What it does: every process's open-file limit is raised to the hard
# limit; tenkd runs `--workers` processes, as many as that limit needs
# for N connections, and tenkload forks as many processes as it needs.
# Connections come from source addresses of 127.0.0.0/8 (127.0.1.0 and
# up), each used for at most SRC_FILL of its local ports: connect(2)'s
# port search slows steeply once an address has used half its ports
# (docs/BENCHMARKS.md, "A million connections"), and 127/8 has addresses
# to spare.  ACTIVE connections carry rate-mode traffic (the corrected
# latency counts from the intended send time); the others are idle after
# one verified round trip each, so every connection is verified once.
# tenkload closes every connection at the end, then tenkd is stopped by
# PID.
#
# It reads system settings and never writes one: a setting that the run
# needs (the local port range, somaxconn, file-max, conntrack) is named
# with what it measured, and the run stops before it starts.
#
# Exit status: 0 only when every connection was established and verified
# and there was no error; 1 otherwise; 2 on a bad command line.

# ulimit -H and -n are not POSIX; dash, bash and busybox sh have them.
# shellcheck disable=SC3045
B=${B:-$(cd "$(dirname "$0")/../.." && pwd)/build}
. "$(dirname "$0")/lib.sh"

N=1000000
PROXY=0
DUR=30
ACTIVE=1000
RATE=20000
CRATE=20000
OUT=
SRC_FILL=4000	# ports used per source address (of 28,232 by default)
FD_SPARE=400	# fds a process keeps for itself (listeners, logs, pipes)

USAGE="[-n N] [-p] [-a N] [-d SECS] [-R RATE] [-r RATE] [-b DIR] [-o DIR]"
bench_opts 'n:N p=PROXY=1 a:ACTIVE d:DUR R:RATE r:CRATE b:B o:OUT' "$@"
for v in "$N" "$ACTIVE" "$DUR" "$CRATE" "$RATE"; do
	case $v in
	''|*[!0-9]*|0) echo "$0: $v: not a positive number" >&2; exit 2 ;;
	esac
done
bench_init c1m

# Limits and sizes.

ulimit -n "$(ulimit -Hn)" 2>/dev/null
NOFILE=$(ulimit -n)
PER=$((NOFILE - FD_SPARE))
[ "$PER" -ge 100 ] || die "RLIMIT_NOFILE $NOFILE is too low"
ceil() {
	echo $((($1 + $2 - 1) / $2))
}
if [ "$PROXY" = 1 ]; then
	PWORKERS=$(ceil $((2 * N)) "$PER")
	EWORKERS=$(ceil "$N" "$PER")
	SOCKS=$((4 * N))
else
	EWORKERS=$(ceil "$N" "$PER")
	SOCKS=$((2 * N))
fi
LPROCS=$(ceil "$N" "$PER")
[ "$ACTIVE" -le "$N" ] || ACTIVE=$N

PLO=$(awk '{ print $1 }' /proc/sys/net/ipv4/ip_local_port_range)
PHI=$(awk '{ print $2 }' /proc/sys/net/ipv4/ip_local_port_range)
NPORTS=$((PHI - PLO + 1))
[ "$SRC_FILL" -le "$NPORTS" ] || SRC_FILL=$NPORTS
NSRC=$(ceil "$N" "$SRC_FILL")
# 127.0.1.0 and up: 127.0.0.x is where other tests and servers live.
src_addr() {
	_i=$(($1 + 256))
	echo "127.$((_i / 65536)).$((_i / 256 % 256)).$((_i % 256))"
}
SOURCES="$(src_addr 0)-$(src_addr $((NSRC - 1)))"
# The proxy's own upstream connects need ports too: 127.1.x.x and up.
psrc_addr() {
	_i=$(($1 + 65536))
	echo "127.$((_i / 65536)).$((_i / 256 % 256)).$((_i % 256))"
}
PSOURCES="$(psrc_addr 0)-$(psrc_addr $((NSRC - 1)))"

# What the system must allow (read, never written).

sysval() {
	cat "/proc/sys/$(echo "$1" | tr . /)" 2>/dev/null || echo 0
}
need() {
	# need SETTING HAVE WANT WHY: the run stops when HAVE < WANT.
	if [ "$2" -lt "$3" ]; then
		echo "c1m: $1 is $2, this run needs at least $3: $4" >&2
		echo "c1m: (as root: sysctl -w $1=$3; this script changes" \
		    "no setting)" >&2
		exit 1
	fi
}
# Not read(1) on /proc/sys: dash reads a byte at a time and a sysctl
# file gives nothing at an offset past 0.
FMAX=$(awk '{ print $1 }' /proc/sys/fs/file-max)
need fs.file-max "$FMAX" $((SOCKS + SOCKS / 10 + 10000)) \
    "every socket is an open file"
CT=$(sysval net.netfilter.nf_conntrack_count)
if [ -e /proc/sys/net/netfilter/nf_conntrack_max ] && [ "$CT" -gt 0 ]; then
	# conntrack only tracks when a rule asks it to (count > 0 then).
	need net.netfilter.nf_conntrack_max \
	    "$(sysval net.netfilter.nf_conntrack_max)" $((SOCKS / 2 + 1000)) \
	    "connection tracking is on ($CT entries) and drops a new flow" \
	    "once full"
fi
# TCP's buffer pages: past tcp_mem's second value the kernel squeezes
# buffers, past the third it fails allocations.  The peak samples of
# the big runs saw up to 1 KiB per socket, the messages then in flight
# (docs/BENCHMARKS.md).
TMEM=$(sysval net.ipv4.tcp_mem | awk '{ print $2, $3 }')
TEST=$((SOCKS / 4))
if [ "$TEST" -gt "${TMEM%% *}" ]; then
	echo "c1m: note: up to $TEST pages of TCP buffers possible" \
	    "(1 KiB per socket); net.ipv4.tcp_mem allows $TMEM" \
	    "(pressure, hard): above the hard limit allocations fail" >&2
fi
SOMAX=$(sysval net.core.somaxconn)
SYNB=$(sysval net.ipv4.tcp_max_syn_backlog)

# Start the servers.

DPID=
PPID2=
LPID=
bench_trap LPID PPID2 DPID

# start_tenkd LOG ARGS...: tenkd in the background; SPID its pid, SADDR
# the address it listens on.
start_tenkd() {
	_log=$1
	shift
	: >"$_log"
	"$TENKD" "$@" --listen 127.0.0.1:0 --idle-timeout 0 -t 1 \
	    2>"$_log" &
	SPID=$!
	await_addr "$_log" "$SPID" || die "tenkd: $LERR"
	SADDR=$LADDR
}

# workers PID: the worker processes under tenkd master PID, or PID itself
# when it has none (--workers 1 runs without a master).
workers() {
	_w=$(cat /proc/"$1"/task/*/children 2>/dev/null)
	echo "${_w:-$1}"
}

# anon_kb PID...: RssAnon (private memory, the process's own) summed.
anon_kb() {
	for _q in "$@"; do
		awk '/^RssAnon:/ { print $2 }' "/proc/$_q/status" 2>/dev/null
	done | awk '{ s += $1 } END { print s + 0 }'
}

# kmem: KMEM = kernel memory in KiB that sockets use: slab (all of it,
# sockets, inodes, dentries, files and epoll items being most of it after
# a ramp) plus TCP's buffer pages from /proc/net/sockstat.
kmem() {
	_slab=$(awk '/^Slab:/ { print $2 }' /proc/meminfo)
	_pg=$(awk '/^TCP:/ { for (i = 1; i < NF; i++) if ($i == "mem")
	    print $(i + 1) }' /proc/net/sockstat)
	KMEM=$((_slab + _pg * 4))
	TCPMEM=$((_pg * 4))
}
tcp_inuse() {
	awk '/^TCP:/ { print $3 }' /proc/net/sockstat
}

if [ "$PROXY" = 1 ]; then
	start_tenkd "$OUT/echo.log" echo --workers "$EWORKERS"
	DPID=$SPID
	UP=$SADDR
	start_tenkd "$OUT/proxy.log" proxy --workers "$PWORKERS" -u "$UP" \
	    --source "$PSOURCES" --connect-timeout 30s
	PPID2=$SPID
	TARGET=$SADDR
	SERVERS="$DPID $PPID2"
	DESC="tenkd proxy --workers $PWORKERS -> tenkd echo --workers $EWORKERS"
else
	start_tenkd "$OUT/echo.log" echo --workers "$EWORKERS"
	DPID=$SPID
	TARGET=$SADDR
	SERVERS=$DPID
	DESC="tenkd echo --workers $EWORKERS"
fi
sleep 0.3
WPIDS=
for s in $SERVERS; do
	WPIDS="$WPIDS $(workers "$s")"
done
# shellcheck disable=SC2086
RSS0=$(anon_kb $WPIDS)
kmem
KMEM0=$KMEM
TCP0=$(tcp_inuse)

echo "c1m: $N connections: $DESC; tenkload ~$LPROCS processes," \
    "sources $SOURCES ($NSRC x <= $SRC_FILL ports of $NPORTS)"
echo "c1m: RLIMIT_NOFILE $NOFILE, somaxconn $SOMAX," \
    "tcp_max_syn_backlog $SYNB, file-max $FMAX;" \
    "connect rate $CRATE/s; $ACTIVE active at $RATE msgs/s for ${DUR}s"
LOAD0=$(load1)

# The load.

# Bounded: the ramp and the close at 2,000 connections/s each (a
# million took 225 s and about 150 s on a loaded machine), the window.
LIMIT=$((N / 1000 + DUR + 120))
: >"$OUT/tenkload.err"
timeout -s INT "$LIMIT" "$TENKLOAD" -M rate -c "$ACTIVE" \
    --idle $((N - ACTIVE)) -R "$RATE" \
    -d "${DUR}s" --connect-rate "$CRATE" --connect-timeout 30s \
    --reply-timeout 30s --source "$SOURCES" --json "$OUT/r.json" \
    "$TARGET" >"$OUT/tenkload.out" 2>"$OUT/tenkload.err" &
LPID=$!
T0=$(date +%s)
PEAK=0
RSS1=$RSS0
KMEM1=$KMEM0
TCPMEM1=0
last=-5
while kill -0 "$LPID" 2>/dev/null; do
	sleep 1
	n=$(tcp_inuse)
	now=$(($(date +%s) - T0))
	if [ "$n" -gt "$PEAK" ]; then
		# The figures at the most sockets: the ramp's end.
		PEAK=$n
		# shellcheck disable=SC2086
		RSS1=$(anon_kb $WPIDS)
		kmem
		KMEM1=$KMEM
		TCPMEM1=$TCPMEM
	fi
	if [ $((now - last)) -ge 5 ]; then
		last=$now
		printf 'c1m: %4ds  tcp sockets %d  %s\n' "$now" "$n" \
		    "$(tail -n 1 "$OUT/tenkload.err" | sed 's/^tenkload: *//')"
	fi
done
wait "$LPID"
LST=$?
LPID=
T1=$(date +%s)
LOAD1=$(load1)

# Stop the servers, by PID.

for s in $SERVERS; do
	kill "$s" 2>/dev/null
done
for s in $SERVERS; do
	wait "$s" 2>/dev/null
done
DPID=
PPID2=

# Report.

J=$OUT/r.json
[ -s "$J" ] || { cat "$OUT/tenkload.out" "$OUT/tenkload.err" >&2
    die "tenkload wrote no report (exit $LST)"; }
EST=$(jget "$J" connections.established)
ERR=$(jget "$J" errors.total)
RAMP=$(jget "$J" time.ramp_s)
CPS=$(jget "$J" time.connect_rate_achieved)
MPS=$(jget "$J" traffic.msgs_per_s)
P50=$(jget "$J" latency.p50)
P99=$(jget "$J" latency.p99)
UNS=$(jget "$J" connections.unserved)
PROCS=$(jget "$J" header.procs)
grep '^errors:' "$OUT/tenkload.out"
awk -v n="$N" -v est="$EST" -v err="$ERR" -v ramp="$RAMP" -v cps="$CPS" \
    -v mps="$MPS" -v p50="$P50" -v p99="$P99" -v uns="$UNS" \
    -v rss0="$RSS0" -v rss1="$RSS1" -v k0="$KMEM0" -v k1="$KMEM1" \
    -v tm="$TCPMEM1" -v socks="$SOCKS" -v peak="$PEAK" -v tcp0="$TCP0" \
    -v wall=$((T1 - T0)) -v procs="$PROCS" -v p="$PROXY" \
    -v l0="$LOAD0" -v l1="$LOAD1" 'BEGIN {
	printf "c1m: established %d of %d, errors %d, unserved %d " \
	    "(tenkload %d processes)\n", est, n, err, uns, procs
	printf "c1m: ramp %.1f s, %.0f connects/s\n", ramp, cps
	printf "c1m: traffic %.0f msgs/s, p50 %.3f ms, p99 %.3f ms " \
	    "(corrected)\n", mps, p50 / 1e6, p99 / 1e6
	printf "c1m: tcp sockets at peak %d (%d before)\n", peak, tcp0
	printf "c1m: tenkd user memory (RssAnon) %.1f MiB, %.0f B per %s\n",
	    (rss1 - rss0) / 1024, (rss1 - rss0) * 1024 / n,
	    p ? "client" : "connection"
	printf "c1m: kernel memory %.1f MiB (slab + TCP buffers %.1f MiB), " \
	    "%.0f B per %s, %.0f B per socket\n", (k1 - k0) / 1024,
	    tm / 1024, (k1 - k0) * 1024 / n, p ? "client" : "connection",
	    (k1 - k0) * 1024 / socks
	printf "c1m: wall time %d s, load average %s before, %s after\n",
	    wall, l0, l1
}'
echo "c1m: logs and report in $OUT"
if [ "$EST" = "$N" ] && [ "$ERR" = 0 ] && [ "$LST" = 0 ]; then
	echo "c1m: PASS"
	exit 0
fi
echo "c1m: FAIL (tenkload exit $LST)"
tail -n 5 "$OUT/tenkload.err" >&2
exit 1
