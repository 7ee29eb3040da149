#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkload -m with --reply line against replysrv --line: each request a
# line, each reply "+OK\r\n" checked by --reply-check; a --first-message
# whose reply is read and not counted; --window 4 pipelining, in
# ping-pong and in rate mode, every reply matched in order.
# backends: none
# timeout: 90
. "$(dirname "$0")/lib.sh"

replysrv_start --line

# run NAME ARGS...: replysrv_load with ARGS; it must exit 0 with
# messages, no error and nothing on stderr.
run() {
	replysrv_load "$@"
	load_has "$1" traffic.msgs -gt 0 "no messages"
	[ ! -s "$T/$1.err" ] || fail "$1: stderr: $(cat "$T/$1.err")"
}

run line -m 'PING\r\n' --reply line --reply-check '+OK\r\n'
# 5 bytes in and 6 out a message (reply and request), give or take a
# message a connection at each edge of the window.
m=$(json_get "$T/line.json" traffic.msgs)
i=$(json_get "$T/line.json" traffic.bytes_in)
o=$(json_get "$T/line.json" traffic.bytes_out)
near_times "$i" 5 "$m" ||
    fail "line: $i bytes in for $m replies of 5 bytes"
near_times "$o" 6 "$m" ||
    fail "line: $o bytes out for $m requests of 6 bytes"
grep -q '^result: ok' "$T/line.out" || fail "line: no ok result"

# The first message is answered too, but not counted.
run first --first-message 'AUTH secret\n' -m 'PING\n' --reply line \
    --reply-check +OK

# until:TEXT ends a reply as line does here.
run until -m 'PING\n' --reply 'until:\r\n'

# Four requests in flight: in ping-pong, and on a rate schedule, which
# keeps both of its latencies.
run window -m 'PING\n' --reply line --window 4
[ "$(json_get "$T/window.json" header.window)" -eq 4 ] ||
    fail "window: not 4 in the report"
run rate -R 2000 -m 'PING\n' --reply line --window 4
c=$(json_get "$T/rate.json" latency.count)
u=$(json_get "$T/rate.json" latency_uncorrected.count)
m=$(json_get "$T/rate.json" traffic.msgs)
awk_true "$u == $c && $c == $m" ||
    fail "rate: $c corrected and $u uncorrected latencies"
pass
