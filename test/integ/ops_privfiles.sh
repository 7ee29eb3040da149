#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Files that root opens for the --user (issue 22): the pidfile and the
# access log live in a directory the user nobody can write, and nobody
# plants a symbolic link to a root-owned 0600 file there.  tenkd as root
# with --user nobody refuses it with one line, at start and at a SIGUSR1
# reopen (which keeps the old file and warns once), and --check says the
# same; the root-owned file is untouched.  Likewise a link to a
# directory, a second hard link and a file of another owner; a link in
# a directory only root can write is root's own and followed (and what
# it points to walked by the same rules), and a log owned by nobody
# (logrotate's "create ... tenkd") is fine.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

[ "$(awk '/^Uid:/ { print $3 }' /proc/self/status)" -eq 0 ] ||
    skip "not root: cannot open files for --user"
id nobody >/dev/null 2>&1 || skip "no user nobody"
command -v runuser >/dev/null 2>&1 || skip "no runuser"

# as_nobody CMD...: CMD as the user nobody.
as_nobody() {
	runuser -u nobody -- "$@"
}

# $T is root's 0700: nobody may pass through it, not write in it.
chmod 711 "$T"
d=$T/run
mkdir "$d"
chown nobody "$d"
secret=$T/secret
printf 'root only\n' >"$secret"
chmod 600 "$secret"
sum0=$(cksum <"$secret")
untouched() {
	[ "$(cksum <"$secret")" = "$sum0" ] || fail "$1: $secret changed"
	[ "$(stat -c '%u %a' "$secret")" = "0 600" ] ||
	    fail "$1: $secret: $(stat -c '%u %a' "$secret")"
}

# refused WHAT WANT ARGS...: tenkd echo --user nobody ARGS, and with
# --check, exit 1 with one error line holding WANT; then nothing of
# $secret changed.
refused() {
	_what=$1
	_want=$2
	shift 2
	for _c in '' --check; do
		# shellcheck disable=SC2086
		timeout 10 "$TENKD" echo --threads 1 --listen 127.0.0.1:0 \
		    --user nobody $_c "$@" 2>"$T/err"
		_s=$?
		[ "$_s" -eq 1 ] || fail "$_what $_c: exit $_s: $(cat "$T/err")"
		[ "$(grep -c 'error: ' "$T/err")" -eq 1 ] ||
		    fail "$_what $_c: $(cat "$T/err")"
		grep -q -e "error: $_want" "$T/err" ||
		    fail "$_what $_c: $(cat "$T/err")"
		untouched "$_what $_c"
	done
}

as_nobody ln -s "$secret" "$d/tenkd.pid"
refused "pidfile link" \
    "pidfile $d/tenkd.pid: a symbolic link: root follows none for user nobody" \
    --pidfile "$d/tenkd.pid"
as_nobody ln -s "$secret" "$d/acc"
refused "access log link" "access log $d/acc: a symbolic link" \
    --access-log "$d/acc"
as_nobody rm "$d/tenkd.pid" "$d/acc"

# A link to a directory on the way, made where nobody can write.
mkdir "$T/rootdir"
printf 'root only\n' >"$T/rootdir/acc"
chmod 600 "$T/rootdir/acc"
as_nobody ln -s "$T/rootdir" "$d/logs"
refused "directory link" "access log $d/logs/acc: logs is a symbolic link \
in a directory user nobody can write" --access-log "$d/logs/acc"
[ "$(cat "$T/rootdir/acc")" = "root only" ] || fail "rootdir/acc changed"

# A link root made, where only root writes, to a directory of nobody's
# in which nobody swaps the log directory for a link to root's: the
# link root made is walked one component at a time, so nobody's link
# at the end of it is seen and refused (before, the kernel resolved the
# whole target and root appended to rootdir/acc).
mkdir "$T/rootlinks" "$T/udir"
chown nobody "$T/udir"
as_nobody ln -s "$T/rootdir" "$T/udir/logs"
ln -s "$T/udir/logs" "$T/rootlinks/logs"
refused "link through nobody's directory" "access log \
$T/rootlinks/logs/acc: logs is a symbolic link in a directory user nobody \
can write" --access-log "$T/rootlinks/logs/acc"
[ "$(cat "$T/rootdir/acc")" = "root only" ] || fail "rootdir/acc changed"

# A second hard link (fs.protected_hardlinks keeps nobody from making
# one to root's file; a system without it would not), another owner.
ln "$secret" "$d/two"
refused "hard link" "access log $d/two: has 2 hard links" \
    --access-log "$d/two"
rm "$d/two"
: >"$d/daemon"
chown 12345 "$d/daemon"
refused "owner" "access log $d/daemon: owned by uid 12345" \
    --access-log "$d/daemon"

# A link root made where only root writes is followed; a log nobody
# owns is written.
mkdir "$T/real"
ln -s "$T/real" "$T/via"
tenkd_start echo --threads 1 --user nobody --access-log "$T/via/acc" \
    --pidfile "$d/tenkd.pid"
"$TKCLI" echo -c 2 -b 10 "$ADDR" || fail "echo"
[ "$(cat "$d/tenkd.pid")" = "$TENKD_PID" ] ||
    fail "pidfile: $(cat "$d/tenkd.pid")"
kill -TERM "$TENKD_PID"
wait_exit 10 "$TENKD_PID"
_lines() {
	[ "$(grep -c . "$1" 2>/dev/null)" -ge "$2" ]
}
_lines "$T/real/acc" 2 || fail "no access log through root's link"
as_nobody touch "$d/own"
tenkd_start echo --threads 1 --user nobody --access-log "$d/own"
"$TKCLI" echo -c 1 -b 10 "$ADDR" || fail "echo (own)"
wait_for 10 _lines "$d/own" 1 || fail "no line in nobody's own log"
kill -TERM "$TENKD_PID"
wait_exit 10 "$TENKD_PID"
as_nobody rm "$d/tenkd.pid" 2>/dev/null

# SIGUSR1 after nobody swapped the log for a link: one warning, the
# old file kept, the target untouched.
tenkd_start echo --threads 1 --user nobody --access-log "$d/acc"
"$TKCLI" echo -c 3 -b 10 "$ADDR" || fail "echo before"
wait_for 10 _lines "$d/acc" 3 || fail "access log: $(cat "$d/acc")"
as_nobody mv "$d/acc" "$d/acc.1"
as_nobody ln -s "$secret" "$d/acc"
kill -USR1 "$TENKD_PID"
want="reopening access log $d/acc: a symbolic link: root follows none"
wait_line 10 "$TENKD_LOG" "$want" || fail "no warning: $(cat "$TENKD_LOG")"
"$TKCLI" echo -c 2 -b 10 "$ADDR" || fail "echo after"
wait_for 10 _lines "$d/acc.1" 5 || fail "old log: $(cat "$d/acc.1")"
[ "$(grep -c 'reopening access log' "$TENKD_LOG")" -eq 1 ] ||
    fail "warned more than once: $(grep reopening "$TENKD_LOG")"
grep -q 'logs reopened' "$TENKD_LOG" && fail "said reopened"
untouched "reopen"
kill -TERM "$TENKD_PID"
wait_exit 10 "$TENKD_PID"
untouched "exit"
pass
