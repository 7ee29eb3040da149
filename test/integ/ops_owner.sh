#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# One owner per address: tenkd on a fixed port shares it among its own
# threads and workers, but a second tenkd there (which SO_REUSEPORT
# alone would let in, to take half the connections) exits 1 saying
# "address in use", as it does beside any other listener.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# second ADDR WHAT: tenkd on ADDR must exit 1 with "address in use".
second() {
	timeout 10 "$TENKD" echo --threads 2 --listen "$1" 2>"$T/second"
	_s=$?
	[ "$_s" -eq 1 ] || fail "$2: exit $_s: $(cat "$T/second")"
	grep -q "listen on $1: address in use" "$T/second" ||
	    fail "$2: $(cat "$T/second")"
}

p=$(free_port)
"$TENKD" echo --threads 2 --workers 2 --listen "127.0.0.1:$p" \
    2>"$T/first" &
first=$!
track "$first"
wait_line 10 "$T/first" 'listening on' || fail "first: $(cat "$T/first")"
"$TKCLI" echo -c 40 -b 1-4k "127.0.0.1:$p" || fail "echo on the first"
second "127.0.0.1:$p" "beside tenkd"
"$TKCLI" echo -c 40 -b 1-4k "127.0.0.1:$p" || fail "echo after the second"
kill -TERM "$first"
wait_exit 20 "$first"

# Any other listener, on the address or on the wildcard.
p=$(free_port)
"$PY" -c 'import socket, sys, time
s = socket.socket()
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(1)
print("listening", flush=True)
time.sleep(60)' "$p" >"$T/py" &
track "$!"
wait_line 10 "$T/py" listening || fail "python listener"
second "127.0.0.1:$p" "beside a wildcard listener"
pass
