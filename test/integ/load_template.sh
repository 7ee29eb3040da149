#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tenkload's request templates against tenkd echo on this backend: every
# placeholder rendered per request and echoed back, verified byte for
# byte (echo compares what was rendered), one at a time and pipelined 8
# deep (the connection's ring wraps); a --message-file of many requests,
# templates among them; --first-message before them; and broken
# templates refused before the run, naming the column (and the line of
# a file) where they break.
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
