#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Start-up and address messages, by their exact lines: a --metrics
# address that is a listener's is refused as given twice (also by
# --check) and one that overlaps it as such; a port alone is "missing
# host" with the same example for -l, --metrics, -u and tenkload; a
# port below net.ipv4.ip_unprivileged_port_start without the capability
# says how to get it, at start and from --check (which binds nothing);
# and a failed start's first line is its error, the info lines after it.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

# said STATUS LINE CMD...: CMD exits STATUS and the first line of its
# stderr is LINE, with a daemon line's time stamp and "tenkd[PID] " taken
# off; a usage error (2) says nothing else.
said() {
	_st=$1
	_want=$2
	shift 2
	timeout 10 "$@" >"$T/said.out" 2>"$T/said.err"
	_s=$?
	[ "$_s" -eq "$_st" ] ||
	    fail "$*: exit $_s, not $_st: $(cat "$T/said.err")"
	_got=$(sed -n '1{s/^[0-9T:.-]*Z tenkd\[[0-9]*\] //;p;}' "$T/said.err")
	[ "$_got" = "$_want" ] ||
	    fail "$*: said \"$_got\", not \"$_want\": $(cat "$T/said.err")"
	if [ "$_st" -eq 2 ]; then
		[ "$(wc -l <"$T/said.err")" -eq 1 ] ||
		    fail "$*: more than one line: $(cat "$T/said.err")"
	fi
}

p=$(dead_addr)
p=${p##*:}
said 2 "tenkd: --metrics 127.0.0.1:$p: given twice (also a --listen address)" \
    "$TENKD" echo -l "127.0.0.1:$p" --metrics "127.0.0.1:$p"
said 2 "tenkd: --metrics 127.0.0.1:$p: given twice (also a --listen address)" \
    "$TENKD" echo --metrics "127.0.0.1:$p" -l "127.0.0.1:$p" --check
said 2 "tenkd: --metrics 0.0.0.0:$p: overlaps --listen 127.0.0.1:$p" \
    "$TENKD" echo -l "127.0.0.1:$p" --metrics "0.0.0.0:$p" --check
said 2 "tenkd: --metrics 9177: missing host (as in 127.0.0.1:9177)" \
    "$TENKD" echo --metrics 9177
said 2 "tenkd: -l 7777: missing host (as in 127.0.0.1:7777)" \
    "$TENKD" echo -l 7777
said 2 "tenkd: -u 7000: missing host (as in 127.0.0.1:7000)" \
    "$TENKD" proxy -u 7000
said 2 "tenkload: 7777: missing host (as in 127.0.0.1:7777)" \
    "$TENKLOAD" -d 1s 7777

# A listener there (another tenkd): the error first, then the facts
# held back.
tenkd_start echo --threads 1
said 1 "error: listen on $ADDR: address in use (by another process)" \
    "$TENKD" echo -t 1 -l "$ADDR"
sed -n '2p' "$T/said.err" | grep -q ' info: RLIMIT_NOFILE ' ||
    fail "the info lines do not follow the error: $(cat "$T/said.err")"
grep -q ' info: listening on' "$T/said.err" &&
    fail "listening said: $(cat "$T/said.err")"

# A privileged port, as a user without CAP_NET_BIND_SERVICE: as nobody
# when we are root (setpriv), else as ourselves.
low=$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start 2>/dev/null) ||
    low=1024
[ "$low" -gt 1 ] || { echo "every port is unprivileged here"; pass; }
if [ "$(id -u)" -eq 0 ]; then
	command -v setpriv >/dev/null 2>&1 || { echo "no setpriv"; pass; }
	as="setpriv --reuid=65534 --regid=65534 --clear-groups"
else
	as=
fi
lp=$((low - 1))
hint="Permission denied: a port below $low needs CAP_NET_BIND_SERVICE, or let tenkd.socket bind it"
# shellcheck disable=SC2086 # $as is a command and its options
said 1 "error: listen on 127.0.0.1:$lp: $hint" \
    $as "$TENKD" echo -t 1 -l "127.0.0.1:$lp"
sed -n '2p' "$T/said.err" | grep -q ' info: RLIMIT_NOFILE ' ||
    fail "the info lines do not follow the error: $(cat "$T/said.err")"
# shellcheck disable=SC2086
said 1 "error: listen on 127.0.0.1:$lp: $hint" \
    $as "$TENKD" echo -t 1 -l "127.0.0.1:$lp" --check
grep -q 'configuration OK' "$T/said.err" && fail "--check said OK"
# shellcheck disable=SC2086
said 1 "error: --metrics 127.0.0.1:$lp: $hint" \
    $as "$TENKD" echo -t 1 -l 127.0.0.1:0 --metrics "127.0.0.1:$lp"
# shellcheck disable=SC2086
said 1 "error: --metrics 127.0.0.1:$lp: $hint" \
    $as "$TENKD" echo -t 1 -l 127.0.0.1:0 --metrics "127.0.0.1:$lp" --check
pass
