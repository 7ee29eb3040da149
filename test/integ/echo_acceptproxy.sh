#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --accept-proxy in echo mode.  Good v1 and v2 headers, whole and split
# at every byte boundary (a pause at the cut): the bytes after the
# header, even ones that look like a TLV, are echoed as sent (none was
# read with the header), and the access log names the client the header
# carries (the socket's own peer for v1 UNKNOWN and v2 LOCAL).  Bad
# headers (no CRLF in 107 bytes, a lone LF, truncated v2 addresses, a
# TLV past the header, ...) are closed at once, before the client's FIN
# and long before the header timeout, counted as closed proxy-header,
# their fds closed; a header dribbled a byte a second is closed at
# --accept-proxy-timeout.  A drain waits for a header on its way; its
# deadline closes one.  The options, on the command line and in -f.
# timeout: 180
. "$(dirname "$0")/lib.sh"

need_ppsend
V1='PROXY TCP4 10.1.2.3 10.0.0.1 5555 80\r\n'
# v2, TCP4 10.9.9.9:4660 to 10.0.0.2:80
V2=$SIG'\x21\x11\x00\x0c\x0a\x09\x09\x09\x0a\x00\x00\x02\x12\x34\x00\x50'


# closed ARGS...: ppsend.py ARGS is closed with nothing echoed (a
# reset, when tenkd closed with bytes unread).
closed() {
	_o=$("$PY" "$PPSEND" "$@") || fail "ppsend $*: $_o"
	case $_o in
	"got - eof" | "got - reset") ;;
	*) fail "not closed: $*: $_o" ;;
	esac
}

# refused PART...: the header is refused: closed before the client's FIN
# (-w 15) and before the 60 s header timeout.
refused() {
	closed -w 15 "$ADDR" "$@"
	nbad=$((nbad + 1))
}

fds() {
	find "/proc/$TENKD_PID/fd" -mindepth 1 | wc -l
}

_lines() {
	[ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]
}

usage_error 'accept-proxy-timeout 1ms: too small' "$TENKD" echo \
    --accept-proxy-timeout 1ms
usage_error 'accept-proxy: takes no value' "$TENKD" echo --accept-proxy=1
printf 'accept-proxy\naccept-proxy-timeout 2s\n' >"$T/conf"
"$TENKD" echo --check -f "$T/conf" 2>"$T/check" ||
    fail "--check: $(cat "$T/check")"
printf 'accept-proxy yes\n' >"$T/conf"
usage_error "$T/conf:1: accept-proxy yes: takes no value" "$TENKD" echo \
    --check -f "$T/conf"

log=$T/access.log
tenkd_start echo --threads 1 --accept-proxy --accept-proxy-timeout 60s \
    --access-log "$log" --log-level debug
fd0=$(fds)

pp '68656c6c6f eof' "$ADDR" "${V1}hello"
pp '6162 eof' "$ADDR" 'PROXY TCP6 2001:db8::5 ::1 4000 7\r\nab'
pp '78 eof' "$ADDR" 'PROXY UNKNOWN\r\nx'
# After the header, bytes that look like a TLV are data.
pp '0100056162636465 eof' "$ADDR" "$V2"'\x01\x00\x05abcde'
# A TLV inside the header (length 0x15), then data.
pp '7a eof' "$ADDR" "$SIG"'\x21\x11\x00\x15\x0a\x09\x09\x09\x0a\x00'\
'\x00\x02\x12\x34\x00\x50\x04\x00\x00\x02\x00\x03abcz'
pp '71 eof' "$ADDR" "$SIG"'\x20\x00\x00\x00q'
pp '72 eof' "$ADDR" "$SIG"'\x21\x21\x00\x24'\
'\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x09'\
'\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x01\x0f\xa0\x00\x07r'
# The header and its data in one write, the data again later.
pp '61626361626364 eof' "$ADDR" "${V1}abc" +0.1 abcd
n=8

# Split at every byte boundary, the data in the second write.
k=1
while [ "$k" -lt 38 ]; do
	pp '646174610d0a eof' -c "$k" "$ADDR" "${V1}data\r\n"
	k=$((k + 1))
	n=$((n + 1))
done
k=1
while [ "$k" -lt 28 ]; do
	pp '0200026869 eof' -c "$k" "$ADDR" "$V2"'\x02\x00\x02hi'
	k=$((k + 1))
	n=$((n + 1))
done

