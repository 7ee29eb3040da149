#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# tls-compare.sh: tenkd proxy terminating TLS side by side with nginx's
# stream module (ssl) and HAProxy (bind ... ssl), on the same OpenSSL,
# in front of the same plaintext upstream (tenkd echo -t 1), driven by
# the same tenkload over TLS; and tenkd proxy --sni-route beside nginx's
# ssl_preread, routing TLS untouched to an upstream that terminates it
# (tenkd echo --tls-cert).
#
#   test/bench/tls-compare.sh [options]
#
# Needs nginx (and its stream module), haproxy and openssl (make
# test-deps).  Every contender runs one thread (tenkd -t 1, nginx
# worker_processes 1 in one process, HAProxy nbthread 1), is started
# fresh for each run and run in turn with the others, so that a noisy
# machine hits them alike; ratios are taken within one round (the same
# run number) against the better peer, and their median is reported.
# Certificates are made here by openssl req: ECDSA P-256 and RSA-2048,
# for a.test.  TLS 1.3 with OpenSSL's default suite for all.
#
# Phases, for each key kind:
#  hs    new handshakes: tenkload -M connect --tls on 32 connections,
#        handshakes per second, and the contender's CPU per handshake;
#  pp    64 B ping-pong over established TLS on -c connections (default
#        1000): msgs/s and the contender's CPU per message;
#  bulk  tenkload -M stream -s 64k on 4 connections: the contender's CPU
#        per GB that the clients sent (it moved as much back);
#  idle  memory: the contender's resident memory (all its processes)
#        with -i idle TLS connections open (default 2000) less before
#        they came, per connection, sampled until 6 s after the last
#        handshake (tenkd gives the handshakes' heap back a few seconds
#        after a burst: tk_tls_trim);
# and once, with the ECDSA certificate:
#  route 64 B ping-pong on -c connections through the SNI router: msgs/s
#        and the router's CPU per message.
#        With -F also tenkd --sni-route --fastpath sockmap (the kernel
#        forwards the session once the ClientHello has gone: needs root
#        or CAP_BPF), as phase routefp against the same round's nginx.
#
# CPU is utime+stime of the contender's processes (/proc/PID/stat,
# sampled every 50 ms) inside tenkload's measured window.
#
# Options:
#   -b DIR    tenk build directory (default: build/ next to test/)
#   -c N      connections of pp and route (default 1000)
#   -i N      idle connections (default 2000)
#   -d SECS   measured seconds per run (default 4)
#   -r N      runs (default 3)
#   -k LIST   key kinds, comma-separated (default ec,rsa)
#   -p LIST   phases (default hs,pp,bulk,idle,route)
#   -o DIR    keep raw results here (default: a temporary directory)
#   -F        phase route also with --fastpath sockmap (routefp)
#
# Output: tables on stdout; raw CSV, JSON and logs in DIR.
# Not run by `make test`.

set -u

here=$(cd "$(dirname "$0")" && pwd)
B=$here/../../build
# shellcheck source=test/bench/lib.sh
. "$here/lib.sh"
# shellcheck source=test/integ/lib_tls.sh
. "$here/../integ/lib_tls.sh"
CONNS=1000
IDLE=2000
DUR=4
RUNS=3
KINDS=ec,rsa
PHASES=hs,pp,bulk,idle,route
OUT=
FP=
USAGE="[-b dir] [-c conns] [-i idle] [-d secs] [-r runs] [-k ec,rsa]
    [-p phases] [-o dir] [-F]"
bench_opts 'b:B c:CONNS i:IDLE d:DUR r:RUNS k:KINDS p:PHASES o:OUT
    F=FP=tenkd-route-fp' "$@"
