#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# --fastpath sockmap, both ways at once toward a client that does not
# read: the upstream streams 8 MiB down while the client streams 4 MiB
# up (8 KiB each 2 ms) and reads nothing; the upstream reads only after
# 1.5 s.  The
# redirect toward the client shares the client socket's psock queue
# with the client's own bytes that the program passes to tenkd, so a
# redirected segment the client's send queue cannot take held the
# upload back for good (the upstream got 800 KB of 5.4 MB, the kernel
# holding the rest).  Grants are held to what the destination's send
# queue can take: the upload arrives whole and in order.  Skips where
# tenkd cannot load the program.
# backends: epoll poll
# timeout: 120
. "$(dirname "$0")/lib.sh"

# duplex up PORTFILE | duplex client ADDR: the two peers.
duplex() {
	python3 - "$@" <<'EOF'
import socket, struct, sys, threading, time

UP, DOWN = 4 << 20, 8 << 20

def pattern(off, n):
    w = off // 4
    return b''.join(struct.pack('>I', (w + i) & 0xffffffff)
                    for i in range(n // 4))

if sys.argv[1] == 'up':
    ls = socket.socket()
    ls.bind(('127.0.0.1', 0))
    ls.listen(1)
    with open(sys.argv[2] + '.tmp', 'w') as f:
        f.write('%d\n' % ls.getsockname()[1])
    import os
    os.rename(sys.argv[2] + '.tmp', sys.argv[2])
    s, _ = ls.accept()

    def down():
        try:
            for off in range(0, DOWN, 65536):
                s.sendall(pattern(off, 65536))
        except OSError:
            pass
    threading.Thread(target=down, daemon=True).start()
    time.sleep(1.5)
    s.settimeout(60)
    got, buf = 0, b''
    while got < UP:
        d = s.recv(1 << 20)
        if not d:
            break
        buf += d
        n = len(buf) // 4 * 4
        if buf[:n] != pattern(got, n):
            print('out of order at byte %d' % got, flush=True)
            sys.exit(1)
        got += n
        buf = buf[n:]
    print('received %d' % got, flush=True)
    time.sleep(30)
else:
    host, port = sys.argv[2].rsplit(':', 1)
    c = socket.socket()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    c.connect((host, int(port)))
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for off in range(0, UP, 8192):
        c.sendall(pattern(off, 8192))
        time.sleep(0.002)
    print('sent %d' % UP, flush=True)
    time.sleep(30)
EOF
}

command -v python3 >/dev/null || skip "no python3"
duplex up "$T/port" >"$T/up.out" 2>&1 &
track $!
wait_for 10 test -s "$T/port" || fail "upstream: $(cat "$T/up.out")"
tenkd_start proxy --fastpath sockmap --threads 1 \
    -u "127.0.0.1:$(cat "$T/port")"
grep -q 'sessions forwarded by the kernel' "$TENKD_LOG" ||
    skip "$(grep -- '--fastpath' "$TENKD_LOG")"
duplex client "$ADDR" >"$T/cl.out" 2>&1 &
track $!
wait_line 60 "$T/up.out" '^received 4194304$' ||
    fail "upload: upstream $(cat "$T/up.out"), client $(cat "$T/cl.out")"
echo "client's 4 MiB up, in order, with 8 MiB held toward it"
pass
