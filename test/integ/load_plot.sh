#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkload --plot against tenkd echo in rate mode: the charts are PNG
# files when gnuplot is there, and their data files hold what the report
# says: a row a second with p50 <= p99 <= p99.9, corrected and not,
# their counts adding up to at least the measured messages; a spectrum
# that climbs from the minimum to no more than the maximum through the
# report's p50.  Without gnuplot, one line and the data.  merge --plot
# adds the seconds of two reports, and of reports without seconds draws
# the spectrum alone.  A --plot that is a file is refused.
# backends: none
# timeout: 120
. "$(dirname "$0")/lib.sh"

[ -x "$TENKD" ] || skip "no tenkd built"
tenkd_start echo --threads 1

load_run r -c 4 -R 400 -d 3s --plot "$T/p" "$ADDR"
for f in latency.dat spectrum.dat plot.gp; do
	[ -s "$T/p/$f" ] || fail "no $f"
done
if command -v gnuplot >/dev/null 2>&1; then
	for f in latency spectrum; do
		[ "$(od -An -c -N 4 "$T/p/$f.png" | tr -d ' ')" = '211PNG' ] ||
		    fail "$f.png is not a PNG: $(cat "$T/p/gnuplot.log")"
	done
else
	echo "no gnuplot here: the PNGs are not checked"
fi

# latency.dat: t p50 p99 p99.9 unc_p50 unc_p99 unc_p99.9 msgs
max=$(json_get "$T/r.json" latency.max)
msgs=$(json_get "$T/r.json" traffic.msgs)
awk -v max="$max" -v msgs="$msgs" '
	/^#/ { next }
	NF != 8 { print "row " NR ": " NF " fields"; bad = 1 }
	!($2 <= $3 && $3 <= $4) { print "row " NR ": corrected out of order"; bad = 1 }
	!($5 <= $6 && $6 <= $7) { print "row " NR ": uncorrected out of order"; bad = 1 }
	$4 > max / 1e6 * 1.001 + 0.001 { print "row " NR ": above max"; bad = 1 }
	{ n++; sum += $8 }
	END {
		if (n < 3) { print n " rows for 3 s"; bad = 1 }
		if (sum < msgs) { print sum " msgs in the rows, " msgs " measured"; bad = 1 }
		exit bad
	}' "$T/p/latency.dat" >"$T/check" || fail "latency.dat: $(cat "$T/check")"

# spectrum.dat: percentile 1/(1-p) latency uncorrected, climbing.
min=$(json_get "$T/r.json" latency.min)
p50=$(json_get "$T/r.json" latency.p50)
awk -v min="$min" -v max="$max" -v p50="$p50" '
	/^#/ { next }
	{ n++ }
	n == 1 && ($1 != 0 || ($3 - min / 1e6)^2 > 1e-6) {
		print "first row " $0 ", min " min; bad = 1 }
	n > 1 && ($1 <= last || $3 < lastv) { print "not climbing: " $0; bad = 1 }
	$1 == 50 && ($3 - p50 / 1e6)^2 > 1e-6 { print "p50 " $3 " vs " p50; bad = 1 }
	$3 > max / 1e6 + 0.001 { print "above max: " $0; bad = 1 }
	{ last = $1; lastv = $3 }
	END { if (n < 20) { print n " rows"; bad = 1 }; exit bad }' \
    "$T/p/spectrum.dat" >"$T/check" || fail "spectrum.dat: $(cat "$T/check")"

# Without gnuplot on PATH: one line, the data, no chart, exit 0.
mkdir "$T/bin"
timeout 30 env PATH="$T/bin" "$TENKLOAD" -q -c 2 -t 1 -d 1s --plot "$T/q" \
    --json "$T/q.json" "$ADDR" >"$T/q.out" 2>"$T/q.err" ||
    fail "without gnuplot: exit $?: $(cat "$T/q.err")"
{ [ "$(wc -l <"$T/q.err")" -eq 1 ] && grep -q 'no gnuplot' "$T/q.err"; } ||
    fail "without gnuplot: $(cat "$T/q.err")"
{ [ -s "$T/q/latency.dat" ] && [ ! -e "$T/q/latency.png" ]; } ||
    fail "without gnuplot: $(ls "$T/q")"

# merge --plot: the seconds of both reports, their counts added.
"$TENKLOAD" merge -q --plot "$T/m" "$T/r.json" "$T/q.json" >"$T/m.out" \
    2>"$T/m.err" || true
a=$(awk '!/^#/ { s += $8 } END { print s }' "$T/p/latency.dat")
b=$(awk '!/^#/ { s += $8 } END { print s }' "$T/q/latency.dat")
m=$(awk '!/^#/ { s += $8 } END { print s }' "$T/m/latency.dat")
[ "$m" -eq $((a + b)) ] || fail "merge: $m msgs in its rows, not $a + $b"

# A report written without --plot has no seconds: the spectrum alone.
load_run n -c 2 "$ADDR"
"$TENKLOAD" merge -q --plot "$T/n" "$T/n.json" >"$T/nm.out" 2>"$T/nm.err" ||
    fail "merge --plot without seconds: $(cat "$T/nm.err")"
grep -q 'no second of latencies' "$T/nm.err" ||
    fail "merge --plot without seconds: not said: $(cat "$T/nm.err")"
[ ! -e "$T/n/latency.png" ] || fail "a latency chart without seconds"

: >"$T/file"
load_bad "--plot $T/file: not a directory" --plot "$T/file" "$ADDR"
pass
