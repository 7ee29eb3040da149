# SPDX-License-Identifier: BSD-2-Clause
# Shared helpers for the integration scripts (POSIX sh).  Each script:
#
#	. "$(dirname "$0")/lib.sh"
#	tenkd_start echo --threads 1	# sets TENKD_PID, PORT, ADDR
#	...
#	pass
#
# The runner sets TK_BIN (build dir), TK_SRC (source dir) and TK_BACKEND
# (empty for backend-independent scripts).  Every process a script starts
# through these helpers is killed by the EXIT trap; the runner also kills
# the script's whole process group when it ends.  No fixed ports: tenkd
# binds port 0 and we read back "listening on ADDR:PORT".

set -u
TK_BIN=${TK_BIN:-$(cd "$(dirname "$0")/../../build" && pwd)}
TK_SRC=${TK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
TK_BACKEND=${TK_BACKEND:-}
TENKD=$TK_BIN/tenkd
TENKLOAD=$TK_BIN/tenkload
TOOLS=$TK_BIN/test
T=$(mktemp -d /tmp/tk-integ.XXXXXX)
TK_PIDS=""

cleanup() {
	for p in $TK_PIDS; do
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
	echo "FAIL: $*" >&2
	if [ -n "${TENKD_LOG:-}" ] && [ -f "$TENKD_LOG" ]; then
		echo "--- tenkd log (tail) ---" >&2
		tail -n 20 "$TENKD_LOG" >&2
	fi
	exit 1
}

skip() {
	echo "SKIP: $*" >&2
	exit 77
}

pass() {
	exit 0
}

# Remember a PID for the EXIT trap.
track() {
	TK_PIDS="$TK_PIDS $1"
}

# Backend option for tenkd/tenkload, empty when the script is not per-backend.
be_opt() {
	if [ -n "$TK_BACKEND" ]; then
		printf -- '--backend %s' "$TK_BACKEND"
	fi
}

# wait_for SECONDS COMMAND...: poll every 0.05 s until COMMAND succeeds.
wait_for() {
	_n=$(( $1 * 20 ))
	shift
	while [ "$_n" -gt 0 ]; do
		if "$@"; then
			return 0
		fi
		sleep 0.05
		_n=$((_n - 1))
	done
	return 1
}

_listening() {
	grep -q 'listening on ' "$1" 2>/dev/null
}

# tenkd_start ARGS...: start tenkd on 127.0.0.1:0 with the script's
# backend; sets TENKD_PID, TENKD_LOG, ADDR (host:port) and PORT.
tenkd_start() {
	TENKD_LOG=$T/tenkd.$$.$(date +%s%N).log
	# shellcheck disable=SC2046
	"$TENKD" "$@" $(be_opt) --listen 127.0.0.1:0 2>"$TENKD_LOG" &
	TENKD_PID=$!
	track "$TENKD_PID"
	wait_for 10 _listening "$TENKD_LOG" ||
	    fail "tenkd did not report listening: $(head -c 400 "$TENKD_LOG")"
	ADDR=$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$TENKD_LOG" |
	    head -n 1)
	PORT=${ADDR##*:}
}

# alive PID: the process exists and is not a zombie.
alive() {
	[ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

# wait_exit SECONDS PID: wait for PID (a child of this shell) to exit and
# set STATUS to its exit status; fail on timeout.
wait_exit() {
	_s=$1
	_p=$2
	if ! wait_for "$_s" _gone "$_p"; then
		fail "process $_p still running after $_s s"
	fi
	wait "$_p"
	STATUS=$?
}

_gone() {
	! alive "$1"
}

# The open-file limit of this shell (tests size themselves by it).
nofile() {
	ulimit -n
}
