#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# load-compare.sh: tenkload side by side with the load generators of one
# protocol each, against the same real servers: redis-benchmark against
# redis-server, wrk against nginx.
#
#   test/bench/load-compare.sh [options]
#
# Needs redis-server, redis-benchmark, nginx and wrk (make test-deps).
# The contenders of a cell are always run in turn (tenkload, peer,
# tenkload, peer, ...) with a fresh server each run, so that a noisy
# machine hits them alike; ratios are taken within one round (the same
# run number) and their median is reported.  The same connections, the
# same requests in flight per connection and the same threads for both:
#
#  1. redis PING, inline ("PING\r\n", redis-benchmark -t ping_inline) and
#     RESP ("*1\r\n$4\r\nPING\r\n", -t ping_mbulk), at each connection
#     count, one request in flight per connection and -P deep (tenkload
#     --window N, redis-benchmark -P N); redis-benchmark --threads as
#     tenkload -t.  tenkload runs first in a round, and redis-benchmark,
#     which sends a number of requests and not for a time, gets -n =
#     tenkload's requests/s times the duration, so both run about as
#     long.
#  2. HTTP/1.1 GET of a 64-byte static file from nginx (one process, one
#     worker: master_process off), keep-alive, at -H connections: tenkload
#     by URL (http://127.0.0.1:PORT/f) against wrk -t T -c H on the same
#     URL.
#  4. redis SET, then GET, of random keys among 100,000, as
#     redis-benchmark -r 100000 makes them ("key:" and twelve digits,
#     RESP, 3-byte values): tenkload -m with key:{rand:000000000000-
#     000000099999} against redis-benchmark -t set (get) -r 100000, both
#     sending exactly -K requests (-n) at each connection count, -P deep.
#     After each SET run, DBSIZE is compared with what the distribution
#     predicts, 100000 (1 - (1 - 1/100000)^K), for both tools (keys.csv).
#     GET runs on a fresh server, as redis-benchmark's would: all miss.
#  3. a 1 s stall of nginx (SIGSTOP, then SIGCONT, by its PID) in the
#     middle of a run: tenkload --mode rate (latency from the intended
#     send time) shows it in its corrected p99, not in its uncorrected
#     one.  wrk2, which times from the intended send time as tenkload
#     does, is not packaged in Debian, so it is not here; wrk (closed
#     loop) is, with the coarse correction wrk 4 applies after the run
#     (stats_correct: each latency above the mean interval between a
#     connection's requests adds the samples the stalled requests
#     would have had).
#
# Requests/s is each tool's own figure: tenkload's over its measured
# window (after the ramp and --warmup), redis-benchmark's and wrk's over
# their whole run.  CPU per request is utime+stime of the client process
# (all threads; /proc/PID/stat sampled every 50 ms) over a span divided
# by requests/s times that span: for tenkload its measured window, for
# the others from 0.5 s after their start (the connects) to the last
# sample.  The server's the same way, for who was the bottleneck.
#
# With -T everything runs over TLS 1.3 (OpenSSL's defaults, AES-256-GCM,
# an ECDSA P-256 certificate made here by openssl req): redis-server on
# its --tls-port and redis-benchmark --tls --insecure, nginx with ssl
# and wrk on https://, tenkload --tls (which verifies nothing either).
#
# Options:
#   -b DIR    tenk build directory (default: build/ next to test/)
#   -c LIST   redis connection counts, comma-separated (default 50,1000)
#   -P LIST   requests in flight per connection (default 1,16)
#   -H N      HTTP connections (default 400; 0 skips phases 2 and 3)
#   -d SECS   seconds per run (default 3)
#   -w SECS   tenkload --warmup (default 0.5)
#   -r N      runs per cell (default 3)
#   -t N      client threads, both tools (default 1)
#   -S RATE   the stall phase's requests/s (default 5000; 0 skips it)
#   -K N      requests per run of phase 4 (default 300000; 0 skips it)
#   -o DIR    keep raw results here (default: a temporary directory)
#   -T        over TLS
#
# Output: tables on stdout; raw CSV, JSON and logs in DIR.
# Not run by `make test`.

