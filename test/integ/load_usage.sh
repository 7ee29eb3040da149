#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Every bad command line exits 2 with one line on stderr that names the
# option; --help and --version exit 0; every option in --help is in the
# manual page.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

# bad WORD ARGS...: tenkload ARGS is a usage error naming WORD.
bad() {
	_bw=$1
	shift
	usage_error "$_bw" "$TENKLOAD" "$@"
}

A=127.0.0.1:9
bad --connections -c abc $A
bad --connections -c -1 $A
bad --connections -c 0 $A
bad --connections -c 99999999999 $A
bad --duration -d 0 $A
bad --duration -d 5x $A
bad --duration --duration= $A
bad --mode -m bogus $A
bad --mode -m rate $A
bad --rate -R 0 $A
bad --rate -R fast $A
bad --rate -m stream -R 10 $A
bad --window --window 4 $A
bad --window -m stream --window 0 $A
bad --size -s 0 $A
bad --size -s 10:5 $A
bad --size -s 1:x $A
bad --threads -t 0 $A
bad --threads -t 100000 $A
bad --backend --backend nope $A
bad --connect-rate --connect-rate 0 $A
bad --connect-timeout --connect-timeout 0 $A
bad --reply-timeout --reply-timeout -1 $A
bad --warmup --warmup soon $A
bad --idle --idle -5 $A
bad --source --source 300.1.1.1 $A
bad --source --source 127.0.0.1:80 $A
bad --source --source 127.0.0.9-127.0.0.2 $A
bad --source --source ::1 $A
bad --source --source 192.0.2.1 $A
bad --procs --procs 0 $A
bad --procs --procs 1000 $A
bad --percentiles --percentiles 101 $A
bad --percentiles --percentiles 50,,99 $A
bad --max-errors --max-errors -1 $A
bad --json --json= $A
bad --bogus --bogus $A
bad -x -x $A
bad -c -c
bad host:port
bad host:port -c 2
bad localhost localhost
bad 127.0.0.1:99999 127.0.0.1:99999
bad merge merge
bad --bogus merge --bogus a.json
bad nope.json merge "$T/nope.json"

"$TENKLOAD" --help >"$T/help" 2>&1 || fail "--help: exit $?"
grep -q '^usage: tenkload' "$T/help" || fail "--help prints no usage"
"$TENKLOAD" --version | grep -q '^tenkload [0-9]' || fail "--version"
"$TENKLOAD" --backend list | grep -q . || fail "--backend list"

# Each option of --help is in the manual page.
man=$TK_SRC/docs/tenkload.1
# Option names have no blanks: words are lines.
# shellcheck disable=SC2013
for o in $(grep -o -e '--[a-z-]*' "$T/help" | sort -u); do
	grep -q -e "Fl ${o#-}" "$man" || fail "$o is not in docs/tenkload.1"
done
for o in $(grep -o -e '\[-[a-zA-Z]* ' -e '\[-[a-zA-Z]*\]' "$T/help" |
    tr -d '[] -' | sed 's/./& /g'); do
	grep -q -e "Fl $o" -e "Fl [a-zA-Z]*$o" "$man" ||
	    fail "-$o is not in docs/tenkload.1"
done
pass
