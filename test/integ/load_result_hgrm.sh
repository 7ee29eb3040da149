#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --hgrm writes the latency spectrum in HdrHistogram's percentile
# distribution format: the header, rows with rising values and
# percentiles ending at 1.0 and the total count, and the three footer
# lines; from a run (the corrected histogram in rate mode) and from
# tenkload merge.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

# check FILE JSON: FILE is a well-formed .hgrm of JSON's latency.
check() {
	head -n 1 "$1" | grep -q '^ *Value  *Percentile  *TotalCount 1/(1-Percentile)$' ||
	    fail "$1: header: $(head -n 1 "$1")"
	[ -z "$(sed -n 2p "$1")" ] || fail "$1: no blank line after the header"
	count=$(json_get "$2" latency.count)
	max=$(json_get "$2" latency.max)
	mean=$(json_get "$2" latency.mean)
	awk -v count="$count" -v max="$max" -v mean="$mean" '
	NR <= 2 { next }
	/^#\[Mean    = / { gsub(/[],]/, ""); m = $3; sd = $6; foot++; next }
	/^#\[Max     = / { gsub(/[],]/, ""); mx = $3; tc = $7; foot++; next }
	/^#\[Buckets = / { foot++; next }
	{
		if (NF != 4) { print "row " NR ": " $0; exit 1 }
		if ($1 < v || $2 < p || $3 < c) {
			print "row " NR " goes down: " $0; exit 1
		}
		if ($2 < 1 && ($4 < 1 || $4 < q)) {
			print "row " NR ": 1/(1-p) " $4; exit 1
		}
		q = $4
		v = $1; p = $2; c = $3; rows++
	}
	END {
		if (rows < 10) { print rows " rows"; exit 1 }
		if (p != 1 || c != count) { print "last row " p " " c; exit 1 }
		if (foot != 3 || tc != count) { print "footer"; exit 1 }
		if (mx < max / 1e6 - 0.0005 || mx > max / 1e6 + 0.0005) {
			print "Max " mx " vs " max " ns"; exit 1
		}
		if (m < mean / 1e6 - 0.0005 || m > mean / 1e6 + 0.0005) {
			print "Mean " m " vs " mean " ns"; exit 1
		}
		if (v != mx) { print "last value " v " is not Max " mx; exit 1 }
	}' "$1" >"$T/why" || fail "$1: $(cat "$T/why")"
}

faultsrv_start
timeout 20 "$TENKLOAD" -q -c 4 -t 1 -d 1s --json "$T/p.json" \
    --hgrm "$T/p.hgrm" "$FADDR" >/dev/null 2>&1 || fail "pingpong run"
check "$T/p.hgrm" "$T/p.json"
timeout 20 "$TENKLOAD" -q -c 4 -t 1 -R 2000 -d 1s --json "$T/r.json" \
    --hgrm "$T/r.hgrm" "$FADDR" >/dev/null 2>&1 || fail "rate run"
check "$T/r.hgrm" "$T/r.json"
"$TENKLOAD" merge --hgrm "$T/m.hgrm" --json "$T/m.json" "$T/p.json" \
    "$T/p.json" >/dev/null 2>&1 || fail "merge"
check "$T/m.hgrm" "$T/m.json"
# --hgrm - puts the spectrum on stdout and the report on stderr.
"$TENKLOAD" merge --hgrm - "$T/p.json" >"$T/o.hgrm" 2>"$T/o.err" ||
    fail "merge --hgrm -"
check "$T/o.hgrm" "$T/p.json"
grep -q '^result: ok' "$T/o.err" || fail "report not on stderr"
pass