set -u

USAGE="[-b dir] [-c list] [-P list] [-H conns] [-d secs] [-w secs]
	[-r runs] [-t threads] [-S rate] [-K requests] [-o dir] [-T]"
here=$(cd "$(dirname "$0")" && pwd)
B=$here/../../build
# shellcheck source=test/bench/lib.sh
. "$here/lib.sh"
# shellcheck source=test/integ/lib_servers.sh
. "$here/../integ/lib_servers.sh"
CONNS=50,1000
PIPES=1,16
HCONNS=400
DUR=3
WARM=0.5
RUNS=3
CT=1
SRATE=5000
KEYN=300000
OUT=
TLS=

bench_opts 'b:B c:CONNS P:PIPES H:HCONNS d:DUR w:WARM r:RUNS t:CT S:SRATE
    K:KEYN o:OUT T=TLS=1' "$@"
shift $((OPTIND - 1))
[ $# -eq 0 ] || bench_usage
bench_init load-compare
HZ=$(getconf CLK_TCK)
commas CONNS PIPES

REDIS=$(bench_prog redis-server) || exit 1
RBENCH=$(bench_prog redis-benchmark) || exit 1
if [ "$HCONNS" -gt 0 ]; then
	NGINX=$(bench_prog nginx) || exit 1
	WRK=$(bench_prog wrk) || exit 1
fi

# -T: the certificate, and each tool's words for TLS.
TLSOPT=
RTLS=
SCHEME=http
if [ -n "$TLS" ]; then
	mkdir -p "$OUT/tls"
	TLS_CERT=$OUT/tls/cert.pem
	TLS_KEY=$OUT/tls/key.pem
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout "$TLS_KEY" -out "$TLS_CERT" -days 2 -subj /CN=localhost \
	    >"$OUT/tls/req.log" 2>&1 || die "openssl req: $(cat "$OUT/tls/req.log")"
	# redis-benchmark waits for its handshakes without a limit.
	TLSOPT="--tls --connect-timeout 60s"
	RTLS="--tls --insecure"
	SCHEME=https
fi

SPID=
LPID=
XPID=
STPID=
bench_trap XPID LPID STPID SPID

# await_listen NAME LOG: wait until SPID listens on PORT
await_listen() {
	_n=0
	until listening "$PORT"; do
		kill -0 "$SPID" 2>/dev/null || die "$1 exited: $(tail -n 5 "$2")"
		_n=$((_n + 1))
		[ "$_n" -lt 200 ] || die "$1 did not listen on port $PORT in 10 s"
		sleep 0.05
	done
}

# start_redis: a fresh redis-server with no persistence; SPID, PORT.
start_redis() {
	free_port
	rm -rf "$OUT/redis"
	mkdir -p "$OUT/redis"
	_rp="--port $PORT"
	[ -n "$TLS" ] && _rp="--port 0 --tls-port $PORT --tls-cert-file $TLS_CERT
	    --tls-key-file $TLS_KEY --tls-ca-cert-file $TLS_CERT --tls-auth-clients no"
	# shellcheck disable=SC2086	# $_rp is a list of words
	"$REDIS" $_rp --bind 127.0.0.1 --save '' --appendonly no \
	    --daemonize no --dir "$OUT/redis" --maxclients 10000 \
	    >"$OUT/redis/log" 2>&1 &
	SPID=$!
	await_listen redis-server "$OUT/redis/log"
}

# start_nginx: a fresh nginx, one process, serving $OUT/nginx/html/f (64
# bytes) over HTTP/1.1 with keep-alive (lib_servers.sh's nginx_conf, for
# 8192 connections); SPID, PORT.
start_nginx() {
	free_port
	_d=$OUT/nginx
	rm -rf "$_d"
	mkdir -p "$_d/html"
	printf '%063d\n' 0 >"$_d/html/f"
	nginx_conf "$_d" "$PORT" "$NGINX" 8192
	"$NGINX" -p "$_d" -c "$_d/nginx.conf" >"$_d/stderr" 2>&1 &
	SPID=$!
	await_listen nginx "$_d/stderr"
}

stop_server() {
	kill -CONT "$SPID" 2>/dev/null
	kill -TERM "$SPID" 2>/dev/null
	wait "$SPID" 2>/dev/null
	SPID=
}

# run_client OUT CMD...: run CMD in the background with its stdout and
# stderr in OUT, sample it and the server (kept in OUT.samples), wait
# for it; T0 = its start (usec), RC = its exit status.
run_client() {
	_o=$1
	shift
	T0=$(date +%s%6N)
	"$@" >"$_o" 2>&1 &
	LPID=$!
	sampler "$OUT/samples" "$SPID" "$LPID" &
	XPID=$!
	wait "$LPID"
	RC=$?
	LPID=
	wait "$XPID"
	XPID=
	cp "$OUT/samples" "$_o.samples"
}

# cpu A B RATE: "client_us_per_req server_us_per_req client_util
# server_util" from the samples between usec A and B at RATE requests/s
cpu() {
	# A sample whose ticks went down was read while the process exited
	# (its threads' ticks gone from its stat): not a sample.
	awk -v a="$1" -v b="$2" -v rate="$3" -v hz="$HZ" '
	$1 >= a && $1 <= b && !(n && ($2 < s1 || $3 < c1)) {
		if (!n++) { t0 = $1; s0 = $2; c0 = $3 }
		t1 = $1; s1 = $2; c1 = $3 }
	END { span = (t1 - t0) / 1e6
		if (n < 2 || span < 0.5 || rate <= 0) {
			print "nan nan nan nan"; exit }
		printf "%.3f %.3f %.2f %.2f\n",
		    (c1 - c0) / hz * 1e6 / (rate * span),
		    (s1 - s0) / hz * 1e6 / (rate * span),
		    (c1 - c0) / hz / span, (s1 - s0) / hz / span }' \
	    "$OUT/samples"
}

# peer_cpu RATE: cpu from 0.5 s after T0 to the last sample
peer_cpu() {
	cpu $((T0 + 500000)) 99999999999999999 "$1"
}

# tenkload_row CELL RUN JSON: a CSV row for a tenkload run
tenkload_row() {
	_r=$(jget "$3" traffic.msgs_per_s)
	_e=$(jget "$3" errors.total)
	[ "$RC" -eq 0 ] || _e="exit$RC/$_e"
	set -- "$1" "$2" "$3" "$_r" "$_e" \
	    "$(cpu "$(jget "$3" time.measure_start_us)" \
	    "$(jget "$3" time.measure_end_us)" "$_r")"
	# shellcheck disable=SC2086	# cpu's four fields
	printf '%s,%s,tenkload,%.0f,%.3f,%s,%s,%s\n' "$1" "$2" "$4" \
	    "$(awk -v p="$(jget "$3" latency.p99)" 'BEGIN { print p / 1e6 }')" \
	    "$(echo $6 | tr ' ' ,)" "$_e" "$(load1)"
}

# tenkload_cell ARGS...: run $r of $cell for tenkload, with ARGS (the
# address last) after the options every cell shares; its report in
# $j, its row in the CSV and on stderr.
tenkload_cell() {
	j=$OUT/$cell-$r.json
	# shellcheck disable=SC2086	# $TLSOPT
	run_client "$OUT/$cell-$r.tenkload" "$TENKLOAD" $TLSOPT -q -t "$CT" \
	    --connect-rate 100000 --json "$j" "$@"
	tenkload_row "$cell" "$r" "$j" >>"$CSV"
	tail -n 1 "$CSV" >&2
}

# rbench_row OUT TEST: a CSV row for run $r of $cell from redis-benchmark's
# --csv output in OUT, the line whose test name matches the regular
# expression TEST: "PING_INLINE","rps","avg","min","p50","p95","p99","max"
rbench_row() {
	_rps=$(awk -F'"' -v t="$2" '$2 ~ t { print $4 }' "$1")
	_p99=$(awk -F'"' -v t="$2" '$2 ~ t { print $14 }' "$1")
	_e=0
	[ "$RC" -eq 0 ] && [ -n "$_rps" ] || _e=exit$RC
	printf '%s,%s,redis-benchmark,%.0f,%s,%s,%s,%s\n' "$cell" "$r" \
	    "${_rps:-0}" "${_p99:-nan}" \
	    "$(peer_cpu "${_rps:-0}" | tr ' ' ,)" "$_e" "$(load1)" >>"$CSV"
	tail -n 1 "$CSV" >&2
}

# rbench_cell TEST ARGS...: run $r of $cell for redis-benchmark on $c
# connections, -P $p, with ARGS; its row from the result line TEST
# matches (rbench_row).
rbench_cell() {
	_t=$1
	shift
	# shellcheck disable=SC2086	# $RTLS
	run_client "$OUT/$cell-$r.rbench" "$RBENCH" $RTLS -h 127.0.0.1 \
	    -p "$PORT" -c "$c" -P "$p" --threads "$CT" --csv "$@"
	rbench_row "$OUT/$cell-$r.rbench" "$_t"
}

echo "# load-compare: $(uname -sr), $(nproc) CPUs, load $(cut -d' ' -f1-3 \
    /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# $("$REDIS" --version | cut -d' ' -f1-3); $("$RBENCH" --version 2>&1 |
    head -n 1)"
