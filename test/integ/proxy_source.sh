#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --source: upstream connects leave from the given local addresses, in
# turn (a list or an IPv4 range), and a source that cannot work is a
# usage error at start-up.
# timeout: 60
. "$(dirname "$0")/lib.sh"

pxtool_start upstream -P
tenkd_start proxy --threads 1 -u "$PXTADDR" --source 127.0.0.2,127.0.0.3
"$TKCLI" echo -c 8 -b 1-4k "$ADDR" || fail "through --source"
for a in 127.0.0.2 127.0.0.3; do
	n=$(grep -c "^peer $a:" "$PXT_OUT")
	[ "$n" -eq 4 ] || fail "$n connects from $a: $(cat "$PXT_OUT")"
done
[ "$(grep -c '^peer ' "$PXT_OUT")" -eq 8 ] || fail "$(cat "$PXT_OUT")"
echo "peers: $(sort "$PXT_OUT" | cut -d: -f1 | uniq -c | tr -s ' \n' ' ')"

# An IPv4 range.
pxtool_start upstream -P
tenkd_start proxy --threads 1 -u "$PXTADDR" --source 127.0.0.4-127.0.0.6
"$TKCLI" echo -c 6 -b 1-4k "$ADDR" || fail "through a --source range"
for a in 127.0.0.4 127.0.0.5 127.0.0.6; do
	grep -q "^peer $a:" "$PXT_OUT" || fail "none from $a: $(cat "$PXT_OUT")"
done

# Usage errors.
usage_error --source "$TENKD" proxy -u "$PXTADDR" --source 192.0.2.1
usage_error --source "$TENKD" proxy -u "$PXTADDR" --source 127.0.0.2:80
usage_error --source "$TENKD" proxy -u "$PXTADDR" --source 127.0.0.3-127.0.0.2
usage_error --source "$TENKD" proxy -u "$PXTADDR" --source ::1
usage_error --source "$TENKD" proxy -u "$PXTADDR" --source ::1-::2
usage_error --source "$TENKD" echo --source 127.0.0.2
pass
