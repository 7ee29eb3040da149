#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Log injection: a newline, an ESC sequence or another control byte in
# any string from outside (option values, upstreams as given, paths,
# names) reaches the error log escaped ("\n", "\x1b", "\\"; a backslash
# in a command-line error is shown as typed), never raw: no forged line,
# no terminal escape, the escape visible.  The access log goes through
# the same escaping (test/unit/test_log.c covers the escaper); what
# reaches it from outside today is the client's address only, so here
# it is checked to stay one clean line per session.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

NL='
'
ESC=$(printf '\033')

# clean FILE: no control byte but newlines, and no line forged.
clean() {
	if LC_ALL=C tr -d '\n' <"$1" | LC_ALL=C grep -q '[[:cntrl:]]'; then
		fail "raw control byte in $1: $(od -c "$1" | head -n 20)"
	fi
	if grep -q '^FAKE' "$1"; then
		fail "forged line in $1: $(cat "$1")"
	fi
}

# refused WANT ARGS...: tenkd ARGS fails; its output is clean and has
# exactly one line with the text WANT (the escapes as written, -F).
refused() {
	_want=$1
	shift
	"$TENKD" "$@" >"$T/out" 2>&1 && fail "tenkd $* started"
	clean "$T/out"
	[ "$(grep -cF -- "$_want" "$T/out")" -eq 1 ] ||
	    fail "no one line with '$_want': $(cat "$T/out")"
}

# The command line (tk_cli_bad): upstream, listen address, user, group,
# backend, a duration.
refused 'evil\nFAKE LOG LINE:80: ' proxy -u "evil${NL}FAKE LOG LINE:80"
refused 'evil\x1b[31m\nFAKE:80' proxy -u "evil${ESC}[31m${NL}FAKE:80"
refused '127.0.0.1:0\x1b[2J\x1b]0;owned\x07: ' echo \
    -l "127.0.0.1:0${ESC}[2J${ESC}]0;owned$(printf '\007')"
CR=$(printf '\r')
refused 'nobody\r\nFAKE: no such user' echo --user "nobody${CR}${NL}FAKE"
# (a backslash on the command line is shown as typed)
refused 'wheel\\nFAKE: no such group' echo --group "wheel\\${NL}FAKE"
refused 'ep\x1b[0mll' echo --backend "ep${ESC}[0mll"
refused '5s\nFAKE' echo --idle-timeout "5s${NL}FAKE"
refused '\x7f\xff\x01' echo --log-level "$(printf '\177\377\001')"

# Start-up failures logged through log.c: paths that cannot be opened.
refused 'no\x1bdir\nFAKE/x.pid: ' echo --check \
    --pidfile "$T/no${ESC}dir${NL}FAKE/x.pid"
refused '/nodir\nFAKE/acc: ' echo --check --access-log "$T/nodir${NL}FAKE/acc"
refused '/nodir\nFAKE/acc: ' echo --listen 127.0.0.1:0 \
    --access-log "$T/nodir${NL}FAKE/acc"

# At run time: an access-log path holding a newline and an ESC, whose
# directory goes away before SIGHUP; the warning names it escaped.
d="$T/logs${NL}FAKE LOG LINE${ESC}[31m"
mkdir "$d"
tenkd_start echo --threads 1 --access-log "$d/acc"
"$TKCLI" echo -c 3 -b 1-1k "$ADDR" || fail "echo"
_three() {
	[ "$(wc -l <"$d/acc")" -ge 3 ]
}
wait_for 10 _three || fail "no access log lines"
[ "$(wc -l <"$d/acc")" -eq 3 ] || fail "access log: $(cat "$d/acc")"
clean "$d/acc"
rm -rf "$d"
kill -HUP "$TENKD_PID"
# The reopen fails: a warning, and no "logs reopened" (issue 14).
wait_line 10 "$TENKD_LOG" 'reopening access log' || fail "no SIGHUP warning"
grep -q 'SIGHUP: logs reopened' "$TENKD_LOG" &&
    fail "a failed reopen said reopened"
grep -qF 'logs\nFAKE LOG LINE\x1b[31m/acc: ' "$TENKD_LOG" ||
    fail "reopen warning: $(cat "$TENKD_LOG")"
clean "$TENKD_LOG"
pass
