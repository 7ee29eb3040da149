#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The access log's content and its buffering (issue 14): with
# --access-log-format json each line is one JSON object carrying the
# byte counts; a record reaches the file with no further traffic (the
# one-second flush) and at exit; proxy lines carry tc= and active=, in
# text and in json.
# timeout: 60
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c 'import json' 2>/dev/null || skip "no python3"

_lines() {
	[ -f "$1" ] && [ "$(grep -c . "$1")" -ge "$2" ]
}

# check FILE PROTO IN OUT N: N lines, each a JSON object of PROTO with
# in=IN, out=OUT, why "eof", an active count, an accept time no later
# than the close, and tc as the protocol has it.
check() {
	"$PY" - "$@" <<'PYEOF'
import json, sys
path, proto, nin, nout, n = sys.argv[1:6]
lines = open(path, encoding="ascii").read().splitlines()
if len(lines) != int(n):
    sys.exit("%d lines, wanted %s" % (len(lines), n))
for l in lines:
    r = json.loads(l)
    assert r["proto"] == proto, l
    assert r["in"] == int(nin) and r["out"] == int(nout), l
    assert r["why"] == "eof", l
    assert r["active"] >= 1, l
    assert r["accept"] <= r["time"], l
    assert r["client"].startswith("127.0.0.1:"), l
    assert isinstance(r["duration"], float), l
    if proto == "echo":
        assert r["tc"] is None and "upstream" not in r, l
    else:
        assert isinstance(r["tc"], float), l
        assert r["tries"] == 1 and r["term"] == "client/eof", l
        assert r["upstream"] == sys.argv[6], l
PYEOF
}

# Echo, json: five lines with the byte counts.
tenkd_start echo --threads 2 --access-log "$T/j" --access-log-format json
"$TKCLI" echo -c 5 -b 1000 "$ADDR" || fail "echo"
wait_for 10 _lines "$T/j" 5 || fail "json: $(cat "$T/j")"
check "$T/j" echo 1000 1000 5 || fail "json lines: $(cat "$T/j")"

# One more, then nothing: the record comes with no traffic to push it.
"$TKCLI" echo -c 1 -b 10 "$ADDR" || fail "echo"
wait_for 10 _lines "$T/j" 6 || fail "no flush without traffic"
tail -n 1 "$T/j" >"$T/j1"
check "$T/j1" echo 10 10 1 || fail "json line: $(cat "$T/j1")"

# Records still buffered at SIGTERM are written before the exit.
"$TKCLI" echo -c 3 -b 20 "$ADDR" || fail "echo"
kill -TERM "$TENKD_PID"
wait_exit 10 "$TENKD_PID"
[ "$(grep -c . "$T/j")" -eq 9 ] || fail "lost at exit: $(cat "$T/j")"

# Proxy, text: tc= and active= (and the fields before them as before).
upstream_start --threads 1
tenkd_start proxy --threads 2 -u "$UPADDR" --access-log "$T/p"
"$TKCLI" echo -c 4 -b 100 "$ADDR" || fail "proxy"
wait_for 10 _lines "$T/p" 4 || fail "proxy: $(cat "$T/p")"
re=" proxy $UPADDR [0-9.]*s accept=[0-9T:.-]*Z tc=[0-9]*\.[0-9]{3}s "
re="${re}active=[1-9][0-9]* in=100 out=100 tries=1 client/eof eof\$"
[ "$(grep -cE "$re" "$T/p")" -eq 4 ] || fail "proxy lines: $(cat "$T/p")"
kill -TERM "$TENKD_PID"
wait_exit 10 "$TENKD_PID"

# Proxy, json.
tenkd_start proxy --threads 1 -u "$UPADDR" --access-log "$T/pj" \
    --access-log-format json
"$TKCLI" echo -c 4 -b 100 "$ADDR" || fail "proxy json"
wait_for 10 _lines "$T/pj" 4 || fail "proxy json: $(cat "$T/pj")"
check "$T/pj" proxy 100 100 4 "$UPADDR" || fail "proxy json: $(cat "$T/pj")"

# A bad format is refused on the command line.
"$TENKD" echo --access-log-format xml >/dev/null 2>"$T/e" &&
    fail "xml accepted"
grep -q 'access-log-format xml: text or json' "$T/e" ||
    fail "refusal: $(cat "$T/e")"
pass
