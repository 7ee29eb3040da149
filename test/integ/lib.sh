# SPDX-License-Identifier: BSD-2-Clause
# Shared helpers for the integration scripts (POSIX sh).  Each script:
#
#	. "$(dirname "$0")/lib.sh"
#	tenkd_start echo --threads 1	# sets TENKD_PID, PORT, ADDR
#	...
#	pass
#
# The runner sets TK_BIN (build dir), TK_SRC (source dir) and TK_BACKEND
# (empty for backend-independent scripts).  Every process a script starts
# through these helpers is killed by the EXIT trap; the runner also kills
# the script's whole process group when it ends.  No fixed ports: tenkd
# binds port 0 and we read back "listening on ADDR:PORT".

# The variables set here are read by the scripts that source this file;
# ulimit -n is not POSIX, but dash, bash and busybox sh have it.
# shellcheck shell=sh disable=SC2034,SC3045
set -u
TK_BIN=${TK_BIN:-$(cd "$(dirname "$0")/../../build" && pwd)}
TK_SRC=${TK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
TK_BACKEND=${TK_BACKEND:-}
TENKD=$TK_BIN/tenkd
TENKLOAD=$TK_BIN/tenkload
TOOLS=$TK_BIN/test
T=$(mktemp -d /tmp/tk-integ.XXXXXX)
TK_PIDS=""
CG=
CG_UNDO=

cleanup() {
	for p in $TK_PIDS; do
		kill -KILL "$p" 2>/dev/null
	done
	if [ -n "$CG" ]; then
		# Its processes may take a moment to go.
		_i=0
		while ! rmdir "$CG" 2>/dev/null && [ "$_i" -lt 50 ]; do
			sleep 0.1
			_i=$((_i + 1))
		done
	fi
	if [ -n "$CG_UNDO" ]; then
		echo -memory >"$CG_UNDO" 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
	echo "FAIL: $*" >&2
	if [ -n "${TENKD_LOG:-}" ] && [ -f "$TENKD_LOG" ]; then
		echo "--- tenkd log (tail) ---" >&2
		tail -n 20 "$TENKD_LOG" >&2
	fi
	exit 1
}

skip() {
	echo "SKIP: $*" >&2
	exit 77
}

pass() {
	exit 0
}

# Remember a PID for the EXIT trap.
track() {
	TK_PIDS="$TK_PIDS $1"
}

# Backend option for tenkd/tenkload, empty when the script is not per-backend.
be_opt() {
	if [ -n "$TK_BACKEND" ]; then
		printf -- '--backend %s' "$TK_BACKEND"
	fi
}

# wait_for SECONDS COMMAND...: poll every 0.05 s until COMMAND succeeds.
wait_for() {
	_n=$(( $1 * 20 ))
	shift
	while [ "$_n" -gt 0 ]; do
		if "$@"; then
			return 0
		fi
		sleep 0.05
		_n=$((_n - 1))
	done
	return 1
}

_listening() {
	grep -q 'listening on ' "$1" 2>/dev/null
}

# await_listen NAME PID LOG: track PID and wait for its "listening on
# ADDR:PORT" line in LOG; sets LISTEN_ADDR to the first such address, or
# fails after 10 s.  Every *_start helper below goes through here.
await_listen() {
	track "$2"
	wait_for 10 _listening "$3" ||
	    fail "$1 did not report listening: $(head -c 400 "$3")"
	LISTEN_ADDR=$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$3" |
	    head -n 1)
}

# tenkd_start ARGS...: start tenkd on 127.0.0.1:0 with the script's
# backend and its metrics listener on another port of 127.0.0.1; sets
# TENKD_PID, TENKD_LOG, TENKD_STATS (where tenkd_stats keeps the /stats
# pages it read), ADDR (host:port), PORT and METRICS (host:port).
tenkd_start() {
	_tenkd_start '' "$@"
}

