# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=sh
# Helpers shared by the benchmark scripts in test/bench/ (POSIX sh):
# the command line, clean-up, set-up, waiting for a server's address, CPU
# ticks from /proc, fields of a tenkload JSON report, the load average
# and medians.  Sourced, not run.

die() {
	echo "$0: $*" >&2
	exit 1
}

# bench_usage: "usage: $0 $USAGE" on stderr, exit 2.
bench_usage() {
	echo "usage: $0 $USAGE" >&2
	exit 2
}

# bench_opts SPEC ARG...: the options among ARG, by SPEC, a word an
# option: "x:VAR" sets VAR to -x's value, "x+VAR" adds it to VAR's
# blank-separated list, "x=VAR=VALUE" sets VAR to VALUE for a -x that
# takes none.  Any other option is a usage error (bench_usage).  The
# caller then shifts $((OPTIND - 1)) for the operands.
bench_opts() {
	_spec=$1
	shift
	_gs=
	for _w in $_spec; do
		case $_w in
		?=*) _gs="$_gs${_w%%=*}" ;;
		*) _gs="$_gs${_w%%[:+]*}:" ;;
		esac
	done
	while getopts "$_gs" _o; do
		_hit=
		for _w in $_spec; do
			case $_w in
			"$_o":*) eval "${_w#??}=\$OPTARG" ;;
			"$_o"+*) eval "${_w#??}=\"\${${_w#??}:+\$${_w#??} }\$OPTARG\"" ;;
			"$_o"=*) _v=${_w#??}; eval "${_v%%=*}=\${_v#*=}" ;;
			*) continue ;;
			esac
			_hit=1
		done
		[ -n "$_hit" ] || bench_usage
	done
}

# commas VAR...: the commas of each VAR's value become blanks (a list
# given as -c 1,10,100 made a list of words).
commas() {
	for _v in "$@"; do
		eval "$_v=\$(echo \"\$$_v\" | tr ',' ' ')"
	done
}

# bench_trap VAR...: at exit (and on INT, TERM, HUP, which exit 130),
# stop the processes whose pids the variables named hold then, each a
# pid or a list, a stopped one too (SIGCONT first), and wait for them.
bench_trap() {
	BENCH_PIDVARS=$*
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM HUP
}

bench_cleanup() {
	_pids=
	for _v in $BENCH_PIDVARS; do
		eval "_pids=\"\$_pids \${$_v:-}\""
	done
	for _q in $_pids; do
		kill -CONT "$_q" 2>/dev/null
		kill "$_q" 2>/dev/null
	done
	for _q in $_pids; do
		wait "$_q" 2>/dev/null
	done
}

# bench_init NAME: TENKD and TENKLOAD from the build directory $B, which
# must hold both; OUT made absolute, a fresh temporary NAME.XXXXXX
# directory if the caller left it empty.
bench_init() {
	TENKD=$B/tenkd
	TENKLOAD=$B/tenkload
	if [ ! -x "$TENKD" ] || [ ! -x "$TENKLOAD" ]; then
		echo "$0: no $TENKD or $TENKLOAD; run make first" >&2
		exit 2
	fi
	if [ -z "$OUT" ]; then
		OUT=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 1
	fi
	mkdir -p "$OUT" || exit 1
	OUT=$(cd "$OUT" && pwd)
}

# await_addr FILE PID: LADDR = the HOST:PORT of the first "listening on"
# line that PID writes to FILE (emptied by the caller before starting
# it: a "2>" may truncate late).  Returns 1 with LERR saying why if PID
# exits first or prints no such line in 10 s.
# shellcheck disable=SC2034	# LERR is for the caller
await_addr() {
	_n=0
	while :; do
		LADDR=$(sed -n 's/.*listening on \([^ ]*:[0-9][0-9]*\).*/\1/p' \
		    "$1" | head -n 1)
		[ -n "$LADDR" ] && return 0
		if ! kill -0 "$2" 2>/dev/null; then
			LERR="exited: $(cat "$1")"
			return 1
		fi
		_n=$((_n + 1))
		if [ "$_n" -ge 200 ]; then
			LERR="printed no 'listening on ADDR:PORT' in 10 s"
			return 1
		fi
		sleep 0.05
	done
}

# rounds CONNS RUNS FN: the runs of a phase, interleaved: at each
# connection count c of the list CONNS, RUNS rounds r, each running every
# server s of $SERVERS in turn, so that a noisy machine hits them alike;
# FN runs one with c, r and s set.
# shellcheck disable=SC2034	# c, r and s are for FN
rounds() {
	for c in $1; do
		r=1
		while [ "$r" -le "$2" ]; do
			for s in $SERVERS; do
				"$3"
			done
			r=$((r + 1))
		done
	done
}

# runs RUNS FN: FN once for each run r from 1 to RUNS.
runs() {
	r=1
	while [ "$r" -le "$1" ]; do
		"$2"
		r=$((r + 1))
	done
}

