#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkload against a real nginx, started here as the script's own process
# with its own configuration on a loopback port picked for it, serving a
# small static file over HTTP/1.1: GETs with --reply http and
# --reply-check 'HTTP/1.1 200' over keep-alive connections, one and eight
# in flight; requests with "Connection: close", which nginx answers and
# then closes, counted as reconnects and not as errors; and a path that
# is not there, whose 404 fails the --reply-check.  Skipped, saying why,
# without nginx (make test-deps installs it).
# backends: none
# timeout: 120
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_servers.sh"

need_prog nginx nginx-light
nginx_start

# load NAME ARGS...: server_load against this server's framing.
load() {
	_ln=$1
	shift
	server_load "$_ln" "$NADDR" --reply http "$@"
}

get="GET /$NGINX_FILE HTTP/1.1\\r\\nHost: x\\r\\n"

load keepalive -c 4 -t 1 -m "$get\\r\\n" --reply-check 'HTTP/1.1 200'
served keepalive
r=$(json_get "$T/keepalive.json" connections.reconnects) ||
    fail "keepalive: no connections.reconnects in the JSON"
[ "$r" = 0 ] || fail "keepalive: $r reconnects, nginx keeps them open"

load pipelined -c 4 -t 2 -m "$get\\r\\n" --reply-check 'HTTP/1.1 200' \
    --window 8
served pipelined

# nginx answers, says "Connection: close" and closes: tenkload opens the
# connection again and counts it.
load close -c 4 -t 1 -m "${get}Connection: close\\r\\n\\r\\n" \
    --reply-check 'HTTP/1.1 200'
served close
r=$(json_get "$T/close.json" connections.reconnects) ||
    fail "close: no connections.reconnects in the JSON"
# every reply closes its connection: one reconnect per message, give or
# take the connections open at the ends of the measured window
[ "$((r + 4))" -ge "$(json_get "$T/close.json" traffic.msgs)" ] ||
    fail "close: $r reconnects for $(json_get "$T/close.json" traffic.msgs) msgs"
echo "close: $r reconnects"

# 404: every reply is a valid HTTP response that fails the check.
load missing -c 2 -t 1 -m 'GET /nothing-here HTTP/1.1\r\nHost: x\r\n\r\n' \
    --reply-check 'HTTP/1.1 200'
refused missing 404
grep -q '404 Not Found' "$T/missing.err" ||
    fail "404: the reply is not in the log: $(cat "$T/missing.err")"

alive "$NGINX_PID" || fail "nginx died: $(tail -n 5 "$NGINX_LOG")"
nginx_stop
pass
