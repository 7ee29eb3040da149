#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A run in which the server never answers is a failure, not "result: ok":
# exit 1 and the reason, in the text report and whatever else it says.
# --max-unserved lets some connections go without a reply (a server that
# starves every second one), but never a run without any reply at all.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

# Accepts every connection and never reads from it: silent.
faultsrv_start --starve 1
timeout 20 "$TENKLOAD" -q -c 3 -t 1 -d 1s --json "$T/s.json" "$FADDR" \
    >"$T/s.out" 2>"$T/s.err"
rc=$?
[ "$rc" -eq 1 ] || fail "silent server: exit $rc, wanted 1"
grep -q '^result: FAIL: no reply in the measured window' "$T/s.out" ||
    fail "silent server: no reason: $(tail -n 1 "$T/s.out")"
grep -q '3 active connections got no reply' "$T/s.out" ||
    fail "silent server: unserved not in the result"
[ "$(json_get "$T/s.json" connections.unserved)" = 3 ] ||
    fail "silent server: unserved not 3 in the JSON"

# Allowing every connection to go unserved still does not make a run
# without a reply pass.
timeout 20 "$TENKLOAD" -q -c 3 -t 1 -d 1s --max-unserved 3 "$FADDR" \
    >"$T/s3.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "silent server, --max-unserved 3: exit $rc"
grep -q '^result: FAIL: no reply in the measured window$' "$T/s3.out" ||
    fail "silent server, --max-unserved 3: $(tail -n 1 "$T/s3.out")"
faultsrv_stop

# Every second connection starved: 2 of 4 unserved.
faultsrv_start --starve 2
timeout 20 "$TENKLOAD" -q -c 4 -t 1 -d 1s "$FADDR" >"$T/h.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "half served: exit $rc, wanted 1"
grep -q '^result: FAIL: 2 active connections got no reply in the measured window, more than --max-unserved 0$' \
    "$T/h.out" || fail "half served: $(tail -n 1 "$T/h.out")"
timeout 20 "$TENKLOAD" -q -c 4 -t 1 -d 1s --max-unserved 2 "$FADDR" \
    >"$T/h2.out" 2>&1 || fail "--max-unserved 2: exit $?: $(cat "$T/h2.out")"
grep -q '^result: ok: 0 errors, --max-errors 0; 2 unserved, --max-unserved 2$' \
    "$T/h2.out" || fail "--max-unserved 2: $(tail -n 1 "$T/h2.out")"
faultsrv_stop
pass
