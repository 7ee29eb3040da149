#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A port held only by connections in TIME_WAIT is no owner (issue 22):
# after a server that closed first is gone, tenkd starts on its port
# where its binds can pass them (the server set SO_REUSEPORT, or was a
# tenkd: SO_REUSEADDR), where it said "address in use (by another
# process)" before while --check said OK.  Where no bind can pass them
# (a server with neither option) it exits 1 saying so, not blaming a
# listener.  A live listener is still refused (ops_owner).
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c '' 2>/dev/null || skip "no python3"

# timewait OPTS: a server on 127.0.0.1:0 with socket options OPTS
# (reuseaddr, reuseport, none) accepts one client and closes first,
# then stops listening; prints its port, left in TIME_WAIT.
timewait() {
	"$PY" - "$1" <<'EOF'
import socket, sys, time
s = socket.socket()
if sys.argv[1] == "reuseport":
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
s.bind(("127.0.0.1", 0))
s.listen(1)
port = s.getsockname()[1]
c = socket.create_connection(("127.0.0.1", port))
a, _ = s.accept()
a.close()
c.recv(1)
c.close()
s.close()
print(port)
EOF
}
# _tw PORT: a connection in TIME_WAIT on 127.0.0.1:PORT (st 06).
_tw() {
	_hex=$(printf '0100007F:%04X' "$1")
	awk -v a="$_hex" '$2 == a && $4 == "06" { f = 1 } END { exit !f }' \
	    /proc/net/tcp
}

p=$(timewait reuseport)
wait_for 10 _tw "$p" || fail "no TIME_WAIT on $p"
"$TENKD" echo --check --listen "127.0.0.1:$p" 2>"$T/check" ||
    fail "--check: $(cat "$T/check")"
"$TENKD" echo --threads 2 --listen "127.0.0.1:$p" 2>"$T/log" &
pid=$!
track "$pid"
wait_line 10 "$T/log" "listening on 127.0.0.1:$p" ||
    fail "after a SO_REUSEPORT server: $(cat "$T/log")"
"$TKCLI" echo -c 4 -b 1-4k "127.0.0.1:$p" || fail "echo"
kill -TERM "$pid"
wait_exit 10 "$pid"

# tenkd's own TIME_WAITs: closed first at the idle timeout, then
# restarted on the same port at once.
tenkd_start echo --threads 1 --idle-timeout 100ms
p=$PORT
"$PY" "$TK_SRC/test/integ/ppsend.py" -w 10 "$ADDR" >/dev/null ||
    fail "no idle close"
kill -TERM "$TENKD_PID"
wait_exit 10 "$TENKD_PID"
# The client's FIN may still be on its way (a loaded machine).
wait_for 10 _tw "$p" || fail "no TIME_WAIT of tenkd's on $p"
"$TENKD" echo --threads 2 --listen "127.0.0.1:$p" 2>"$T/log2" &
pid=$!
track "$pid"
wait_line 10 "$T/log2" "listening on 127.0.0.1:$p" ||
    fail "restart: $(cat "$T/log2")"
kill -TERM "$pid"
wait_exit 10 "$pid"

# A server that set neither: no bind passes until TIME_WAIT ends; one
# line that says so.
p=$(timewait none)
wait_for 10 _tw "$p" || fail "no TIME_WAIT on $p"
timeout 10 "$TENKD" echo --listen "127.0.0.1:$p" 2>"$T/log3"
s=$?
[ "$s" -eq 1 ] || fail "exit $s: $(cat "$T/log3")"
grep -q "listen on 127.0.0.1:$p: address in use, though no listener" \
    "$T/log3" || fail "$(cat "$T/log3")"
grep -q 'another process' "$T/log3" && fail "blamed a listener"
pass
