#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkload verifies every echoed byte: against faultsrv it reports a
# dropped byte and a flipped byte as mismatches and an early close as
# "closed", with exit status 1; a correct server gives 0 errors, exit 0;
# a port nobody listens on gives refused connects.
# timeout: 60
. "$(dirname "$0")/lib.sh"

# expect FAULT KIND: run 4 connections against faultsrv FAULT and check
# that the report counts KIND errors and tenkload exits 1.
expect() {
	# shellcheck disable=SC2086
	faultsrv_start $1
	# shellcheck disable=SC2046
	timeout 20 "$TENKLOAD" -q $(be_opt) -c 4 -t 2 -d 2s \
	    --json "$T/r.json" "$FADDR" >"$T/out" 2>"$T/err"
	st=$?
	faultsrv_stop
	[ "$st" -eq 1 ] || fail "$1: exit $st, want 1: $(cat "$T/err")"
	n=$(json_get "$T/r.json" "errors.$2") || fail "$1: no errors.$2"
	[ "$n" -ge 1 ] || fail "$1: errors.$2 is $n"
	total=$(json_get "$T/r.json" errors.total)
	[ "$total" -eq "$n" ] || fail "$1: $total errors, only $n of kind $2"
	grep -q "errors: $n (.*$2 $n" "$T/out" ||
	    fail "$1: text report lacks $2: $(grep errors: "$T/out")"
	grep -q '^result: FAIL' "$T/out" || fail "$1: no FAIL result line"
}

expect --drop-byte mismatch
expect --flip-byte mismatch
expect --close-early closed

# Sizes that spread a message over several reads, and a fault far in.
expect "--flip-byte=200000" mismatch

# No fault: every byte back, exit 0.
faultsrv_start
# shellcheck disable=SC2046
timeout 20 "$TENKLOAD" -q $(be_opt) -c 8 -t 2 -d 1s -s 1:70000 \
    --json "$T/ok.json" "$FADDR" >"$T/out" 2>"$T/err" ||
    fail "clean run failed: $(cat "$T/out" "$T/err")"
[ "$(json_get "$T/ok.json" errors.total)" -eq 0 ] || fail "errors on clean run"
[ "$(json_get "$T/ok.json" connections.established)" -eq 8 ] ||
    fail "not all 8 established"
v=$(json_get "$T/ok.json" traffic.verified_bytes)
[ "$v" -gt 0 ] || fail "nothing verified"
faultsrv_stop

# Nobody listens any more: every connect is refused, a shortfall.
# shellcheck disable=SC2046
timeout 20 "$TENKLOAD" -q $(be_opt) -c 5 -t 1 -d 1s --json "$T/no.json" \
    "$FADDR" >"$T/out" 2>"$T/err"
[ $? -eq 1 ] || fail "refused: exit status not 1"
[ "$(json_get "$T/no.json" errors.refused)" -eq 5 ] || fail "refused: not 5"
[ "$(json_get "$T/no.json" connections.failed)" -eq 5 ] || fail "failed: not 5"
grep -q 'SHORTFALL: 5 of 5' "$T/out" || fail "refused: no SHORTFALL line"
pass
