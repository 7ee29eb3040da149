#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# proxy-compare.sh: tenkd proxy side by side with other TCP proxies, all in
# front of the same kind of upstream (a fresh `tenkd echo -t 1` per run) and
# driven by the same tenkload.
#
#   test/bench/proxy-compare.sh [options] [-f TEMPLATE]... NAME=COMMAND...
#
# Each NAME=COMMAND is a peer proxy, started with sh -c in the foreground.
# In COMMAND and in every -f TEMPLATE these are replaced before each run:
#   @LISTEN@    127.0.0.1:PORT the proxy must listen on (a free port)
#   @UPSTREAM@  127.0.0.1:PORT of the echo upstream
#   @DIR@       a per-run directory (pid files, error logs, configs)
#   @THREADS@   tenkd's threads and workers for the run (-t 2, or
#               --workers 2 -t 1 where one process cannot hold the
#               sockets), for a tenkd variant run as a peer
# A template is written to @DIR@/NAME-OF-TEMPLATE without a trailing ".in".
# For example, with the configs in test/bench/proxy/ (HAProxy and nginx
# themselves are not part of tenk; Debian: haproxy, nginx,
# libnginx-mod-stream):
#   proxy-compare.sh -C 2000 -w 3 \
#     -f test/bench/proxy/haproxy.cfg.in -f test/bench/proxy/nginx.conf.in \
#     'haproxy=/usr/sbin/haproxy -f @DIR@/haproxy.cfg -db' \
#     "nginx=/usr/sbin/nginx -p @DIR@ -e @DIR@/error.log -c @DIR@/nginx.conf -g 'daemon off;'"
# A yardstick from test/bench/yardstick/ can be a peer too:
#     "minproxy=/path/to/minproxy @LISTEN@ @UPSTREAM@ 2"
#
# The contenders (tenkd first, then the peers in order) are always run in
# turn with fresh processes each run, so that a noisy machine hits them
# alike; ratios are taken within one round (the same run number).
# tenkd runs as `tenkd proxy -t 2` when one process can hold two sockets
# per connection, else as `--workers 2 -t 1` (two processes, one thread
# each), so that each contender has two threads of execution.
#
# Phases, all against 127.0.0.1 from 127.0.0.2-127.0.0.9:
#  1. ping-pong (tenkload -M pingpong -s SIZE) at each connection count:
#     msgs/s, p50, p99 and the connections established from tenkload's
#     JSON; proxy CPU per message from utime+stime of every process of
#     the proxy (the started one and its children) in /proc/PID/stat,
#     sampled every 50 ms, between the first and the last sample inside
#     tenkload's measured window; the same for upstream and client.
#     Also p99.9, tenkload's unserved connections (no reply in the
#     window: a proxy that starves some connections looks fast in the
#     percentiles), TCP segments sent per message from /proc/net/snmp
#     (loopback only here, so pure ACKs show as segments beyond 4), and
#     the proxy's CPU per message over twice the upstream's (its floor).
#     And the whole machine's CPU per message: all of /proc/stat's busy
#     time (user, nice, system, irq, softirq, steal) over the same span,
#     which also counts what a proxy moves into the kernel's softirqs
#     and work queues on behalf of the client and the upstream (tenkd's
#     --fastpath): on a machine that runs nothing else, the figure that
#     counts.  It is meaningless on a shared machine: check the load.
#  2. syscalls: strace -c -f (or perf stat, -S perf) on all the proxy's
#     processes for 3 s in the steady state; calls per message, messages
#     being the bytes the proxy sent to the clients (ss bytes_sent on the
#     listening port) over SIZE with strace, and the upstream's sendto
#     calls in the same perf stat (one per echoed message) with perf.
#  3. all served: at each connection count, tenkload -M rate -R 2 per
#     connection for 8 s with --reply-timeout 3s, so that a connection the
#     proxy never serves is counted as a timeout; and, 2 s after the ramp,
#     the number of the proxy's established connections to the upstream.
#  4. open loop: OCONNS connections at a fixed total rate (tenkload -M
#     rate, latency counted from the intended send time): p50, p99,
#     p99.9, the proxy's and the whole machine's CPU per message.
#
# A peer whose name starts with "tenkd" (say tenkdfp, running tenkd
# proxy --fastpath sockmap) is a variant of tenkd: its same-round ratios
# to tenkd are printed, and it is never "the better peer".
#
# Options:
#   -b DIR    tenk build directory (default: build/ next to test/)
#   -c LIST   connection counts, comma-separated (default 1000,10000)
#   -d SECS   measured seconds per run (default 4)
#   -w SECS   tenkload --warmup (default 1)
#   -C RATE   tenkload --connect-rate, connects per second (default 10000)
#   -r N      runs per cell (default 5)
#   -R N      syscall-count runs per cell (default 1; 0 skips the phase)
#   -S TOOL   strace (default) or perf
#   -A N      "all served" check runs per cell (default 1; 0 skips it)
#   -s BYTES  message size (default 64)
#   -o DIR    keep raw results here (default: a temporary directory)
#   -f FILE   a config template (repeatable)
#   -O RATE   open-loop total msgs/s (default 20000; 0 skips phase 4)
#   -N CONNS  open-loop connections (default 10000)
#   -x ARGS   more arguments for tenkd proxy (e.g. "--fastpath sockmap")
#
# Output: tables on stdout; raw CSV, JSON and logs in DIR.
# Not run by `make test`.