# _tenkd_start NOFILE ARGS...: tenkd_start, with RLIMIT_NOFILE lowered
# to NOFILE for tenkd only unless NOFILE is empty.
_tenkd_start() {
	_nf=$1
	shift
	TENKD_LOG=$T/tenkd.$$.$(date +%s%N).log
	TENKD_STATS=$TENKD_LOG.stats
	# In cgroup $TENKD_CG when set (cg_make): it moves in, then execs.
	# shellcheck disable=SC2046,SC2016
	( if [ -n "$_nf" ]; then ulimit -n "$_nf" || exit 1; fi
	  exec sh -c 'if [ -n "$1" ]; then
		echo $$ >"$1/cgroup.procs" || exit 1
	  fi
	  shift
	  exec "$@"' sh "${TENKD_CG:-}" "$TENKD" "$@" $(be_opt) \
	    --listen 127.0.0.1:0 --metrics 127.0.0.1:0 ) 2>"$TENKD_LOG" &
	TENKD_PID=$!
	await_listen tenkd "$TENKD_PID" "$TENKD_LOG"
	ADDR=$LISTEN_ADDR
	PORT=${ADDR##*:}
	METRICS=$(sed -n 's|.*metrics on http://\([^/]*\)/.*|\1|p' \
	    "$TENKD_LOG" | head -n 1)
}

# notify_start SOCKET FILE: a datagram socket at SOCKET standing in for
# systemd's sd_notify one; each line of each message it gets goes to
# FILE.  Stopped with the test's other processes.
notify_start() {
	_py=/usr/bin/python3
	[ -x "$_py" ] || _py=python3
	"$_py" - "$1" "$2" <<'PYEOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as out:
    while True:
        msg = s.recv(4096).decode()
        for line in msg.split("\n"):
            out.write(line + "\n")
            out.flush()
PYEOF
	track $!
	wait_for 10 test -S "$1" || fail "no notify socket"
}

# pp WANT ARGS...: the PROXY-protocol client $PPSEND (ppsend.py, run
# by $PY) with ARGS must print "got WANT".
pp() {
	_want=$1
	shift
	_o=$("$PY" "$PPSEND" "$@") || fail "ppsend $*: $_o"
	case $_o in
	"got $_want") ;;
	*) fail "ppsend $*: $_o, wanted got $_want" ;;
	esac
}

# loads_clean CHURN_PID LONG_PID: the two tenkload runs of a reload or
# upgrade test, $T/churn.* and $T/long.* (1,000 long sessions), ended
# with status 0, no error and no failed connect, and every long session
# served, not closed early and open at the end.
loads_clean() {
	wait_exit 60 "$1"
	[ "$STATUS" -eq 0 ] || fail "churn: $(cat "$T/churn.out")"
	wait_exit 60 "$2"
	[ "$STATUS" -eq 0 ] || fail "long sessions: $(cat "$T/long.out")"
	for _r in churn long; do
		[ "$(json_get "$T/$_r.json" errors.total)" -eq 0 ] ||
		    fail "$_r: errors: $(grep errors: "$T/$_r.out")"
		[ "$(json_get "$T/$_r.json" connections.failed)" -eq 0 ] ||
		    fail "$_r: connects failed: $(cat "$T/$_r.out")"
		echo "$_r: $(grep -E '^(connections|errors|traffic):' \
		    "$T/$_r.out" | tr '\n' ' ')"
	done
	for _k in closed_early unserved; do
		[ "$(json_get "$T/long.json" "connections.$_k")" -eq 0 ] ||
		    fail "long sessions: $_k: $(cat "$T/long.out")"
	done
	[ "$(json_get "$T/long.json" connections.open_at_end)" -eq 1000 ] ||
	    fail "long sessions not all open at the end: $(cat "$T/long.out")"
}

# loads_start LONG CHURN: the load of a reload or upgrade test, which
# loads_clean checks: 1,000 long sessions (1,000 messages a second in
# all) for LONG, and 1.5 s later a churn of a connection a message, 2,000
# a second, for CHURN; both verified, into $T/long.* and $T/churn.*,
# their pids in LOAD_LONG and LOAD_CHURN.  Returns a second after the
# churn started.
loads_start() {
	"$TENKLOAD" -q -t 1 -c 1000 -R 1000 -d "$1" --connect-rate 2000 \
	    --max-errors 0 --json "$T/long.json" "$ADDR" >"$T/long.out" 2>&1 &
	LOAD_LONG=$!
	track "$LOAD_LONG"
	sleep 1.5
	"$TENKLOAD" -q -t 1 -c 50 -R 2000 -d "$2" --conn-lifetime 1 \
	    --max-errors 0 --json "$T/churn.json" "$ADDR" >"$T/churn.out" 2>&1 &
	LOAD_CHURN=$!
	track "$LOAD_CHURN"
	sleep 1
}