# ticks PID...: TICKS = utime + stime summed over the processes (all
# threads); processes that are gone count 0.
ticks() {
	TICKS=0
	for _q in "$@"; do
		{ read -r _l <"/proc/$_q/stat"; } 2>/dev/null || continue
		_l=${_l##*) }
		set -f
		# shellcheck disable=SC2086
		set -- $_l
		set +f
		TICKS=$((TICKS + ${12} + ${13}))
	done
}

# sampler OUT SPID CPID: "usec server_ticks client_ticks" every 50 ms
# while CPID lives.  Not once it is a zombie: its threads are gone, and
# so are their ticks from its stat.
sampler() {
	while kill -0 "$3" 2>/dev/null; do
		case $(sed 's/.*) //' "/proc/$3/stat" 2>/dev/null) in
		Z*|'') break ;;
		esac
		_t=$(date +%s%6N)
		ticks "$2" || break
		_s=$TICKS
		ticks "$3" || break
		echo "$_t $_s $TICKS"
		sleep 0.05
	done >"$1"
}

# jget FILE SECTION.KEY (tenkload writes one member per line)
jget() {
	awk -v want="$2" '
	/^  "[^"]*": \{/ { sec = $0; sub(/^  "/, "", sec); sub(/".*/, "", sec)
		next }
	/^  \}/ { sec = ""; next }
	/^    "[^"]*": / { k = $0; sub(/^    "/, "", k); v = k
		sub(/".*/, "", k); sub(/^[^"]*": /, "", v); sub(/,$/, "", v)
		gsub(/"/, "", v)
		if (sec "." k == want) { print v; f = 1; exit } }
	END { if (!f) print "nan" }' "$1"
}

# bench_prog NAME: the path of NAME, on PATH or in /usr/sbin, /sbin
# (nginx), or die saying how to get it.
bench_prog() {
	command -v "$1" 2>/dev/null && return 0
	for _d in /usr/sbin /sbin; do
		[ -x "$_d/$1" ] && { echo "$_d/$1"; return 0; }
	done
	die "no $1 (make test-deps installs it)"
}

load1() {
	read -r l _ </proc/loadavg
	echo "$l"
}

median_table() {
	# stdin: key value; prints key median min max (keys in first-seen
	# order)
	awk '{ k = $1; if (!(k in n)) ord[++nk] = k; v[k, ++n[k]] = $2 }
	END { for (i = 1; i <= nk; i++) { k = ord[i]; m = n[k]
		for (a = 1; a <= m; a++) x[a] = v[k, a]
		for (a = 2; a <= m; a++) { t = x[a]
			for (b = a - 1; b >= 1 && x[b] > t; b--) x[b + 1] = x[b]
			x[b + 1] = t }
		med = m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2
		print k, med, x[1], x[m] } }'
}


# sent_bytes PORT: bytes sent so far by the established sockets whose
# local port is PORT (the server's side of every client connection).
sent_bytes() {
	ss -Htin state established "( sport = :$1 )" |
	    grep -o 'bytes_sent:[0-9]*' |
	    awk -F: '{ s += $2 } END { printf "%.0f\n", s }'
}

# perf_events NAME...: perf stat's -e list for every syscall entered
# (raw_syscalls:sys_enter) and each syscall NAME apart.
perf_events() {
	_ev=raw_syscalls:sys_enter
	for _e in "$@"; do
		_ev=$_ev,syscalls:sys_enter_$_e
	done
	echo "$_ev"
}

# perf_to_strace CSV: perf stat -x, counts of syscall tracepoints in the
# layout of strace -c's table (calls in field 4, the name last), the
# total as "total".
perf_to_strace() {
	awk -F, '$3 == "raw_syscalls:sys_enter" { print "- - -", $1, "total" }
	    $3 ~ /^syscalls:sys_enter_/ {
		n = $3; sub(/.*sys_enter_/, "", n); print "- - -", $1, n }' "$1"
}

# strace_window OUT SECS PORT PID...: strace -c -f the PIDs for SECS
# seconds into OUT, with B0 and B1 set to sent_bytes PORT when counting
# starts and ends.  XPID holds strace's PID meanwhile, for cleanup.
strace_window() {
	_o=$1
	_secs=$2
	_port=$3
	shift 3
	_pargs=
	for _q in "$@"; do
		_pargs="$_pargs -p $_q"
	done
	: >"$OUT/strace.err"
	# shellcheck disable=SC2086
	strace -c -f $_pargs -o "$_o" 2>"$OUT/strace.err" &
	XPID=$!
	_n=0
	until grep -q attached "$OUT/strace.err"; do
		_n=$((_n + 1))
		[ "$_n" -lt 100 ] || die "strace: $(cat "$OUT/strace.err")"
		sleep 0.02
	done
	# shellcheck disable=SC2034 # B0 and B1 are for the caller
	B0=$(sent_bytes "$_port")
	sleep "$_secs"
	# shellcheck disable=SC2034
	B1=$(sent_bytes "$_port")
	kill -INT "$XPID"
	wait "$XPID"
	XPID=
}

