#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The TLS key is read before privileges are dropped: tenkd echo --user
# nobody with a key only root may read (0600, in root's $T) serves TLS.
# A reload reads the files as the user (tenkd.8): one that nobody cannot
# read is refused with the reason, and the certificate it had goes on
# being served.
# backends: epoll
# timeout: 90
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_tls.sh"

[ "$(id -u)" -eq 0 ] || skip "not root: no --user"
id nobody >/dev/null 2>&1 || skip "no user nobody"
need_tls
tls_certs
chmod 600 "$EC_KEY" "$RSA_KEY"
# conf CERT KEY: the -f file.
conf() {
	printf 'threads 1\ntls-cert %s\ntls-key %s\n' "$1" "$2" \
	    >"$T/tenkd.conf"
}
# served BITS: openssl s_client gets a certificate with a BITS-bit key.
served() {
	echo | timeout 10 openssl s_client -connect "$ADDR" \
	    -servername a.test >"$T/sc" 2>&1
	grep -q "Server public key is $1 bit" "$T/sc" ||
	    fail "not the $1-bit key: $(grep -i 'public key' "$T/sc")"
}

conf "$EC_CERT" "$EC_KEY"
tenkd_start echo --user nobody -f "$T/tenkd.conf"
echo "tenkd's processes run as: $(ps -o user= -p "$TENKD_PID")" \
    "$(pgrep -P "$TENKD_PID" | xargs -r ps -o user= -p)"
tlspeer_got ec 10000 -b 10000 -a "$EC_CERT" -n a.test "$ADDR"
served 256
conf "$RSA_CERT" "$RSA_KEY"
kill -HUP "$TENKD_PID"
wait_line 30 "$TENKD_LOG" 'reload: .*Permission denied' ||
    fail "no refused reload: $(grep reload "$TENKD_LOG")"
grep 'reload: ' "$TENKD_LOG" | sed 's/.*reload/reload/'
served 256
tlspeer_got after 10000 -b 10000 -a "$EC_CERT" -n a.test "$ADDR"
pass
