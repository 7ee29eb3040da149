#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# tenkload-fanout.sh: run one tenkload on each of several hosts at once,
# all measuring the same window (--start-at), fetch their JSON reports
# and merge them into one (tenkload merge adds the histograms bucket by
# bucket, so the merged percentiles are exact).  Nothing but a remote
# shell is needed on the way: ssh by default, anything that runs
# "RSH HOST COMMAND" otherwise.
#
#   contrib/tenkload-fanout.sh [-p] [-e rsh] [-l secs] [-o dir]
#       [-r prefix] [-T path] host[=sources] ... -- tenkload-args ...
#
#   -e RSH     the remote shell (default ssh); it runs COMMAND on HOST
#   -l SECS    measuring starts this many seconds from now (default 10):
#              time for every host to start and open its connections
#   -o DIR     the reports, each host's output and the merge (default
#              ./fanout-EPOCH)
#   -p         each host keeps its charts (--plot), and the merge draws
#              those of all the hosts in DIR/plot
#   -r PREFIX  the hosts' report files are PREFIX.N.json (default
#              /tmp/tenkload-fanout-EPOCH), read back and removed
#   -T PATH    tenkload on the hosts (default tenkload on their PATH);
#              the merge runs the local tenkload (TENKLOAD, or on PATH)
#   host=LIST  the host's --source addresses, so that each generator
#              connects from its own range
#
# Example: three hosts, each from 50 addresses of its own, 20,000
# connections each, 60 s measured from 20 s from now:
#
#   contrib/tenkload-fanout.sh -l 20 -o run1 a=10.1.1.1-10.1.1.50 \
#       b=10.1.2.1-10.1.2.50 c=10.1.3.1-10.1.3.50 -- \
#       -c 20000 -d 60s 10.1.0.10:7777
#
# Exit status: 0 when every host reported and the merged run passed, 1
# otherwise (the merge's own verdict, or a host without a report), 2 on
# a bad command line.  The hosts' clocks must agree to well within a
# second (NTP); the merge says so when their windows do not overlap.

set -u

usage() {
	echo "usage: $0 [-p] [-e rsh] [-l secs] [-o dir] [-r prefix]" \
	    "[-T path] host[=sources] ... -- tenkload-args ..." >&2
	exit 2
}

RSH=ssh
LEAD=10
OUT=
PLOT=0
PREFIX=
RTK=tenkload
LTK=${TENKLOAD:-tenkload}

while getopts e:l:o:pr:T: opt; do
	case $opt in
	e) RSH=$OPTARG ;;
	l) LEAD=$OPTARG ;;
	o) OUT=$OPTARG ;;
	p) PLOT=1 ;;
	r) PREFIX=$OPTARG ;;
	T) RTK=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
case $LEAD in
''|*[!0-9]*) echo "$0: -l $LEAD: not a number of seconds" >&2; exit 2 ;;
esac

# The hosts, up to "--"; the rest is tenkload's.
HOSTS=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	HOSTS="$HOSTS $1"
	shift
done
[ $# -gt 0 ] || usage
shift
{ [ -n "$HOSTS" ] && [ $# -gt 0 ]; } || usage

AT=$(($(date +%s) + LEAD))
OUT=${OUT:-fanout-$AT}
PREFIX=${PREFIX:-/tmp/tenkload-fanout-$AT}
mkdir -p "$OUT" || exit 1

# q ARG: ARG quoted for a POSIX shell.
q() {
	printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

ARGS=
for a in "$@"; do
	ARGS="$ARGS $(q "$a")"
done

# Start every host; each measures from $AT.
i=0
PIDS=
for h in $HOSTS; do
	i=$((i + 1))
	host=${h%%=*}
	src=
	[ "$host" != "$h" ] && src="--source $(q "${h#*=}")"
	plot=
	[ "$PLOT" = 1 ] && plot="--plot $(q "$PREFIX.$i.plot")"
	"$RSH" "$host" "$(q "$RTK") -q --start-at $AT --json \
	    $(q "$PREFIX.$i.json") $src $plot $ARGS" >"$OUT/host-$i.out" 2>&1 &
	PIDS="$PIDS $!"
	echo "host $i: $host${src:+, $src}" >&2
done
echo "measuring from $(date -u -d "@$AT" '+%H:%M:%S' 2>/dev/null || echo "$AT")" \
    "(epoch $AT); outputs in $OUT" >&2

st=0
i=0
for p in $PIDS; do
	i=$((i + 1))
	wait "$p" || echo "host $i: tenkload exited $? ($OUT/host-$i.out)" >&2
done

# Fetch the reports through the remote shell, and clear them away.
i=0
set --
for h in $HOSTS; do
	i=$((i + 1))
	host=${h%%=*}
	if "$RSH" "$host" "cat $(q "$PREFIX.$i.json") &&
	    rm -f $(q "$PREFIX.$i.json")" >"$OUT/host-$i.json" &&
	    [ -s "$OUT/host-$i.json" ]; then
		set -- "$@" "$OUT/host-$i.json"
	else
		echo "host $i: $host: no report" >&2
		st=1
	fi
done
[ $# -gt 0 ] || exit 1
[ "$PLOT" = 1 ] && set -- --plot "$OUT/plot" "$@"

"$LTK" merge --json "$OUT/merged.json" "$@" >"$OUT/merged.txt" || st=1
cat "$OUT/merged.txt"
exit "$st"
