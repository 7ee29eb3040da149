#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# proxy-iperf.sh: bulk throughput through an L4 proxy, tenkd against
# HAProxy and nginx, with a real client and server: iperf3.
#
#   test/bench/proxy-iperf.sh [-b DIR] [-r ROUNDS] [-t SECS] [-o DIR]
#	[-n "NAME ..."] [-k "CASE ..."]
#
# One iperf3 server (127.0.0.1), and in front of it, one at a time, each
# contender on its own port with one thread of execution:
#   tenkd        tenkd proxy -t 1 (--splice auto, the default)
#   tenkd-copy   tenkd proxy -t 1 --splice off
#   tenkd-uring  tenkd proxy -t 1 -b io_uring (completions: no splice)
#   tenkd-fp     tenkd proxy -t 1 --fastpath sockmap (needs root)
#   haproxy-sp   HAProxy, nbthread 1, mode tcp, option splice-auto
#   haproxy      HAProxy, nbthread 1, mode tcp
#   nginx        nginx stream, one worker (nginx cannot splice)
# and a direct run (no proxy) for the ceiling.  -n picks contenders,
# among those and tenkd-64k, tenkd-256k, tenkd-copy-64k (tenkd with that
# --buffer-limit, the splice's size too).  Cases: 1 and 4 streams
# (iperf3 -P), client to server and back (-R); each run lasts SECS.
# Per run: Gbit/s received (iperf3's sum_received) and the proxy's CPU
# (utime + stime of its processes from /proc/PID/stat) per GB moved.
# Rounds are interleaved (every contender once per round, in turn), so
# a noisy machine hits them alike; the table gives medians, and the
# ratio of tenkd to the best peer is taken per round, then its median.
#
# Needs iperf3, haproxy and nginx with its stream module (make
# test-deps).  Every process started is stopped by PID.
#
# Options:
#   -b DIR    tenk build directory (default: build/ next to test/)
#   -r N      rounds (default 3)
#   -t SECS   seconds per iperf3 run (default 5)
#   -o DIR    keep the raw results there (default: a temporary directory)
#   -n LIST   contenders (default "tenkd tenkd-copy haproxy-sp haproxy nginx")
#   -k LIST   cases (default "1 1R 4 4R")

. "$(dirname "$0")/lib.sh"

B=$(cd "$(dirname "$0")/../.." && pwd)/build
ROUNDS=3
SECS=5
OUT=
NAMES="tenkd tenkd-copy haproxy-sp haproxy nginx"
CASES="1 1R 4 4R"
USAGE='[-b dir] [-r rounds] [-t secs] [-o dir] [-n "name ..."] [-k "case ..."]'
bench_opts 'n:NAMES k:CASES b:B r:ROUNDS t:SECS o:OUT' "$@"
bench_init proxy-iperf
for p in iperf3 haproxy nginx; do
	command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] ||
	    die "$p not found (make test-deps)"
done
HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
NGXMOD=/usr/lib/nginx/modules/ngx_stream_module.so
[ -e "$NGXMOD" ] || die "no $NGXMOD (make test-deps)"

PIDS=
bench_trap PIDS

free_port
IPORT=$PORT
iperf3 -s -B 127.0.0.1 -p "$IPORT" >"$OUT/iperf3-s.log" 2>&1 &
PIDS="$PIDS $!"
n=0
until listening "$IPORT"; do
	n=$((n + 1))
	[ "$n" -lt 100 ] || die "iperf3 -s: $(cat "$OUT/iperf3-s.log")"
	sleep 0.05
done

# start NAME PORT: start contender NAME listening on PORT; CPID = the
# PIDs whose CPU counts.
start() {
	_d=$OUT/$1
	mkdir -p "$_d"
	case $1 in
	tenkd*)
		_o=
		case $1 in
		tenkd-copy*)	_o="--splice off" ;;
		tenkd-uring*)	_o="-b io_uring" ;;
		tenkd-fp*)	_o="--fastpath sockmap" ;;
		esac
		case $1 in
		*-64k)		_o="$_o --buffer-limit 64k" ;;
		*-256k)		_o="$_o --buffer-limit 256k" ;;
		esac
		# shellcheck disable=SC2086
		"$TENKD" proxy -t 1 -l "127.0.0.1:$2" -u "127.0.0.1:$IPORT" \
		    $_o 2>"$_d/log" &
		CPID=$!
		;;
	haproxy|haproxy-sp)
		_sp=
		[ "$1" = haproxy-sp ] && _sp="    option splice-auto"
		cat >"$_d/haproxy.cfg" <<EOF
global
    nbthread 1
defaults
    mode tcp
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend in
    bind 127.0.0.1:$2
$_sp
    default_backend up
backend up
$_sp
    server s1 127.0.0.1:$IPORT
EOF
		"$HAPROXY" -f "$_d/haproxy.cfg" -db >"$_d/log" 2>&1 &
		CPID=$!
		;;
	nginx)
		cat >"$_d/nginx.conf" <<EOF
