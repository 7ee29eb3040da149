#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# test-stress.sh RUNNER ARGS...: run the test runner with ARGS beside
# stress-ng --cpu 4, a load like that of a shared CI machine, and stop
# stress-ng by its pid when the runner ends, whatever its result (or
# when this script is stopped); exit with the runner's status.  The
# load ends by itself after STRESS_MAX seconds (2 h) should both be
# killed at once.
set -u
runner=$1
shift
stress-ng --cpu 4 --timeout "${STRESS_MAX:-7200}" --quiet &
sp=$!
stop() {
	kill -TERM "$sp" 2>/dev/null
	wait "$sp" 2>/dev/null
}
trap stop EXIT
trap 'exit 1' INT TERM
echo "test-stress: stress-ng --cpu 4 (pid $sp) beside the suite"
"$runner" "$@"
st=$?
stop
trap - EXIT
echo "test-stress: stress-ng stopped; the suite's status: $st"
exit "$st"
