#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkload's TLS options refused as usage errors, one line naming the
# option and exit 2: a version other than 1.2 or 1.3, an empty or
# too-long ALPN name, ciphers OpenSSL does not know, a CA file that is
# not there or holds no certificate, an empty server name.  Built
# without TLS, --tls and an https:// URL are that error, and the rest
# skips with it.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_tls.sh"

A=127.0.0.1:9
if "$TOOLS/tlspeer" >/dev/null 2>&1; [ $? -eq 77 ]; then
	load_bad 'built without TLS' --tls "$A"
	load_bad 'https://127.0.0.1:9/: built without TLS' https://$A/
	need_tls
fi
load_bad '--tls-version' --tls-version 1.1 "$A"
load_bad '--tls-version' --tls-version tls13 "$A"
load_bad '--tls-alpn' --tls-alpn '' "$A"
load_bad '--tls-alpn' --tls-alpn 'h2,' "$A"
load_bad '--tls-alpn' --tls-alpn "$(printf '%0300d' 0)" "$A"
load_bad '--tls-ciphers' --tls-ciphers NO-SUCH-CIPHER "$A"
load_bad '--tls-ciphers' --tls-ciphers TLS_NO_SUCH_SUITE "$A"
load_bad '--tls-ca' --tls-ca "$T/none.pem" "$A"
echo junk >"$T/junk.pem"
load_bad '--tls-ca' --tls-ca "$T/junk.pem" "$A"
load_bad '--tls-sni' --tls-sni '' "$A"
load_bad '--tls-version' --tls-version 1.0 https://$A/
pass