set -u

USAGE="[-b dir] [-c list] [-d secs] [-w secs] [-C rate] [-r runs] [-R runs]
	[-A runs] [-S strace|perf] [-s size] [-o dir] [-f template]...
	[-O rate] [-N conns] [-x args] name=command..."
here=$(cd "$(dirname "$0")" && pwd)
B=$here/../../build
# shellcheck source=test/bench/lib.sh
. "$here/lib.sh"
CONNS=1000,10000
DUR=4
WARM=1
RUNS=5
SRUNS=1
ARUNS=1
TOOL=strace
SIZE=64
OUT=
TEMPLATES=
STRACE_S=3
SRC=127.0.0.2-127.0.0.9
RATE=10000
ORATE=20000
OCONNS=10000
XARGS=

bench_opts 'b:B c:CONNS d:DUR w:WARM C:RATE r:RUNS R:SRUNS A:ARUNS O:ORATE
    N:OCONNS x:XARGS S:TOOL s:SIZE o:OUT f+TEMPLATES' "$@"
shift $((OPTIND - 1))
case $TOOL in
strace|perf) ;;
*) bench_usage ;;
esac
# The templates by absolute path: the peers run in their own folders.
_tl=$TEMPLATES
TEMPLATES=
for t in $_tl; do
	[ -r "$t" ] || { echo "$0: cannot read $t" >&2; exit 2; }
	TEMPLATES="$TEMPLATES $(cd "$(dirname "$t")" && pwd)/$(basename "$t")"
done
bench_init proxy-compare
HZ=$(getconf CLK_TCK)
NOFILE=$(awk '/^Max open files/ { print $4 }' /proc/self/limits)
commas CONNS

# Peers: NAME=COMMAND, kept one per line in $OUT/peers.
: >"$OUT/peers"
SERVERS=tenkd
for p in "$@"; do
	case $p in
	*=*) ;;
	*) bench_usage ;;
	esac
	n=${p%%=*}
	case $n in
	''|tenkd|*[!A-Za-z0-9_-]*) echo "$0: bad peer name '$n'" >&2; exit 2 ;;
	esac
	printf '%s\n' "$p" >>"$OUT/peers"
	SERVERS="$SERVERS $n"
done

UPID=
PPID_=
LPID=
XPID=
bench_trap XPID LPID PPID_ UPID

# start_upstream: UPID, UADDR
start_upstream() {
	: >"$OUT/upstream.err"	# else the last run's port may be read
	"$TENKD" echo -l 127.0.0.1:0 -t 1 2>"$OUT/upstream.err" &
	UPID=$!
	await_addr "$OUT/upstream.err" "$UPID" || die "upstream $LERR"
	UADDR=$LADDR
}

subst() {
	sed -e "s|@LISTEN@|$ADDR|g" -e "s|@UPSTREAM@|$UADDR|g" \
	    -e "s|@DIR@|$RUNDIR|g" -e "s|@THREADS@|$TARGS|g"
}

