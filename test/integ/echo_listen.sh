#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Several --listen addresses with port 0: one "listening on" line per
# address, each with its own port shared by all threads, each serving.
# IPv6 loopback too when the host has it.
# timeout: 60
. "$(dirname "$0")/lib.sh"

v6=
if [ -f /proc/net/if_inet6 ] && grep -q '00000000000000000000000000000001' \
    /proc/net/if_inet6; then
	v6='--listen [::1]:0'
fi
# shellcheck disable=SC2086
tenkd_start echo --threads 3 --listen 127.0.0.2:0 $v6
n=$(grep -c 'listening on' "$TENKD_LOG")
want=2
[ -n "$v6" ] && want=3
[ "$n" -eq "$want" ] || fail "$n listening lines, wanted $want"
# One address a line, without blanks: words are lines.
# shellcheck disable=SC2013
for a in $(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$TENKD_LOG"); do
	[ "${a##*:}" != 0 ] || fail "port 0 reported: $a"
	"$TKCLI" echo -c 30 -b 1-100k "$a" || fail "echo on $a"
done
s=$(tenkd_stats) || exit 1
[ "$(stat_val "$s" accepted)" -eq $(( want * 30 )) ] || fail "stats: $s"
pass
