#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Every bad command line exits 2 with one line on stderr that names the
# option; --help and --version exit 0; every option in --help is in the
# manual page.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

A=127.0.0.1:9
load_bad '-c abc: invalid' -c abc $A
load_bad '-c -1: ' -c -1 $A
load_bad '--connections: no connections to open' --connections 0 $A
load_bad '-c 99999999999: too large' -c 99999999999 $A
load_bad '-d 0: too small' -d 0 $A
load_bad '-d 5x: bad unit' -d 5x $A
load_bad '--duration "": empty' --duration= $A
load_bad '-M bogus: not a mode' -M bogus $A
load_bad '--mode rate: needs' -M rate $A
load_bad '-R 0: too small' -R 0 $A
load_bad '--rate fast: invalid' --rate fast $A
load_bad '--rate: only with --mode rate' -M stream -R 10 $A
load_bad '--window: not with --mode idle' -M idle --window 4 $A
load_bad '--window 0: too small' -M stream --window 0 $A
load_bad '-s 0: too small' -s 0 $A
load_bad '-s 10:5: minimum above maximum' -s 10:5 $A
load_bad '--size x: invalid' --size 1:x $A
load_bad '-t 0: too small (1 to 1024)' -t 0 $A
load_bad '--threads 100000: too large' --threads 100000 $A
load_bad '--backend nope: unknown backend' --backend nope $A
load_bad '--connect-rate 0: too small' --connect-rate 0 $A
load_bad '--connect-timeout 0: too small' --connect-timeout 0 $A
load_bad '--reply-timeout -1: invalid' --reply-timeout -1 $A
load_bad '--warmup soon: invalid' --warmup soon $A
load_bad '--idle -5: too small' --idle -5 $A
load_bad '--source 300.1.1.1: ' --source 300.1.1.1 $A
load_bad '--source 127.0.0.1:80: no port allowed' --source 127.0.0.1:80 $A
load_bad '--source 127.0.0.9-127.0.0.2: bad range' \
    --source 127.0.0.9-127.0.0.2 $A
load_bad '--source: address family' --source ::1 $A
load_bad '--source 192.0.2.1: ' --source 192.0.2.1 $A
load_bad '--procs 0: too small' --procs 0 $A
load_bad '--procs 1000: too large' --procs 1000 $A
load_bad '--percentiles 101: 101 is not a percentile' --percentiles 101 $A
load_bad '--percentiles 50,,99: "" is not' --percentiles 50,,99 $A
load_bad '--max-errors -1: too small' --max-errors -1 $A
load_bad '--json: empty file name' --json= $A
load_bad '--bogus: unknown option' --bogus $A
load_bad '--con: ambiguous option' --con 5 $A
load_bad '--quiet: takes no value' --quiet=1 $A
load_bad '--threads: needs a value' --thr
load_bad '-x: unknown option' -x $A
load_bad '-x: unknown option' -qx $A
load_bad '-c: needs a value' -c
load_bad 'host:port: no target' 
load_bad 'host:port: no target' -c 2
load_bad 'localhost: missing port' localhost
load_bad '127.0.0.1:99999: ' 127.0.0.1:99999
load_bad 'merge: no report files' merge
load_bad '--bogus: unknown option' merge --bogus a.json
load_bad '--quiet: takes no value' merge --quiet=1 a.json
load_bad 'nope.json' merge "$T/nope.json"

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