# start_proxy NAME CONNS: PPID_, ADDR, RUNDIR
start_proxy() {
	name=$1
	free_port
	ADDR=127.0.0.1:$PORT
	RUNDIR=$OUT/run-$1-$2-$PHASE$r
	rm -rf "$RUNDIR"
	mkdir -p "$RUNDIR" || die "mkdir $RUNDIR"
	if [ $((2 * $2 + 100)) -lt "$NOFILE" ]; then
		TARGS="-t 2"
	else
		TARGS="--workers 2 -t 1"
	fi
	for t in $TEMPLATES; do
		b=$(basename "$t" .in)
		subst <"$t" >"$RUNDIR/$b"
	done
	if [ "$1" = tenkd ]; then
		# shellcheck disable=SC2086 # split on purpose
		set -- "$1" "$2" $TARGS
		shift 2
		# shellcheck disable=SC2086 # split on purpose
		"$TENKD" proxy -u "$UADDR" -l "$ADDR" "$@" $XARGS \
		    2>"$RUNDIR/stderr" &
	else
		cmd=$(sed -n "s/^$1=//p" "$OUT/peers" | subst)
		sh -c "exec $cmd" >"$RUNDIR/stdout" 2>"$RUNDIR/stderr" &
	fi
	PPID_=$!
	_n=0
	until listening "$PORT"; do
		kill -0 "$PPID_" 2>/dev/null ||
		    die "$name exited: $(cat "$RUNDIR/stderr")"
		_n=$((_n + 1))
		[ "$_n" -lt 200 ] || die "$name did not listen on $ADDR in 10 s"
		sleep 0.05
	done
	sleep 0.3	# let workers start
}

# stop PID: SIGTERM, then SIGKILL if it is still there after 15 s
stop() {
	kill -TERM "$1" 2>/dev/null
	_n=0
	while kill -0 "$1" 2>/dev/null && [ "$_n" -lt 300 ]; do
		# a zombie counts as gone
		case $(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' \
		    "/proc/$1/status" 2>/dev/null) in
		Z|'') break ;;
		esac
		_n=$((_n + 1))
		sleep 0.05
	done
	if [ "$_n" -ge 300 ]; then
		echo "$0: pid $1 ignored SIGTERM for 15 s; SIGKILL" >&2
		kill -KILL "$1" 2>/dev/null
	fi
	wait "$1" 2>/dev/null
}

stop_all() {
	stop "$PPID_"
	PPID_=
	stop "$UPID"
	UPID=
	cp "$OUT/upstream.err" "$RUNDIR/upstream.err" 2>/dev/null
}

# tree PID: PIDS = PID and its descendants
tree() {
	PIDS=$1
	_todo=$1
	while [ -n "$_todo" ]; do
		_next=
		for _q in $_todo; do
			_next="$_next $(cat /proc/"$_q"/task/*/children \
			    2>/dev/null)"
		done
		set -f
		# shellcheck disable=SC2086
		set -- $_next
		set +f
		_todo=$*
		PIDS="$PIDS $_todo"
	done
}


# outsegs: SEGS = TCP segments sent by this host so far (every one of them
# on loopback here, so each is also received once)
outsegs() {
	SEGS=$(awk '$1 == "Tcp:" && !h { for (i = 2; i <= NF; i++)
		if ($i == "OutSegs") c = i; h = 1; next }
		$1 == "Tcp:" { print $c; exit }' /proc/net/snmp)
}

# busy: BUSY = the whole machine's busy ticks so far (/proc/stat's cpu
# line: user nice system irq softirq steal; not idle, not iowait)
busy() {
	BUSY=$(awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9; exit }' \
	    /proc/stat)
}

# sampler OUT CPID: "usec proxy_ticks upstream_ticks client_ticks
# tcp_outsegs machine_busy_ticks" every 50 ms while the client CPID lives.
sampler() {
	tree "$PPID_"
	echo "$PIDS" >"$1.pids"
	while kill -0 "$2" 2>/dev/null; do
		t=$(date +%s%6N)
		# shellcheck disable=SC2086
		ticks $PIDS
		p=$TICKS
		ticks "$UPID"
		u=$TICKS
		ticks "$2"
		outsegs
		busy
		echo "$t $p $u $TICKS $SEGS $BUSY"
		sleep 0.05
	done >"$1"
}