shift $((OPTIND - 1))
[ $# -eq 0 ] || bench_usage
bench_init tls-compare
HZ=$(getconf CLK_TCK)
commas KINDS PHASES

NGINX=$(bench_prog nginx) || exit 1
HAPROXY=$(bench_prog haproxy) || exit 1
command -v openssl >/dev/null 2>&1 || die "no openssl"
MOD=/usr/lib/nginx/modules/ngx_stream_module.so

tls_pair "$OUT/tls" a.test || die "openssl req ($TLS_KIND)"
for k in ec rsa; do
	cat "$OUT/tls/$k.pem" "$OUT/tls/$k.key" >"$OUT/tls/$k.both"
done

PIDS=
UPID=
XPID=
cleanup() {
	for p in $XPID $PIDS $UPID; do
		kill "$p" 2>/dev/null
	done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# free_addr: ADDR = 127.0.0.1 and a port nothing listens on now.
free_addr() {
	ADDR=127.0.0.1:$(python3 -c 'import socket; s = socket.socket()
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
}

# wait_port ADDR PID LOG: until something listens on ADDR's port.
wait_port() {
	_p=$(printf ':%04X' "${1##*:}")
	_n=0
	until awk -v p="$_p" '$4 == "0A" && substr($2, length($2) - 4) == p {
	    f = 1 } END { exit !f }' /proc/net/tcp; do
		kill -0 "$2" 2>/dev/null || die "exited: $(tail -n 5 "$3")"
		_n=$((_n + 1))
		[ "$_n" -lt 200 ] || die "nothing listens on $1: $(tail -n 5 "$3")"
		sleep 0.05
	done
}

# upstream [TLS-KIND]: a fresh tenkd echo -t 1 (over TLS with that
# kind's certificate); UP = its address.
upstream() {
	free_addr
	UP=$ADDR
	# shellcheck disable=SC2046
	"$TENKD" echo -t 1 --listen "$UP" --log-level warn \
	    $([ $# -gt 0 ] && echo "--tls-cert $OUT/tls/$1.pem \
	    --tls-key $OUT/tls/$1.key") >"$OUT/up.log" 2>&1 &
	UPID=$!
	wait_port "$UP" "$UPID" "$OUT/up.log"
}

# contender NAME KIND: start NAME (tenkd, nginx, haproxy; tenkd-route,
# nginx-route) in front of $UP, terminating TLS with KIND's
# certificate; CPID, LISTEN.
contender() {
	free_addr
	LISTEN=$ADDR
	_d=$OUT/run
	rm -rf "$_d"
	mkdir -p "$_d"
	_c=$OUT/tls/$2.pem
	_k=$OUT/tls/$2.key
	case $1 in
	tenkd)
		"$TENKD" proxy -t 1 --listen "$LISTEN" -u "$UP" \
		    --tls-cert "$_c" --tls-key "$_k" --log-level warn \
		    --idle-timeout 0 >"$_d/log" 2>&1 &
		;;
	tenkd-route)
		"$TENKD" proxy -t 1 --listen "$LISTEN" -u "$UP" \
		    --sni-route "*=$UP" --log-level warn \
		    --idle-timeout 0 >"$_d/log" 2>&1 &
		;;
	tenkd-route-fp)
		# info: fp_on reads the line that says the kernel forwards
		"$TENKD" proxy -t 1 --listen "$LISTEN" -u "$UP" \
		    --sni-route "*=$UP" --fastpath sockmap --log-level info \
		    --idle-timeout 0 >"$_d/log" 2>&1 &
		;;
	nginx|nginx-route)
		if [ "$1" = nginx ]; then
			_srv="listen $LISTEN ssl;
	ssl_certificate $_c;
	ssl_certificate_key $_k;
	ssl_protocols TLSv1.2 TLSv1.3;"
		else
			_srv="listen $LISTEN;
	ssl_preread on;"
		fi
		_map=
		[ "$1" = nginx-route ] && _map="map \$ssl_preread_server_name \$route {
	a.test $UP;
	default $UP;
    }"
		_to=$UP
		# shellcheck disable=SC2016	# nginx's variable
		[ "$1" = nginx-route ] && _to='$route'
		cat >"$_d/nginx.conf" <<EOF
$([ -e "$MOD" ] && echo "load_module $MOD;")
daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile 20000;
pid $_d/nginx.pid;
error_log $_d/error.log error;
events { worker_connections 20000; multi_accept on; }
stream {
    $_map
    server {
	$_srv
	proxy_pass $_to;
	proxy_timeout 300s;
	tcp_nodelay on;
    }
}
EOF
		"$NGINX" -p "$_d" -c "$_d/nginx.conf" >"$_d/log" 2>&1 &
		;;
	haproxy)
		cat >"$_d/h.cfg" <<EOF
global
    nbthread 1
    maxconn 9990
    tune.maxaccept -1
defaults
    mode tcp
    maxconn 9990
    timeout connect 5s
    timeout client 300s
    timeout server 300s
frontend f
    bind $LISTEN ssl crt $OUT/tls/$2.both
    default_backend b
backend b
    server s $UP
EOF
		"$HAPROXY" -f "$_d/h.cfg" -db >"$_d/log" 2>&1 &
		;;
	esac
	CPID=$!
	PIDS="$PIDS $CPID"
	wait_port "$LISTEN" "$CPID" "$_d/log"
}

