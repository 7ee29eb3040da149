#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# echo-compare.sh: tenkd echo side by side with another echo server.
#
#   test/bench/echo-compare.sh [options] 'PEER COMMAND'
#
# PEER COMMAND is run with sh -c; it must serve RFC 862 echo on loopback
# and print "listening on ADDR:PORT" on stderr (as tenkd does with port 0).
# The contenders are `tenkd echo -t 1`, the peer and `tenkd echo -t 2`,
# always run in turn (t1, peer, t2, t1, peer, t2, ...) with a fresh server
# each run, so that a noisy machine hits them alike; ratios are taken
# within one run (the same run number) and their median is reported.
#
# Three phases, all against 127.0.0.1 from 127.0.0.2-127.0.0.9:
#  1. ping-pong (tenkload -M pingpong -s SIZE) at each connection count:
#     msgs/s, p50, p99 from tenkload's JSON; server and client CPU per
#     message from utime+stime in /proc/PID/stat, sampled every 50 ms,
#     between the first and the last sample inside tenkload's measured
#     window, divided by msgs/s times that span.
#  2. syscalls: strace -c -f -p SERVER (or perf stat, -S perf) for 3 s
#     in the steady state; calls are given per send (in ping-pong each
#     echo is one complete send) and per message counted from the bytes
#     the server's sockets sent (ss -ti bytes_sent) over SIZE, which the
#     tool's attach and detach blur.  Needs strace or perf, and ss.
#  3. idle memory: VmRSS of a fresh server (after one warm-up round trip)
#     before and after IDLE connections of tenkload -M idle, per connection.
#
# Options:
#   -b DIR       tenk build directory (default: build/ next to test/)
#   -c LIST      connection counts, comma-separated (default 1,100,1000,10000)
#   -d SECS      measured seconds per run (default 4)
#   -w SECS      tenkload --warmup (default 1)
#   -r N         runs per cell (default 5)
#   -R N         syscall-count runs per cell (default 3; 0 skips the phase)
#   -S TOOL      count syscalls with strace (-c -f, default) or perf (stat
#                on the syscall tracepoints: no ptrace stops, so the server
#                runs at full speed and epoll_wait batches are not inflated)
#   -i N         idle connections for the memory phase (default 10000;
#                0 skips it), -I N runs of it (default 5)
#   -t N         tenkload threads (default 1)
#   -s BYTES     message size (default 64)
#   -o DIR       keep raw results here (default: a temporary directory)
#   -u           the third contender is `tenkd echo -t 1 -b io_uring`
#                (tenkd-uring, the completion data path) instead of
#                `tenkd echo -t 2`
#
# Output: a table per phase on stdout; raw CSV files in DIR.
# Not run by `make test`.

set -u

USAGE="[-u] [-b dir] [-c list] [-d secs] [-w secs] [-r runs] [-R runs]
	[-S strace|perf] [-i idle] [-I runs] [-t threads] [-s size] [-o dir]
	'peer command'"
here=$(cd "$(dirname "$0")" && pwd)
B=$here/../../build
# shellcheck source=test/bench/lib.sh
. "$here/lib.sh"
CONNS=1,100,1000,10000
DUR=4
WARM=1
RUNS=5
SRUNS=3
TOOL=strace
IDLE=10000
IRUNS=5
CT=1
SIZE=64
OUT=
STRACE_S=3
SRC=127.0.0.2-127.0.0.9
RATE=10000
THIRD=tenkd-t2

bench_opts 'b:B c:CONNS d:DUR w:WARM r:RUNS R:SRUNS S:TOOL i:IDLE I:IRUNS
    t:CT s:SIZE o:OUT u=THIRD=tenkd-uring' "$@"
shift $((OPTIND - 1))
[ $# -eq 1 ] || bench_usage
PEER=$1
bench_init echo-compare
HZ=$(getconf CLK_TCK)
SERVERS="tenkd-t1 peer $THIRD"
commas CONNS

SPID=
LPID=
XPID=
bench_trap XPID LPID SPID

# start_server NAME: sets SPID and ADDR (host:port it printed).
start_server() {
	: >"$OUT/server.err"
	case $1 in
	tenkd-t1) "$TENKD" echo -l 127.0.0.1:0 -t 1 2>"$OUT/server.err" & ;;
	tenkd-t2) "$TENKD" echo -l 127.0.0.1:0 -t 2 2>"$OUT/server.err" & ;;
	tenkd-uring) "$TENKD" echo -l 127.0.0.1:0 -t 1 -b io_uring \
	    2>"$OUT/server.err" & ;;
	peer) sh -c "exec $PEER" 2>"$OUT/server.err" & ;;
	esac
	SPID=$!
	await_addr "$OUT/server.err" "$SPID" || die "$1 $LERR"
	ADDR=$LADDR
}

stop_server() {
	kill -TERM "$SPID" 2>/dev/null
	wait "$SPID" 2>/dev/null
	SPID=
}

