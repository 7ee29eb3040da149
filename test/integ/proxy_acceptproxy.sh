#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --accept-proxy in proxy mode: the client a PROXY header carries is
# the one the proxy serves.  An outbound --send-proxy (v1 and v2) tells
# the upstream that client (an IPv6 one with our IPv4 address mapped,
# as TCP6), and the socket's peer after v2 LOCAL; the access log names
# it; --max-conns-per-ip counts by it (every socket here comes from
# 127.0.0.1); --balance source hashes it.  The bytes after the header
# reach the upstream untouched.
# timeout: 120
. "$(dirname "$0")/lib.sh"

need_ppsend


# v1 SRC SPORT: a v1 header from SRC:SPORT (IPv4) to 10.0.0.1:80.
v1() {
	printf 'PROXY TCP4 %s 10.0.0.1 %s 80\\r\\n' "$1" "$2"
}

_lines() {
	[ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]
}

for v in v1 v2; do
	log=$T/access.$v
	pxtool_start upstream -p
	tenkd_start proxy --threads 1 -u "$PXTADDR" --send-proxy "$v" \
	    --accept-proxy --access-log "$log"
	pp '68656c6c6f eof' "$ADDR" "$(v1 10.1.2.3 5555)hello"
	# v2 TCP6 [2001:db8::7]:4000 to [::1]:7, then bytes like a TLV.
	pp '010002abcd eof' "$ADDR" "$SIG"'\x21\x21\x00\x24'\
'\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x07'\
'\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x01\x0f\xa0\x00\x07\x01\x00\x02\xab\xcd'
	pp '71 eof' "$ADDR" "$SIG"'\x20\x00\x00\x00q'
	wait_for 10 _lines "$PXT_OUT" 3 || fail "headers: $(cat "$PXT_OUT")"
	grep -q "^PROXY $v TCP4 10\.1\.2\.3 127\.0\.0\.1 5555 $PORT\$" \
	    "$PXT_OUT" || fail "$v: no carried client: $(cat "$PXT_OUT")"
	grep -q "^PROXY $v TCP6 2001:db8::7 ::ffff:127\.0\.0\.1 4000 $PORT\$" \
	    "$PXT_OUT" || fail "$v: no carried IPv6 client: $(cat "$PXT_OUT")"
	grep -q "^PROXY $v TCP4 127\.0\.0\.1 127\.0\.0\.1 [0-9]* $PORT\$" \
	    "$PXT_OUT" || fail "$v: LOCAL: $(cat "$PXT_OUT")"
	wait_for 10 _lines "$log" 3 || fail "access log: $(cat "$log")"
	grep -q ' 10\.1\.2\.3:5555 proxy ' "$log" ||
	    fail "access log: $(cat "$log")"
	grep -q ' \[2001:db8::7\]:4000 proxy ' "$log" ||
	    fail "access log: $(cat "$log")"
	kill -TERM "$TENKD_PID"
	wait_exit 15 "$TENKD_PID"
	kill -TERM "$PXT_PID"
done

# --max-conns-per-ip 1: a second session carrying 10.7.7.7 is refused
# while the first lasts; 10.7.7.8 is served meanwhile.
upstream_start --threads 1
tenkd_start proxy --threads 1 -u "$UPADDR" --accept-proxy \
    --max-conns-per-ip 1
"$PY" "$PPSEND" -w 10 "$ADDR" "$(v1 10.7.7.7 1000)held" >"$T/held" &
held=$!
track "$held"
_one() {
	[ "$(stat_val "$(tenkd_stats)" active)" -eq 1 ]
}
wait_for 10 _one || fail "the first session did not start"
o=$("$PY" "$PPSEND" -w 10 "$ADDR" "$(v1 10.7.7.7 1001)x")
case $o in
"got - eof" | "got - reset") ;;
*) fail "second session from 10.7.7.7: $o" ;;
esac
pp '79 eof' "$ADDR" "$(v1 10.7.7.8 1000)y"
tenkd_stats >/dev/null
grep -q 'stats caps: max-conns 0 ip-limit 1$' "$TENKD_STATS" ||
    fail "caps: $(grep 'stats caps' "$TENKD_STATS")"
kill -TERM "$held"
kill -TERM "$TENKD_PID"
wait_exit 15 "$TENKD_PID"

# --balance source: each carried address always goes to one upstream,
# and the addresses are spread over both.
pxtool_start upstream -p
out_a=$PXT_OUT
a=$PXTADDR
pxtool_start upstream -p
out_b=$PXT_OUT
tenkd_start proxy --threads 1 -u "$a" -u "$PXTADDR" --balance source \
    --send-proxy v1 --accept-proxy
for r in 1 2; do
	i=1
	while [ "$i" -le 16 ]; do
		pp '7a eof' "$ADDR" "$(v1 "10.5.0.$i" "$r")z"
		i=$((i + 1))
	done
done
_both() {
	[ $(($(wc -l <"$out_a") + $(wc -l <"$out_b"))) -ge 32 ]
}
wait_for 10 _both || fail "headers: $(cat "$out_a" "$out_b")"
[ -s "$out_a" ] || fail "upstream b took all: $(cat "$out_b")"
[ -s "$out_b" ] || fail "upstream a took all: $(cat "$out_a")"
i=1
while [ "$i" -le 16 ]; do
	na=$(grep -c "^PROXY v1 TCP4 10\.5\.0\.$i " "$out_a")
	nb=$(grep -c "^PROXY v1 TCP4 10\.5\.0\.$i " "$out_b")
	case "$na $nb" in
	"2 0" | "0 2") ;;
	*) fail "10.5.0.$i: $na and $nb sessions on the two upstreams" ;;
	esac
	i=$((i + 1))
done
pass