# fp_on LOG: within 10 s tenkd says the kernel forwards, or die.
fp_on() {
	_n=0
	until grep -q 'forwarded by the kernel' "$1"; do
		_n=$((_n + 1))
		[ "$_n" -lt 200 ] || die "--fastpath: $(cat "$1")"
		sleep 0.05
	done
}

stop() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# sample PID OUT: "usec ticks" every 50 ms while PID lives.
sample() {
	while kill -0 "$1" 2>/dev/null; do
		ticks "$1"
		echo "$(date +%s%6N) $TICKS"
		sleep 0.05
	done >"$2"
}

# cpu_s SAMPLES A B: CPU seconds between usec A and B.
cpu_s() {
	awk -v a="$2" -v b="$3" -v hz="$HZ" '$1 >= a && $1 <= b {
		if (!n++) c0 = $2; c1 = $2 }
	END { if (n < 2) print "nan"; else printf "%.4f\n", (c1 - c0) / hz }' \
	    "$1"
}

# per C N SCALE: C * SCALE / N (CPU seconds per unit), 0 without N.
per() {
	awk -v c="$1" -v n="$2" -v s="$3" 'BEGIN {
		if (n > 0 && c != "nan") printf "%.3f", c * s / n
		else printf "0" }'
}

rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# load NAME ARGS...: tenkload --tls for DUR s against LISTEN, the
# contender sampled; J = its JSON; CPU = the contender's CPU seconds in
# the measured window.
load() {
	_n=$1
	shift
	J=$OUT/$_n.json
	sample "$CPID" "$OUT/$_n.samples" &
	XPID=$!
	"$TENKLOAD" -q -t 1 -d "${DUR}s" --warmup 1s --connect-rate 20000 \
	    --connect-timeout 30s --json "$J" --tls "$@" "$LISTEN" \
	    >"$OUT/$_n.out" 2>&1
	kill "$XPID" 2>/dev/null
	wait "$XPID" 2>/dev/null
	XPID=
	CPU=$(cpu_s "$OUT/$_n.samples" "$(jget "$J" time.measure_start_us)" \
	    "$(jget "$J" time.measure_end_us)")
}

CSV=$OUT/runs.csv
echo "phase,kind,run,contender,rate,cost,errors,load1" >"$CSV"
row() {
	echo "$1,$2,$3,$4,$5,$6,$7,$(load1)" >>"$CSV"
	tail -n 1 "$CSV" >&2
}

# jrow PHASE KIND RUN WHO RATE N SCALE: the row of the last load: the
# field RATE of J, CPU * SCALE / N and J's errors.
jrow() {
	row "$1" "$2" "$3" "$4" "$(jget "$J" "$5")" "$(per "$CPU" "$6" "$7")" \
	    "$(jget "$J" errors.total)"
}

echo "# tls-compare: $(uname -sr), $(nproc) CPUs, load $(cut -d' ' -f1-3 \
    /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# $(openssl version); $("$NGINX" -v 2>&1); $("$HAPROXY" -v |
    head -n 1 | cut -d' ' -f1-3)"
echo "# -d ${DUR}s, -c $CONNS, -i $IDLE, $RUNS runs; raw results in $OUT"

r=1
while [ "$r" -le "$RUNS" ]; do
	for kind in $KINDS; do
		upstream
		for ph in $PHASES; do
			[ "$ph" = route ] && continue
			for who in tenkd nginx haproxy; do
				contender "$who" "$kind"
				n=$ph-$kind-$who-$r
				case $ph in
				hs)
					load "$n" -c 32 -M connect
					h=$(( $(jget "$J" tls.window_new) + \
					    $(jget "$J" tls.window_resumed) ))
					jrow hs "$kind" "$r" "$who" \
					    tls.handshakes_per_s "$h" 1e6
					;;
				pp)
					load "$n" -c "$CONNS" -s 64
					jrow pp "$kind" "$r" "$who" \
					    traffic.msgs_per_s \
					    "$(jget "$J" traffic.msgs)" 1e6
					;;
				bulk)
					load "$n" -c 4 -M stream -s 64k
					jrow bulk "$kind" "$r" "$who" \
					    traffic.bytes_out_per_s \
					    "$(jget "$J" traffic.bytes_out)" 1e9
					;;
				idle)
					m0=$(rss_kb "$CPID")
					"$TENKLOAD" -q -t 1 -M idle -c 0 \
					    --idle "$IDLE" -d 6s --tls \
					    --connect-rate 20000 \
					    --connect-timeout 30s \
					    --json "$OUT/$n.json" "$LISTEN" \
					    >"$OUT/$n.out" 2>&1 &
					lp=$!
					sleep 1
					while ! grep -q ramp_end "$OUT/$n.json" \
					    2>/dev/null && kill -0 "$lp" \
					    2>/dev/null; do
						m1=$(rss_kb "$CPID")
						sleep 0.5
					done
					wait "$lp"
					row idle "$kind" "$r" "$who" "$IDLE" \
					    "$(awk -v a="$m0" -v b="$m1" \
					    -v n="$IDLE" 'BEGIN {
					    printf "%.0f", (b - a) * 1024 / n }')" \
					    "$(jget "$OUT/$n.json" errors.total)"
					;;
				esac
				stop "$CPID"
			done
		done
		stop "$UPID"
	done
	case " $PHASES " in
	*" route "*)
		upstream ec
		for who in tenkd-route nginx-route $FP; do
			contender "$who" ec
			[ "$who" = tenkd-route-fp ] && fp_on "$OUT/run/log"
			n=route-ec-$who-$r
			load "$n" -c "$CONNS" -s 64 --tls-sni a.test
			m=$(jget "$J" traffic.msgs)
			ph=route
			if [ "$who" = tenkd-route-fp ]; then
				# against the same round's nginx-route
				ph=routefp
				_ng=$(grep "^route,ec,$r,nginx-route," "$CSV")
				echo "routefp,${_ng#route,}" >>"$CSV"
			fi
			jrow "$ph" ec "$r" "$who" traffic.msgs_per_s "$m" 1e6
			stop "$CPID"
		done
		stop "$UPID"
		;;
	esac
	r=$((r + 1))
