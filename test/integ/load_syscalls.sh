#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkload's own cost per message is at the floor of the readiness model:
# one send and one recv per echoed message (a short recv counts as
# drained), with the loop's waits amortised, counted with strace -c.
# timeout: 60
. "$(dirname "$0")/lib.sh"

command -v strace >/dev/null 2>&1 || skip "no strace"
faultsrv_start
# LeakSanitizer cannot run under ptrace.
# shellcheck disable=SC2046
ASAN_OPTIONS=detect_leaks=0 timeout 30 strace -f -c -o "$T/st" \
    "$TENKLOAD" -q $(be_opt) -c 20 -t 1 -d 2s --json "$T/r.json" "$FADDR" \
    >"$T/out" 2>&1 ||
    fail "tenkload under strace: $(cat "$T/out")"
[ "$(json_get "$T/r.json" errors.total)" -eq 0 ] || fail "errors"
# Every message of the run, ramp included: bytes checked / 64.
msgs=$(( $(json_get "$T/r.json" traffic.verified_bytes) / 64 ))
[ "$msgs" -ge 1000 ] || fail "only $msgs messages"
calls() {
	awk -v s="$1" '$NF == s { print $4; f = 1 } END { if (!f) print 0 }' \
	    "$T/st"
}
snd=$(calls sendto)
rcv=$(calls recvfrom)
echo "$msgs messages: $snd sendto, $rcv recvfrom"
awk_true "$snd <= $msgs * 1.02 + 50" || fail "$snd sends for $msgs messages"
awk_true "$rcv <= $msgs * 1.05 + 50" || fail "$rcv recvs for $msgs messages"
pass