echo "# proxy-compare: $(uname -sr), $(nproc) CPUs, RLIMIT_NOFILE $NOFILE," \
    "load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# contenders: $SERVERS; upstream tenkd echo -t 1;" \
    "tenkload -t 1 -s $SIZE -d ${DUR}s --warmup ${WARM}s" \
    "--connect-rate $RATE; raw results in $OUT"
while read -r p; do
	echo "#   $p"
done <"$OUT/peers"

# The awk that turns a sampler's lines inside tenkload's measured window
# (a to b, in us) into costs per message at msgs/s rate: pu proxy, uu
# upstream, cu client, mu the whole machine (us/msg), px the proxy's CPU
# utilisation, sg TCP segments per message, fr the proxy over its floor.
# shellcheck disable=SC2016 # awk's, not the shell's
SPAN_AWK='
	$1 >= a && $1 <= b { if (!n++) { t0 = $1; p0 = $2; u0 = $3
		c0 = $4; s0 = $5; m0 = $6 } t1 = $1; p1 = $2; u1 = $3; c1 = $4
		s1 = $5; m1 = $6 }
	END { span = (t1 - t0) / 1e6
		if (n < 2 || span < 0.5 || rate <= 0) {
			pu = uu = cu = px = sg = fr = mu = "nan" } else {
			k = 1e6 / hz / (rate * span)
			pu = (p1 - p0) * k; uu = (u1 - u0) * k
			cu = (c1 - c0) * k; mu = (m1 - m0) * k
			px = (p1 - p0) / hz / span
			sg = (s1 - s0) / (rate * span)
			fr = uu > 0 ? pu / (2 * uu) : "nan" }'

COST_HDR=conns,run,server,msgs_s,p50_us,p99_us,proxy_us_msg,up_us_msg,cli_us_msg,proxy_util,established,errors,load1,unserved,segs_msg,p999_us,floor_ratio,machine_us_msg

# sampled SAMPLES: with the client just started in the background
# ($!), sample the costs into SAMPLES until it ends, then stop the
# proxy and the upstream.
sampled() {
	LPID=$!
	sampler "$1" "$LPID" &
	XPID=$!
	wait "$LPID"
	LPID=
	wait "$XPID"
	XPID=
	stop_all
}

# cost_row JSON SAMPLES: one CSV row (columns as in pingpong.csv) of the
# run $c/$r/$s from tenkload's JSON report and the sampler's lines.
cost_row() {
	awk -v a="$(jget "$1" time.measure_start_us)" \
	    -v b="$(jget "$1" time.measure_end_us)" -v hz="$HZ" \
	    -v c="$c" -v r="$r" -v s="$s" \
	    -v rate="$(jget "$1" traffic.msgs_per_s)" \
	    -v p50="$(jget "$1" latency.p50)" \
	    -v p99="$(jget "$1" latency.p99)" \
	    -v p999="$(jget "$1" latency.p99.9)" \
	    -v uns="$(jget "$1" connections.unserved)" \
	    -v est="$(jget "$1" connections.established)" \
	    -v err="$(jget "$1" errors.total)" -v l="$(load1)" '
	'"$SPAN_AWK"'
		printf "%s,%s,%s,%.0f,%.1f,%.1f,%s,%s,%s,%s,%s,%s,%s,%s,%s,%.1f,%s,%s\n",
		    c, r, s, rate, p50 / 1e3, p99 / 1e3, pu, uu, cu,
		    px, est, err, l, uns, sg, p999 / 1e3, fr, mu }' "$2"
}