done

echo
echo "## median (min-max) of $RUNS runs"
echo
echo "rate: handshakes/s (hs), msgs/s (pp, route), client bytes/s (bulk),"
echo "connections (idle); cost: CPU us per handshake (hs) or per message"
echo "(pp, route), CPU s per GB (bulk), resident bytes per connection (idle)."
echo
echo "| phase | kind | contender | rate | cost |"
echo "| --- | --- | --- | ---: | ---: |"
for col in 5 6; do
	awk -F, -v col="$col" 'NR > 1 { print $1 "/" $2 "/" $4, $col }' \
	    "$CSV" | median_table | awk -v col="$col" '{ print $1, col, $2,
	    $3, $4 }'
done | awk '
	{ k = $1; if (!(k in seen)) { seen[k] = 1; ord[++n] = k }
	  cell[k, $2] = sprintf("%.4g (%.4g-%.4g)", $3, $4, $5) }
	END { for (i = 1; i <= n; i++) { k = ord[i]; split(k, p, "/")
		printf "| %s | %s | %s | %s | %s |\n", p[1], p[2], p[3],
		    cell[k, 5], cell[k, 6] } }'

echo
echo "## tenkd / the better peer, same run, median (min-max)"
echo
echo "Targets: hs rate >= 1.0 at cost <= 0.9; pp cost <= 0.8; bulk cost"
echo "<= 0.9; idle cost <= 0.5 of nginx's; route (routefp) cost <= 0.8 of"
echo "nginx's."
echo
echo "| phase | kind | rate | cost |"
echo "| --- | --- | ---: | ---: |"
awk -F, 'NR > 1 { k = $1 "/" $2 "/" $3
	if ($4 ~ /^tenkd/) { tr[k] = $5; tc[k] = $6; keys[k] = 1; next }
	# the better peer: the higher rate, the lower cost; idle: nginx
	if ($1 == "idle") { if ($4 == "nginx") { pr[k] = $5; pc[k] = $6 }
		next }
	if (!(k in pr) || $5 > pr[k]) pr[k] = $5
	if (!(k in pc) || $6 < pc[k]) pc[k] = $6 }
	END { for (k in keys) if (pr[k] > 0 && pc[k] > 0) {
		split(k, p, "/")
		print p[1] "/" p[2] "-rate", tr[k] / pr[k]
		print p[1] "/" p[2] "-cost", tc[k] / pc[k] } }' "$CSV" |
    sort -s -k1,1 | median_table | awk '
	{ split($1, p, "-"); k = p[1]; w = p[2]
	  if (!(k in seen)) { seen[k] = 1; ord[++n] = k }
	  cell[k, w] = sprintf("%.2f (%.2f-%.2f)", $2, $3, $4) }
	END { for (i = 1; i <= n; i++) { k = ord[i]; split(k, q, "/")
		printf "| %s | %s | %s | %s |\n", q[1], q[2], cell[k, "rate"],
		    cell[k, "cost"] } }'
echo
echo "errors: $(awk -F, 'NR > 1 && $7 != 0 { n++ } END { print n + 0 }' \
    "$CSV") runs with errors (column errors of $CSV)"
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
