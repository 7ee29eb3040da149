#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# After a reload, the old workers drain: they closed their listeners,
# which the master and the new generation still hold, and must never
# call accept4 again, however many clients come meanwhile (issue 22).
# On epoll a listener closed without being unwatched stayed registered,
# and every new client woke every draining worker into an accept4 on
# fd -1.  Every accept4 is counted per process by an LD_PRELOAD shim.
# backends: epoll poll
# timeout: 90
. "$(dirname "$0")/lib.sh"

_nkids() {
	[ "$(kids | wc -w)" -eq "$1" ]
}
# calls PIDS: the accept4 calls the processes PIDS made so far.
calls() {
	_c=0
	for _p in $1; do
		_c=$((_c + $(awk -v p="$_p" '$1 == p' "$T/accepts" | wc -l)))
	done
	echo "$_c"
}
_draining() {
	for _p in $old; do
		grep -q "tenkd\\[$_p\\].*no longer accepting" "$TENKD_LOG" ||
		    return 1
	done
}

f=$T/tenkd.conf
printf 'threads 2\nworkers 2\ndrain-timeout 1m\n' >"$f"
: >"$T/accepts"
ACCEPTLOG=$T/accepts LD_PRELOAD=$TK_BIN/test/acceptlog.so \
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
    tenkd_start echo -f "$f"
wait_for 10 _nkids 2 || fail "workers: $(kids)"
old=$(kids)

# Sessions that keep the old workers draining for the whole test.
"$TKCLI" hold -c 40 -d 60 "$ADDR" >"$T/hold" 2>&1 &
hp=$!
track "$hp"
wait_line 20 "$T/hold" '^ready 40' || fail "hold: $(cat "$T/hold")"
kill -HUP "$TENKD_PID"
wait_line 20 "$TENKD_LOG" 'reload: 2 workers of generation 2 started' ||
    fail "no reload"
wait_for 20 _draining || fail "the old workers do not say they drain"
for p in $old; do
	alive "$p" || fail "old worker $p gone: its sessions were held"
done
# A worker's threads stop accepting a moment after its main thread
# said so: count from once that count stays put.
before=$(calls "$old")
sleep 1
while [ "$(calls "$old")" -ne "$before" ]; do
	before=$(calls "$old")
	sleep 1
done

# New clients, all to the new generation, while the old one drains.
i=0
while [ "$i" -lt 10 ]; do
	"$TKCLI" echo -c 50 -b 1-256 "$ADDR" ||
	    fail "echo while the old workers drain"
	i=$((i + 1))
done
after=$(calls "$old")
[ "$after" -eq "$before" ] ||
    fail "the draining workers called accept4 $((after - before)) times" \
	"for 500 new clients"
bad=$(awk '$2 == -1 || $4 == 9' "$T/accepts" | wc -l)
[ "$bad" -eq 0 ] || fail "$bad accept4 calls on a closed descriptor"
echo "old workers: $before accept4 calls before the drain, none after"
kill -TERM "$hp"
wait "$hp" 2>/dev/null
pass