[ "$HCONNS" -gt 0 ] && echo "# $("$NGINX" -v 2>&1); $("$WRK" -v 2>&1 |
    head -n 1 | cut -d' ' -f1-2)"
[ -n "$TLS" ] && echo "# over TLS: $(openssl version)"
echo "# -t $CT, -d ${DUR}s, tenkload --warmup ${WARM}s, $RUNS runs;" \
    "raw results in $OUT"

CSV=$OUT/runs.csv
echo "cell,run,client,req_s,p99_ms,cli_us_req,srv_us_req,cli_util,srv_util,errors,load1" >"$CSV"

# ---- phase 1: redis PING ------------------------------------------------
# ping_run: run $r of $cell: tenkload for $DUR s, then redis-benchmark
# for as many requests as tenkload made in that time, each on a fresh
# redis-server.
ping_run() {
	start_redis
	tenkload_cell -c "$c" -d "${DUR}s" --warmup "${WARM}s" -m "$msg" \
	    --reply redis --reply-check +PONG --window "$p" "127.0.0.1:$PORT"
	stop_server
	n=$(awk -v r="$(jget "$j" traffic.msgs_per_s)" -v d="$DUR" \
	    'BEGIN { n = int(r * d); print (n > 10000) ? n : 10000 }')
	start_redis
	rbench_cell '^PING' -n "$n" -t "$test"
	stop_server
}
for c in $CONNS; do
	for p in $PIPES; do
		for proto in inline resp; do
			if [ "$proto" = inline ]; then
				msg='PING\r\n'
				test=ping_inline
			else
				# "$4" is RESP's length, not a parameter
				# shellcheck disable=SC2016
				msg='*1\r\n$4\r\nPING\r\n'
				test=ping_mbulk
			fi
			cell=redis-$proto-c$c-P$p
			runs "$RUNS" ping_run
		done
	done
