#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A FIFO (or another file that is not regular) where tenkd opens a path
# is refused at once, never waited on (issue 22): -f at start, with
# --check and at a reload (the master went on serving /metrics while it
# waited in open before), --pidfile at start and with --check.  The
# access log may be a device or a FIFO with a reader; one without is
# refused at start, with --check and at a SIGUSR1 reopen.  Each is
# bounded: a command that waited would be killed at 10 s and fail.
# backends: none
# timeout: 90
. "$(dirname "$0")/lib.sh"

fifo=$T/fifo
mkfifo "$fifo"

# bad STATUS WANT ARGS...: tenkd ARGS ends within 10 s with STATUS and
# one line on stderr holding WANT (a start-up error follows the info
# lines held until then, so not one_line_error).
bad() {
	_st=$1
	_want=$2
	shift 2
	exits_with "$_st" bad "$TENKD" "$@"
	[ "$(grep -c -e "$_want" "$T/bad.err")" -eq 1 ] ||
	    fail "$*: $(cat "$T/bad.err")"
}

bad 2 "$fifo: a FIFO, not a regular file" echo -f "$fifo"
bad 2 "$fifo: a FIFO, not a regular file" echo --check -f "$fifo"
for c in --check --threads=1; do
	bad 1 "pidfile $fifo: a FIFO, not a regular file" echo $c \
	    --listen 127.0.0.1:0 --pidfile "$fifo"
	bad 1 "access log $fifo: a FIFO or pipe with no reader" echo $c \
	    --listen 127.0.0.1:0 --access-log "$fifo"
done
bad 1 "pidfile /dev/null: a character device" echo --check \
    --pidfile /dev/null
if [ "$(id -u)" -eq 0 ]; then
	# Opening as root for --user, only regular files.
	bad 1 "access log /dev/null: a character device" echo --check \
	    --user nobody --access-log /dev/null
fi

# A log may be a device, or a FIFO or pipe that has a reader (a
# container's /dev/stdout): tenkd writes its lines there.
timeout 10 "$TENKD" echo --check --listen 127.0.0.1:0 \
    --access-log /dev/null >"$T/out" 2>&1 ||
    fail "/dev/null: $(cat "$T/out")"
cat "$fifo" >"$T/fromfifo" &
rd=$!
track "$rd"
tenkd_start echo --threads 1 --access-log "$fifo"
"$TKCLI" echo -c 3 -b 10 "$ADDR" || fail "echo logged to a FIFO"
kill -TERM "$TENKD_PID"
wait_exit 20 "$TENKD_PID"
wait_exit 10 "$rd"
[ "$(grep -c ' echo ' "$T/fromfifo")" -eq 3 ] ||
    fail "lines through the FIFO: $(cat "$T/fromfifo")"

# A reload whose -f has become a FIFO: refused, said, and the master
# still answers /metrics meanwhile.
f=$T/tenkd.conf
printf 'threads 1\n' >"$f"
tenkd_start echo -f "$f" --access-log "$T/acc"
_served() {
	"$TKCLI" echo -c 2 -b 10 "$ADDR"
}
wait_for 10 _served || fail "not serving"
rm "$f"
mkfifo "$f"
kill -HUP "$TENKD_PID"
wait_line 10 "$TENKD_LOG" "reload: $f: a FIFO, not a regular file" ||
    fail "reload: $(grep reload "$TENKD_LOG")"
wait_line 10 "$TENKD_LOG" 'reload refused' || fail "not refused"
http_get "http://$METRICS/metrics" >/dev/null || fail "no metrics"

# SIGUSR1 with a FIFO where the access log was: the master and its
# worker each warn, keep the old file, and go on.
mv "$T/acc" "$T/acc.1"
mkfifo "$T/acc"
kill -USR1 "$TENKD_PID"
_two() {
	[ "$(grep -c "reopening access log $T/acc: a FIFO or pipe with no" \
	    "$TENKD_LOG")" \
	    -eq 2 ]
}
wait_for 10 _two || fail "reopen: $(grep reopen "$TENKD_LOG")"
"$TKCLI" echo -c 2 -b 10 "$ADDR" || fail "echo after SIGUSR1"
http_get "http://$METRICS/metrics" >/dev/null || fail "no metrics after"
_old() {
	[ "$(grep -c . "$T/acc.1")" -ge 4 ]
}
wait_for 10 _old || fail "old log: $(cat "$T/acc.1")"
kill -TERM "$TENKD_PID"
wait_exit 20 "$TENKD_PID"
pass
