#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Rate mode counts latency from the intended send time: one 500 ms stall
# of the server shows in the corrected p99 (every message that should
# have left during the stall waited) and not in the uncorrected p99
# (only the few messages in flight saw it).
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

faultsrv_start --stall-once 500ms --stall-after 1s
# 10 connections at 100/s each; 4 s gives 4000 messages, of which the
# stall delays about 500 intended sends and 10 actual ones.
timeout 30 "$TENKLOAD" -q -c 10 -t 1 -M rate -R 1000 -d 4s \
    --json "$T/r.json" "$FADDR" >"$T/out" 2>"$T/err" ||
    fail "tenkload failed: $(cat "$T/out" "$T/err")"
cat "$T/out"
cor=$(json_get "$T/r.json" latency.p99)
unc=$(json_get "$T/r.json" latency_uncorrected.p99)
max=$(json_get "$T/r.json" latency_uncorrected.max)
n=$(json_get "$T/r.json" latency.count)
[ "$n" -ge 3000 ] || fail "only $n messages measured"
# The stall is in the data at all: the largest uncorrected latency.
awk_true "$max >= 400000000" || fail "uncorrected max $max ns: no stall seen"
awk_true "$cor >= 250000000" || fail "corrected p99 $cor ns: stall hidden"
awk_true "$unc < 100000000" || fail "uncorrected p99 $unc ns: stall not hidden"
grep -q '^latency corrected' "$T/out" || fail "no corrected line"
grep -q '^latency uncorrected' "$T/out" || fail "no uncorrected line"
pass
