#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# -f/--config: every error in the file names FILE:LINE and exits 2 with
# one line; comments, blank lines, blanks and CRLF are fine; the command
# line takes precedence, and replaces a repeatable option's file values;
# --check -f validates; a proxy runs from a file.  An option given twice
# is said with both lines, the last one used (issue 22), at start and
# once at a reload; 65,000 lines take well under the bound (the option
# list grew by one entry a line: 59 s and 725 MB under ASan).
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

f=$T/tenkd.conf

# badconf WORD LINES: a file of LINES (printf's format) makes
# tenkd echo -f FILE a usage error naming WORD.
badconf() {
	_bw=$1
	shift
	# shellcheck disable=SC2059
	printf -- "$@" >"$f"
	usage_error "$_bw" "$TENKD" echo -f "$f"
}

badconf "$f:3: bogus: unknown option" '# c\n\nbogus 1\n'
badconf "$f:2: idle-timeout 5x: bad unit" 'threads 1\nidle-timeout 5x\n'
badconf "$f:1: syslog yes: takes no value" 'syslog yes\n'
badconf "$f:2: threads: needs a value" '\nthreads   # none\n'
badconf "$f:1: not an option name" 'listen=127.0.0.1:1\n'
badconf "$f:1: not an option name" '--listen 127.0.0.1:1\n'
badconf "$f:1: check: only on the command line" 'check\n'
badconf "$f:1: config: only on the command line" 'config /dev/null\n'
badconf "$f:2: upstream: only with tenkd proxy" \
    'listen 127.0.0.1:0\nupstream 127.0.0.1:7000\n'
badconf "$f:2: listen 127.0.0.1:7000: given twice" \
    'listen 127.0.0.1:7000\nlisten 127.0.0.1:7000\n'
badconf "$f:1: NUL byte" 'threads 1\0\n'
usage_error "$T/none: No such file" "$TENKD" echo -f "$T/none"
usage_error "$T: Is a directory" "$TENKD" echo --config "$T"
: >"$f"
usage_error "-f $f: given twice" "$TENKD" echo -f "$f" -f "$f"
# The command line's errors come first; then the file's.
usage_error "--threads 0" "$TENKD" echo -f "$T/none" --threads 0
printf 'upstream 127.0.0.1:7000 weight=0\n' >"$f"
usage_error "$f:1: upstream 127.0.0.1:7000 weight=0: bad weight" \
    "$TENKD" proxy -f "$f"
printf 'upstream 127.0.0.1:7000 bogus\n' >"$f"
usage_error "$f:1: upstream 127.0.0.1:7000 bogus: unknown parameter" \
    "$TENKD" proxy -f "$f"

# check WHAT WANT ARGS...: tenkd ARGS --check exits 0 saying WANT.
check() {
	_cw=$1
	_want=$2
	shift 2
	"$TENKD" "$@" --check 2>"$T/e" ||
	    fail "$_cw: --check: $(cat "$T/e")"
	grep -q "configuration OK: $_want" "$T/e" ||
	    fail "$_cw: --check said: $(cat "$T/e")"
	grep -q 'listening' "$T/e" && fail "$_cw: --check bound a socket"
}

# Comments, blanks, tabs and a CRLF line; two addresses, three threads.
printf '# tenkd\n\n  listen 127.0.0.1:0   # the first\nlisten [::1]:0\r\n' \
    >"$f"
printf 'threads\t3\nidle-timeout 5m\nbackend poll #backend epoll\n' >>"$f"
printf 'log-level warn # quiet\n# threads 9\n' >>"$f"
check 'file' 'echo, 3 threads, backend poll, 2 addresses' echo -f "$f" \
    --log-level info
# The command line wins; one -l replaces both of the file's.
check 'override' 'echo, 2 threads, backend poll, 1 address' \
    echo -t 2 --config "$f" -l 127.0.0.1:0 --log-level info
check 'override backend' 'echo, 3 threads, backend select' echo -f "$f" \
    -b select --log-level info
# log-level warn from the file: --check's own line is info, so hidden.
"$TENKD" echo -f "$f" --check 2>"$T/e" || fail "warn: $(cat "$T/e")"
[ ! -s "$T/e" ] || fail "log-level warn from the file: $(cat "$T/e")"

# A proxy from a file, its upstream with a blank-separated weight.
upstream_start --threads 1
printf 'upstream %s weight=2\nthreads 1\nbuffer-limit 4k\n' "$UPADDR" >"$f"
printf 'idle-timeout 7s\n' >>"$f"
check 'proxy file' 'proxy, 1 thread' proxy -f "$f"
tenkd_start proxy -f "$f"
# With -f a master runs a worker, which logs its settings once it runs.
wait_line 10 "$TENKD_LOG" 'idle timeout 7s, buffer limit 4096' ||
    fail "file's values not applied: $(cat "$TENKD_LOG")"
"$TKCLI" echo -c 4 -b 1-4k "$ADDR" || fail "echo through the proxy"
kill -TERM "$TENKD_PID"
wait_exit 20 "$TENKD_PID"

# An option given twice: both lines said, the last one used; a list
# (listen) is not repeated.
printf 'threads 1\nlisten 127.0.0.1:0\n\nthreads 3\nlisten [::1]:0\n' >"$f"
check 'repeated' 'echo, 3 threads, backend [a-z_]*, 2 addresses' echo -f "$f"
[ "$(grep -c 'given before' "$T/e")" -eq 1 ] || fail "repeated: $(cat "$T/e")"
grep -q "$f:4: threads: given before, at $f:1; the last one is used" \
    "$T/e" || fail "repeated: $(cat "$T/e")"

# 65,000 lines: ten repeats said, then how many more.
awk 'BEGIN { for (i = 1; i <= 65000; i++) print "threads " i % 9 + 1 }' \
    >"$f"
timeout 30 "$TENKD" echo -f "$f" --check 2>"$T/e" ||
    fail "long file: $(tail -n 3 "$T/e")"
grep -q 'configuration OK: echo, 3 threads' "$T/e" ||
    fail "long file: $(tail -n 3 "$T/e")"
[ "$(grep -c 'given before' "$T/e")" -eq 10 ] ||
    fail "long file: $(head -n 20 "$T/e")"
grep -q "$f: 64989 more options given twice" "$T/e" ||
    fail "long file: $(head -n 20 "$T/e")"

# A reload says it once, as the master's, not once per new worker.
printf 'threads 1\nworkers 2\n' >"$f"
tenkd_start echo -f "$f"
printf 'threads 1\nworkers 2\nidle-timeout 1m\nidle-timeout 2m\n' >"$f"
kill -HUP "$TENKD_PID"
wait_line 20 "$TENKD_LOG" 'reload: 2 workers of generation 2 started' ||
    fail "reload: $(grep reload "$TENKD_LOG")"
wait_line 10 "$TENKD_LOG" 'idle timeout 120s' || fail "not the last value"
[ "$(grep -c 'given before' "$TENKD_LOG")" -eq 1 ] ||
    fail "reload: $(grep 'given before' "$TENKD_LOG")"
grep -q "warn: reload: $f:4: idle-timeout: given before, at $f:3" \
    "$TENKD_LOG" || fail "reload: $(grep 'given before' "$TENKD_LOG")"
pass
