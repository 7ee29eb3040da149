#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# systemd: a listener passed by socket activation (systemd-socket-activate)
# is used instead of binding, with and without --workers, and echo works
# through it; sd_notify's READY=1 then STOPPING=1 reach $NOTIFY_SOCKET.
# backends: none
# timeout: 90
. "$(dirname "$0")/lib.sh"

# activated NAME ARGS...: tenkd ARGS under systemd-socket-activate on a
# free port with fd name NAME; echo through it; SIGTERM ends it with 0.
activated() {
	_name=$1
	shift
	_p=$(free_port)
	_log=$T/sa.$_name.log
	systemd-socket-activate -l "127.0.0.1:$_p" --fdname="$_name" \
	    "$TENKD" "$@" 2>"$_log" &
	_pid=$!
	track "$_pid"
	wait_line 10 "$_log" 'Listening on' || fail "$_name: $(cat "$_log")"
	# The first connection starts tenkd, which takes it from fd 3.
	"$TKCLI" echo -c 20 -b 1-4k "127.0.0.1:$_p" ||
	    fail "$_name: echo: $(cat "$_log")"
	grep -q "listening on 127.0.0.1:$_p (from systemd: $_name)" "$_log" ||
	    fail "$_name: not the passed socket: $(cat "$_log")"
	grep -q 'address in use' "$_log" && fail "$_name: probed its own"
	kill -TERM "$_pid"
	wait_exit 20 "$_pid"
	[ "$STATUS" -eq 0 ] || fail "$_name: exit $STATUS: $(cat "$_log")"
}

if command -v systemd-socket-activate >/dev/null 2>&1; then
	activated echo echo --threads 2
	activated workers echo --threads 1 --workers 2
	activated proxied echo --threads 1 --listen 127.0.0.1:0
	grep -q -- '--listen ignored' "$T/sa.proxied.log" ||
	    fail "--listen beside systemd's sockets: no warning"
else
	echo "skipping socket activation: no systemd-socket-activate"
fi

# sd_notify: a datagram socket standing in for systemd's.
notify_start "$T/notify" "$T/notified"
for w in 1 2; do
	: >"$T/notified"
	NOTIFY_SOCKET=$T/notify tenkd_start echo --threads 1 --workers "$w"
	wait_line 10 "$T/notified" '^READY=1$' || fail "workers $w: no READY=1"
	grep -q '^STATUS=echo: ' "$T/notified" || fail "workers $w: no STATUS"
	[ "$w" -eq 1 ] || {
		# One READY=1, from the master: workers keep quiet.
		sleep 0.5
		[ "$(grep -c '^READY=1$' "$T/notified")" -eq 1 ] ||
		    fail "workers notified too: $(cat "$T/notified")"
		kill -TERM "$TENKD_PID"
		wait_exit 20 "$TENKD_PID"
		continue
	}
	kill -TERM "$TENKD_PID"
	wait_line 10 "$T/notified" '^STOPPING=1$' || fail "no STOPPING=1"
	wait_exit 20 "$TENKD_PID"
	[ "$(grep -n '^READY=1$' "$T/notified" | cut -d: -f1)" -lt \
	    "$(grep -n '^STOPPING=1$' "$T/notified" | cut -d: -f1)" ] ||
	    fail "READY=1 not before STOPPING=1: $(cat "$T/notified")"
done
pass