done

# ---- phase 2: HTTP GET of a static file from nginx -----------------------
if [ "$HCONNS" -gt 0 ]; then
	# http_run: run $r of $cell: tenkload, then wrk, for $DUR s each on
	# a fresh nginx.
	http_run() {
		start_nginx
		tenkload_cell -c "$HCONNS" -d "${DUR}s" --warmup "${WARM}s" \
		    "$SCHEME://127.0.0.1:$PORT/f"
		stop_server
		start_nginx
		o=$OUT/$cell-$r.wrk
		run_client "$o" "$WRK" -t "$CT" -c "$HCONNS" -d "${DUR}s" \
		    --latency "$SCHEME://127.0.0.1:$PORT/f"
		rps=$(awk '/^Requests\/sec:/ { print $2 }' "$o")
		# "99%   26.95ms" (us, ms or s)
		p99=$(awk '$1 == "99%" { v = $2; u = v; sub(/[a-z]+$/, "", v)
			sub(/^[0-9.]+/, "", u)
			print (u == "us") ? v / 1e3 : (u == "s") ? v * 1e3 : v }' \
		    "$o")
		e=$(awk '/Non-2xx|Socket errors/ { print "errors" }' "$o")
		[ "$RC" -eq 0 ] && [ -n "$rps" ] || e=exit$RC
		printf '%s,%s,wrk,%.0f,%s,%s,%s,%s\n' "$cell" "$r" \
		    "${rps:-0}" "${p99:-nan}" \
		    "$(peer_cpu "${rps:-0}" | tr ' ' ,)" "${e:-0}" \
		    "$(load1)" >>"$CSV"
		tail -n 1 "$CSV" >&2
		stop_server
	}
	cell=http-c$HCONNS
	runs "$RUNS" http_run