# cost_run CSV WARMUP ARGS...: proxy $s in round $r at $c connections
# under tenkload ARGS (the mode) for $DUR s after WARMUP, sampled; its
# cost_row appended to CSV.  The files are named by $PHASE (pp-*,
# samples-* in phase 1).
cost_run() {
	_cc=$1
	_cw=$2
	shift 2
	start_upstream
	start_proxy "$s" "$c"
	j=$OUT/${PHASE:-pp}-$c-$r-$s.json
	"$TENKLOAD" -q "$@" -c "$c" -t 1 -s "$SIZE" -d "${DUR}s" \
	    --warmup "$_cw" --connect-rate "$RATE" --source "$SRC" \
	    --max-errors 1000000 --json "$j" \
	    "$ADDR" >"$OUT/${PHASE:-pp}-$c-$r-$s.out" 2>&1 &
	sampled "$OUT/${PHASE}samples-$c-$r-$s"
	cost_row "$j" "$OUT/${PHASE}samples-$c-$r-$s" >>"$_cc"
	tail -n 1 "$_cc" >&2
}

# better CSV COL ME: per connection count and run, ME's column COL over
# that of the peer with the highest msgs/s (column 4) in the same run,
# "conns ratio"; tenkd and its variants (tenkd*) are no peers.
better() {
	awk -F, -v col="$2" -v me="$3" 'NR > 1 {
		v[$1, $2, $3] = $col; m[$1, $2, $3] = $4; k[$1, $2] = $1
		if ($3 !~ /^tenkd/) peer[$3] = 1 }
		END { for (x in k) { split(x, p, SUBSEP); best = ""; bm = -1
			for (q in peer) if (m[p[1], p[2], q] > bm) {
				bm = m[p[1], p[2], q]; best = q }
			b = v[p[1], p[2], best]; a = v[p[1], p[2], me]
			if (best != "" && b > 0 && a != "nan" && a != "")
				print p[1], a / b } }' "$1"
}

# better_table CSV COL...: ratio_table's rows of each tenkd variant's
# same-round ratios to the better peer (better's), for the COLs.
better_table() {
	_bt=$1
	shift
	for me in $SERVERS; do
		case $me in tenkd*) ;; *) continue ;; esac
		for col in "$@"; do
			better "$_bt" "$col" "$me" | sort -n -s -k1,1 |
			    median_table | awk -v col="$col" -v me="$me" \
			    '{ print $1, me, col, $2, $3, $4 }'
		done
	done | ratio_table "$@"
}

# ---- phase 1: ping-pong -------------------------------------------------
if [ "$RUNS" -gt 0 ]; then
PP=$OUT/pingpong.csv
PHASE=
echo "$COST_HDR" >"$PP"
# pp_run: proxy $s in ping-pong, round $r at $c connections.
pp_run() {
	cost_run "$PP" "${WARM}s" -M pingpong
}
rounds "$CONNS" "$RUNS" pp_run

echo
echo "## ping-pong ${SIZE} B, tenkload -t 1: median (min-max) of $RUNS runs"
echo
echo "| conns | proxy | msgs/s | p50 µs | p99 µs | proxy µs/msg | machine µs/msg | upstream µs/msg | client µs/msg | proxy CPU | established (min) | errors (max) |"
echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
cell_table "$PP" 4:%.0f 5:%.1f 6:%.1f 7:%.1f 18:%.1f 8:%.1f 9:%.1f 10:%.2f \
    11:min 12:max

echo
echo "Tails, fairness and cost against the floor, same runs: unserved ="
echo "active connections with no reply in the measured window (tenkload);"
echo "segments = TCP segments sent on the host per message (4 carry data,"
echo "the rest are pure ACKs); floor = twice the echo upstream's CPU per"
echo "message, since a proxy does two recvs and two sends to its one each."
echo
echo "| conns | proxy | p99.9 µs | unserved (max) | TCP segments/msg | proxy µs/msg ÷ floor |"
echo "| ---: | --- | ---: | ---: | ---: | ---: |"
cell_table "$PP" 16:%.0f 14:max 15:%.2f 17:%.2f

echo
echo "## same-round ratios, median (min-max): tenkd / peer"
echo
echo "| conns | peer | msgs/s | p99 | proxy µs/msg | machine µs/msg |"
echo "| ---: | --- | ---: | ---: | ---: | ---: |"
for t in $SERVERS; do
	[ "$t" = tenkd ] && continue
	for col in 4 6 7 18; do
		run_ratios "$PP" "$col" tenkd "$t" |
		    awk -v col="$col" -v t="$t" '{ print $1, t, col, $2, $3, $4 }'
	done
