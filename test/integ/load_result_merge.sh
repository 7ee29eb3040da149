#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkload merge refuses reports that asked different questions (another
# framing, another request), naming both values; reports whose measured
# windows do not overlap are rated over the union of the windows, and
# merge says so, while overlapping ones keep their rates summed.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

faultsrv_start
timeout 20 "$TENKLOAD" -q -c 2 -t 1 -d 1s --json "$T/a.json" "$FADDR" \
    >/dev/null 2>&1 || fail "run a"
timeout 20 "$TENKLOAD" -q -c 2 -t 1 -d 1s --json "$T/b.json" "$FADDR" \
    >/dev/null 2>&1 || fail "run b"
faultsrv_stop

# Another framing: the same report with another "reply".
sed 's/^    "reply": "echo",$/    "reply": "line",/' "$T/b.json" >"$T/line.json"
grep -q '"reply": "line"' "$T/line.json" || fail "no reply field to change"
usage_error 'reply "line" differs from "echo"' "$TENKLOAD" merge \
    "$T/a.json" "$T/line.json"
sed 's/^    "message": ""$/    "message": "PING\\\\r\\\\n"/' "$T/b.json" \
    >"$T/msg.json"
grep -q '"message": "PING' "$T/msg.json" || fail "no message field to change"
usage_error 'message "PING\\r\\n" differs from ""' "$TENKLOAD" merge \
    "$T/a.json" "$T/msg.json"

# a and b ran one after the other: the rate is over both windows.
"$TENKLOAD" merge --json "$T/ab.json" "$T/a.json" "$T/b.json" \
    >"$T/ab.out" 2>"$T/ab.err" || fail "merge a b: $(cat "$T/ab.err")"
[ "$(wc -l <"$T/ab.err")" -eq 1 ] ||
    fail "not one line on stderr: $(cat "$T/ab.err")"
grep -q 'measured windows do not overlap (1 gap)' "$T/ab.err" ||
    fail "disjoint windows not said: $(cat "$T/ab.err")"
ma=$(json_get "$T/a.json" time.measured_us)
mb=$(json_get "$T/b.json" time.measured_us)
mab=$(json_get "$T/ab.json" time.measured_us)
[ "$mab" -eq $((ma + mb)) ] || fail "measured $mab, wanted $ma + $mb"
n=$(json_get "$T/ab.json" traffic.msgs)
r=$(json_get "$T/ab.json" traffic.msgs_per_s)
awk_true "$r > 0.999 * $n * 1e6 / $mab && $r < 1.001 * $n * 1e6 / $mab" ||
    fail "msgs_per_s $r, wanted $n over $mab us"
grep -q "^traffic: $(awk "BEGIN { printf \"%.3f\", $mab / 1e6 }") s measured" \
    "$T/ab.out" || fail "text: $(grep '^traffic' "$T/ab.out")"

# The same window twice overlaps: rates add, nothing said.
"$TENKLOAD" merge --json "$T/aa.json" "$T/a.json" "$T/a.json" \
    >/dev/null 2>"$T/aa.err" || fail "merge a a: $(cat "$T/aa.err")"
[ ! -s "$T/aa.err" ] || fail "overlap said: $(cat "$T/aa.err")"
ra=$(json_get "$T/a.json" traffic.msgs_per_s)
raa=$(json_get "$T/aa.json" traffic.msgs_per_s)
awk_true "$raa > 1.999 * $ra && $raa < 2.001 * $ra" ||
    fail "overlapping: msgs_per_s $raa, wanted 2 x $ra"
pass
