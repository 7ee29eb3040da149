#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# chash.sh: the figures of --balance hash (issue 28) for docs/BENCHMARKS.md.
#
#   test/bench/chash.sh [-b dir] [-p phases] [-s seeds] [-n clients]
#       [-r rev] [-R runs] [-d secs] [-o dir]
#
# -p names the phases to run (default 123):
#
#  1. The table against the schemes it was chosen over (Maglev,
#     rendezvous per key, jump hashing, a ring of 160 points a weight):
#     test/bench/chash/schemes.c (which includes src/server/data/chash.c),
#     over 100,000 clients and five upstreams, for each of -s seeds.
#  2. Three tenkd proxies in network namespaces, the upstreams in a
#     different order in each: test/integ/proxy_hash_ns.sh with a sample
#     of -n clients (default 10,000).  Needs unshare(1) and ip(8).
#  3. What the pick costs: user-space instructions (callgrind) of `tenkd
#     proxy -t 1 -b epoll` before (--balance source at rev -r, by
#     default the parent of the commit that added chash.c, built in
#     DIR/base) and after (--balance hash), each under tenkload's
#     connection churn (1,000 64-byte messages a second, each on a new
#     connection, from 249 source addresses) for -d seconds, counted
#     from the end of start-up (callgrind_control -z); -R interleaved
#     runs each.  Per session: all instructions, and those of the pick
#     (upstream_pick, and chash_addr after, inclusive).
#
# Output: markdown on stdout; raw files in -o DIR (default: a temporary
# directory).  Not run by `make test`.

set -u

USAGE="[-b dir] [-p phases] [-s seeds] [-n clients] [-r rev] [-R runs]
	[-d secs] [-o dir]"
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
B=$src/build
# shellcheck source=test/bench/lib.sh
. "$here/lib.sh"
SEEDS=20
CLIENTS=10000
REV=
RUNS=2
DUR=5
OUT=
PHASES=123
bench_opts 'b:B p:PHASES s:SEEDS n:CLIENTS r:REV R:RUNS d:DUR o:OUT' "$@"
shift $((OPTIND - 1))
[ $# -eq 0 ] || bench_usage
B=$(cd "$B" && pwd) || die "no build directory"
bench_init chash
PIDS=""
bench_trap PIDS

echo "# --balance hash: $(date -u +%Y-%m-%dT%H:%MZ), load $(load1)," \
    "$(nproc) CPUs, commit $(git -C "$src" rev-parse --short HEAD)"

# phase N: whether -p names phase N.
phase() {
	case $PHASES in
	*"$1"*) return 0 ;;
	esac
	return 1
}

if phase 1; then
	echo
	echo "## 1. The table and the alternatives"
	echo
	# shellcheck disable=SC2046
	"${CC:-cc}" -O2 -std=c11 -D_GNU_SOURCE -I"$src/include" \
	    $(pkg-config --cflags libbsd-overlay 2>/dev/null) \
	    -o "$OUT/schemes" "$here/chash/schemes.c" -lm ||
	    die "cannot build schemes"
	"$OUT/schemes" "$SEEDS" | tee "$OUT/schemes.md"
fi

if phase 2; then
	echo
	echo "## 2. Three proxies in network namespaces, $CLIENTS clients"
	echo
	if HASH_NS_CLIENTS=$CLIENTS TK_BIN=$B TK_SRC=$src \
	    sh "$src/test/integ/proxy_hash_ns.sh" >"$OUT/ns.out" 2>&1; then
		echo "agreed: $(tail -n 1 "$OUT/ns.out")"
	else
		echo "not run or failed: $(tail -n 3 "$OUT/ns.out")"
	fi
fi

phase 3 || exit 0
echo
echo "## 3. Instructions per session, before and after (callgrind)"
echo
if [ -z "$REV" ]; then
	REV=$(git -C "$src" log --format=%H --diff-filter=A -- \
	    src/server/chash.c | tail -n 1)
	[ -n "$REV" ] || die "no commit adds src/server/chash.c: give -r"
	REV=$REV^
fi
command -v valgrind >/dev/null || die "no valgrind"
rm -rf "$OUT/base"
mkdir -p "$OUT/base"
git -C "$src" archive "$REV" | tar -x -C "$OUT/base" ||
    die "cannot export $REV"
make -C "$OUT/base" -s build/tenkd >"$OUT/base.make" 2>&1 ||
    die "cannot build $REV: $(tail -n 3 "$OUT/base.make")"

ups=""
for _ in 1 2 3 4 5; do
	: >"$OUT/up.err"
	"$TENKD" echo -t 1 -l 127.0.0.1:0 2>"$OUT/up.err" &
	PIDS="$PIDS $!"
	await_addr "$OUT/up.err" $! || die "upstream: $LERR"
	ups="$ups -u $LADDR"
done

# cg NAME BINARY BALANCE RUN: one run, its figures appended to cg.txt.
cg() {
	_o=$OUT/cg.$1.$4
	: >"$_o.err"
	# shellcheck disable=SC2086
	valgrind --tool=callgrind --callgrind-out-file="$_o" "$2" proxy \
	    -t 1 -b epoll -l 127.0.0.1:0 $ups --balance "$3" 2>"$_o.err" &
	_vp=$!
	PIDS="$PIDS $_vp"
	await_addr "$_o.err" "$_vp" || die "$1: $LERR"
	callgrind_control -z "$_vp" >/dev/null 2>&1 ||
	    die "callgrind_control"
	"$TENKLOAD" -q -t 1 -c 10 -R 1000 -d "${DUR}s" --conn-lifetime 1 \
	    --source 127.0.0.2-127.0.0.250 --json "$_o.json" "$LADDR" \
	    >"$_o.load" 2>&1 || die "$1: tenkload: $(tail -n 3 "$_o.load")"
	kill -TERM "$_vp"
	wait "$_vp"
	callgrind_annotate --inclusive=yes --threshold=100 "$_o" \
	    >"$_o.ann" 2>/dev/null
	awk -v name="$1" -v s="$(jget "$_o.json" connections.reconnects)" '
	    /^totals:/ { tot = $2 }
	    /upstream\.c:upstream_pick \[/ || /chash\.c:chash_addr \[/ {
		gsub(/,/, "", $1); pick += $1 }
	    END { s += 10; printf "%s %d %.0f %.1f\n", name, s, tot / s,
		pick / s }' "$_o" "$_o.ann" >>"$OUT/cg.txt"
}
: >"$OUT/cg.txt"
r=1
while [ "$r" -le "$RUNS" ]; do
	cg before "$OUT/base/build/tenkd" source "$r"
	cg after "$TENKD" hash "$r"
	r=$((r + 1))
done
echo "before: $REV --balance source; after: HEAD --balance hash;" \
    "load $(load1) at the end"
echo
echo "| | sessions | instructions a session | of which the pick |"
echo "| --- | ---: | ---: | ---: |"
awk '{ printf "| %s | %d | %d | %.1f |\n", $1, $2, $3, $4 }' "$OUT/cg.txt"