done | ratio_table 4 6 7 18

echo
echo "## same-round ratios against the better peer (higher msgs/s in that" \
    "round), median (min-max)"
echo
echo "| conns | tenkd | msgs/s | p99 | proxy µs/msg | machine µs/msg |"
echo "| ---: | --- | ---: | ---: | ---: | ---: |"
better_table "$PP" 4 6 7 18

fi

# ---- phase 2: syscalls per message ---------------------------------------
if [ "$SRUNS" -gt 0 ] && command -v "$TOOL" >/dev/null 2>&1 &&
    command -v ss >/dev/null 2>&1; then
	SC=$OUT/syscalls-$TOOL.csv
	PHASE=sc
	PERFEV=$(perf_events recvfrom recvmsg read readv sendto sendmsg write \
	    writev splice epoll_wait epoll_pwait epoll_pwait2)
	echo "conns,run,server,msgs,calls,calls_per_msg,recv_per_msg,send_per_msg,wait_per_msg,other_per_msg,load1" >"$SC"
	# sc_run: the syscalls of proxy $s in round $r at $c connections.
	sc_run() {
		start_upstream
		start_proxy "$s" "$c"
		settle=$((2 + 2 * c / RATE))
		"$TENKLOAD" -q -M pingpong -c "$c" -t 1 \
		    -s "$SIZE" -d "$((settle + STRACE_S + 3))s" \
		    --connect-rate "$RATE" --source "$SRC" \
		    --max-errors 1000000 --reply-timeout 0 \
		    "$ADDR" >"$OUT/st.out" 2>&1 &
		LPID=$!
		sleep "$settle"
		tree "$PPID_"
		st=$OUT/$TOOL-$c-$r-$s.txt
		if [ "$TOOL" = perf ]; then
			B0=$(sent_bytes "$PORT")
			# the upstream's sendto calls in the
			# same span are the messages echoed
			perf stat -x, -o "$st.up" \
			    -e syscalls:sys_enter_sendto \
			    -p "$UPID" -- sleep "$STRACE_S" \
			    2>/dev/null &
			XPID=$!
			perf stat -x, -o "$st.csv" -e "$PERFEV" \
			    -p "$(echo "$PIDS" | tr ' ' ',')" \
			    -- sleep "$STRACE_S" 2>/dev/null
			wait "$XPID"
			XPID=
			B1=$(sent_bytes "$PORT")
			perf_to_strace "$st.csv" >"$st"
			awk -F, '$3 ~ /sys_enter_sendto/ {
				print "- - -", $1, "upmsgs" }' \
			    "$st.up" >>"$st"
		else
			# shellcheck disable=SC2086
			strace_window "$st" "$STRACE_S" \
			    "$PORT" $PIDS
		fi
		kill -TERM "$LPID" 2>/dev/null
		wait "$LPID"
		LPID=
		stop_all
		awk -v c="$c" -v r="$r" -v s="$s" -v l="$(load1)" \
		    -v m="$(((B1 - B0) / SIZE))" '
		$NF == "upmsgs" { m = $4 }
		$NF == "total" { tot = $4 }
		$NF ~ /^(recvfrom|recvmsg|read|readv)$/ { rv += $4 }
		$NF ~ /^(sendto|sendmsg|write|writev|splice)$/ { sd += $4 }
		$NF ~ /^(epoll_wait|epoll_pwait|epoll_pwait2|poll|ppoll|select|pselect6)$/ { wt += $4 }
		END { if (m <= 0) { print c "," r "," s ",0,,,,,,," l; exit }
			o = (tot - rv - sd - wt) / m
			printf "%s,%s,%s,%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%s\n",
			    c, r, s, m, tot, tot / m, rv / m, sd / m,
			    wt / m, o, l }' \
		    "$st" >>"$SC"
		tail -n 1 "$SC" >&2
	}
	rounds "$CONNS" "$SRUNS" sc_run
	echo
	if [ "$TOOL" = perf ]; then how="perf stat"; else how="strace -c -f"; fi
	echo "## proxy syscalls per proxied message ($how, ${STRACE_S} s" \
	    "steady state): median (min-max) of $SRUNS runs"
	echo
	if [ "$TOOL" = perf ]; then
		echo "Messages = the upstream's sendto calls in the same perf stat"
		echo "(one per echoed message); every column is per message."
	else
		echo "Messages = the proxy's client sockets' bytes_sent / $SIZE between"
		echo "snapshots around the traced span (strace's attach and detach"
		echo "overrun it); every column is per message."
	fi
	echo
	echo "| conns | proxy | calls/msg | recv | send | wait | other |"
	echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"
	cell_table "$SC" 6:%.3f 7:=%.3f 8:=%.3f 9:=%.3f 10:=%.3f