fi

# ---- phase 4: redis SET and GET of random keys among 100,000 -----------
KEYS=100000
KCSV=$OUT/keys.csv
echo "run,client,cell,requests,dbsize,predicted,ratio" >"$KCSV"
# predicted N: the keys that N uniform draws among KEYS leave set
predicted() {
	awk -v n="$1" -v k="$KEYS" 'BEGIN { printf "%.1f", k * (1 - (1 - 1 / k)^n) }'
}
# keys_row CLIENT: a row of keys.csv for run $r of $cell: the server's
# DBSIZE after CLIENT's $KEYN SETs, what it should be, and their ratio
keys_row() {
	# shellcheck disable=SC2086	# $RTLS
	_d=$("$RCLI" $RTLS -p "$PORT" dbsize)
	_q=$(predicted "$KEYN")
	printf '%s,%s,%s,%s,%s,%s,%s\n' "$r" "$1" "$cell" "$KEYN" "$_d" "$_q" \
	    "$(awk -v d="$_d" -v q="$_q" 'BEGIN { printf "%.4f", d / q }')" \
	    >>"$KCSV"
	tail -n 1 "$KCSV" >&2
}
if [ "$KEYN" -gt 0 ]; then
	RCLI=$(bench_prog redis-cli) || exit 1
	# "$16", "$3" are RESP lengths, not parameters
	# shellcheck disable=SC2016
	KEY='key:{rand:000000000000-000000099999}'
	# keys_run: run $r of $cell: tenkload, then redis-benchmark, $KEYN
	# requests each on a fresh redis-server; after a SET run, DBSIZE.
	keys_run() {
		start_redis
		tenkload_cell -c "$c" -n "$KEYN" -m "$msg" --reply redis \
		    --reply-check "$chk" --window "$p" "127.0.0.1:$PORT"
		[ "$op" = set ] && keys_row tenkload
		stop_server
		start_redis
		rbench_cell "^$(echo "$op" | tr "[:lower:]" "[:upper:]")\$" \
		    -n "$KEYN" -t "$op" -r "$KEYS"
		[ "$op" = set ] && keys_row redis-benchmark
		stop_server
	}
	for c in $CONNS; do
		for p in $PIPES; do
			for op in set get; do
				if [ "$op" = set ]; then
					# shellcheck disable=SC2016
					msg='*3\r\n$3\r\nSET\r\n$16\r\n'"$KEY"'\r\n$3\r\nxxx\r\n'
					chk=+OK
				else
					# shellcheck disable=SC2016
					msg='*2\r\n$3\r\nGET\r\n$16\r\n'"$KEY"'\r\n'
					chk='$'
				fi
				cell=redis-$op-r$KEYS-c$c-P$p
				runs "$RUNS" keys_run
			done
		done
	done
