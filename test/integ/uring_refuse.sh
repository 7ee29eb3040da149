#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A kernel that refuses io_uring (simulated with TK_IO_URING_REFUSE, as
# ENOSYS): --backend io_uring ends tenkd, tenkload and tenkbench with
# exit status 1 and one line on stderr naming the backend, before any
# socket is opened; the default backend choice never takes io_uring, so
# tenkd without --backend still runs.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

"$TENKD" --backend list | grep -qx io_uring ||
    skip "io_uring is not compiled in (no liburing at build time)"

# From here on every program meets a kernel that refuses io_uring.
TK_IO_URING_REFUSE=1
export TK_IO_URING_REFUSE

# refused PROGRAM ARGS...: exit 1, one line naming io_uring, no stdout.
refused() {
	one_line_error 1 'io_uring: the kernel refuses it' "$@"
}

refused "$TENKD" echo --backend io_uring --listen 127.0.0.1:0
refused "$TENKD" proxy -b io_uring --upstream 127.0.0.1:9
refused "$TENKLOAD" --backend io_uring 127.0.0.1:9
refused "$TK_BIN/tenkbench" --backends epoll,io_uring

# The default choice skips io_uring, refused or not.
"$TENKD" echo --check >"$T/out" 2>"$T/err" ||
    fail "tenkd --check without --backend: $(cat "$T/err")"
grep -q 'backend io_uring' "$T/err" && fail "the default took io_uring"
pass
