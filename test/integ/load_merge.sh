#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# "tenkload merge" adds histograms bucket by bucket: the merged report's
# buckets are the sum of its inputs' (one histogram that recorded
# everything), its percentiles are read from those buckets, its min and
# max are exact, and a single report merges into itself unchanged.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

# run NAME ARGS...: tenkload ARGS into $T/NAME.json until both of its
# histograms hold samples: on a loaded machine a second's run may have
# measured none, and a report without samples has min 0 (issue 22).
# The run is 1 s, then 2, 4 and 8.
run() {
	_n=$1
	shift
	for _d in 1 2 4 8; do
		timeout 40 "$TENKLOAD" -q -d "${_d}s" --json "$T/$_n.json" \
		    "$@" >"$T/out" 2>&1 || fail "run $_n failed: $(cat "$T/out")"
		[ "$(json_get "$T/$_n.json" latency.count)" -gt 0 ] &&
		    [ "$(json_get "$T/$_n.json" connect_latency.count)" -gt 0 ] &&
		    return 0
	done
	fail "run $_n: no samples in 8 s: $(cat "$T/out")"
}

faultsrv_start
run a -c 3 -t 1 "$FADDR"
faultsrv_stop
faultsrv_start --delay 2ms
run b -c 5 -t 2 -s 10:2000 "$FADDR"

"$TENKLOAD" merge --json "$T/m.json" "$T/a.json" "$T/b.json" \
    >"$T/m.txt" || fail "merge failed: $(cat "$T/m.txt")"
grep -q '2 reports merged' "$T/m.txt" || fail "text report lacks the count"

for sec in latency connect_latency; do
	{ json_buckets "$T/a.json" $sec; json_buckets "$T/b.json" $sec; } |
	    awk '{ c[$1] += $2 } END { for (k in c) print k, c[k] }' |
	    sort -n >"$T/sum"
	json_buckets "$T/m.json" $sec | sort -n >"$T/got"
	[ -s "$T/got" ] || fail "$sec: no buckets in the merged report"
	cmp -s "$T/sum" "$T/got" ||
	    fail "$sec: merged buckets differ from the sum"

	ca=$(json_get "$T/a.json" $sec.count)
	cb=$(json_get "$T/b.json" $sec.count)
	cm=$(json_get "$T/m.json" $sec.count)
	[ "$cm" -eq $((ca + cb)) ] || fail "$sec: count $cm != $ca + $cb"
	ma=$(json_get "$T/a.json" $sec.max)
	mb=$(json_get "$T/b.json" $sec.max)
	mm=$(json_get "$T/m.json" $sec.max)
	awk_true "$mm == ($ma > $mb ? $ma : $mb)" || fail "$sec: max $mm"
	na=$(json_get "$T/a.json" $sec.min)
	nb=$(json_get "$T/b.json" $sec.min)
	nm=$(json_get "$T/m.json" $sec.min)
	awk_true "$nm == ($na < $nb ? $na : $nb)" || fail "$sec: min $nm"

	# Each percentile lies in the bucket that holds its rank.
	for p in 50 90 99 99.9; do
		v=$(json_get "$T/m.json" "$sec.p$p")
		lo=$(awk -v p="$p" -v n="$cm" '
		    BEGIN { r = p / 100 * n; k = int(r); if (k < r) k++ }
		    { seen += $2; if (seen >= k) { print $1; exit } }' "$T/sum")
		awk_true "$v >= $lo && ($v <= $lo * 1.001 + 2 || $v == $mm)" ||
		    fail "$sec p$p: $v outside the bucket at $lo"
	done
done

# One report merged alone comes back the same.
"$TENKLOAD" merge -q --json "$T/a2.json" "$T/a.json" >/dev/null ||
    fail "merge of one failed"
for k in count min max p50 p90 p99 p99.9 p99.99; do
	x=$(json_get "$T/a.json" latency.$k)
	y=$(json_get "$T/a2.json" latency.$k)
	[ "$x" = "$y" ] || fail "round trip changed latency.$k: $x -> $y"
done
json_buckets "$T/a.json" latency >"$T/x"
json_buckets "$T/a2.json" latency >"$T/y"
cmp -s "$T/x" "$T/y" || fail "round trip changed the buckets"
# Where min is not its bucket's floor, the bucket's other samples do not
# lower it on the way back (a run's min is rarely the floor: 1 in 15).
awk '
/^  "latency": \{/ { sec = 1 }
/^  \}/ { sec = 0 }
sec && /^    "count": / { print "    \"count\": 4,"; next }
sec && /^    "min": / { print "    \"min\": 10003,"; next }
sec && /^    "max": / { print "    \"max\": 20000,"; next }
sec && /^    "buckets": / {
	print "    \"buckets\": [\n      [10000, 3],\n      [20000, 1]\n    ]"
	skip = 1; next
}
skip && /^    \]/ { skip = 0; next }
skip { next }
{ print }' "$T/a.json" >"$T/f.json"
"$TENKLOAD" merge -q --json "$T/f2.json" "$T/f.json" >/dev/null ||
    fail "merge of a crafted report failed"
[ "$(json_get "$T/f2.json" latency.min)" = 10003 ] ||
    fail "min 10003 came back as $(json_get "$T/f2.json" latency.min)"
[ "$(json_buckets "$T/f2.json" latency | tr '\n' ' ')" = \
    "10000 3 20000 1 " ] || fail "crafted buckets changed"
for k in traffic.msgs connections.established errors.total; do
	x=$(json_get "$T/a.json" $k)
	y=$(json_get "$T/a2.json" $k)
	[ "$x" = "$y" ] || fail "round trip changed $k: $x -> $y"
done
x=$(json_get "$T/a.json" traffic.msgs)
y=$(json_get "$T/b.json" traffic.msgs)
z=$(json_get "$T/m.json" traffic.msgs)
[ "$z" -eq $((x + y)) ] || fail "msgs $z != $x + $y"

# A file that is not a report: exit 2, one line.
echo '{"x": 1}' >"$T/bad.json"
"$TENKLOAD" merge "$T/bad.json" >/dev/null 2>"$T/err"
[ $? -eq 2 ] || fail "bad report: exit status not 2"
[ "$(wc -l <"$T/err")" -eq 1 ] ||
    fail "bad report: not one line: $(cat "$T/err")"
pass
