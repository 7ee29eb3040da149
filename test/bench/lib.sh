# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=sh
# Helpers shared by the benchmark scripts in test/bench/ (POSIX sh):
# CPU ticks from /proc, fields of a tenkload JSON report, the load
# average and medians.  Sourced, not run.

# ticks PID...: TICKS = utime + stime summed over the processes (all
# threads); processes that are gone count 0.
ticks() {
	TICKS=0
	for _q in "$@"; do
		{ read -r _l <"/proc/$_q/stat"; } 2>/dev/null || continue
		_l=${_l##*) }
		set -f
		# shellcheck disable=SC2086
		set -- $_l
		set +f
		TICKS=$((TICKS + ${12} + ${13}))
	done
}

# jget FILE SECTION.KEY (tenkload writes one member per line)
jget() {
	awk -v want="$2" '
	/^  "[^"]*": \{/ { sec = $0; sub(/^  "/, "", sec); sub(/".*/, "", sec)
		next }
	/^  \}/ { sec = ""; next }
	/^    "[^"]*": / { k = $0; sub(/^    "/, "", k); v = k
		sub(/".*/, "", k); sub(/^[^"]*": /, "", v); sub(/,$/, "", v)
		gsub(/"/, "", v)
		if (sec "." k == want) { print v; f = 1; exit } }
	END { if (!f) print "nan" }' "$1"
}

load1() {
	read -r l _ </proc/loadavg
	echo "$l"
}

median_table() {
	# stdin: key value; prints key median min max (keys in first-seen
	# order)
	awk '{ k = $1; if (!(k in n)) ord[++nk] = k; v[k, ++n[k]] = $2 }
	END { for (i = 1; i <= nk; i++) { k = ord[i]; m = n[k]
		for (a = 1; a <= m; a++) x[a] = v[k, a]
		for (a = 2; a <= m; a++) { t = x[a]
			for (b = a - 1; b >= 1 && x[b] > t; b--) x[b + 1] = x[b]
			x[b + 1] = t }
		med = m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2
		print k, med, x[1], x[m] } }'
}