echo "# echo-compare: $(uname -sr), $(nproc) CPUs, load $(cut -d' ' -f1-3 \
    /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# peer: $PEER; tenkload -t $CT -s $SIZE -d ${DUR}s --warmup ${WARM}s;" \
    "raw results in $OUT"

# ---- phase 1: ping-pong -------------------------------------------------
PP=$OUT/pingpong.csv
echo "conns,run,server,msgs_s,p50_us,p99_us,srv_us_msg,cli_us_msg,srv_util,cli_util,errors,load1" >"$PP"
# pp_run: server $s in ping-pong, round $r at $c connections.
pp_run() {
	start_server "$s"
	j=$OUT/pp-$c-$r-$s.json
	"$TENKLOAD" -q -M pingpong -c "$c" -t "$CT" -s "$SIZE" \
	    -d "${DUR}s" --warmup "${WARM}s" --connect-rate "$RATE" \
	    --source "$SRC" --json "$j" "$ADDR" \
	    >"$OUT/pp.out" 2>&1 &
	LPID=$!
	sampler "$OUT/samples" "$SPID" "$LPID" &
	XPID=$!
	wait "$LPID"
	LPID=
	wait "$XPID"
	XPID=
	stop_server
	ms=$(jget "$j" time.measure_start_us)
	me=$(jget "$j" time.measure_end_us)
	awk -v a="$ms" -v b="$me" -v hz="$HZ" -v c="$c" -v r="$r" \
	    -v s="$s" -v rate="$(jget "$j" traffic.msgs_per_s)" \
	    -v p50="$(jget "$j" latency.p50)" \
	    -v p99="$(jget "$j" latency.p99)" \
	    -v err="$(jget "$j" errors.total)" -v l="$(load1)" '
	$1 >= a && $1 <= b { if (!n++) { t0 = $1; s0 = $2; c0 = $3 }
		t1 = $1; s1 = $2; c1 = $3 }
	END { span = (t1 - t0) / 1e6
		if (n < 2 || span < 0.5 || rate <= 0) {
			su = cu = sx = cx = "nan" } else {
			su = (s1 - s0) / hz * 1e6 / (rate * span)
			cu = (c1 - c0) / hz * 1e6 / (rate * span)
			sx = (s1 - s0) / hz / span
			cx = (c1 - c0) / hz / span }
		printf "%s,%s,%s,%.0f,%.1f,%.1f,%s,%s,%s,%s,%s,%s\n",
		    c, r, s, rate, p50 / 1e3, p99 / 1e3, su, cu,
		    sx, cx, err, l }' "$OUT/samples" >>"$PP"
	tail -n 1 "$PP" >&2
}
rounds "$CONNS" "$RUNS" pp_run

echo
echo "## ping-pong ${SIZE} B, tenkload -t $CT: median (min-max) of $RUNS runs"
echo
echo "| conns | server | msgs/s | p50 µs | p99 µs | server µs/msg | client µs/msg | server CPU | client CPU |"
echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
cell_table "$PP" 4:%.0f 5:%.1f 6:%.1f 7:%.1f 8:%.1f 9:%.2f 10:%.2f

echo
echo "## same-run ratios, median (min-max): tenkd / peer"
echo
echo "| conns | tenkd | msgs/s | p99 | server µs/msg |"
echo "| ---: | --- | ---: | ---: | ---: |"
for t in tenkd-t1 "$THIRD"; do
	for col in 4 6 7; do
		run_ratios "$PP" "$col" "$t" peer |
		    awk -v col="$col" -v t="$t" '{ print $1, t, col, $2, $3, $4 }'
	done
done | ratio_table 4 6 7

