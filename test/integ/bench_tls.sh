#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkbench over TLS (--tls-cert, --tls-key): a short sweep of two
# backends with and without idle TLS connections, every cell finished
# with zero errors and its server serving TLS; the two options go
# together, and a certificate that cannot be read is refused.
# backends: none
# timeout: 120
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_tls.sh"

need_tls
tls_certs
BENCH=$TK_BIN/tenkbench
out=$T/bench
usage_error "--tls-key" "$BENCH" --tls-cert "$EC_CERT"
usage_error "--tls-cert $T/none" "$BENCH" --tls-cert "$T/none" \
    --tls-key "$EC_KEY"
"$BENCH" --backends epoll,poll --idle 0,100 --active 10 --duration 1s \
    --warmup 200ms --repeat 1 --tls-cert "$EC_CERT" --tls-key "$EC_KEY" \
    --out "$out" >"$T/table" 2>"$T/progress" ||
    fail "tenkbench exit $?: $(tail -n 5 "$T/progress")"
awk -F, 'NR > 1 && ($4 != "ok" || $6 != 0 || $7 + 0 <= 0) { bad = 1; print }
    END { exit bad }' "$out/results.csv" >"$T/bad" ||
    fail "cells not clean: $(cat "$T/bad")"
[ "$(wc -l <"$out/results.csv")" -eq 5 ] ||
    fail "results: $(cat "$out/results.csv")"
for f in "$out"/logs/*.tenkd.log; do
	grep -q 'TLS: 1 certificate' "$f" || fail "$f: no TLS"
done
cat "$T/table"
pass
