#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkload -m against tenkd echo on this backend: the message comes back
# byte for byte (--reply echo, the default), one at a time, pipelined,
# from a --message-file line larger than one send, and after a first
# message; a message with an escape that is not the server's echo would
# be a mismatch, so no error proves every byte.
# timeout: 90
. "$(dirname "$0")/lib.sh"

[ -x "$TENKD" ] || skip "no tenkd built"
tenkd_start echo --threads 1

# run NAME ARGS...: load_echo on 8 connections.
run() {
	load_echo "$@" -c 8
}

run plain -m 'hello, \x00\xff\t\\ world\r\n'
[ "$(json_get "$T/plain.json" header.size_min)" -eq 19 ] ||
    fail "plain: the size is not the message's 19 bytes"
run window -m 'GET / HTTP/1.1\r\n\r\n' --reply echo --window 4
run first --first-message 'HELLO\r\n' -m 'x'

# 200000 random bytes, written as \xHH escapes on one line of a
# --message-file: several sends a message, the buffer wraps mid-send.
head -c 200000 /dev/urandom | od -An -v -tx1 | tr -d ' \n' |
    sed 's/../\\x&/g' >"$T/big"
[ "$(wc -c <"$T/big")" -eq 800000 ] || fail "big: not 800000 bytes"
run big --message-file "$T/big" --window 2
m=$(json_get "$T/big.json" traffic.msgs)
i=$(json_get "$T/big.json" traffic.bytes_in)
[ "$i" -ge $((200000 * (m - 16))) ] || fail "big: $i bytes in for $m"
[ "$(json_get "$T/big.json" header.size_min)" -eq 200000 ] ||
    fail "big: the size is not the message's 200000 bytes"
pass
