#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# fuzz.sh DIR SECONDS NAME...: run each libFuzzer target DIR/fuzz/NAME for
# SECONDS on test/fuzz/corpus/NAME/ (read only: new inputs go to
# DIR/corpus/NAME/, crashes to DIR/crash/NAME-*), one line per target
# with its executions, then the total.  Exit 1 at the first target that
# crashes, leaving its log in DIR/NAME.log.
set -eu

[ $# -ge 3 ] || { echo "usage: fuzz.sh dir seconds name ..." >&2; exit 2; }
dir=$1
secs=$2
shift 2
total=0
for name in "$@"; do
	mkdir -p "$dir/corpus/$name" "$dir/crash"
	log=$dir/$name.log
	if ! "$dir/fuzz/$name" -max_total_time="$secs" -timeout=10 \
	    -print_final_stats=1 -artifact_prefix="$dir/crash/$name-" \
	    "$dir/corpus/$name" "test/fuzz/corpus/$name" >"$log" 2>&1; then
		echo "fuzz $name: FAILED, see $log:"
		grep -E '^(==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit)' \
		    "$log" | head -n 5
		grep -E '^test/fuzz/.*:[0-9]+: ' "$log" | head -n 1
		exit 1
	fi
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	n=${n:-0}
	total=$((total + n))
	echo "fuzz $name: $n executions in ${secs}s, no crash"
done
echo "fuzz: $total executions in all, no crash"
