#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkload against a real redis-server, started here as the script's own
# process on a loopback port picked for it: PING inline and in RESP,
# pipelined 16 deep, with --reply redis and --reply-check +PONG; a GET
# of a key set beforehand (a bulk reply); and a --reply-check that no
# reply begins with, which counts mismatches and fails the run.  Skipped,
# saying why, without redis-server (make test-deps installs it).
# backends: none
# timeout: 120
# RESP's "$4" and the like are lengths, not parameters:
# shellcheck disable=SC2016
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_servers.sh"

need_prog redis-server redis-server
redis_start

# load NAME ARGS...: server_load against this server's framing.
load() {
	_ln=$1
	shift
	server_load "$_ln" "$RADDR" --reply redis "$@"
}

# window NAME N: the JSON says N requests were in flight per connection.
window() {
	_w=$(json_get "$T/$1.json" header.window)
	[ "$_w" = "$2" ] || fail "$1: window $_w in the JSON, want $2"
}

# PING inline, one request in flight, then 16 (redis answers pipelined
# requests in order, each +PONG).
load inline -c 4 -t 1 -m 'PING\r\n' --reply-check +PONG
served inline
load inline16 -c 4 -t 1 -m 'PING\r\n' --reply-check +PONG --window 16
served inline16
window inline16 16

# PING as a RESP array, on two threads, 16 deep.
load resp16 -c 4 -t 2 -m '*1\r\n$4\r\nPING\r\n' --reply-check +PONG \
    --window 16
served resp16
window resp16 16

# GET of a key set beforehand: a bulk string, "$5\r\nhello\r\n".
load set -c 1 -t 1 -m '*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n' \
    --reply-check +OK
served set
load get -c 4 -t 1 -m '*2\r\n$3\r\nGET\r\n$1\r\nk\r\n' \
    --reply-check '$5\r\nhello\r\n' --window 4
served get

# Every reply is +PONG, none begins with +PANG: mismatches, exit 1.
load wrong -c 2 -t 1 -m 'PING\r\n' --reply-check +PANG
refused wrong "wrong check"
# from the first byte that differs, escaped: "+PANG" and "+PONG\r\n"
grep -q -F '"ONG\r\n"' "$T/wrong.err" ||
    fail "wrong check: the reply is not in the log: $(cat "$T/wrong.err")"

alive "$REDIS_PID" || fail "redis-server died: $(tail -n 5 "$REDIS_LOG")"
redis_stop
pass
