#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Load from several hosts, with network namespaces standing in for them:
# tenkd echo in one namespace on 198.18.0.1 (RFC 2544's benchmarking
# range, never routed), two generators in two others, each on its own
# veth with its own address, started together by
# contrib/tenkload-fanout.sh through a remote shell that enters a
# namespace instead of a host, all measuring from the same --start-at.
# The merged report's messages are the sum of the two, its windows
# overlap (merge says nothing of a gap, and the two start within 0.2 s
# of the start time), its rate is the sum of theirs and its messages
# over its window; each generator's connections came from its own
# address (tenkd's access log), and the merged charts' data add the
# seconds of both.  Skipped, saying why, where network namespaces cannot
# be made; the namespaces, and the links in them, are deleted at the end
# whatever happens.
# backends: none
# timeout: 120
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "network namespaces need root"
command -v ip >/dev/null 2>&1 || skip "no ip(8) (iproute2)"

SRV=tk$$s
GA=tk$$a
GB=tk$$b
ns_clean() {
	for _ns in $SRV $GA $GB; do
		ip netns del "$_ns" 2>/dev/null
	done
}
trap 'cleanup; ns_clean' EXIT
ip netns add "$SRV" 2>"$T/ns.err" ||
    skip "cannot make a network namespace: $(head -n 1 "$T/ns.err")"
{ ip netns add "$GA" && ip netns add "$GB"; } || fail "ip netns add"

# net GEN N: a veth pair between GEN (198.18.N.2) and the server
# (198.18.N.1), made in the namespaces, never in the host's; GEN reaches
# 198.18.0.1 through it.
net() {
	{ ip -n "$SRV" link add "s$2" type veth peer name "g$2" netns "$1" &&
	    ip -n "$SRV" addr add "198.18.$2.1/24" dev "s$2" &&
	    ip -n "$1" addr add "198.18.$2.2/24" dev "g$2" &&
	    ip -n "$SRV" link set "s$2" up && ip -n "$1" link set "g$2" up &&
	    ip -n "$1" link set lo up &&
	    ip -n "$1" route add 198.18.0.1/32 via "198.18.$2.1"; } ||
	    fail "cannot link $1 to the server"
}
{ ip -n "$SRV" link set lo up &&
    ip -n "$SRV" addr add 198.18.0.1/32 dev lo; } || fail "server address"
net "$GA" 1
net "$GB" 2

ip netns exec "$SRV" "$TENKD" echo --threads 1 --listen 198.18.0.1:0 \
    --access-log "$T/access.log" 2>"$T/tenkd.log" &
TENKD_PID=$!
TENKD_LOG=$T/tenkd.log
await_listen tenkd "$TENKD_PID" "$T/tenkd.log"
ADDR=$LISTEN_ADDR

# The remote shell: "nsrun HOST COMMAND" runs COMMAND in namespace HOST.
cat >"$T/nsrun" <<'NSRUN'
#!/bin/sh
h=$1
shift
exec ip netns exec "$h" sh -c "$*"
NSRUN
chmod +x "$T/nsrun"

export TENKLOAD
timeout 60 sh "$TK_SRC/contrib/tenkload-fanout.sh" -p \
    -e "$T/nsrun" -l 2 -o "$T/out" -r "$T/remote" -T "$TENKLOAD" \
    "$GA=198.18.1.2" "$GB=198.18.2.2" -- -c 20 -t 1 -d 2s "$ADDR" \
    >"$T/fanout.out" 2>"$T/fanout.err" ||
    fail "fan-out: exit $?: $(cat "$T/fanout.err" "$T/fanout.out" \
    "$T/out"/host-*.out)"
A=$T/out/host-1.json
B=$T/out/host-2.json
M=$T/out/merged.json
for f in "$A" "$B" "$M"; do
	[ "$(json_get "$f" errors.total)" -eq 0 ] || fail "$f: errors"
done
! grep -q 'do not overlap' "$T/fanout.err" "$T/fanout.out" ||
    fail "the windows do not overlap: $(cat "$T/fanout.err")"

ma=$(json_get "$A" traffic.msgs)
mb=$(json_get "$B" traffic.msgs)
mm=$(json_get "$M" traffic.msgs)
[ "$mm" -eq $((ma + mb)) ] || fail "merged $mm msgs, not $ma + $mb"
[ "$(json_get "$M" header.merged)" -eq 2 ] || fail "not 2 reports merged"
echo "messages: $ma + $mb = $mm"

# Both windows from the same instant, the one --start-at gave.
sa=$(json_get "$A" time.measure_start_us)
sb=$(json_get "$B" time.measure_start_us)
at=$(json_get "$A" header.start_at_us)
[ "$at" = "$(json_get "$B" header.start_at_us)" ] || fail "two start times"
awk_true "($sa - $at)^2 < 200000^2 && ($sb - $at)^2 < 200000^2" ||
    fail "windows from $sa and $sb, not $at"

# The rate: the sum of both, and the messages over the merged window.
ra=$(json_get "$A" traffic.msgs_per_s)
rb=$(json_get "$B" traffic.msgs_per_s)
rm=$(json_get "$M" traffic.msgs_per_s)
w=$(json_get "$M" time.measured_us)
awk_true "($rm - $ra - $rb)^2 <= (0.01 * $rm)^2" ||
    fail "merged rate $rm, not $ra + $rb"
awk_true "($rm - $mm * 1e6 / $w)^2 <= (0.1 * $rm)^2" ||
    fail "merged rate $rm, but $mm msgs in $w us"
echo "rates: $ra + $rb = $rm msgs/s over $w us"

# Each generator from its own address: tenkd's access log, whole once it
# has drained and exited.
kill "$TENKD_PID"
wait "$TENKD_PID"
{ grep -q 198.18.1.2 "$T/access.log" &&
    grep -q 198.18.2.2 "$T/access.log"; } ||
    fail "not both sources in tenkd's access log: $(head -n 3 "$T/access.log")"
# The charts' seconds add up across hosts.
sum() {
	awk '!/^#/ { s += $8 } END { print s + 0 }' "$1"
}
[ -s "$T/out/plot/latency.dat" ] || fail "no merged latency.dat"
pa=$(sum "$T/remote.1.plot/latency.dat")
pb=$(sum "$T/remote.2.plot/latency.dat")
[ "$(sum "$T/out/plot/latency.dat")" -eq $((pa + pb)) ] ||
    fail "merged latency.dat: not $pa + $pb msgs"
pass
