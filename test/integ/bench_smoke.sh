#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkbench, a short sweep: two backends, two idle counts, 1 s cells, one
# repeat.  Checks the shape of the CSV and JSON, that every cell finished
# with zero errors, that bad options exit 2 with one line naming them,
# that --help and the manual agree, and that neither SIGINT nor a fatal
# error leaves a child behind.  With gnuplot, the charts of --plot: the
# three PNGs, a series per backend (p50 and p99 in the latency chart),
# no error bars and a title that says so for one run, bars and the
# inset of the small idle counts for a second sweep of two runs a cell.
# The numbers themselves are not checked.
# backends: none
# timeout: 120
. "$(dirname "$0")/lib.sh"

BENCH=$TK_BIN/tenkbench
out=$T/bench
out2=$T/bench2
out3=$T/bench3

# The helpers below are called through wait_for.
# shellcheck disable=SC2317
_measuring() {
	grep -q 'measuring' "$T/progress2"
}

# Does any process hold a file under $held as stdin, stdout or stderr?
# shellcheck disable=SC2317
_holders() {
	for fd in /proc/[0-9]*/fd/[012]; do
		case $(readlink "$fd" 2>/dev/null) in
		"$held"/*) return 0 ;;
		esac
	done
	return 1
}

# shellcheck disable=SC2317
_no_holders() {
	! _holders
}

[ -x "$BENCH" ] || fail "no $BENCH"

# Bad options: exit 2 and exactly one line on stderr.
for args in "--bogus" "--idle 1,x" "--backends epoll,nosuch" \
    "--repeat 0" "--duration 1parsec" "--active" "extra"; do
	# shellcheck disable=SC2086
	"$BENCH" $args >"$T/out" 2>"$T/err"
	st=$?
	[ "$st" -eq 2 ] || fail "tenkbench $args: exit $st, not 2"
	[ "$(wc -l <"$T/err")" -eq 1 ] ||
	    fail "tenkbench $args: not one line: $(cat "$T/err")"
	[ -s "$T/out" ] && fail "tenkbench $args: output on stdout"
	grep -q -- "${args%% *}" "$T/err" ||
	    fail "tenkbench $args: does not name ${args%% *}: $(cat "$T/err")"
done
"$BENCH" --help >"$T/help" || fail "--help: exit $?"
grep -q '^usage: tenkbench' "$T/help" || fail "--help: $(cat "$T/help")"

# Every long option of --help is in the man page (when one renders it).
help_in_man "$T/help" tenkbench.1 || :

"$BENCH" --backends epoll,poll --idle 0,200 --active 20 --duration 1s \
    --warmup 200ms --repeat 1 --plot --out "$out" >"$T/table" \
    2>"$T/progress" || fail "tenkbench exit $?: $(tail -n 5 "$T/progress")"

# The table: a header and one row per cell.
grep -q '^backend  *idle  *msgs/s' "$T/table" || fail "no table header"
for be in epoll poll; do
	for n in 0 200; do
		grep -q "^$be  *$n  *[0-9]" "$T/table" ||
		    fail "no table row for $be idle $n: $(cat "$T/table")"
	done
done
grep -q 'tenkbench: \[[0-9]*/4\]' "$T/progress" || fail "no progress lines"

# CSV: the header, four rows, each "ok" with one run and zero errors.
csv=$out/results.csv
[ -f "$csv" ] || fail "no $csv"
hdr='^backend,idle,active,status,runs,errors,msgs_per_s,'
head -n 1 "$csv" | grep -q "$hdr" ||
    fail "CSV header: $(head -n 1 "$csv")"
[ "$(wc -l <"$csv")" -eq 5 ] || fail "CSV rows: $(cat "$csv")"
awk -F, 'NR > 1 && ($4 != "ok" || $5 != 1 || $6 != 0 || $7 + 0 <= 0) {
	bad = 1; print
} END { exit bad }' "$csv" >"$T/bad" ||
    fail "CSV cells not clean: $(cat "$T/bad")"
cols=$(head -n 1 "$csv" | awk -F, '{ print NF }')
awk -F, -v n="$cols" 'NR > 1 && NF < n { bad = 1 } END { exit bad }' "$csv" ||
    fail "CSV rows have fewer than $cols fields"
[ "$(wc -l <"$out/runs.csv")" -eq 5 ] || fail "runs.csv: $(cat "$out/runs.csv")"

# JSON: four cells, each ok with zero errors and its figures.
json=$out/results.json
[ -f "$json" ] || fail "no $json"
grep -q '"tenkbench": ' "$json" || fail "JSON: no version"
grep -q '"format": 1,' "$json" || fail "JSON: no format"
[ "$(grep -c '"backend": ' "$json")" -eq 4 ] || fail "JSON: not 4 cells"
[ "$(grep -c '"status": "ok"' "$json")" -eq 4 ] || fail "JSON: not all ok"
[ "$(grep -c '"errors": 0,$' "$json")" -eq 4 ] || fail "JSON: errors"
for k in msgs_per_s p50_us p99_us cpu_us_per_msg; do
	[ "$(grep -c "\"$k\": { \"median\": " "$json")" -eq 4 ] ||
	    fail "JSON: $k missing"
