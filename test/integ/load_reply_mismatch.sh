#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Replies that are not what the framing or --reply-check allows count as
# mismatches, close their connections and fail the run (exit 1), with the
# offending bytes logged once, escaped: a check that fails, garbage for
# redis and http, and bytes that answer no request.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

# expect NAME WHAT ARGS...: tenkload -c 4 with ARGS against the replysrv
# started last must exit 1 with 4 mismatches and no other error, and
# log one warning that holds WHAT.
expect() {
	_n=$1
	_w=$2
	shift 2
	timeout 30 "$TENKLOAD" -q -c 4 -t 2 -d 1s --json "$T/$_n.json" \
	    "$@" "$RSADDR" >"$T/$_n.out" 2>"$T/$_n.err"
	_st=$?
	[ "$_st" -eq 1 ] || fail "$_n: exit $_st, want 1: $(cat "$T/$_n.err")"
	[ "$(json_get "$T/$_n.json" errors.mismatch)" -eq 4 ] ||
	    fail "$_n: $(grep errors: "$T/$_n.out")"
	[ "$(json_get "$T/$_n.json" errors.total)" -eq 4 ] ||
	    fail "$_n: other errors: $(grep errors: "$T/$_n.out")"
	# A reply may come in before the mismatch that closes its
	# connection, one a connection at most.
	[ "$(json_get "$T/$_n.json" traffic.msgs)" -le 4 ] ||
	    fail "$_n: messages counted"
	grep -q '^result: FAIL' "$T/$_n.out" || fail "$_n: no FAIL result"
	[ "$(grep -c mismatch "$T/$_n.err")" -eq 1 ] ||
	    fail "$_n: not one mismatch logged: $(cat "$T/$_n.err")"
	grep -q -F -e "$_w" "$T/$_n.err" ||
	    fail "$_n: no '$_w' in the log: $(cat "$T/$_n.err")"
}

replysrv_start --line
expect check 'does not begin with the check text: "OK\r\n"' \
    -m 'PING\r\n' --reply line --reply-check +PONG
# Two lines a request: the second reply answers nothing.
expect extra 'no request in flight: "+OK\r\n"' \
    -m 'PING\nPING\n' --reply line
kill "$RS_PID"

replysrv_start --garbage
expect redis '"\x00\xffgarbage\x01"' -m 'PING\r\n' --reply redis
expect http 'not an HTTP' -m 'GET / HTTP/1.1\r\nHost: x\r\n\r\n' \
    --reply http
# Echo of a message: garbage is not the request.
expect echo 'differs from the request' -m 'hello'
pass
