#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# make demo: the C10K demonstration.  Starts tenkd echo on a free
# loopback port, runs tenkload with 10,000 ping-pong connections for 10 s
# (fewer, with one line saying why, when the open-file limit here cannot
# hold them), prints the report, stops the server with SIGTERM, and exits
# 0 when every connection was established and no byte was lost.
#
#	TK_BIN=build sh test/demo.sh [connections [seconds]]

# ulimit -H, -S and -n are not POSIX; dash, bash and busybox sh have them.
# shellcheck disable=SC3045
TK_BIN=${TK_BIN:-$(cd "$(dirname "$0")/.." && pwd)/build}
TK_SRC=${TK_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
export TK_BIN TK_SRC
# lib.sh: tenkd_start, wait_exit, json_get and the clean-up trap.
. "$(dirname "$0")/integ/lib.sh"

want=${1:-10000}
secs=${2:-10}
[ -x "$TENKD" ] || fail "no $TENKD: run make first"
[ -x "$TENKLOAD" ] || fail "no $TENKLOAD: run make first"

# Client and server are separate processes, each with one descriptor per
# connection and a few more; both inherit this shell's limit, which we
# raise to the hard limit first.
hard=$(ulimit -H -n)
if [ "$hard" = unlimited ]; then
	hard=1048576
fi
ulimit -S -n "$hard" 2>/dev/null
lim=$(ulimit -S -n)
[ "$lim" = unlimited ] && lim=1048576
n=$want
if [ "$n" -gt $((lim - 200)) ]; then
	n=$((lim - 200))
	[ "$n" -ge 1 ] || fail "RLIMIT_NOFILE $lim leaves no room"
	echo "demo: RLIMIT_NOFILE is $lim here, so $n connections" \
	    "instead of $want (raise it with ulimit -n to run all $want)"
fi

tenkd_start echo
echo "demo: tenkd echo (pid $TENKD_PID) listening on $ADDR"
echo "demo: tenkload: $n ping-pong connections," \
    "${secs} s measured after the ramp and 2 s of warm-up"
echo

"$TENKLOAD" -c "$n" -d "${secs}s" --connect-rate 2000 --warmup 2s \
    --json "$T/demo.json" "$ADDR"
st=$?
echo

kill -TERM "$TENKD_PID"
wait_exit 30 "$TENKD_PID"
echo "demo: tenkd stopped on SIGTERM, exit status $STATUS"

[ -s "$T/demo.json" ] || fail "tenkload wrote no report (exit $st)"
est=$(json_get "$T/demo.json" connections.established)
errs=$(json_get "$T/demo.json" errors.total)
msgs=$(json_get "$T/demo.json" traffic.msgs)
rate=$(json_get "$T/demo.json" traffic.msgs_per_s)
vb=$(json_get "$T/demo.json" traffic.verified_bytes)
[ "$est" -eq "$n" ] || fail "only $est of $n connections were established"
if [ "$errs" -ne 0 ] || [ "$st" -ne 0 ]; then
	fail "$errs errors (tenkload exit $st): lost bytes or failed conns"
fi
[ "$STATUS" -eq 0 ] || fail "tenkd exited $STATUS on SIGTERM"
echo "demo: OK: $est concurrent connections, $msgs messages in ${secs} s" \
    "($rate/s), $vb bytes echoed and verified, none lost"
pass
