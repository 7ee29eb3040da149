#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The proxy's command line: every bad input exits 2 with one line on
# stderr naming the option; proxy options are refused in echo mode;
# --check accepts a good proxy configuration.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

# bad WORD ARGS...: tenkd ARGS is a usage error naming WORD.
bad() {
	_bw=$1
	shift
	usage_error "$_bw" "$TENKD" "$@"
}

u=127.0.0.1:7000
bad 'upstream'		proxy
bad 'upstream'		proxy --balance rr
bad '-u'		proxy -u
bad '-u 127.0.0.1: missing port' proxy -u 127.0.0.1
bad '-u'		proxy -u 127.0.0.1:0
bad '-u'		proxy -u 127.0.0.1:99999
bad '--upstream'	proxy --upstream no.such.host.invalid:1
bad '-u'		proxy -u 127.0.0.1:7000,weight=0
bad '-u'		proxy -u 127.0.0.1:7000,weight=101
bad '-u'		proxy -u 127.0.0.1:7000,bogus
bad '--balance random: not a method' proxy -u "$u" --balance random
bad '--hash-key sni: needs TLS routing' proxy -u "$u" --balance hash \
    --hash-key sni
bad '--hash-key dst: not a key'	proxy -u "$u" --balance hash --hash-key dst
bad '--hash-key: only with --balance hash' proxy -u "$u" \
    --hash-key source-port
bad '-u 127.0.0.1:7000,name=: bad name' proxy -u "$u,name="
bad '-u'		proxy -u "$u,name=a/b"
bad '-u'		proxy -u "$u,name=$(printf '%064d' 0)"
bad '--upstream web: named twice' proxy --balance hash -u "$u,name=web" \
    -u 127.0.0.1:7001,name=web
bad "--upstream $u: named twice" proxy --balance source -u "$u" \
    -u "$u,weight=2"
bad '--connect-timeout 0: too small (10ms to 1h;' \
			proxy -u "$u" --connect-timeout 0
bad '--connect-timeout'	proxy -u "$u" --connect-timeout 5x
bad '--fin-timeout'	proxy -u "$u" --fin-timeout 2d
bad '--retries'		proxy -u "$u" --retries -1
bad '--retries'		proxy -u "$u" --retries 1000
bad '--fail-max'	proxy -u "$u" --fail-max 0
bad '--fail-timeout'	proxy -u "$u" --fail-timeout 2h
bad '--max-conns-per-ip' proxy -u "$u" --max-conns-per-ip x
bad '--send-proxy'	proxy -u "$u" --send-proxy v3
bad '--workers 0: too small (1 to 64)' proxy -u "$u" --workers 0
bad '--workers'		echo --workers 65
bad 'only with tenkd proxy' echo -u 127.0.0.1:7000
bad 'only with tenkd proxy' echo --send-proxy v1
bad 'unknown mode'	proxyy -u "$u"

"$TENKD" proxy --check -l 127.0.0.1:0 -u 127.0.0.1:7000,weight=3 \
    -u '[::1]:7001' --balance leastconn --connect-timeout 1s \
    --fin-timeout 0 --retries 0 --fail-max 5 --fail-timeout 1m \
    --max-conns-per-ip 10 --send-proxy v2 --workers 2 2>"$T/e" ||
    fail "--check: $(cat "$T/e")"
grep -q 'configuration OK: proxy' "$T/e" || fail "--check said: $(cat "$T/e")"
grep -q 'listening' "$T/e" && fail "--check bound a socket"
# One name twice is fine but with --balance hash; names are free.
"$TENKD" proxy --check -l 127.0.0.1:0 -u "$u" -u "$u" 2>"$T/e" ||
    fail "--check, one upstream twice: $(cat "$T/e")"
"$TENKD" proxy --check -l 127.0.0.1:0 -u "$u,name=web-1.a_b:2" \
    -u "127.0.0.1:7001,weight=2,backup,name=$(printf '%063d' 0)" \
    --balance hash --hash-key source-port 2>"$T/e" ||
    fail "--check, --balance hash: $(cat "$T/e")"
pass
