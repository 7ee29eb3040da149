#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A constant injected delay of 10 ms is measured as 10 ms: p50 never
# below it, and within 5% of 10 ms plus the loopback round trip measured
# here first, plus how late the server released its echoes, which it
# says at exit: on a loaded machine its 10 ms timer fires late (seen:
# +1% to +4% with two test jobs and other builds on 2 cores, +20% beside
# stress-ng at load 20), and that lateness is real delay, which tenkload
# must report.  The round
# trip is taken at a low message rate, so that, as with the delayed
# echoes, each reply has to wake an idle client (the uncorrected figure
# leaves out the rate schedule's own timer lateness).
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

# measure: one baseline and one delayed run; succeeds when p50 is right.
measure() {
	faultsrv_start
	timeout 20 "$TENKLOAD" -q -c 4 -t 1 -M rate -R 400 -d 2s \
	    --json "$T/rtt.json" "$FADDR" >"$T/out" 2>&1 ||
	    fail "baseline run failed: $(cat "$T/out")"
	faultsrv_stop
	rtt=$(json_get "$T/rtt.json" latency_uncorrected.p50)

	faultsrv_start --delay 10ms
	timeout 20 "$TENKLOAD" -q -c 4 -t 1 -d 3s --json "$T/d.json" \
	    "$FADDR" >"$T/out" 2>&1 ||
	    fail "delay run failed: $(cat "$T/out")"
	faultsrv_stop
	late=$(sed -n 's/^delay: .* late p50 \([0-9]*\) ns$/\1/p' "$FAULT_LOG")
	[ -n "$late" ] || fail "faultsrv did not say how late: $(cat "$FAULT_LOG")"
	p50=$(json_get "$T/d.json" latency.p50)
	n=$(json_get "$T/d.json" latency.count)
	echo "rtt p50 $rtt ns, delayed p50 $p50 ns over $n messages," \
	    "the server's timer late by $late ns (p50)"
	[ "$n" -ge 500 ] || fail "only $n messages"
	# Never below the delay: that would be a measurement error.
	awk_true "$p50 >= 10000000" || fail "p50 $p50 ns is below 10 ms"
	awk_true "$p50 <= 10500000 + $rtt + $late"
}

# A busy machine (other tests in parallel) delays wake-ups and can push
# the median up, never down: three tries.
for try in 1 2 3; do
	if measure; then
		pass
	fi
	echo "try $try: p50 more than 5% above 10 ms + rtt"
	sleep 1
done
fail "p50 $p50 ns is more than 5% above 10 ms + rtt $rtt ns, three times"
