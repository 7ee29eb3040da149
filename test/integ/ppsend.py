# SPDX-License-Identifier: BSD-2-Clause
# ppsend.py [-T secs] [-w secs] [-c k,...] [-s SRC] ADDR:PORT PART...: a
# client that speaks raw bytes, for the --accept-proxy scripts, from the
# address SRC if given (127.0.0.2: another peer).  Each PART is
# one write: a string with Python escapes (\r, \n, \x00), or "+SECS", a
# pause before the next part.  -c K,...: the parts (pauses apart) are
# joined and cut at byte offsets K instead, with a 0.05 s pause at each
# cut.  After the last write it waits up to -w secs (default 0) for the
# server to close, then shuts down its write side and reads until EOF,
# a reset or -T secs from the connect (default 20).  Prints one line:
#	got HEX eof|reset|timeout
# the bytes read in hex ("-" for none) and how the connection ended.
# A write that fails because the server closed first ends the writing.
# Exit 0 unless the connect fails.
import codecs
import socket
import sys
import time


def parts_of(args, cuts):
    parts = []
    for a in args:
        if a.startswith("+"):
            parts.append(float(a[1:]))
        else:
            parts.append(codecs.escape_decode(a.encode())[0])
    if not cuts:
        return parts
    data = b"".join(p for p in parts if isinstance(p, bytes))
    out, prev = [], 0
    for k in cuts + [len(data)]:
        out += [data[prev:k], 0.05]
        prev = k
    return out[:-1]


def read(s, got, until):
    """Read into got until EOF, a reset or time until; how it ended."""
    while time.monotonic() < until:
        try:
            b = s.recv(65536)
        except socket.timeout:
            continue
        except ConnectionResetError:
            return "reset"
        if not b:
            return "eof"
        got += b
    return None


def main():
    args = sys.argv[1:]
    limit, wait, cuts, src = 20.0, 0.0, [], None
    while args and args[0] in ("-T", "-w", "-c", "-s"):
        if args[0] == "-T":
            limit = float(args[1])
        elif args[0] == "-w":
            wait = float(args[1])
        elif args[0] == "-s":
            src = (args[1], 0)
        else:
            cuts = [int(k) for k in args[1].split(",")]
        args = args[2:]
    host, port = args[0].rsplit(":", 1)
    s = socket.create_connection((host.strip("[]"), int(port)),
                                 source_address=src)
    s.settimeout(0.05)
    t0 = time.monotonic()
    got = bytearray()
    end = None
    try:
        for p in parts_of(args[1:], cuts):
            if isinstance(p, float):
                time.sleep(p)
            else:
                s.sendall(p)
    except (BrokenPipeError, ConnectionResetError):
        pass
    if wait > 0:
        end = read(s, got, time.monotonic() + wait)
    if end is None:
        try:
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        end = read(s, got, t0 + limit) or "timeout"
    print("got %s %s" % (bytes(got).hex() or "-", end))


main()
