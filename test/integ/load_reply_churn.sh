#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Connections as load against replysrv --close-after N, which closes
# after N replies: --conn-lifetime N and --mode connect close first and
# connect again, counted as reconnects, with no error, no unserved
# connection and the ramp's counts untouched; without them the server's
# close is an error.  --mode connect without a message only connects.
# backends: none
# timeout: 90
. "$(dirname "$0")/lib.sh"

# run NAME ARGS...: replysrv_load with ARGS; it must exit 0 with
# reconnects and no error, 4 connections established once and all open
# at the end.
run() {
	replysrv_load "$@"
	load_has "$1" connections.reconnects -gt 0 "no reconnects"
	load_has "$1" connections.established -eq 4 "established is not 4"
	load_has "$1" connections.attempted -eq 4 "attempted is not 4"
	load_has "$1" connections.open_at_end -eq 4 "open at end is not 4"
	grep -q '^  reconnects: [1-9]' "$T/$1.out" ||
	    fail "$1: no reconnects line: $(cat "$T/$1.out")"
}

replysrv_start --line --close-after 3
run life -m 'PING\n' --reply line --conn-lifetime 3
m=$(json_get "$T/life.json" traffic.msgs)
r=$(json_get "$T/life.json" connections.reconnects)
# Three requests a connection: a reconnect every three messages, give
# or take one connection's worth at each edge of the window.
near_times "$m" 3 "$r" ||
    fail "life: $m messages for $r reconnects of 3"

# A first message is answered on every connection, counted nowhere.
run first --first-message 'HELLO\n' -m 'PING\n' --reply line \
    --conn-lifetime 2
m=$(json_get "$T/first.json" traffic.msgs)
r=$(json_get "$T/first.json" connections.reconnects)
near_times "$m" 2 "$r" ||
    fail "first: $m messages for $r reconnects of 2"
kill "$RS_PID"

replysrv_start --line --close-after 1
run connect -M connect -m 'PING\n' --reply line
m=$(json_get "$T/connect.json" traffic.msgs)
r=$(json_get "$T/connect.json" connections.reconnects)
near_times "$m" 1 "$r" ||
    fail "connect: $m messages for $r reconnects"
c=$(json_get "$T/connect.json" connect_latency.count)
[ "$c" -ge "$r" ] || fail "connect: $c connect latencies, $r reconnects"

# Without a message: connect, close, again; no message at all.
run bare -M connect
[ "$(json_get "$T/bare.json" traffic.msgs)" -eq 0 ] ||
    fail "bare: messages without a message"

# Without --conn-lifetime the server's close is an error.  A fresh
# server: the one above may still hold thousands of connections of the
# bare run, each waiting up to 2 s for the client's FIN (seen under
# ASan, where the four connections below then got no reply at all).
kill "$RS_PID"
replysrv_start --line --close-after 1
timeout 30 "$TENKLOAD" -q -c 4 -t 2 -d 1s --json "$T/closed.json" \
    -m 'PING\n' --reply line "$RSADDR" >"$T/closed.out" 2>&1
[ $? -eq 1 ] || fail "closed: exit status not 1"
[ "$(json_get "$T/closed.json" errors.closed)" -eq 4 ] ||
    fail "closed: $(grep errors: "$T/closed.out")"
[ "$(json_get "$T/closed.json" connections.reconnects)" -eq 0 ] ||
    fail "closed: reconnects counted"
pass
