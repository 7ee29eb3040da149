#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --accept-proxy-from (issue 22): a PROXY header is read only from the
# peers listed (IPv4 and IPv6 networks); a connection from any other is
# closed before a byte is read, even with a good header, and counted as
# closed "proxy-untrusted" on /stats and /metrics.  Listed peers are
# served as with --accept-proxy, in echo and proxy mode (where an
# untrusted one never reaches the upstream).  Bad networks are usage
# errors; the option is a list in -f too.
# timeout: 120
. "$(dirname "$0")/lib.sh"

need_ppsend
V1='PROXY TCP4 10.1.2.3 10.0.0.1 5555 80\r\n'

for a in 10.1.2.3/8 10.0.0.0/33 ::1/129 foo '10.0.0.0/8,' ',::1'; do
	usage_error "accept-proxy-from $a: " "$TENKD" echo \
	    --accept-proxy-from "$a"
done
usage_error 'too many networks (at most 64)' "$TENKD" echo \
    --accept-proxy-from "$(seq -s, -f '10.0.0.%g' 1 65)"
printf 'accept-proxy-from 127.0.0.2\naccept-proxy-from ::1/128\n' >"$T/conf"
"$TENKD" echo --check -f "$T/conf" 2>"$T/check" ||
    fail "--check: $(cat "$T/check")"
grep -q 'given before' "$T/check" &&
    fail "a list said twice: $(cat "$T/check")"

fds() {
	find "/proc/$TENKD_PID/fd" -mindepth 1 | wc -l
}
_lines() {
	[ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]
}
# untrusted ARGS...: ppsend ARGS is closed with nothing echoed.
untrusted() {
	_o=$("$PY" "$PPSEND" -w 10 "$@") || fail "ppsend $*: $_o"
	case $_o in
	"got - eof" | "got - reset") ;;
	*) fail "served though untrusted: $*: $_o" ;;
	esac
}

# Echo: 127.0.0.2 and ::1 listed, 127.0.0.1 not.
log=$T/access.log
tenkd_start echo --threads 1 -l '[::1]:0' -f "$T/conf" --access-log "$log"
V6=$(sed -n 's/.*listening on \(\[::1\]:[0-9]*\).*/\1/p' "$TENKD_LOG")
V4=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$TENKD_LOG")
[ -n "$V6" ] || fail "no [::1] listener: $(cat "$TENKD_LOG")"
[ -n "$V4" ] || fail "no 127.0.0.1 listener: $(cat "$TENKD_LOG")"
fd0=$(fds)
pp '68656c6c6f eof' -s 127.0.0.2 "$V4" "${V1}hello"
pp '6162 eof' "$V6" 'PROXY TCP6 2001:db8::5 ::1 4000 7\r\nab'
pp '71 eof' -s 127.0.0.2 "$V4" "$SIG"'\x20\x00\x00\x00q'
untrusted "$V4" "${V1}hello"
untrusted -s 127.0.0.3 "$V4" "${V1}hello"
untrusted "$V4" 'hello'
wait_for 10 _lines "$log" 3 || fail "access log: $(cat "$log")"
grep -q ' 10\.1\.2\.3:5555 echo ' "$log" || fail "v4: $(cat "$log")"
grep -q ' \[2001:db8::5\]:4000 echo ' "$log" || fail "v6: $(cat "$log")"
grep -q ' 127\.0\.0\.2:[0-9]* echo ' "$log" || fail "LOCAL: $(cat "$log")"
line=$(tenkd_stats)
[ "$(stat_val "$line" proxy-untrusted)" -eq 3 ] ||
    fail "proxy-untrusted, wanted 3: $line"
[ "$(stat_val "$line" proxy-header)" -eq 0 ] || fail "proxy-header: $line"
[ "$(stat_val "$line" accepted)" -eq 6 ] || fail "accepted: $line"
[ "$(stat_val "$line" active)" -eq 0 ] || fail "active: $line"
http_get "http://$METRICS/metrics" >"$T/metrics" || fail "no /metrics"
# Under the master of -f, the worker's series (worker="0").
grep -q '^tenkd_connections_closed_total{reason="proxy-untrusted"[^}]*} 3$' \
    "$T/metrics" || fail "metrics: $(grep closed_total "$T/metrics")"
[ "$(fds)" -eq "$fd0" ] || fail "fds: $fd0 before, $(fds) after"
kill -TERM "$TENKD_PID"
wait_exit 15 "$TENKD_PID"

# Proxy: an untrusted client never reaches the upstream; the command
# line's list replaces the file's.
upstream_start --threads 1
upm=$METRICS
tenkd_start proxy --threads 1 -u "$UPADDR" -f "$T/conf" \
    --accept-proxy-from 127.0.0.3/32
pp '6869 eof' -s 127.0.0.3 "$ADDR" "${V1}hi"
untrusted -s 127.0.0.2 "$ADDR" "${V1}hi"
untrusted "$ADDR" "${V1}hi"
line=$(tenkd_stats)
[ "$(stat_val "$line" proxy-untrusted)" -eq 2 ] ||
    fail "proxy: proxy-untrusted, wanted 2: $line"
up=$(METRICS=$upm tenkd_stats)
[ "$(stat_val "$up" accepted)" -eq 1 ] || fail "upstream saw: $up"
pass
