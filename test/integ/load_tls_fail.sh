#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkload --tls where TLS cannot work, and where it resumes: a
# certificate that the system's CAs do not know, or that names another
# host, fails every handshake, counted as "tls" errors with the reason
# logged once; a plaintext server is a TLS error too; a server that
# never answers the ClientHello runs into --connect-timeout.  Then
# --mode connect measures handshakes per second, all new without
# --tls-resume and resumed with it, in TLS 1.3 and 1.2.
# timeout: 180
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_tls.sh"

need_tls
tls_certs
tlspeer_start -c "$EC_CERT" -k "$EC_KEY"

# refused NAME KIND WHY ADDR ARGS...: tenkload --tls exits 1 with no
# connection established, every one failed as KIND (errors.KIND), and
# one log line containing WHY (none when WHY is empty).
refused() {
	_n=$1
	_k=$2
	_w=$3
	_a=$4
	shift 4
	# shellcheck disable=SC2046
	timeout 30 "$TENKLOAD" -q -t 1 -c 3 -d 1s $(be_opt) --tls \
	    --json "$T/$_n.json" "$@" "$_a" >"$T/$_n.out" 2>"$T/$_n.err"
	_s=$?
	[ "$_s" -eq 1 ] || fail "$_n: exit $_s: $(cat "$T/$_n.err")"
	load_has "$_n" connections.established -eq 0 "established some"
	load_has "$_n" connections.failed -eq 3 "not 3 failed"
	load_has "$_n" "errors.$_k" -eq 3 "not 3 $_k errors"
	if [ -z "$_w" ]; then
		[ ! -s "$T/$_n.err" ] || fail "$_n: $(cat "$T/$_n.err")"
		return
	fi
	[ "$(grep -c -e "$_w" "$T/$_n.err")" -eq 1 ] ||
	    fail "$_n: '$_w' not logged once: $(cat "$T/$_n.err")"
	echo "$_n: $(grep -e "$_w" "$T/$_n.err")"
}

refused unknown_ca tls "certificate verify failed: self-signed" "$TPADDR" \
    --tls-verify
refused wrong_name tls "certificate verify failed: hostname mismatch" \
    "$TPADDR" --tls-ca "$EC_CERT" --tls-sni c.test
replysrv_start
refused plaintext tls "TLS handshake failed" "$RSADDR"
pxtool_start upstream -s
refused silent timeout "" "$PXTADDR" --connect-timeout 1s

# connect NAME ARGS...: --mode connect over TLS for 1 s, no error.
connect() {
	_n=$1
	shift
	# shellcheck disable=SC2046
	load_run "$_n" $(be_opt) -c 4 -M connect --tls "$@" "$TPADDR"
	awk_true "$(json_get "$T/$_n.json" tls.handshakes_per_s) > 0" ||
	    fail "$_n: no handshakes per second"
	echo "$_n: $(grep '^  tls:' "$T/$_n.out")"
}
connect full
load_has full tls.handshakes_resumed -eq 0 "resumed without --tls-resume"
connect resumed13 --tls-resume
connect resumed12 --tls-resume --tls-version 1.2
for _r in resumed13 resumed12; do
	load_has "$_r" tls.window_resumed -gt 0 "none resumed"
	_nw=$(json_get "$T/$_r.json" tls.handshakes_new)
	_rs=$(json_get "$T/$_r.json" tls.handshakes_resumed)
	awk_true "$_rs > 10 * $_nw" ||
	    fail "$_r: $_nw new and only $_rs resumed"
done
pass