fi
# ---- phase 3: every client served ----------------------------------------
if [ "$ARUNS" -gt 0 ]; then
	AS=$OUT/served.csv
	PHASE=as
	echo "conns,run,server,established,timeouts,errors,msgs,upstream_conns,load1" >"$AS"
	# as_run: is every client of proxy $s served, round $r at $c connections?
	as_run() {
		start_upstream
		start_proxy "$s" "$c"
		j=$OUT/as-$c-$r-$s.json
		"$TENKLOAD" -q -M rate -R "$((2 * c))" -c "$c" -t 1 \
		    -s "$SIZE" -d 8s --warmup 0s \
		    --connect-rate "$RATE" --source "$SRC" \
		    --reply-timeout 3s --max-errors 1000000 \
		    --json "$j" "$ADDR" >"$OUT/as-$c-$r-$s.out" 2>&1 &
		LPID=$!
		# mid-window: after the ramp, 4 s into the 8
		sleep "$((c / RATE + 5))"
		uc=$(ss -Htn state established \
		    "( dport = :${UADDR##*:} )" | wc -l)
		wait "$LPID"
		LPID=
		stop_all
		echo "$c,$r,$s,$(jget "$j" connections.established),$(jget "$j" errors.timeout),$(jget "$j" errors.total),$(jget "$j" traffic.msgs),$uc,$(load1)" >>"$AS"
		tail -n 1 "$AS" >&2
	}
	rounds "$CONNS" "$ARUNS" as_run
	echo
	echo "## every client served: tenkload -M rate, 2 msgs/s per connection," \
	    "8 s, --reply-timeout 3s ($ARUNS runs)"
	echo
	echo "| conns | proxy | established | reply timeouts | errors | proxy→upstream connections | messages |"
	echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"
	awk -F, 'NR > 1 { printf "| %s | %s | %s | %s | %s | %s | %s |\n",
	    $1, $3, $4, $5, $6, $8, $7 }' "$AS"
fi
# ---- phase 4: open loop ------------------------------------------------
if [ "$ORATE" -gt 0 ] && [ "$RUNS" -gt 0 ]; then
	OL=$OUT/openloop.csv
	PHASE=ol
	echo "$COST_HDR" >"$OL"
	# ol_run: proxy $s in the open loop, round $r at $c connections.
	ol_run() {
		cost_run "$OL" "$((WARM + c / RATE))s" -M rate -R "$ORATE"
	}
	rounds "$OCONNS" "$RUNS" ol_run
	echo
	echo "## open loop: $OCONNS connections, $ORATE msgs/s in all (tenkload -M" \
	    "rate), ${SIZE} B: median (min-max) of $RUNS runs"
	echo
	echo "| conns | proxy | msgs/s | p50 µs | p99 µs | p99.9 µs | proxy µs/msg | machine µs/msg | errors (max) |"
	echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	cell_table "$OL" 4:%.0f 5:%.1f 6:%.1f 16:%.1f 7:%.1f 18:%.1f 12:max
	echo
	echo "## open loop, same-round ratios against the better peer," \
	    "median (min-max)"
	echo
	echo "| conns | tenkd | p50 | p99 | p99.9 | machine µs/msg |"
	echo "| ---: | --- | ---: | ---: | ---: | ---: |"
	better_table "$OL" 5 6 16 18
fi

echo
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg); loads per run" \
    "are in the CSV files"
