#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Clients that send and then reset (SO_LINGER 0) at once: whatever the
# proxy read from a client reaches the upstream before the session
# ends, on every backend.  200 tries a variant: fresh connections (the
# bytes and the reset may come before the upstream is connected) and
# established ones (a first line echoed through both sides first),
# 100 bytes and 32 KiB.  Each client's bytes start with its own port,
# so the upstream's count of a connection (pxtool upstream -c, which
# echoes too, into the reset client) pairs with the access log's in=
# of the same client.
# timeout: 180
. "$(dirname "$0")/lib.sh"

n=200
pxtool_start upstream -c
tenkd_start proxy --threads 2 -u "$PXTADDR" --access-log "$T/acc"
for v in fresh:100 fresh:32768 est:100 est:32768; do
	e=
	[ "${v%%:*}" = est ] && e=-e
	# shellcheck disable=SC2086
	"$PXTOOL" sendrst $e -n "${v#*:}" -k "$n" "$ADDR" >/dev/null ||
	    fail "sendrst $v"
done
total=$(( 4 * n ))

_count() {
	[ "$(grep -c "$2" "$1")" -ge "$3" ]
}
wait_for 60 _count "$PXT_OUT" '^received ' "$total" ||
    fail "the upstream saw $(grep -c '^received ' "$PXT_OUT") of" \
    "$total connections end"
wait_for 60 _count "$T/acc" ' proxy ' "$total" ||
    fail "$(grep -c ' proxy ' "$T/acc") of $total sessions logged"

# Per client port (summed, should a port come back): what the proxy
# read (in=) against what the upstream got.  A client whose address the
# proxy could not read ("?": reset before a multishot accept's
# getpeername) is paired in the sum over all of them, against what the
# upstream got from ports that the access log does not name.
r=$(awk '
FNR == NR {
	if ($1 == "received" && $4 == "port")
		got[$5] += $2
	next
}
/ proxy / {
	port = $2
	sub(/.*:/, "", port)
	for (i = 3; i <= NF; i++)
		if ($i ~ /^in=/)
			in_[port] += substr($i, 4)
	n++
}
END {
	for (p in got)
		if (!(p in in_))
			got["?"] += got[p]
	for (p in in_) {
		if (got[p] + 0 < in_[p]) {
			lost++
			bytes += in_[p] - got[p]
		}
		if (got[p] + 0 > in_[p])
			more++
		read += in_[p]
	}
	printf "%d %d %d %d %d\n", n, lost, bytes, more, read
}
' "$PXT_OUT" "$T/acc")
# shellcheck disable=SC2086
set -- $r
echo "$1 sessions, $5 bytes read from clients; $2 client ports lost" \
    "$3 bytes; $4 with more upstream than read"
[ "$1" -eq "$total" ] || fail "$1 sessions logged, wanted $total"
[ "$2" -eq 0 ] || fail "$2 client ports lost bytes read ($3 bytes)"
[ "$4" -eq 0 ] || fail "$4 client ports got more than the proxy read"
[ "$5" -gt 0 ] || fail "nothing was read"

_idle() {
	[ "$(stat_val "$(tenkd_stats)" active)" -eq 0 ]
}
wait_for 20 _idle || fail "sessions left open: $(tenkd_stats)"
alive "$TENKD_PID" || fail "tenkd died"
pass
