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
bad '-c abc: invalid' -c abc $A
bad '-c -1: ' -c -1 $A
bad '--connections: no connections to open' --connections 0 $A
bad '-c 99999999999: too large' -c 99999999999 $A
bad '-d 0: too small' -d 0 $A
bad '-d 5x: bad unit' -d 5x $A
bad '--duration "": empty' --duration= $A
bad '-M bogus: not a mode' -M bogus $A
bad '--mode rate: needs' -M rate $A
bad '-R 0: too small' -R 0 $A
bad '--rate fast: invalid' --rate fast $A
bad '--rate: only with --mode rate' -M stream -R 10 $A
bad '--window: not with --mode idle' -M idle --window 4 $A
bad '--window 0: too small' -M stream --window 0 $A
bad '-s 0: too small' -s 0 $A
bad '-s 10:5: minimum above maximum' -s 10:5 $A
bad '--size x: invalid' --size 1:x $A
bad '-t 0: too small (1 to 1024)' -t 0 $A
bad '--threads 100000: too large' --threads 100000 $A
bad '--backend nope: unknown backend' --backend nope $A
bad '--connect-rate 0: too small' --connect-rate 0 $A
bad '--connect-timeout 0: too small' --connect-timeout 0 $A
bad '--reply-timeout -1: invalid' --reply-timeout -1 $A
bad '--warmup soon: invalid' --warmup soon $A
bad '--idle -5: too small' --idle -5 $A
bad '--source 300.1.1.1: ' --source 300.1.1.1 $A
bad '--source 127.0.0.1:80: no port allowed' --source 127.0.0.1:80 $A
bad '--source 127.0.0.9-127.0.0.2: bad range' \
    --source 127.0.0.9-127.0.0.2 $A
bad '--source: address family' --source ::1 $A
bad '--source 192.0.2.1: ' --source 192.0.2.1 $A
bad '--procs 0: too small' --procs 0 $A
bad '--procs 1000: too large' --procs 1000 $A
bad '--percentiles 101: 101 is not a percentile' --percentiles 101 $A
bad '--percentiles 50,,99: "" is not' --percentiles 50,,99 $A
bad '--max-errors -1: too small' --max-errors -1 $A
bad '--json: empty file name' --json= $A
bad '--bogus: unknown option' --bogus $A
bad '--con: ambiguous option' --con 5 $A
bad '--quiet: takes no value' --quiet=1 $A
bad '--threads: needs a value' --thr
bad '-x: unknown option' -x $A
bad '-x: unknown option' -qx $A
bad '-c: needs a value' -c
bad 'host:port: no target' 
bad 'host:port: no target' -c 2
bad 'localhost: missing port' localhost
bad '127.0.0.1:99999: ' 127.0.0.1:99999
bad 'merge: no report files' merge
bad '--bogus: unknown option' merge --bogus a.json
bad '--quiet: takes no value' merge --quiet=1 a.json
bad 'nope.json' merge "$T/nope.json"

"$TENKLOAD" --help >"$T/help" 2>&1 || fail "--help: exit $?"
grep -q '^usage: tenkload' "$T/help" || fail "--help prints no usage"
"$TENKLOAD" --version | grep -q '^tenkload [0-9]' || fail "--version"
"$TENKLOAD" --backend list | grep -q . || fail "--backend list"

# Each option of the synopsis has a line of its own in --help, saying
# what it does and, where it has one, its default.
for o in $(grep -o -e '\[--[a-z-]*' "$T/help" | tr -d '[' | sort -u); do
	grep -q -E "^ +(-[a-zA-Z], +)?$o " "$T/help" ||
	    fail "$o is not described in --help"
done

# Each option of --help is in the manual page.
man=$TK_SRC/docs/tenkload.1
# Option names have no blanks: words are lines.
# shellcheck disable=SC2013
for o in $(grep -o -e '--[a-z-]*' "$T/help" | sort -u); do
	grep -q -e "Fl ${o#-}" "$man" || fail "$o is not in docs/tenkload.1"
done
# shellcheck disable=SC2013
for o in $(grep -o -e '\[-[a-zA-Z]* ' -e '\[-[a-zA-Z]*\]' "$T/help" |
    tr -d '[] -' | sed 's/./& /g'); do
	grep -q -e "Fl $o" -e "Fl [a-zA-Z]*$o" "$man" ||
	    fail "-$o is not in docs/tenkload.1"
done
pass
