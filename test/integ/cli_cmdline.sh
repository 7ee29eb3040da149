#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# One command-line kit (src/util/cli.c) for every program: the same
# mistake gives the same line in tenkd, tenkload, tenkbench and loopbench,
# "PROG: OPTION [VALUE]: WHY" with the option as typed, and exit status 2
# with nothing on stdout.  tenkbench's own errors are checked here too,
# since bench_smoke only runs it briefly.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

BENCH=$TK_BIN/tenkbench
LOOPB=$TK_BIN/loopbench

# said LINE PROGRAM ARGS...: PROGRAM ARGS exits 2 with exactly LINE.
said() {
	_l=$1
	shift
	usage_error '' "$@"
	[ "$(cat "$T/usage.err")" = "$_l" ] ||
	    fail "$*: said '$(cat "$T/usage.err")', wanted '$_l'"
}

A=127.0.0.1:9
for p in "$TENKD" "$TENKLOAD" "$BENCH" "$LOOPB"; do
	[ -x "$p" ] || fail "no $p"
	n=${p##*/}
	said "$n: --bogus: unknown option" "$p" --bogus
	said "$n: --bogus: unknown option" "$p" --bogus=1
	said "$n: -Z: unknown option" "$p" -Z
	said "$n: --help: takes no value" "$p" --help=1
done

# A flag given a value: getopt used to name its short twin.
said 'tenkd: --check: takes no value' "$TENKD" echo --check=1
said 'tenkd: --syslog: takes no value' "$TENKD" echo --syslog=yes
said 'tenkload: --quiet: takes no value' "$TENKLOAD" --quiet=1 "$A"
said 'tenkload: --no-verify: takes no value' "$TENKLOAD" --no-verify=1 "$A"
said 'tenkbench: --plot: takes no value' "$BENCH" --plot=1
said 'tenkbench: --syscalls: takes no value' "$BENCH" --syscalls=yes
said 'tenkbench: --quiet: takes no value' "$BENCH" --quiet=1

# A number out of range, long and short, in every program.
said 'tenkd: --threads 0: too small (1 to 256)' "$TENKD" echo --threads 0
said 'tenkd: -t 0: too small (1 to 256)' "$TENKD" echo -t 0
said 'tenkload: --threads 0: too small (1 to 1024)' "$TENKLOAD" \
    --threads 0 "$A"
said 'tenkload: -t 0: too small (1 to 1024)' "$TENKLOAD" -t 0 "$A"
said 'tenkbench: --repeat 0: too small (1 to 50)' "$BENCH" --repeat 0
said 'tenkbench: -r 0: too small (1 to 50)' "$BENCH" -r 0
said 'tenkbench: --threads x: invalid (1 to 256)' "$BENCH" --threads=x
said 'loopbench: --rounds 0: too small (1 to 10000)' "$LOOPB" --rounds 0
said 'loopbench: -r x: invalid (1 to 10000)' "$LOOPB" -r x

# Values with units: the range and the units in the same words.
said 'tenkd: --drain-timeout 2h: too large (0 to 1h; units ms, s, m, h)' \
    "$TENKD" echo --drain-timeout 2h
said 'tenkload: -d 5x: bad unit (1ms to 720h; units ms, s, m, h)' \
    "$TENKLOAD" -d 5x "$A"
said 'tenkbench: --duration 1parsec: bad unit'\
' (100ms to 1h; units ms, s, m, h)' "$BENCH" --duration 1parsec
said 'tenkd: --buffer-limit 1: too small (512 to 256m; units k, m, g)' \
    "$TENKD" echo --buffer-limit 1
said 'tenkbench: --size 2m: too large (1 to 1m; units k, m, g)' \
    "$BENCH" --size 2m

# A missing value.
said 'tenkd: --listen: needs a value' "$TENKD" echo --listen
said 'tenkload: -c: needs a value' "$TENKLOAD" -c
said 'tenkbench: --active: needs a value' "$BENCH" --active
said 'loopbench: -n: needs a value' "$LOOPB" -n

# Backend names: one check, one list.
have=$("$TENKD" --backend list | paste -sd, - | sed 's/,/, /g')
[ -n "$have" ] || fail "tenkd --backend list printed nothing"
said "tenkd: --backend bogus: unknown backend (compiled in: $have)" \
    "$TENKD" echo --backend bogus
said "tenkd: -b bogus: unknown backend (compiled in: $have)" \
    "$TENKD" echo -b bogus
said "tenkload: --backend bogus: unknown backend (compiled in: $have)" \
    "$TENKLOAD" --backend bogus "$A"
said "tenkbench: --backends bogus: unknown backend (compiled in: $have)" \
    "$BENCH" --backends epoll,bogus
said "loopbench: -b bogus: unknown backend (compiled in: $have)" \
    "$LOOPB" -b bogus
said 'tenkbench: --backends poll: given twice' "$BENCH" --backends poll,poll
for p in "$TENKD" "$TENKLOAD" "$LOOPB"; do
	opt=--backend
	[ "$p" = "$LOOPB" ] && opt=-b
	[ "$("$p" "$opt" list | paste -sd, - | sed 's/,/, /g')" = "$have" ] ||
	    fail "${p##*/} $opt list differs from tenkd's"
done
[ "$("$BENCH" --backends list | paste -sd, - | sed 's/,/, /g')" = \
    "$have" ] || fail "tenkbench --backends list differs from tenkd's"

# Arguments that are not options.
said 'tenkd: extra: unexpected argument' "$TENKD" echo extra
said 'tenkbench: extra: unexpected argument' "$BENCH" extra
said 'loopbench: extra: unexpected argument' "$LOOPB" extra

"$LOOPB" --help >"$T/help" || fail "loopbench --help: exit $?"
grep -q '^usage: loopbench' "$T/help" || fail "loopbench --help: no usage"
pass