load_module $NGXMOD;
worker_processes 1;
pid $_d/nginx.pid;
error_log $_d/error.log warn;
events { use epoll; }
stream {
    server {
        listen 127.0.0.1:$2;
        proxy_pass 127.0.0.1:$IPORT;
        tcp_nodelay on;
    }
}
EOF
		"$NGINX" -p "$_d" -c "$_d/nginx.conf" -g 'daemon off;' \
		    >"$_d/log" 2>&1 &
		CPID=$!
		;;
	esac
	PIDS="$PIDS $CPID"
	_n=0
	until listening "$2"; do
		_n=$((_n + 1))
		[ "$_n" -lt 200 ] || die "$1 did not listen: $(cat "$_d/log")"
		sleep 0.05
	done
	# nginx's worker does the work: count the master's children too.
	CPIDS="$CPID $(cat "/proc/$CPID/task/$CPID/children" 2>/dev/null)"
}

stop() {
	kill "$CPID" 2>/dev/null
	wait "$CPID" 2>/dev/null
}

# run NAME CASE PORT: one iperf3 run of CASE (1, 1R, 4, 4R) to PORT;
# appends "NAME CASE gbps cpu-per-GB" to $OUT/results.
run() {
	_p=${2%R}
	_r=
	[ "$_p" != "$2" ] && _r=-R
	_j=$OUT/$1.$2.$ROUND.json
	# shellcheck disable=SC2086	# a list of PIDs
	ticks $CPIDS
	_t0=$TICKS
	# shellcheck disable=SC2086
	iperf3 -c 127.0.0.1 -p "$3" -t "$SECS" -P "$_p" $_r -J >"$_j" 2>&1 ||
	    { echo "$1 $2: iperf3 failed: $(tail -n 3 "$_j")" >&2; return; }
	# shellcheck disable=SC2086	# a list of PIDs
	ticks $CPIDS
	_t1=$TICKS
	awk -v name="$1" -v cs="$2" -v ticks=$((_t1 - _t0)) \
	    -v hz="$(getconf CLK_TCK)" '
	/"sum_received"/ { s = 1 }
	s && /"bytes"/ { gsub(/[^0-9.]/, "", $2); bytes = $2 }
	s && /"bits_per_second"/ { gsub(/[^0-9.e+]/, "", $2); bps = $2; s = 0 }
	END { printf "%s %s %.2f %.2f\n", name, cs, bps / 1e9,
	    (bytes > 0 ? ticks / hz / (bytes / 1e9) : 0) }' "$_j" \
	    >>"$OUT/results"
}

: >"$OUT/results"
free_port
XPORT=$PORT
ROUND=1
while [ "$ROUND" -le "$ROUNDS" ]; do
	for c in $CASES; do
		CPIDS=
		run direct "$c" "$IPORT"
		for name in $NAMES; do
			start "$name" "$XPORT"
			run "$name" "$c" "$XPORT"
			stop
		done
	done
	echo "round $ROUND of $ROUNDS done (load $(load1))" >&2
	ROUND=$((ROUND + 1))
done

echo "# $(uname -sr), $(nproc) CPUs; iperf3 $SECS s per run, $ROUNDS rounds;"
echo "# medians (min-max); CPU: the proxy's CPU-seconds per GB received"
printf '%-11s %-5s %-22s %s\n' contender case "Gbit/s" "CPU s/GB"
for c in $CASES; do
	for name in direct $NAMES; do
		g=$(awk -v n="$name" -v c="$c" '$1 == n && $2 == c { print "x", $3 }' \
		    "$OUT/results" | median_table)
		u=$(awk -v n="$name" -v c="$c" '$1 == n && $2 == c { print "x", $4 }' \
		    "$OUT/results" | median_table)
		[ -n "$g" ] || continue
		printf '%-11s %-5s %-22s %s\n' "$name" "$c" \
		    "$(echo "$g" | awk '{ printf "%.2f (%.2f-%.2f)", $2, $3, $4 }')" \
		    "$(echo "$u" | awk '{ printf "%.2f (%.2f-%.2f)", $2, $3, $4 }')"
	done
done
# Per round: tenkd over the best peer (Gbit/s), and over that peer's CPU.
echo "# tenkd / best peer per round, medians: Gbit/s ratio, CPU-per-GB ratio"
for c in $CASES; do
	awk -v c="$c" '$2 == c { g[$1] = g[$1] " " $3; u[$1] = u[$1] " " $4 }
	END {
		nt = split(g["tenkd"], tg, " "); split(u["tenkd"], tu, " ")
		split(g["haproxy-sp"], a, " "); split(g["haproxy"], h, " ")
		split(g["nginx"], x, " ")
		split(u["haproxy-sp"], ua, " "); split(u["haproxy"], uh, " ")
		split(u["nginx"], ux, " ")
		for (i = 1; i <= nt; i++) {
			b = a[i]; bu = ua[i]
			if (h[i] > b) { b = h[i]; bu = uh[i] }
			if (x[i] > b) { b = x[i]; bu = ux[i] }
			if (b > 0 && bu > 0)
				printf "%s %.3f %.3f\n", c, tg[i] / b, tu[i] / bu
		}
	}' "$OUT/results" >"$OUT/ratio.$c"
	rg=$(awk '{ print "x", $2 }' "$OUT/ratio.$c" | median_table |
	    awk '{ printf "%.2f", $2 }')
	ru=$(awk '{ print "x", $3 }' "$OUT/ratio.$c" | median_table |
	    awk '{ printf "%.2f", $2 }')
	printf 'case %-3s tenkd/best-peer Gbit/s %s, CPU per GB %s\n' "$c" \
	    "$rg" "$ru"
done
echo "# raw: $OUT/results" >&2