done
if command -v python3 >/dev/null 2>&1; then
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' \
	    "$json" || fail "JSON does not parse"
fi

# charts DIR IDLE...: the three PNGs of DIR, drawn without a word from
# gnuplot, from a data file per backend with a row per idle count, and a
# series per backend in each.
charts() {
	_d=$1
	shift
	[ ! -s "$_d/logs/gnuplot.log" ] ||
	    fail "gnuplot said: $(cat "$_d/logs/gnuplot.log")"
	for _png in msgs cpu latency; do
		head -c 8 "$_d/$_png.png" | od -An -c | grep -q 'P   N   G' ||
		    fail "no $_png.png in $_d"
	done
	for _be in epoll poll; do
		[ "$(grep -vc '^#' "$_d/plot-$_be.dat")" -eq $# ] ||
		    fail "plot-$_be.dat: $(cat "$_d/plot-$_be.dat")"
		for _t in "$_be" "$_be p50" "$_be p99"; do
			grep -q "title \"$_t\"" "$_d/plot.gp" ||
			    fail "no series \"$_t\" in $_d/plot.gp"
		done
	done
	for _i in "$@"; do
		grep -q "^$_i " "$_d/plot-epoll.dat" || fail "no idle $_i"
	done
	[ "$(grep -c '^set output' "$_d/plot.gp")" -eq 3 ] ||
	    fail "not three charts in $_d/plot.gp"
}

if command -v gnuplot >/dev/null 2>&1; then
	# One run a cell: no bars, said in the title; no inset for 0 and 200.
	charts "$out" 0 200
	grep -q 'one run per point' "$out/plot.gp" || fail "title: one run"
	grep -q -e yerrorlines -e 'bars:' "$out/plot.gp" &&
	    fail "error bars for one run"
	grep -q enlarged "$out/plot.gp" && fail "an inset of two points"
	# Two runs, and three counts up to a fifth of the largest: bars,
	# the inset, and msgs/s ticks in k.
	out4=$T/bench4
	"$BENCH" --backends epoll,poll --idle 0,20,40,200 --active 10 \
	    --duration 1s --warmup 100ms --repeat 2 --plot --quiet \
	    --out "$out4" >/dev/null 2>"$T/progress4" ||
	    fail "tenkbench --repeat 2 exit $?: $(tail -n 5 "$T/progress4")"
	charts "$out4" 0 20 40 200
	grep -q 'points: median of 2 runs; bars: ' "$out4/plot.gp" ||
	    fail "title: two runs"
	[ "$(grep -c 'yerrorlines' "$out4/plot.gp")" -ge 12 ] ||
	    fail "no error bars for two runs"
	[ "$(grep -c '0 to 40 idle, enlarged' "$out4/plot.gp")" -eq 3 ] ||
	    fail "no inset of 0 to 40 idle"
	grep -q '^set ytics (.*"[0-9.]*k"' "$out4/plot.gp" ||
	    fail "no k ticks for msgs/s"
else
	echo "no gnuplot: the charts are not checked (make test installs it as root)"
fi

# A fatal error in the middle (tenkload refuses its command line): exit
# 1 with the reason, and tenkd, already running, stopped on the way out.
printf '#!/bin/sh\necho "tenkload: --bogus: unknown option" >&2\nexit 2\n' \
    >"$T/refuse"
chmod +x "$T/refuse"
"$BENCH" --backends epoll --idle 0 --active 2 --duration 1s --repeat 1 \
    --tenkload "$T/refuse" --out "$out3" >/dev/null 2>"$T/progress3"
st=$?
[ "$st" -eq 1 ] || fail "refused tenkload: exit $st, not 1"
grep -q 'refused its command line: tenkload: --bogus' "$T/progress3" ||
    fail "refused tenkload: $(cat "$T/progress3")"
grep -q 'exiting' "$out3/logs/epoll-0.tenkd.log" ||
    fail "tenkd not stopped: $(cat "$out3/logs/epoll-0.tenkd.log")"
held=$out3
wait_for 5 _no_holders || fail "a child of tenkbench survived its error"

# SIGINT in the middle: a quick exit, and no child left holding a log.
"$BENCH" --backends epoll --idle 100 --active 10 --duration 30s \
    --repeat 1 --out "$out2" >/dev/null 2>"$T/progress2" &
bpid=$!
track "$bpid"
wait_for 20 _measuring || fail "no measuring: $(cat "$T/progress2")"
kill -INT "$bpid"
wait_exit 20 "$bpid"
[ "$STATUS" -ne 0 ] || fail "exit 0 after SIGINT"
held=$out2
wait_for 5 _no_holders || fail "a child of tenkbench survived SIGINT"
pass
