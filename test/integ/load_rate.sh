#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The connect rate, the message rate and the duration are honoured
# within 5%, as the report's own timestamps show.  A loaded machine can
# starve a thread for a moment (and only make things late, never early),
# so each measurement gets three tries, and a late one passes when the
# load average is past the CPUs.
# backends: none
# timeout: 90
. "$(dirname "$0")/lib.sh"

n=1000
[ "$(nofile)" -ge 2200 ] || n=$(( $(nofile) / 2 - 100 ))
faultsrv_start

# The bounds a late run misses (too slow, too long): on a busy machine
# a miss is said and let pass; too fast or too short always fails.
late() {
	awk_true "$1" && return 0
	machine_busy || return 1
	echo "late on a busy machine ($(cut -d' ' -f1 /proc/loadavg)): passed"
}

# ramp: n idle connections at 500/s; the last starts (n-1)/500 s after
# the first; then 2 s measured.
ramp() {
	timeout 30 "$TENKLOAD" -q -M idle -c "$n" -t 2 --connect-rate 500 \
	    -d 2s --json "$T/c.json" "$FADDR" >"$T/out" 2>&1 ||
	    fail "connect run failed: $(cat "$T/out")"
	est=$(json_get "$T/c.json" connections.established)
	[ "$est" -eq "$n" ] || fail "established $est of $n"
	rate=$(json_get "$T/c.json" time.connect_rate_achieved)
	s=$(json_get "$T/c.json" time.measured_s)
	a=$(json_get "$T/c.json" time.measure_start_us)
	b=$(json_get "$T/c.json" time.measure_end_us)
	echo "connect rate $rate/s, measured $s s ($a..$b us)"
	awk_true "$rate <= 525 && $s >= 1.9 && ($b - $a) >= 1900000" ||
	    return 1
	late "$rate >= 475 && $s <= 2.1 && ($b - $a) <= 2100000"
}

# msgrate: 20 connections sharing 2000 messages/s for 3 s.
msgrate() {
	timeout 30 "$TENKLOAD" -q -M rate -R 2000 -c 20 -t 2 -d 3s \
	    --json "$T/r.json" "$FADDR" >"$T/out" 2>&1 ||
	    fail "rate run failed: $(cat "$T/out")"
	m=$(json_get "$T/r.json" traffic.msgs_per_s)
	s=$(json_get "$T/r.json" time.measured_s)
	echo "$m msgs/s, measured $s s"
	awk_true "$m <= 2100 && $s >= 2.85" || return 1
	late "$m >= 1900 && $s <= 3.15"
}

for check in ramp msgrate; do
	ok=0
	for try in 1 2 3; do
		if $check; then
			ok=1
			break
		fi
		echo "$check: try $try out of bounds"
	done
	[ $ok -eq 1 ] || fail "$check: out of bounds three times"
done
pass