fi

echo
echo "## median (min-max) of $RUNS runs"
echo
echo "| cell | client | req/s | p99 ms | client µs/req | server µs/req | client CPU | server CPU |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
cell_table "$CSV" 4:%.0f 5:%.2f 6:%.2f 7:%.2f 8:%.2f 9:%.2f
echo
echo "errors: $(awk -F, 'NR > 1 && $10 != 0 { n++ } END { print n + 0 }' \
    "$CSV") runs with errors or a failed exit (column errors of $CSV)"
if [ "$KEYN" -gt 0 ]; then
	echo
	echo "DBSIZE after $KEYN SETs of random keys among $KEYS, over what"
	echo "the distribution predicts ($(predicted "$KEYN")): min and max"
	awk -F, 'NR > 1 { k = $2; if (!(k in lo) || $7 < lo[k]) lo[k] = $7
		if (!(k in hi) || $7 > hi[k]) hi[k] = $7 }
		END { for (k in lo) printf "  %s: %s to %s\n", k, lo[k], hi[k] }' \
	    "$KCSV"
fi

echo
echo "## same-run ratios tenkload / peer, median (min-max)"
echo
echo "Targets: redis ≥ 1.1 req/s and ≤ 0.8 client µs/req; HTTP ≥ 1.0" \
    "and ≤ 0.9."
echo
echo "| cell | req/s | client µs/req |"
echo "| --- | ---: | ---: |"
for col in 4 6; do
	awk -F, -v col="$col" 'NR > 1 { k[$1 "," $2] = $1
		v[$1 "," $2, $3 == "tenkload"] = $col }
		END { for (x in k) { a = v[x, 1]; b = v[x, 0]
			if (b > 0 && a != "nan") print k[x], a / b } }' "$CSV" |
	    sort -s -k1,1 | median_table |
	    awk -v col="$col" '{ print $1, col, $2, $3, $4 }'
done | awk '
	{ k = $1; if (!(k in seen)) { seen[k] = 1; ord[++n] = k }
	  cell[k, $2] = sprintf("%.2f (%.2f-%.2f)", $3, $4, $5) }
	END { for (i = 1; i <= n; i++) { k = ord[i]
		printf "| %s | %s | %s |\n", k, cell[k, 4], cell[k, 6] } }'