# ---- phase 2: syscalls per message ---------------------------------------
case $TOOL in
strace|perf) ;;
*) bench_usage ;;
esac
if [ "$SRUNS" -gt 0 ] && command -v "$TOOL" >/dev/null 2>&1 &&
    command -v ss >/dev/null 2>&1; then
	SC=$OUT/syscalls-$TOOL.csv
	PERFEV=$(perf_events recvfrom recvmsg read readv sendto sendmsg write \
	    writev epoll_wait epoll_pwait epoll_pwait2 io_uring_enter)
	echo "conns,run,server,msgs_ss,calls,calls_per_msg_ss,sends,calls_per_send,recv_per_send,wait_per_send,other_per_send" >"$SC"
	# sc_run: the syscalls of server $s in round $r at $c connections.
	sc_run() {
		start_server "$s"
		settle=$((2 + 2 * c / RATE))
		"$TENKLOAD" -q -M pingpong -c "$c" -t "$CT" \
		    -s "$SIZE" -d "$((settle + STRACE_S + 2))s" \
		    --connect-rate "$RATE" --source "$SRC" \
		    --reply-timeout 0 "$ADDR" \
		    >"$OUT/st.out" 2>&1 &
		LPID=$!
		sleep "$settle"
		st=$OUT/$TOOL-$c-$r-$s.txt
		if [ "$TOOL" = perf ]; then
			B0=$(sent_bytes "${ADDR##*:}")
			perf stat -x, -o "$st.csv" -e "$PERFEV" \
			    -p "$SPID" -- sleep "$STRACE_S" \
			    2>/dev/null
			B1=$(sent_bytes "${ADDR##*:}")
			perf_to_strace "$st.csv" >"$st"
		else
			strace_window "$st" "$STRACE_S" \
			    "${ADDR##*:}" "$SPID"
		fi
		kill -TERM "$LPID" 2>/dev/null
		wait "$LPID"
		LPID=
		stop_server
		awk -v c="$c" -v r="$r" -v s="$s" \
		    -v m="$(((B1 - B0) / SIZE))" '
		$NF == "total" { tot = $4 }
		$NF ~ /^(recvfrom|recvmsg|read|readv)$/ { rv += $4 }
		$NF ~ /^(sendto|sendmsg|write|writev)$/ { sd += $4 }
		$NF ~ /^(epoll_wait|epoll_pwait|epoll_pwait2|poll|ppoll|select|pselect6)$/ { wt += $4 }
		END { if (m <= 0) m = "nan"
			if (sd <= 0) sd = "nan"
			o = (tot - rv - sd - wt) / sd
			if (o < 0 && o > -0.0005) o = 0
			printf "%s,%s,%s,%s,%d,%.3f,%d,%.3f,%.3f,%.3f,%.3f\n",
			    c, r, s, m, tot, tot / m, sd, tot / sd,
			    rv / sd, wt / sd, o }' \
		    "$st" >>"$SC"
		tail -n 1 "$SC" >&2
	}
	rounds "$CONNS" "$SRUNS" sc_run
	echo
	echo "## syscalls per echoed message ($TOOL, ${STRACE_S} s" \
	    "steady state): median (min-max) of $SRUNS runs"
	echo
	echo "Per send: every ${SIZE}-byte echo is one complete send in ping-pong."
	echo "Per ss message: messages = server sockets' bytes_sent / $SIZE between"
	if [ "$TOOL" = strace ]; then
		echo "snapshots inside the traced span (strace's attach and detach"
		echo "overrun it: an upper bound)."
	else
		echo "snapshots around the counted span (perf's start-up and exit"
		echo "widen it: a lower bound)."
	fi
	echo
	echo "| conns | server | calls/send | recv/send | wait/send | other/send | calls per ss message |"
	echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"
	cell_table "$SC" 8:%.3f 9:=%.3f 10:=%.3f 11:=%.3f 6:%.3f
fi

# ---- phase 3: memory per idle connection ---------------------------------
if [ "$IDLE" -gt 0 ]; then
	IM=$OUT/idle.csv
	echo "run,server,rss0_kb,rss1_kb,fds,bytes_per_conn,load1" >"$IM"
	rss() {
		awk '$1 == "VmRSS:" { print $2 }' "/proc/$SPID/status"
	}
	# im_run: the memory of server $s with $IDLE idle connections, round $r.
	im_run() {
		start_server "$s"
		"$TENKLOAD" -q -c 1 -t 1 -d 0.2s "$ADDR" >/dev/null 2>&1
		sleep 0.2
		k0=$(rss)
		f0=$(find "/proc/$SPID/fd" -mindepth 1 | wc -l)
		"$TENKLOAD" -q -M idle -c "$IDLE" -t "$CT" \
		    --connect-rate "$RATE" --source "$SRC" \
		    -d "$((IDLE / RATE + 4))s" "$ADDR" \
		    >"$OUT/idle.out" 2>&1 &
		LPID=$!
		n=0
		while :; do
			f1=$(find "/proc/$SPID/fd" -mindepth 1 | wc -l)
			[ $((f1 - f0)) -ge "$IDLE" ] && break
			n=$((n + 1))
			[ "$n" -lt 300 ] || break
			sleep 0.05
		done
		sleep 0.5
		k1=$(rss)
		f1=$(find "/proc/$SPID/fd" -mindepth 1 | wc -l)
		wait "$LPID"
		LPID=
		stop_server
		echo "$r,$s,$k0,$k1,$((f1 - f0)),$(((k1 - k0) * 1024 / IDLE)),$(load1)" >>"$IM"
		tail -n 1 "$IM" >&2
	}
	rounds "$IDLE" "$IRUNS" im_run
	echo
	echo "## memory per idle connection: VmRSS growth over $IDLE idle" \
	    "connections, median (min-max) of $IRUNS runs"
	echo
	echo "| server | bytes/conn |"
	echo "| --- | ---: |"
	awk -F, 'NR > 1 { print $2, $6 }' "$IM" | median_table |
	    awk '{ printf "| %s | %.0f (%.0f-%.0f) |\n", $1, $2, $3, $4 }'
fi
echo
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg); loads per run" \
    "are in the CSV files"