# kids_of PID: the children of PID (a master's workers); kids: those of
# the tenkd last started.
kids_of() {
	cat "/proc/$1/task/$1/children" 2>/dev/null
}
kids() {
	kids_of "$TENKD_PID"
}

# need_ppsend: the PROXY-protocol client ppsend.py ($PPSEND) and the
# python3 that runs it ($PY), or skip the test; SIG is the v2 signature.
need_ppsend() {
	PY=/usr/bin/python3
	[ -x "$PY" ] || PY=python3
	"$PY" -c '' 2>/dev/null || skip "no python3"
	PPSEND=$TK_SRC/test/integ/ppsend.py
	SIG='\r\n\r\n\x00\r\nQUIT\n'
}

# tenkd_completions: true when the tenkd last started runs io_uring's
# completion data path (its start-up line says "(completions)").
tenkd_completions() {
	wait_line 10 "$TENKD_LOG" ', backend ' >/dev/null ||
	    fail "no start-up line in the tenkd log"
	grep -q ', backend [a-z_]* (completions)' "$TENKD_LOG"
}

# spliced_gt S N MSG: S's spliced bytes are more than N, where the
# tenkd last started splices; on io_uring's completion data path, which
# does not splice, none are.  Fails the test with MSG otherwise.
spliced_gt() {
	_sp=$(stat_val "$1" spliced)
	if tenkd_completions; then
		[ "$_sp" -eq 0 ] || fail "$3 (spliced on completions): $1"
	else
		[ "$_sp" -gt "$2" ] || fail "$3: $1"
	fi
}

# http_get URL: the body of a GET, on stdout; fails on no answer or a
# status other than 200 (curl, else wget, else python3).
http_get() {
	if command -v curl >/dev/null 2>&1; then
		curl -sSf --max-time 10 "$1"
	elif command -v wget >/dev/null 2>&1; then
		wget -q -T 10 -O - "$1"
	else
		python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read()
    .decode())' "$1"
	fi
}

# alive PID: the process exists and is not a zombie.
alive() {
	[ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

# wait_exit SECONDS PID: wait for PID (a child of this shell) to exit and
# set STATUS to its exit status; fail on timeout.
wait_exit() {
	_s=$1
	_p=$2
	if ! wait_for "$_s" _gone "$_p"; then
		fail "process $_p still running after $_s s"
	fi
	wait "$_p"
	STATUS=$?
}

_gone() {
	! alive "$1"
}

# The sanitizer the binaries were built with ("thread", "address-undefined"),
# or nothing for a plain build: the Makefile builds those into build/NAME,
# and a build without TLS into build/notls or build/NAME/notls.
sanitizer() {
	_sb=${TK_BIN%/notls}
	case $_sb in
	*/build)	;;
	*)		printf '%s' "${_sb##*/}" ;;
	esac
}

# exits_with STATUS NAME PROGRAM ARGS...: PROGRAM ARGS must end within
# 10 s with exit status STATUS; its stdout and stderr are left in
# $T/NAME.out and $T/NAME.err.
exits_with() {
	_es=$1
	_en=$2
	_ep=$3
	shift 3
	timeout 10 "$_ep" "$@" >"$T/$_en.out" 2>"$T/$_en.err"
	_s=$?
	[ "$_s" -eq "$_es" ] ||
	    fail "${_ep##*/} $*: exit $_s, wanted $_es: $(cat "$T/$_en.err")"
}

