#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A gibibyte each way through TLS, byte-exact: tlspeer through tenkd
# echo over TLS, and through tenkd proxy terminating TLS in front of
# tenkd echo, each ended by close_notify, the echo's close_notify last.
# timeout: 900
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_tls.sh"

need_tls
tls_certs
G=1073741824
tenkd_start echo --threads 1 --tls-cert "$EC_CERT" --tls-key "$EC_KEY"
tlspeer_got echo "$G" -b "$G" -T 400 "$ADDR"
upstream_start --threads 1
tenkd_start proxy --threads 1 -u "$UPADDR" --tls-cert "$EC_CERT" \
    --tls-key "$EC_KEY"
tlspeer_got proxy "$G" -b "$G" -T 400 "$ADDR"
pass
