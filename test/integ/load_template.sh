#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkload's request templates against tenkd echo on this backend: every
# placeholder rendered per request and echoed back, verified byte for
# byte (echo compares what was rendered), one at a time and pipelined 8
# deep (the connection's ring wraps); a template of one length, whose
# placeholders are written over the last request in its slot of the
# ring, alone, pipelined, across reconnects and under -n; a
# --message-file of many requests, templates among them;
# --first-message before them; and broken templates refused before the
# run, naming the column (and the line of a file) where they break.
# timeout: 120
. "$(dirname "$0")/lib.sh"

[ -x "$TENKD" ] || skip "no tenkd built"
tenkd_start echo --threads 1

# run NAME ARGS...: load_echo on 8 connections.
run() {
	load_echo "$@" -c 8
}

printf 'alpha\nbeta\r\ngamma delta\n' >"$T/lines"
all='{seq} {seq:global} {rand:000-999} {zipf:1000:0.99} {conn} {bytes:40}'
all="$all {line:$T/lines} {line:$T/lines:rand}\\r\\n"
run all -m "$all"
run all8 -m "$all" --window 8
# A request near the ring's size, pipelined: renders across its end.
run big -m '{bytes:3000}{seq}' --window 3
run first --first-message 'HELLO\r\n' -m 'n={seq}\r\n'

# One length: padded numbers, a Zipf table's and {bytes}, in slots.
# Echo compares what was sent; line framing and the check also see that
# the literal bytes are there.
slot='k{rand:000000-999999}/{zipf:000100000:0.99}/{bytes:12}\r\n'
run slot -m "$slot"
run slot8 -m "$slot" --window 8 --reply line --reply-check k
run slotre -m "$slot" --window 3 --conn-lifetime 7 \
    --first-message 'HELLO\r\n'
load_has slotre connections.reconnects -gt 0 "no reconnects"
# shellcheck disable=SC2046
load_run slotn $(be_opt) -m "$slot" --window 4 -c 8 -n 5000 "$ADDR"
load_has slotn traffic.msgs -eq 5000 "not 5000 replies"

# The size range of the report is that of the templates.
[ "$(json_get "$T/all.json" header.size_min)" -lt \
    "$(json_get "$T/all.json" header.size_max)" ] ||
    fail "all: no size range for templates of varying length"

# Many requests, one a line: fixed ones and templates, used in turn.
printf '%s\n' 'plain request\r\n' '' 'key:{rand:00000-99999}\r\n' \
    '{"id": {seq}, "b": "\{x}"}\r\n' >"$T/reqs"
run many --message-file "$T/reqs" --window 4
run fixed --message-file "$T/lines"
{ [ "$(json_get "$T/fixed.json" header.size_min)" -eq 4 ] &&
    [ "$(json_get "$T/fixed.json" header.size_max)" -eq 11 ]; } ||
    fail "fixed: sizes $(json_get "$T/fixed.json" header.size_min) to" \
    "$(json_get "$T/fixed.json" header.size_max), not 4 to 11"

# Broken templates: refused before the run, with the column.
load_bad '-m key:{rand:5-}: column 11: rand takes LO-HI' -m 'key:{rand:5-}' \
    "$ADDR"
load_bad '-m {nope}: column 1: unknown placeholder' -m '{nope}' "$ADDR"
load_bad '-m x{seq: column 2: placeholder without its closing brace' \
    -m 'x{seq' "$ADDR"
load_bad "column 7: line: cannot read FILE: No such file" \
    -m "{line:$T/none}" "$ADDR"
printf 'ok\n{zipf:10:0}\n' >"$T/bad"
load_bad "--message-file $T/bad: line 2, column 10: zipf: S is an exponent" \
    --message-file "$T/bad" "$ADDR"
pass