# one_line_error STATUS WORD PROGRAM ARGS...: PROGRAM ARGS must end
# with exit status STATUS (exits_with, the output in $T/usage.*),
# nothing on stdout and exactly one line on stderr, and that line must
# contain WORD.
one_line_error() {
	_ws=$1
	_w=$2
	_p=$3
	shift 3
	exits_with "$_ws" usage "$_p" "$@"
	_n=${_p##*/}
	[ ! -s "$T/usage.out" ] ||
	    fail "$_n $*: wrote to stdout: $(cat "$T/usage.out")"
	[ "$(wc -l <"$T/usage.err")" -eq 1 ] ||
	    fail "$_n $*: $(wc -l <"$T/usage.err") lines on stderr:" \
	    "$(cat "$T/usage.err")"
	grep -q -e "$_w" "$T/usage.err" ||
	    fail "$_n $*: no '$_w' in: $(cat "$T/usage.err")"
}

# usage_error WORD PROGRAM ARGS...: a bad command line must end PROGRAM
# with exit status 2, nothing on stdout and exactly one line on stderr,
# and that line must contain WORD (the option it names).
usage_error() {
	one_line_error 2 "$@"
}

# The open-file limit of this shell (tests size themselves by it).
nofile() {
	ulimit -n
}

# _tool_start NAME ARGS...: test/tools/NAME in the background, its stderr
# in a log of its own, until it listens; sets TOOL_PID, TOOL_LOG and
# LISTEN_ADDR.
_tool_start() {
	_tn=$1
	shift
	TOOL_LOG=$T/$_tn.$$.$(date +%s%N).log
	"$TOOLS/$_tn" "$@" 2>"$TOOL_LOG" &
	TOOL_PID=$!
	await_listen "$_tn" "$TOOL_PID" "$TOOL_LOG"
}

# faultsrv_start ARGS...: start the faulty echo server (test/tools/faultsrv)
# on 127.0.0.1:0; sets FAULT_PID, FAULT_LOG and FADDR (host:port).
faultsrv_start() {
	_tool_start faultsrv "$@"
	FAULT_PID=$TOOL_PID
	FAULT_LOG=$TOOL_LOG
	FADDR=$LISTEN_ADDR
}

# faultsrv_stop: end the faulty server started last.
faultsrv_stop() {
	kill -TERM "$FAULT_PID" 2>/dev/null
	wait "$FAULT_PID" 2>/dev/null
}

# json_get FILE SECTION.KEY: a scalar from a tenkload JSON report, which
# writes one member per line ("latency.p99", "errors.mismatch").
json_get() {
	awk -v want="$2" '
	/^  "[^"]*": \{/ {
		sec = $0; sub(/^  "/, "", sec); sub(/".*/, "", sec); next
	}
	/^  \}/ { sec = ""; next }
	/^    "[^"]*": / {
		k = $0; sub(/^    "/, "", k); v = k; sub(/".*/, "", k)
		sub(/^[^"]*": /, "", v); sub(/,$/, "", v); gsub(/"/, "", v)
		if (sec "." k == want) { print v; found = 1; exit }
	}
	END { if (!found) exit 1 }' "$1"
}

# json_buckets FILE SECTION: the histogram's buckets, "lo count" a line.
json_buckets() {
	awk -v want="$2" '
	/^  "[^"]*": \{/ {
		sec = $0; sub(/^  "/, "", sec); sub(/".*/, "", sec); next
	}
	/^  \}/ { sec = ""; next }
	sec == want && /^      \[/ { gsub(/[][,]/, " "); print $1, $2 }' "$1"
}

# awk_true EXPR: succeed when the awk expression (numbers) holds.
awk_true() {
	awk "BEGIN { exit !($1) }"
}

# True when the machine is busier than it has CPUs (the 1-minute load
# average at least their number): a rate or a duration may then fall
# short through no fault of the program, though never overshoot.
machine_busy() {
	awk -v n="$(getconf _NPROCESSORS_ONLN)" '{ exit !($1 >= n) }' \
	    /proc/loadavg
}

# --- Helpers for the echo_*.sh scripts. ---

TKCLI=$TOOLS/tkcli

# tenkd_start_nofile N ARGS...: tenkd_start with RLIMIT_NOFILE (soft and
# hard) lowered to N for tenkd only.
tenkd_start_nofile() {
	_tenkd_start "$@"
}

