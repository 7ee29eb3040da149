#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --reply http against replysrv --line=RESPONSE, which answers each
# request line with a fixed HTTP response: keep-alive replies with a
# Content-Length, 4 pipelined; "Connection: close", after which tenkload
# connects again and counts a reconnect, not an error; and a body that
# only the server's close ends.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

CR=$(printf '\r')
NL='
'

# run NAME ARGS...: replysrv_load of GETs with ARGS; exit 0, messages,
# no error.
run() {
	_run=$1
	shift
	replysrv_load "$_run" -m 'GET / HTTP/1.1\n' --reply http "$@"
	load_has "$_run" traffic.msgs -gt 0 "no messages"
}

# replysrv adds a CRLF to each answer: the end of the headers, or the
# last two bytes of the body.
replysrv_start "--line=HTTP/1.1 200 OK$CR${NL}Content-Length: 4$CR$NL${CR}${NL}hi"
run keep --reply-check 'HTTP/1.1 200' --window 4
[ "$(json_get "$T/keep.json" connections.reconnects)" -eq 0 ] ||
    fail "keep: reconnects on a kept-alive connection"
kill "$RS_PID"

replysrv_start --close-after 1 \
    "--line=HTTP/1.1 200 OK$CR${NL}Connection: close$CR${NL}Content-Length: 0$CR$NL"
run close --reply-check 'HTTP/1.1 200'
m=$(json_get "$T/close.json" traffic.msgs)
r=$(json_get "$T/close.json" connections.reconnects)
awk_true "$r >= $m - 4 && $r <= $m + 4" ||
    fail "close: $r reconnects for $m responses with Connection: close"
kill "$RS_PID"

replysrv_start --close-after 1 "--line=HTTP/1.1 200 OK$CR$NL${CR}${NL}body"
run eof
[ "$(json_get "$T/eof.json" connections.reconnects)" -gt 0 ] ||
    fail "eof: no reconnects after bodies ended by the close"
pass