# ---- phase 3: a 1 s stall of nginx ---------------------------------------
if [ "$HCONNS" -gt 0 ] && [ "$SRATE" -gt 0 ]; then
	SC=$OUT/stall.csv
	SCONNS=50
	echo "run,client,p50_ms,p99_ms,p99_uncorrected_ms,max_ms,stall_in_window" >"$SC"
	# stall PID: SIGSTOP the server 1.5 s after now, SIGCONT 1 s later
	stall() {
		sleep 1.5
		date +%s%6N >"$OUT/stall.t"
		kill -STOP "$SPID"
		sleep 1
		kill -CONT "$SPID"
		date +%s%6N >>"$OUT/stall.t"
	}
	# stall_run: run $r of the stall: tenkload at $SRATE a second, then
	# wrk, each on a fresh nginx stalled 1.5 s into its 5 s.
	stall_run() {
		start_nginx
		j=$OUT/stall-$r.json
		stall &
		STPID=$!
		# shellcheck disable=SC2086	# $TLSOPT
		"$TENKLOAD" $TLSOPT -q --mode rate -R "$SRATE" -c "$SCONNS" -t "$CT" \
		    -d 5s --connect-rate 100000 \
		    -m "GET /f HTTP/1.1\\r\\nHost: 127.0.0.1:$PORT\\r\\n\\r\\n" \
		    --reply http --reply-check 'HTTP/1.1 200' --json "$j" \
		    "127.0.0.1:$PORT" >"$OUT/stall-$r.tenkload" 2>&1
		wait "$STPID"
		s0=$(head -n 1 "$OUT/stall.t")
		inside=$(awk -v a="$(jget "$j" time.measure_start_us)" \
		    -v b="$(jget "$j" time.measure_end_us)" -v s="$s0" \
		    'BEGIN { print (s > a && s + 1e6 < b) ? "yes" : "no" }')
		awk -v p50="$(jget "$j" latency.p50)" \
		    -v p99="$(jget "$j" latency.p99)" \
		    -v u99="$(jget "$j" latency_uncorrected.p99)" \
		    -v mx="$(jget "$j" latency_uncorrected.max)" \
		    -v r="$r" -v inside="$inside" 'BEGIN {
			printf "%s,tenkload,%.2f,%.2f,%.2f,%.2f,%s\n", r,
			    p50 / 1e6, p99 / 1e6, u99 / 1e6, mx / 1e6, inside }' \
		    >>"$SC"
		tail -n 1 "$SC" >&2
		stop_server
		start_nginx
		o=$OUT/stall-$r.wrk
		stall &
		STPID=$!
		"$WRK" -t "$CT" -c "$SCONNS" -d 5s --latency \
		    "$SCHEME://127.0.0.1:$PORT/f" >"$o" 2>&1
		wait "$STPID"
		awk -v r="$r" '
		function ms(x, u) { u = x; sub(/[a-z]+$/, "", x)
			sub(/^[0-9.]+/, "", u)
			return (u == "us") ? x / 1e3 : (u == "s") ? x * 1e3 : x }
		$1 == "Latency" && NF >= 4 { mx = ms($4) }
		$1 == "50%" { p50 = ms($2) }
		$1 == "99%" { p99 = ms($2) }
		END { printf "%s,wrk,%.2f,%.2f,,%.2f,yes\n", r, p50, p99, mx }' \
		    "$o" >>"$SC"
		tail -n 1 "$SC" >&2
		stop_server
	}
	runs "$RUNS" stall_run
	echo
	echo "## a 1 s stall of nginx 1.5 s into a 5 s run, $SCONNS" \
	    "connections: median (min-max) of $RUNS runs"
	echo
	echo "tenkload --mode rate -R $SRATE (corrected: from the intended" \
	    "send time); wrk closed loop with its after-the-run correction" \
	    "(no -R: wrk2 is not packaged)."
	echo
	echo "| client | p50 ms | p99 ms | p99 uncorrected ms | max ms |"
	echo "| --- | ---: | ---: | ---: | ---: |"
	for col in 3 4 5 6; do
		awk -F, -v col="$col" 'NR > 1 && $col != "" {
			print $2, $col }' "$SC" | median_table |
		    awk -v col="$col" '{ print $1, col, $2, $3, $4 }'
	done | awk '
	{ k = $1; if (!(k in seen)) { seen[k] = 1; ord[++n] = k }
	  cell[k, $2] = sprintf("%.1f (%.1f-%.1f)", $3, $4, $5) }
	END { for (i = 1; i <= n; i++) { k = ord[i]
		printf "| %s |", k
		for (c = 3; c <= 6; c++)
			printf " %s |", ((k, c) in cell) ? cell[k, c] : "-"
		printf "\n" } }'
	echo
	echo "stall inside tenkload's measured window: $(awk -F, \
	    'NR > 1 && $2 == "tenkload" { printf "%s ", $7 }' "$SC")"
fi
echo
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg); loads per run" \
    "are in $CSV"
