#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkload --reply prefix:u16be and prefix:u32be against replysrv
# --prefix, which echoes each length-prefixed request: the replies are
# framed by their length, pipelined four deep, with no error; a
# --message-file line holds a request with a NUL byte in it.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

# run NAME WIDTH ARGS...: tenkload against replysrv --prefix WIDTH.
run() {
	_run=$1
	replysrv_start --prefix "$2"
	shift 2
	load_run "$_run" -c 4 "$@" "$RSADDR"
	kill "$RS_PID"
	load_has "$_run" traffic.msgs -gt 0 "no messages"
}

run u16 u16be -m '\x00\x05hello' --reply prefix:u16be --window 4
run u32 u32be -m '\x00\x00\x00\x03abc' --reply prefix:u32be --window 4

# A 1000-byte request from a --message-file line: a u16 length, then
# 998 bytes with a NUL in them, written as escapes.
{ printf '\\x03\\xe6'; head -c 998 /dev/zero | tr '\0' 'x' |
    sed 's/x/\\0/5'; echo; } >"$T/req"
[ "$(wc -c <"$T/req")" -eq 1008 ] || fail "request file not 1008 bytes"
run file u16be --message-file "$T/req" --reply prefix:u16be
m=$(json_get "$T/file.json" traffic.msgs)
i=$(json_get "$T/file.json" traffic.bytes_in)
near_times "$i" 1000 "$m" ||
    fail "file: $i bytes in for $m replies of 1000 bytes"
pass