# cpu_ticks PID: user plus system CPU time of PID, in clock ticks.
cpu_ticks() {
	sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# rss_kb PID: resident set size in KiB.
rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# tenkd_stats: read tenkd's /stats page, keep it at the end of
# TENKD_STATS (the "stats caps:", "stats upstream" ... lines the scripts
# grep there) and print its last "stats total" line.
tenkd_stats() {
	http_get "http://$METRICS/stats" >"$T/stats.page" ||
	    fail "no /stats from http://$METRICS"
	cat "$T/stats.page" >>"$TENKD_STATS"
	grep 'stats total' "$T/stats.page" | tail -n 1
}

# stat_val LINE NAME: the number after NAME in a stats line.
stat_val() {
	echo "$1" | sed -n "s/.* $2 \([0-9][0-9]*\).*/\1/p"
}

_has_line() {
	grep -q "$2" "$1" 2>/dev/null
}

# wait_line SECONDS FILE PATTERN: wait until FILE has a line matching.
wait_line() {
	wait_for "$1" _has_line "$2" "$3"
}

# --- Helpers for the proxy_*.sh scripts. ---

# access_line FILE PATTERN: within 10 s the access log FILE has a line
# matching PATTERN; fails showing the log otherwise.
access_line() {
	wait_line 10 "$1" "$2" || fail "access log: $(cat "$1")"
}

# pingpong_all N MU: tenkload opens N connections to $ADDR (2,000 a
# second, 2 s of warm-up) and ping-pongs verified 64-byte messages for
# 5 s; every one must be requested, established and open at the end,
# without error and with at most MU unserved.  Prints the msgs/s lines.
# A client is unserved when no reply came in the measured window, and
# beside stress-ng at load 20 a reply took up to 7 s (p99 6.3 s): a run
# that fails for that alone, without an error, runs again with twice
# the window, until every client was served (issue 22).
pingpong_all() {
	for _d in 5s 10s 20s; do
		rm -f "$T/r.json"
		timeout 150 "$TENKLOAD" -M pingpong -c "$1" -t 2 \
		    --connect-rate 2000 --warmup 2s --max-unserved "$2" \
		    -d "$_d" -s 64 --json "$T/r.json" "$ADDR" \
		    >"$T/out" 2>"$T/err" && break
		if [ ! -s "$T/r.json" ] ||
		    [ "$(json_get "$T/r.json" errors.total)" -ne 0 ] ||
		    [ "$(json_get "$T/r.json" connections.unserved)" -eq 0 ]
		then
			fail "tenkload: $(tail -n 5 "$T/out" "$T/err")"
		fi
		[ "$_d" != 20s ] ||
		    fail "unserved in 20 s: $(tail -n 5 "$T/out")"
		echo "$(json_get "$T/r.json" connections.unserved) unserved" \
		    "in $_d: again for longer"
	done
	for _k in requested established open_at_end; do
		_v=$(json_get "$T/r.json" connections.$_k)
		[ "$_v" -eq "$1" ] || fail "connections.$_k is $_v, not $1"
	done
	[ "$(json_get "$T/r.json" errors.total)" -eq 0 ] ||
	    fail "errors: $(cat "$T/out")"
	grep -i 'msgs/s' "$T/out" | head -n 2
}

PXTOOL=$TOOLS/pxtool

# upstream_start ARGS...: a tenkd echo upstream (tenkd_start), its
# figures moved to UP_PID, UP_LOG and UPADDR so that TENKD_* and ADDR
# are free for the proxy started next.
upstream_start() {
	tenkd_start echo "$@"
	UP_PID=$TENKD_PID
	UP_LOG=$TENKD_LOG
	UPADDR=$ADDR
	TENKD_LOG=
}

# pxtool_start MODE ARGS...: test/tools/pxtool upstream or blackhole on
# 127.0.0.1:0; sets PXT_PID, PXT_OUT (its stdout), PXT_LOG (stderr) and
# PXTADDR.
pxtool_start() {
	PXT_OUT=$T/pxtool.$$.$(date +%s%N).out
	PXT_LOG=$PXT_OUT.log
	"$PXTOOL" "$@" >"$PXT_OUT" 2>"$PXT_LOG" &
	PXT_PID=$!
	await_listen pxtool "$PXT_PID" "$PXT_LOG"
	PXTADDR=$LISTEN_ADDR
}

# px_got WHAT BYTES ARGS...: pxtool client ARGS (ending in the address)
# must get BYTES bytes back; fails naming WHAT otherwise.  Prints the
# client's report, and sets PX_OUT to it and PX_SECS to the seconds from
# the shutdown or connect to the close.
px_got() {
	_w=$1
	_b=$2
	shift 2
	PX_OUT=$("$PXTOOL" client "$@") || fail "client: $PX_OUT"
	echo "$_w: $PX_OUT"
	echo "$PX_OUT" | grep -q "^got $_b bytes" || fail "$_w: $PX_OUT"
	PX_SECS=$(echo "$PX_OUT" | awk '{ print $5 }')
}

# dead_addr: an address on which nothing listens (connects are refused).
dead_addr() {
	pxtool_start upstream
	kill -KILL "$PXT_PID"
	wait "$PXT_PID" 2>/dev/null
	echo "$PXTADDR"
}

# free_port: a loopback port on which nothing listens right now (that of
# dead_addr).  Another process may take it before the caller binds it.
free_port() {
	_a=$(dead_addr)
	echo "${_a##*:}"
}

# ups_stat ADDR NAME: from the proxy's last "stats upstream ADDR:" line,
# the number after NAME (call tenkd_stats first).
ups_stat() {
	grep "stats upstream $1:" "$TENKD_STATS" | tail -n 1 |
	    sed -n "s/.* $2 \([0-9][0-9]*\).*/\1/p"
}

# cap_full N HOLD-ARGS...: for the --max-conns tests.  tkcli hold opens N
# connections to $ADDR (HOLD_PID, output in $T/h); once they are ready,
# tkcli echo starts two more (EXTRA_PID, output in $T/e), which must
# still be waiting 1.5 s later.
cap_full() {
	_c=$1
	shift
	"$TKCLI" hold -c "$_c" "$@" "$ADDR" >"$T/h" 2>&1 &
	HOLD_PID=$!
	track "$HOLD_PID"
	wait_line 20 "$T/h" "^ready $_c" || fail "hold: $(cat "$T/h")"
	"$TKCLI" echo -c 2 -b 100 -T 40 "$ADDR" >"$T/e" 2>&1 &
	EXTRA_PID=$!
	track "$EXTRA_PID"
	sleep 1.5
	alive "$EXTRA_PID" ||
	    fail "the extra clients ended at the cap: $(cat "$T/e")"
}

# help_in_man HELP PAGE: every long option named in the --help output in
# file HELP is in docs/PAGE; fails otherwise.  Returns 1 without
# checking when neither mandoc nor groff renders the page.
help_in_man() {
	_man=$TK_SRC/docs/$2
	[ -f "$_man" ] || fail "no $_man"
	if command -v mandoc >/dev/null 2>&1; then
		mandoc -T ascii "$_man" | col -b >"$T/man"
	else
		groff -mandoc -T ascii "$_man" 2>/dev/null | col -b >"$T/man"
	fi
	[ -s "$T/man" ] || return 1
	_opts=$(grep -o -- '--[a-z][a-z-]*' "$1" | sort -u)
	[ -n "$_opts" ] || fail "no options in --help"
	for _o in $_opts; do
		grep -q -- "$_o" "$T/man" || fail "$_o is not in docs/$2"
	done
}

# --- Helpers for the load_*.sh scripts. ---

# load_bad WORD ARGS...: tenkload ARGS is a usage error naming WORD.
load_bad() {
	_bw=$1
	shift
	usage_error "$_bw" "$TENKLOAD" "$@"
}

# load_run NAME ARGS...: tenkload -q -t 2 -d 1s with ARGS (options, then
# the target), its report in $T/NAME.json, its output in $T/NAME.out and
# $T/NAME.err; it must exit 0 with no error.  On a machine busier than
# it has CPUs a connect can wait out a dropped SYN (1 s, then 3 s more)
# and complete nothing in a 1 s window: a run that failed only so, with
# no error but unserved connections, runs again for 3 s, then 9 s.
load_run() {
	_lr=$1
	shift
	for _d in 1 3 9; do
		_st=0
		timeout 60 "$TENKLOAD" -q -t 2 -d "${_d}s" --json "$T/$_lr.json" \
		    "$@" >"$T/$_lr.out" 2>"$T/$_lr.err" || _st=$?
		[ "$_st" -eq 0 ] && break
		[ "$_d" -lt 9 ] && machine_busy &&
		    [ "$(json_get "$T/$_lr.json" errors.total 2>/dev/null)" = 0 ] &&
		    [ "$(json_get "$T/$_lr.json" connections.unserved \
		    2>/dev/null || echo 0)" != 0 ] && continue
		fail "$_lr: exit $_st: $(cat "$T/$_lr.out" "$T/$_lr.err")"
	done
	[ "$(json_get "$T/$_lr.json" errors.total)" -eq 0 ] ||
	    fail "$_lr: errors: $(grep errors: "$T/$_lr.out")"
}

# load_echo NAME ARGS...: load_run against the tenkd echo at $ADDR on this
# script's backend; some messages, and verified bytes.
load_echo() {
	_le=$1
	shift
	# shellcheck disable=SC2046
	load_run "$_le" $(be_opt) "$@" "$ADDR"
	load_has "$_le" traffic.msgs -gt 0 "no messages"
	load_has "$_le" traffic.verified_bytes -gt 0 "nothing verified"
}

# load_has NAME KEY OP VALUE WHAT: KEY of $T/NAME.json compares to VALUE
# by test(1)'s OP (-eq, -gt, ...), or the script fails with "NAME: WHAT".
load_has() {
	# test(1), not [: shellcheck cannot parse [ with OP in a variable.
	test "$(json_get "$T/$1.json" "$2")" "$3" "$4" || fail "$1: $5"
}

# load_paced JSON WHAT RATE TOTAL MAX: the run of report JSON was to send
# TOTAL messages at RATE a second; its rate must be at most MAX, and
# under 90% of RATE only when the machine could not keep up.  Then
# tenkload measured it: the latency from each message's intended time
# holds what the run fell behind, (TOTAL - msgs) / RATE s at its end,
# where a pacing bug that sent fewer would not; or the machine is busy
# (machine_busy), when connections may even start late.
load_paced() {
	_pr=$(json_get "$1" traffic.msgs_per_s)
	awk_true "$_pr <= $5" || fail "$2: $_pr msgs/s, over $3"
	awk_true "$_pr >= 0.9 * $3" && return 0
	_pk=$(json_get "$1" traffic.msgs)
	_px=$(json_get "$1" latency.max)
	awk_true "$_px >= ($4 - $_pk) / $3 * 1e9 / 2" || machine_busy ||
	    fail "$2: $_pr msgs/s, not $3, and latency max $_px ns"
	echo "$2: $_pr msgs/s, the machine behind (latency max $_px ns)"
}

# replysrv_start ARGS...: test/tools/replysrv (a server answering in one of
# tenkload's reply framings, or in none) on 127.0.0.1:0; sets RS_PID,
# RS_LOG and RSADDR (host:port).
replysrv_start() {
	_tool_start replysrv "$@"
	RS_PID=$TOOL_PID
	RS_LOG=$TOOL_LOG
	RSADDR=$LISTEN_ADDR
}

# replysrv_load NAME ARGS...: load_run on 4 connections with ARGS against
# the replysrv started last; none of them may go unserved.
replysrv_load() {
	_rl=$1
	shift
	load_run "$_rl" -c 4 "$@" "$RSADDR"
	load_has "$_rl" connections.unserved -eq 0 "unserved connections"
}

# near_times VALUE K COUNT: VALUE is K times COUNT, give or take four
# COUNTs: one a connection at each edge of the measured window of the
# four connections replysrv_load opens.
near_times() {
	awk_true "$1 >= $2 * ($3 - 4) && $1 <= $2 * ($3 + 4)"
}

# cg_make LIMIT: a memory cgroup of LIMIT bytes (64M and the like), a
# child of this script's own, for tenkd_start to put tenkd in (it sets
# CG and TENKD_CG); the EXIT trap removes it.  cgroup v2 where this
# script's group may give its children the memory controller, else the
# v1 memory hierarchy.  Returns 1 with CG_WHY set where the machine has
# none to give: not root, no memory controller, nothing writable.
cg_make() {
	CG_WHY=
	if [ "$(id -u)" != 0 ]; then
		CG_WHY="not root"
		return 1
	fi
	_own=$(sed -n 's/^0::\(.*\)/\1/p' /proc/self/cgroup)
	_d=/sys/fs/cgroup${_own%/}
	if [ -n "$_own" ] && grep -qw memory "$_d/cgroup.controllers" \
	    2>/dev/null && { grep -qw memory "$_d/cgroup.subtree_control" ||
	    { echo +memory >"$_d/cgroup.subtree_control" &&
	    CG_UNDO=$_d/cgroup.subtree_control; }; } 2>/dev/null &&
	    mkdir "$_d/tk-mem.$$" 2>/dev/null; then
		CG=$_d/tk-mem.$$
		echo "$1" >"$CG/memory.max" || return 1
		CG_V=2
	else
		_own=$(sed -n 's/^[0-9]*:[^:]*memory[^:]*:\(.*\)/\1/p' \
		    /proc/self/cgroup)
		_d=/sys/fs/cgroup/memory${_own%/}
		if [ -z "$_own" ] || ! mkdir "$_d/tk-mem.$$" 2>/dev/null; then
			CG_WHY="no memory cgroup to make under this one's"
			return 1
		fi
		CG=$_d/tk-mem.$$
		echo "$1" >"$CG/memory.limit_in_bytes" || return 1
		CG_V=1
	fi
	TENKD_CG=$CG
}

# cg_ooms: how many processes the OOM killer took in $CG.
cg_ooms() {
	if [ "$CG_V" = 2 ]; then
		sed -n 's/^oom_kill //p' "$CG/memory.events"
	else
		sed -n 's/^oom_kill //p' "$CG/memory.oom_control"
	fi
}

# cg_peak: the most memory $CG held, in bytes (v2 before Linux 5.19
# has no peak: its usage now).
cg_peak() {
	if [ "$CG_V" = 1 ]; then
		cat "$CG/memory.max_usage_in_bytes"
	elif [ -f "$CG/memory.peak" ]; then
		cat "$CG/memory.peak"
	else
		cat "$CG/memory.current"
	fi
}

# cg_noread N ARGS...: tenkd_start ARGS in $CG (cg_make), then N
# clients that send 1 MiB each and never read (fewer if the open-file
# limit says so; the ones tenkd closes may go), and an echo beside
# them: tenkd must stay alive with no OOM kill in $CG, once its memory
# budget was reached (or 30 s after the clients stalled).  Prints the
# peak; stops that tenkd, and tenkd_start starts no more in $CG.
cg_noread() {
	_cgn=$1
	shift
	[ "$(nofile)" -ge $((_cgn + 200)) ] || _cgn=$(( $(nofile) - 200 ))
	tenkd_start "$@"
	"$TKCLI" noread -a 0 -c "$_cgn" -n 1m "$ADDR" >"$T/cgnr" 2>&1 &
	track $!
	wait_line 120 "$T/cgnr" '^stalled' ||
	    fail "$_cgn clients in the cgroup: $(cat "$T/cgnr")"
	# What the kernel holds for tenkd may come after the clients stall.
	wait_line 30 "$TENKD_LOG" 'memory: .* queued, 90% of the' ||
	    alive "$TENKD_PID" || fail "tenkd died in the cgroup:" \
	    "$(cg_ooms) OOM kill(s)"
	alive "$TENKD_PID" ||
	    fail "tenkd died in the cgroup: $(cg_ooms) OOM kill(s)"
	[ "$(cg_ooms)" -eq 0 ] || fail "$(cg_ooms) OOM kill(s) in the cgroup"
	"$TKCLI" echo -c 4 -b 1m "$ADDR" >/dev/null ||
	    fail "echo beside $_cgn stuck clients in the cgroup"
	echo "$_cgn stuck clients: tenkd alive, peak $(( $(cg_peak) >> 20 ))" \
	    "MiB; $(cat "$T/cgnr")"
	kill -KILL "$TENKD_PID"
	wait "$TENKD_PID" 2>/dev/null
	TENKD_CG=
}

# noread_clients N: N clients of $ADDR that send and never read, one
# a process (a client that is shed fails on its own), their output in
# $T/nr.*; returns once every one has stalled or been closed (its output
# is not empty), failing after 60 s.
noread_clients() {
	_i=0
	while [ "$_i" -lt "$1" ]; do
		"$TKCLI" noread -c 1 "$ADDR" >"$T/nr.$_i" 2>&1 &
		track $!
		_i=$((_i + 1))
	done
	wait_for 60 _noread_settled || fail "the clients did not settle"
}

_noread_settled() {
	for _f in "$T"/nr.*; do
		[ -s "$_f" ] || return 1
	done
}


# --- Helpers for the ops_upgrade*.sh scripts. ---

# binary_put PATH TEXT: the executable at PATH, from now on, the script
# TEXT, moved into place as a package manager replaces a binary.
binary_put() {
	printf '%s' "$2" >"$1.new"
	chmod 755 "$1.new"
	mv "$1.new" "$1"
}

# upgrade_started: UP, the pid of the new master that the last upgrade
# of the tenkd last started started, tracked.
upgrade_started() {
	wait_line 10 "$TENKD_LOG" 'upgrade: .* started as pid' ||
	    fail "no upgrade started"
	UP=$(sed -n 's/.*upgrade: .* started as pid \([0-9]*\).*/\1/p' \
	    "$TENKD_LOG" | tail -n 1)
	track "$UP"
}
