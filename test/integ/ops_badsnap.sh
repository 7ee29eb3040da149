#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The master checks the figures each worker sends it (issue 22): a
# snapshot whose text length runs past its buffer (the master wrote out
# that many bytes of its own memory into /stats before), from another
# pid, longer or shorter than one: dropped, said once in ten seconds,
# and /stats and /metrics go on answering.  The workers' sends are
# spoiled by an LD_PRELOAD shim (test/shim/badsnap.so).
# backends: none
# timeout: 90
. "$(dirname "$0")/lib.sh"

_nkids() {
	[ "$(kids | wc -w)" -eq "$1" ]
}

for mode in textlen pid long short; do
	LD_PRELOAD=$TK_BIN/test/badsnap.so BADSNAP=$mode \
	    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	    tenkd_start echo --threads 1 --workers 2
	wait_for 10 _nkids 2 || fail "$mode: workers: $(kids)"
	"$TKCLI" echo -c 4 -b 10 "$ADDR" || fail "$mode: echo"
	case $mode in
	textlen)	why='text length past its buffer' ;;
	pid)		why='another pid' ;;
	long)		why='too long' ;;
	short)		why='too short' ;;
	esac
	http_get "http://$METRICS/stats" >"$T/stats" ||
	    fail "$mode: no /stats: $(tail -n 5 "$TENKD_LOG")"
	grep -q 'worker 0: no figures' "$T/stats" ||
	    fail "$mode: /stats: $(head -c 2000 "$T/stats")"
	http_get "http://$METRICS/metrics" >/dev/null ||
	    fail "$mode: no /metrics"
	wait_line 10 "$TENKD_LOG" "malformed figures dropped: $why" ||
	    fail "$mode: $(grep -e malformed -e error "$TENKD_LOG")"
	# Each page asks both workers again: still one line in ten seconds.
	for i in 1 2 3; do
		http_get "http://$METRICS/stats" >/dev/null ||
		    fail "$mode: /stats $i"
	done
	[ "$(grep -c 'malformed figures' "$TENKD_LOG")" -eq 1 ] ||
	    fail "$mode: not rate-limited: $(grep malformed "$TENKD_LOG")"
	alive "$TENKD_PID" || fail "$mode: the master died"
	kill -TERM "$TENKD_PID"
	wait_exit 20 "$TENKD_PID"
	[ "$STATUS" -eq 0 ] || fail "$mode: exit status $STATUS"
done
pass