# col_medians CSV COL...: for each column COL of CSV (a header line, then
# rows conns,run,server,...), the lines "conns/server COL median min max"
# of that column over the runs, in first-seen order; empty cells are no
# measurement and are skipped.
col_medians() {
	_csv=$1
	shift
	for _col in "$@"; do
		awk -F, -v col="$_col" 'NR > 1 && $col != "" {
			print $1 "/" $3, $col }' "$_csv" | median_table |
		    awk -v col="$_col" '{ print $1, col, $2, $3, $4 }'
	done
}

# cell_table CSV COL:HOW...: for each conns and server of CSV (in
# col_medians' order), a markdown row "| conns | server | ... |" with a
# cell per COL in the order given, written as HOW says: a printf format
# F gives "F (F-F)" of the median, min and max over the runs; =F the
# median alone; min or max the least or the most as a whole number.
cell_table() {
	_ct=$1
	shift
	_cc=
	for _s in "$@"; do
		_cc="$_cc ${_s%%:*}"
	done
	# shellcheck disable=SC2086	# the columns are words
	col_medians "$_ct" $_cc | awk -v spec="$*" '
	BEGIN { nc = split(spec, s, " ")
		for (j = 1; j <= nc; j++) { h = s[j]; sub(/^[^:]*:/, "", h)
			c[j] = s[j]; sub(/:.*/, "", c[j]); how[c[j]] = h } }
	{ k = $1; if (!(k in seen)) { seen[k] = 1; ord[++n] = k }
	  h = how[$2]
	  if (h == "min") v = sprintf("%d", $4)
	  else if (h == "max") v = sprintf("%d", $5)
	  else if (h ~ /^=/) v = sprintf(substr(h, 2), $3)
	  else v = sprintf(h " (" h "-" h ")", $3, $4, $5)
	  cell[k, $2] = v }
	END { for (i = 1; i <= n; i++) { k = ord[i]; split(k, p, "/")
		printf "| %s | %s |", p[1], p[2]
		for (j = 1; j <= nc; j++) printf " %s |", cell[k, c[j]]
		printf "\n" } }'
}

# run_ratios CSV COL NUM DEN: per connection count, the ratio of server
# NUM's column COL to server DEN's within the same run, as "conns median
# min max" over the runs; runs where DEN has no positive value or NUM
# none at all ("nan") are left out.
run_ratios() {
	awk -F, -v col="$2" -v num="$3" -v den="$4" 'NR > 1 {
		v[$1, $2, $3] = $col; k[$1, $2] = $1 }
		END { for (x in k) { split(x, p, SUBSEP)
			a = v[p[1], p[2], num]; b = v[p[1], p[2], den]
			if (b > 0 && a != "nan") print p[1], a / b } }' "$1" |
	    sort -n -s -k1,1 | median_table
}

# ratio_table COL...: stdin run_ratios lines with a name and the column
# put in front, "conns name col median min max"; out a markdown row
# "| conns | name | ... |" for each conns and name, the cells of the
# COLs in that order as "median (min-max)", in order of conns.
ratio_table() {
	awk -v cols="$*" 'BEGIN { nc = split(cols, c, " ") }
	{ k = $1 " " $2; if (!(k in seen)) { seen[k] = 1; ord[++n] = k }
	  cell[k, $3] = sprintf("%.2f (%.2f-%.2f)", $4, $5, $6) }
	END { for (i = 1; i <= n; i++) { k = ord[i]; split(k, p, " ")
		printf "| %s | %s |", p[1], p[2]
		for (j = 1; j <= nc; j++) printf " %s |", cell[k, c[j]]
		printf "\n" } }' | sort -n -s -k2,2
}

# listening PORT: something listens on 127.0.0.1:PORT (ss).
listening() {
	[ -n "$(ss -Htln "( sport = :$1 )" 2>/dev/null)" ]
}

# free_port: PORT = a port nothing listened on a moment ago (the kernel's
# choice for a tenkd bound to port 0, which is then stopped).
# shellcheck disable=SC2034	# PORT is for the caller
free_port() {
	: >"$OUT/port.err"	# empty first: the child's 2> may come late
	"$TENKD" echo -l 127.0.0.1:0 -t 1 2>"$OUT/port.err" &
	_p=$!
	await_addr "$OUT/port.err" "$_p"
	_ok=$?
	# SIGKILL: it holds nothing (the lost SIGTERM of "Anomalies" in
	# docs/BENCHMARKS.md was the shell's, between fork and exec)
	kill -KILL "$_p" 2>/dev/null
	wait "$_p" 2>/dev/null
	[ "$_ok" -eq 0 ] || die "could not find a free port: tenkd $LERR"
	PORT=${LADDR##*:}
}
