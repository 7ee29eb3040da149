#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The command line: every bad input exits 2 with exactly one line on
# stderr (naming the option) and nothing on stdout; --check validates
# and exits 0 without binding; --help, --version and --backend list; and
# every option that --help shows is documented in docs/tenkd.8.
# backends: none
# timeout: 60
# ulimit -H, -S and -n are not POSIX; dash, bash and busybox sh have them.
# shellcheck disable=SC3045
. "$(dirname "$0")/lib.sh"

# bad WORD ARGS...: tenkd ARGS is a usage error naming WORD.
bad() {
	_bw=$1
	shift
	usage_error "$_bw" "$TENKD" "$@"
}

bad 'mode'		
bad 'mode'		--threads 2
bad 'unknown mode'	echoo
bad 'proxy'		proxy
bad 'unexpected'	echo extra
bad '--foo: unknown option'	echo --foo
bad '-x: unknown option'	echo -x
bad '--fail: ambiguous option'	echo --fail 1
bad '--listen'		echo --listen
bad '--listen'		echo --listen 127.0.0.1:99999
bad '--listen'		echo --listen 127.0.0.1:http
bad '--listen'		echo --listen '[::1'
bad '--listen'		echo --listen 7777
bad '--listen'		echo --listen no.such.host.invalid:1
bad '-l 127.0.0.1:7000: given twice' \
			echo -l 127.0.0.1:7000 -l 127.0.0.1:7000
bad '--threads 0: too small (1 to 256)' echo --threads 0
bad '--max-memory 1k: too small (0 for no budget' echo --max-memory 1k
bad '-t 100000: too large (1 to 256)' echo -t 100000
bad '--threads two: invalid'	echo --threads=two
bad '--threads: needs a value'	echo --threads
bad '-t: needs a value'	echo -t
bad '--backend kqueue2: unknown backend (compiled in: epoll' \
			echo --backend kqueue2
bad '-b "": unknown backend'	echo -b ''
bad '--max-conns'	echo --max-conns -1
bad '--max-conns'	echo --max-conns 1e6
bad '--backlog'		echo --backlog 0
bad '--idle-timeout'	echo --idle-timeout 5x
bad '--idle-timeout'	echo --idle-timeout 1ms
bad '--idle-timeout'	echo --idle-timeout 1000h
bad '--drain-timeout'	echo --drain-timeout -1s
bad '--drain-timeout'	echo --drain-timeout=
bad '--buffer-limit'	echo --buffer-limit 1
bad '--buffer-limit'	echo --buffer-limit 1t
bad '--buffer-limit'	echo --buffer-limit 64q
bad '--log-level'	echo --log-level loud
bad '--user'		echo --user no-such-user-tk
bad '--group'		echo --group no-such-group-tk
bad '--access-log'	echo --access-log ''
bad '--pidfile'		echo --pidfile ''
bad '--check: takes no value' echo --check=yes
bad '--syslog: takes no value' echo --syslog=1

# --check: good configurations exit 0, bind nothing.
"$TENKD" echo --check -l 127.0.0.1:0 -t 3 --idle-timeout 5m \
    --buffer-limit 16k 2>"$T/e" || fail "--check: $(cat "$T/e")"
grep -q 'configuration OK' "$T/e" || fail "--check said: $(cat "$T/e")"
grep -q 'listening' "$T/e" && fail "--check bound a socket"
for be in $("$TENKD" --backend list); do
	"$TENKD" echo --check --backend "$be" 2>/dev/null ||
	    fail "--check --backend $be"
done
"$TENKD" --backend list | grep -qx epoll || fail "--backend list"

# RLIMIT_NOFILE: the soft limit is raised to the hard one, and a
# --max-conns beyond it is cut down with a warning.
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -gt 200 ]; then
	( ulimit -Sn 100 && "$TENKD" echo --check ) 2>"$T/e" ||
	    fail "--check under ulimit -Sn 100: $(cat "$T/e")"
	grep -q "RLIMIT_NOFILE $hard," "$T/e" ||
	    fail "soft limit not raised to $hard: $(cat "$T/e")"
fi
( ulimit -n 100 && "$TENKD" echo --check --max-conns 5000 -t 2 ) \
    2>"$T/e" || fail "--check --max-conns 5000: $(cat "$T/e")"
grep -q 'max-conns 5000 does not fit RLIMIT_NOFILE 100: using [0-9]' \
    "$T/e" || fail "no warning for --max-conns 5000: $(cat "$T/e")"

"$TENKD" --version | grep -q '^tenkd [0-9]' || fail "--version"
"$TENKD" --help >"$T/help" || fail "--help exit status"
grep -q '^usage: tenkd echo' "$T/help" || fail "--help: no usage line"

# Every long option of --help is in the man page.
help_in_man "$T/help" tenkd.8 || skip "no mandoc or groff to render the page"
pass
