#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Signals to the master while a reload or an upgrade is under way
# (issue 15).  A SIGUSR1 does not kill a worker as it starts.  A SIGHUP
# during a reload is not lost: another reload follows, with the file as
# it is then.  A SIGUSR2 during a reload: the upgrade follows it.  A
# SIGHUP during an upgrade goes to the new master once it took over.  A
# SIGUSR2 to a new master that has not taken the pidfile over yet waits
# for that.  A SIGTERM during an upgrade stops the new master too, and
# the old one leaves once it is gone, removing the pidfile.  To hold a
# reload or an upgrade under way, the access log's open(2) waits while a
# gate file exists (test/shim/holdopen.so; a FIFO without a reader did
# it before tenkd refused FIFOs): a new worker or master opens the log
# again and waits there until the gate goes.
# backends: none
# timeout: 90
. "$(dirname "$0")/lib.sh"

_nkids() {
	[ "$(kids_of "$1" | wc -w)" -eq "$2" ]
}
gate=$T/gate
# reader: no gate, so that an open of the log goes on.
reader() {
	rm -f "$gate"
}
# noreader: the gate, so that the next open of the log waits.
noreader() {
	: >"$gate"
}
# _usr1_met PID: PID is gone, or holds a SIGUSR1 it does not take yet.
_usr1_met() {
	alive "$1" || return 0
	_pnd=$(awk '/^ShdPnd:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
	[ -n "$_pnd" ] && [ $((0x$_pnd & 0x200)) -ne 0 ]
}
# conf IDLE: the file, with --idle-timeout IDLE.
f=$T/tenkd.conf
conf() {
	printf 'threads 1\nworkers 2\nidle-timeout %s\n' "$1" >"$f"
}
# upgrading OLD: wait for master OLD to start a new one, and set UP to
# its pid once it read its options (its pidfile line comes after).
upgrading() {
	_re="tenkd\\[$1\\] info: upgrade: .* started as pid"
	wait_line 10 "$TENKD_LOG" "$_re" || fail "$1: no upgrade started"
	UP=$(sed -n "s/.*$_re \\([0-9]*\\).*/\\1/p" "$TENKD_LOG" | tail -n 1)
	track "$UP"
	wait_line 10 "$TENKD_LOG" "tenkd\\[$UP\\] info: pidfile .* holds it" ||
	    fail "$1: the new master $UP did not start"
}

reader
conf 1m
LD_PRELOAD=$TK_BIN/test/holdopen.so HOLDOPEN_NAME=acc HOLDOPEN_GATE=$gate \
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
    tenkd_start echo -f "$f" --pidfile "$T/pid" --access-log "$T/acc"
old=$TENKD_PID
wait_for 10 _nkids "$old" 2 || fail "workers: $(kids_of "$old")"

# SIGUSR1 (logrotate's) during a reload: the master passes it on to the
# new workers as they start, which reopen their logs once they can
# rather than die of it, and the reload goes through.  They are stopped
# (SIGSTOP) while they wait for the log, before their handlers are in
# place, so that the master can reopen its own log meanwhile.
noreader
kill -HUP "$old"
wait_line 10 "$TENKD_LOG" 'worker 1 of generation 2: pid' ||
    fail "no reload started"
nw=$(sed -n 's/.*worker . of generation 2: pid \([0-9]*\).*/\1/p' \
    "$TENKD_LOG")
# shellcheck disable=SC2086
kill -STOP $nw
reader
kill -USR1 "$old"
for p in $nw; do
	wait_for 10 _usr1_met "$p" || fail "SIGUSR1 not passed on to $p"
done
# shellcheck disable=SC2086
kill -CONT $nw
wait_line 10 "$TENKD_LOG" 'reload: 2 workers of generation 2 started' ||
    fail "SIGUSR1 during a reload: $(grep -e reload -e signal "$TENKD_LOG")"
grep 'killed by signal' "$TENKD_LOG" && fail "a worker killed by a signal"

# SIGHUP, and another while the new workers wait: a second reload
# follows the first, with the file as it was at the second signal.
noreader
conf 2m
kill -HUP "$old"
wait_line 10 "$TENKD_LOG" 'worker 1 of generation 3: pid' ||
    fail "no reload started"
conf 3m
kill -HUP "$old"
wait_line 10 "$TENKD_LOG" 'SIGHUP.*reload under way' ||
    fail "no word on the second SIGHUP"
reader
wait_line 20 "$TENKD_LOG" 'reload: 2 workers of generation 3 started' ||
    fail "the first reload not done"
wait_line 20 "$TENKD_LOG" 'reload: 2 workers of generation 4 started' ||
    fail "the second SIGHUP lost: $(grep SIGHUP "$TENKD_LOG")"
wait_line 10 "$TENKD_LOG" 'idle timeout 180s' ||
    fail "the file of the second SIGHUP not read"
"$TKCLI" echo -c 10 -b 1-4k "$ADDR" || fail "echo after two reloads"

# SIGUSR2 while a reload waits: the upgrade follows it.
noreader
kill -HUP "$old"
wait_line 10 "$TENKD_LOG" 'worker 1 of generation 5: pid' ||
    fail "no third reload started"
kill -USR2 "$old"
wait_line 10 "$TENKD_LOG" 'SIGUSR2.*reload under way' ||
    fail "no word on SIGUSR2"
# A shared lock on the pidfile, taken as soon as the old master lets it
# go, keeps the new one from taking it over until it is killed.
( exec 9<"$T/pid" && flock -s 9 && exec sleep 60 ) &
lk=$!
track "$lk"
reader
wait_line 20 "$TENKD_LOG" 'reload: 2 workers of generation 5 started' ||
    fail "the third reload not done"
wait_line 20 "$TENKD_LOG" 'upgrade: the new master (pid [0-9]*) is ready' ||
    fail "SIGUSR2 lost: $(grep SIGUSR2 "$TENKD_LOG")"
new=$(sed -n 's/.*upgrade: the new master (pid \([0-9]*\)) is ready.*/\1/p' \
    "$TENKD_LOG")
track "$new"
wait_exit 30 "$old"
[ "$STATUS" -eq 0 ] || fail "old master exit status $STATUS"
"$TKCLI" echo -c 10 -b 1-4k "$ADDR" || fail "echo after the upgrade"

# SIGUSR2 before the new master took the pidfile over (it tries every
# 100 ms once the old one let it go; the lock holds it off here): the
# upgrade waits for that, or the next new master would take the
# pidfile, unlocked meanwhile, before it is ready.
noreader
kill -USR2 "$new"
wait_line 10 "$TENKD_LOG" 'SIGUSR2: will upgrade .*pidfile' ||
    fail "upgraded before the pidfile was taken over"
kill "$lk"
wait "$lk" 2>/dev/null
upgrading "$new"
newer=$UP
grep -q "tenkd\\[$new\\] info: pidfile .*: taken over" "$TENKD_LOG" ||
    fail "the pidfile not taken over before the upgrade"

# SIGHUP while an upgrade waits: the new master reloads once it took
# over.  It read the file before it waits for the log (the pidfile's
# line comes after the parse), so 4m can only come from the reload.
conf 4m
kill -HUP "$new"
wait_line 10 "$TENKD_LOG" 'SIGHUP.*upgrade under way' ||
    fail "no word on SIGHUP during the upgrade"
reader
wait_line 20 "$TENKD_LOG" "the new master (pid $newer) is ready" ||
    fail "the second upgrade not done"
wait_line 20 "$TENKD_LOG" \
    "tenkd\\[$newer\\] info: reload: 2 workers of generation 2 started" ||
    fail "SIGHUP during the upgrade lost: $(grep SIGHUP "$TENKD_LOG")"
wait_line 10 "$TENKD_LOG" 'idle timeout 240s' ||
    fail "the newer master did not read the file again"
wait_for 30 _gone "$new" || fail "the second old master stayed"

# SIGTERM while an upgrade waits: the new master stops too, and the old
# one, once it is gone, leaves no pidfile.
noreader
kill -USR2 "$newer"
upgrading "$newer"
last=$UP
kill -TERM "$newer"
wait_for 30 _gone "$newer" || fail "the master did not stop"
_gone "$last" || fail "the new master outlived the stop"
[ ! -e "$T/pid" ] || fail "pidfile left behind: $(cat "$T/pid")"
pass
