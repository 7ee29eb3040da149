#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkload by URL against a real nginx, started here as the script's own
# process on a loopback port picked for it: GET of a static file over
# keep-alive (no reconnect), HEAD (no body to read), a path with a
# placeholder, -H headers, a POST with a --body whose length varies
# (Content-Length right-aligned) and one from --body-file, each answered
# 200 on connections kept open, which a wrong Content-Length would break
# (nginx would read the next request from the body's bytes); a path that
# is not there, whose 404 fails the run.  (https:// is load_tls_peers'.)
# Skipped, saying why, without nginx (make test-deps).
# backends: none
# timeout: 120
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_servers.sh"

need_prog nginx nginx-light
nginx_start
U=http://$NADDR

# url NAME ARGS...: tenkload -c 4 -t 1 with ARGS (options, then the URL);
# exit 0, messages, no error, no reconnect.
url() {
	_n=$1
	shift
	load_run "$_n" -c 4 "$@"
	load_has "$_n" traffic.msgs -gt 0 "no messages"
	load_has "$_n" connections.reconnects -eq 0 "reconnects"
	echo "$_n: $(json_get "$T/$_n.json" traffic.msgs) msgs"
}

url get "$U/$NGINX_FILE"
grep -q "message GET $U/$NGINX_FILE, reply http" "$T/get.out" ||
    fail "get: the report does not name the request: $(cat "$T/get.out")"
# 64 bytes a reply, and the headers: more than 64 bytes in per message.
awk_true "$(json_get "$T/get.json" traffic.bytes_in) > \
    64 * $(json_get "$T/get.json" traffic.msgs)" || fail "get: no body read"
url head --method HEAD "$U/$NGINX_FILE"
url query "$U/$NGINX_FILE?k={rand:1-1000}"
url header -H 'X-Seq: {seq}' -H 'Accept: */*' "$U/$NGINX_FILE"
url hostheader -H 'Host: example.test' --window 4 "$U/$NGINX_FILE"
url body --body '{"id": {rand:1-1000000}, "pad": "{bytes:20}"}' "$U/ok"
grep -q "message POST $U/ok" "$T/body.out" || fail "body: not a POST"
head -c 3000 /dev/urandom >"$T/body"
url bodyfile --body-file "$T/body" --method PUT --window 2 "$U/ok"
url emptybody --body '' "$U/ok"

# 404: a status of 400 or above is a mismatch in a URL's run.
timeout 30 "$TENKLOAD" -q -c 2 -t 1 -d 1s --json "$T/nf.json" \
    "$U/nothing-here" >"$T/nf.out" 2>"$T/nf.err"
[ $? -eq 1 ] || fail "404: exit not 1: $(cat "$T/nf.err")"
load_has nf errors.mismatch -gt 0 "404: no mismatch"
grep -q 'status 400 or above' "$T/nf.err" ||
    fail "404: not said: $(cat "$T/nf.err")"

load_bad '-H: only with an http:// URL' -H 'X: y' "$NADDR"
load_bad '--message: not with a URL' -m x "$U/"
load_bad "$U/{rand:}: column $((${#U} + 8)): rand takes LO-HI" "$U/{rand:}"
load_bad '-H a b: not "Name: value"' -H 'a b' "$U/"
load_bad 'ftp://x/: not a scheme' ftp://x/

alive "$NGINX_PID" || fail "nginx died: $(tail -n 5 "$NGINX_LOG")"
nginx_stop
pass
