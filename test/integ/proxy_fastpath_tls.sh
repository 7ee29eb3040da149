#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --fastpath sockmap with TLS: a session whose client side tenkd
# terminates (--tls-cert) is never handed to the kernel, whose
# redirect would carry the records past OpenSSL: a megabyte through it
# to tenkd echo comes back byte-exact and /stats shows no byte forwarded
# by the kernel.  A session routed by SNI (--sni-route) passes its
# records untouched, so the kernel may forward it: a megabyte through
# the route comes back whole over the TLS session.  Skips, saying why,
# where tenkd cannot load the program.
# backends: epoll poll
# timeout: 120
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_tls.sh"

need_tls
tls_certs
upstream_start --threads 1
tenkd_start proxy --fastpath sockmap --threads 1 -u "$UPADDR" \
    --tls-cert "$EC_CERT" --tls-key "$EC_KEY"
grep -q 'sessions forwarded by the kernel' "$TENKD_LOG" ||
    skip "$(grep -- '--fastpath' "$TENKD_LOG")"
tlspeer_got big 1048576 -b 1048576 "$ADDR"
tlspeer_got small 100000 -b 100000 -r 7 "$ADDR"
s=$(tenkd_stats) || exit 1
echo "terminating: $s"
[ "$(stat_val "$s" fastpath-bytes)" -eq 0 ] ||
    fail "the kernel forwarded bytes of a TLS session: $s"

tlspeer_start -c "$EC_CERT" -k "$EC_KEY"
tenkd_start proxy --fastpath sockmap --threads 1 -u "$TPADDR" \
    --sni-route "a.test=$TPADDR"
tlspeer_got routed 1048576 -b 1048576 -a "$EC_CERT" -n a.test "$ADDR"
echo "routed: $(tenkd_stats)"
alive "$UP_PID" || fail "the upstream died"
pass