wait_for 10 _lines "$log" "$n" || fail "access log: $(cat "$log")"
[ "$(grep -c ' 10\.1\.2\.3:5555 echo ' "$log")" -eq 39 ] ||
    fail "10.1.2.3:5555 lines: $(cat "$log")"
[ "$(grep -c ' 10\.9\.9\.9:4660 echo ' "$log")" -eq 29 ] ||
    fail "10.9.9.9:4660 lines: $(cat "$log")"
grep -q ' \[2001:db8::5\]:4000 echo ' "$log" || fail "no TCP6 v1 client"
grep -q ' \[2001:db8::9\]:4000 echo ' "$log" || fail "no TCP6 v2 client"
[ "$(grep -c ' 127\.0\.0\.1:[0-9]* echo ' "$log")" -eq 2 ] ||
    fail "UNKNOWN and LOCAL: $(cat "$log")"

nbad=0
refused "PROXY UNKNOWN $(printf '%0100d' 0)"
refused 'PROXY TCP4 1.2.3.4 5.6.7.8 1 2\nhello'
refused 'PROXY TCP4 1.2.3.4 5.6.7.8 1 2\rhello'
refused 'GET / HTTP/1.0\r\n\r\n'
# v2: addresses cut short by the length, a TLV past the header's end, a
# TLV cut short, and a version 3.
refused "$SIG"'\x21\x11\x00\x08\x0a\x09\x09\x09\x0a\x00\x00\x02'
refused "$SIG"'\x21\x11\x00\x0f\x0a\x09\x09\x09\x0a\x00\x00\x02'\
'\x12\x34\x00\x50\x01\x00\x09abcdefghi'
refused "$SIG"'\x21\x11\x00\x0e\x0a\x09\x09\x09\x0a\x00\x00\x02'\
'\x12\x34\x00\x50\x01\x00'
refused "$SIG"'\x31\x11\x00\x0c'
# EOF in the middle of a header.
pp '- eof' "$ADDR" 'PROXY TCP4 10.1.2.3 '
nbad=$((nbad + 1))

line=$(tenkd_stats)
[ "$(stat_val "$line" proxy-header)" -eq "$nbad" ] ||
    fail "proxy-header, wanted $nbad: $line"
[ "$(stat_val "$line" accepted)" -eq $((n + nbad)) ] ||
    fail "accepted, wanted $((n + nbad)): $line"
[ "$(stat_val "$line" active)" -eq 0 ] || fail "active: $line"
[ "$(fds)" -eq "$fd0" ] || fail "fds: $fd0 before, $(fds) after"
grep -q 'pin_end: .*v1: lone LF' "$TENKD_LOG" || fail "no debug line"
kill -TERM "$TENKD_PID"
wait_exit 15 "$TENKD_PID"

# A drain waits for a header on its way, then serves the connection.
_one() {
	[ "$(stat_val "$(tenkd_stats)" active)" -eq 1 ]
}
tenkd_start echo --threads 1 --accept-proxy
"$PY" "$PPSEND" "$ADDR" 'PROX' +3 'Y UNKNOWN\r\nlate' >"$T/late" &
late=$!
track "$late"
wait_for 10 _one || fail "no connection in its header"
kill -TERM "$TENKD_PID"
wait "$late"
[ "$(cat "$T/late")" = "got 6c617465 eof" ] ||
    fail "drain: $(cat "$T/late")"
wait_exit 15 "$TENKD_PID"

# Its drain deadline closes a connection still in its header.
tenkd_start echo --threads 1 --accept-proxy --accept-proxy-timeout 60s \
    --drain-timeout 1s
"$PY" "$PPSEND" -w 20 "$ADDR" 'PROX' >"$T/force" &
force=$!
track "$force"
wait_for 10 _one || fail "no connection in its header"
kill -TERM "$TENKD_PID"
wait "$force"
grep -q '^got - eof$' "$T/force" || fail "force: $(cat "$T/force")"
wait_exit 15 "$TENKD_PID"

# A header a byte a second: closed at the header timeout.
tenkd_start echo --threads 1 --accept-proxy --accept-proxy-timeout 1s
set --
for c in P R O X Y ' ' T C P 4; do
	set -- "$@" "$c" +1
done
closed -T 30 "$ADDR" "$@"
line=$(tenkd_stats)
[ "$(stat_val "$line" proxy-header)" -eq 1 ] || fail "dribble: $line"
grep -q 'header timeout' "$TENKD_LOG" &&
    fail "debug line at level info: $(cat "$TENKD_LOG")"
pass
