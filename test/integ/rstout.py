# SPDX-License-Identifier: BSD-2-Clause
# rstout.py [--tls] ADDR:PORT PID [UPPORT]: a client that resets
# (SO_LINGER 0)
# before tenkd can send it what it sent, for accesslog_unsent.sh.  It
# connects, sends one byte and reads it back, so that the connection
# (and a proxy's to its upstream) is established, then:
# - without UPPORT (echo): stops PID (SIGSTOP), sends N bytes and
#   resets, waits until tenkd's socket has taken the reset (ss(8) no
#   longer lists it), and lets PID go on (SIGCONT): tenkd then reads
#   the N bytes, and its sends of them fail;
# - with UPPORT (proxy, PID its echo upstream): stops the upstream,
#   sends N bytes and its FIN, waits until the upstream's socket has
#   them (CLOSE_WAIT), resets, waits until the proxy's socket has taken
#   the reset, and lets the upstream go on: it echoes the N bytes, the
#   proxy reads them, and its sends to the client fail.
# With --tls the client speaks TLS (verifying nothing), its FIN without
# close_notify.  Prints "received K": the bytes the client read, all it
# could have.
# SIGSTOP takes effect after kill(2) returns: each thread's state says
# when.  A wait is bounded (20 s); PID goes on whatever happens.
import os
import signal
import socket
import ssl
import struct
import subprocess
import sys
import time

N = 1000


def sockets(state, sport, dport=None):
    """Whether ss(8) lists a TCP socket of 127.0.0.1:sport in state."""
    f = ["sport", "=", ":%d" % sport]
    if dport is not None:
        f += ["and", "dport", "=", ":%d" % dport]
    r = subprocess.run(["ss", "-tnH", "state", state] + f, check=True,
                       stdout=subprocess.PIPE, universal_newlines=True)
    return r.stdout.strip() != ""


def stopped(pid):
    """Whether every thread of pid has stopped (SIGSTOP is not at once)."""
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, t)) as f:
                st = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            continue
        if st not in ("T", "t"):
            return False
    return True


def wait(what, cond):
    end = time.monotonic() + 20
    while not cond():
        if time.monotonic() > end:
            sys.exit("rstout: timed out waiting for " + what)
        time.sleep(0.01)


def main():
    args = sys.argv[1:]
    tls = args[0] == "--tls"
    if tls:
        args = args[1:]
    host, port = args[0].rsplit(":", 1)
    port = int(port)
    pid = int(args[1])
    upport = int(args[2]) if len(args) > 2 else None
    c = socket.create_connection((host, port), timeout=20)
    me = c.getsockname()[1]
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        c = ctx.wrap_socket(c)
    c.sendall(b"x")
    got = len(c.recv(1))
    os.kill(pid, signal.SIGSTOP)
    try:
        wait("pid %d to stop" % pid, lambda: stopped(pid))
        c.sendall(b"q" * N)
        if upport is not None:
            c.shutdown(socket.SHUT_WR)
            # The upstream's end of the session has the bytes and FIN.
            wait("the upstream's CLOSE_WAIT",
                 lambda: sockets("close-wait", upport))
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     struct.pack("ii", 1, 0))
        c.close()
        # tenkd's end of the client's connection is reset: gone.
        wait("the reset", lambda: not sockets("all", port, me))
    finally:
        os.kill(pid, signal.SIGCONT)
    print("received %d" % got)


main()
