#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# make test-deb: the package that make deb built, installed with dpkg on
# this machine (as root), used, removed and purged:
# - installed, its files are where Debian puts them, the files of /etc
#   are conffiles, tenkd.service is enabled (tenkd.socket is not), and
#   no service started (a policy-rc.d that forbids it, ours if none is
#   there, as mk/test-deps.sh does);
# - the installed tenkd passes --check with the example tenkd.conf, and
#   echoes the verified traffic of the installed tenkload on a loopback
#   port it picked, until it is stopped by its PID;
# - removed, the conffiles stay and the programs go; purged, nothing of
#   it is left: every path it had, and every path whose name holds
#   "tenk" under the places a package, its maintainer scripts and
#   systemd's enabling write to, is as before the installation.
# The test refuses to run where it would touch what is not its own: a
# tenk package installed, or one of its files there already (make
# install).  Other paths that changed meanwhile (another installation
# running beside it) are listed, not counted.
#
#	sh test/deb.sh build/deb/tenk_VERSION_ARCH.deb
set -u
deb=${1:?usage: deb.sh PACKAGE.deb}
POLICY=/usr/sbin/policy-rc.d
# Where the package, its maintainer scripts and systemd's enabling
# (deb-systemd-helper) put anything.
PLACES="/etc /usr/bin /usr/sbin /lib/systemd /usr/lib/systemd /usr/share/man
    /usr/share/doc /var/lib/systemd /var/lib/dpkg/info /var/log"

T=$(mktemp -d /tmp/tk-deb.XXXXXX) || exit 1
installed=0
ours=0
pid=

say() {
	echo "test-deb: $*" >&2
}
fail() {
	say "FAIL: $*"
	exit 1
}
skip() {
	say "skipped: $*"
	exit 0
}

cleanup() {
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	[ "$installed" = 0 ] || dpkg_do --purge tenk >/dev/null 2>&1
	[ "$ours" = 0 ] || rm -f "$POLICY"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# dpkg_do ARGS...: dpkg ARGS, waiting up to 5 minutes while another dpkg
# or apt-get holds dpkg's lock.
dpkg_do() {
	_try=0
	while ! dpkg "$@" >"$T/dpkg.out" 2>&1; do
		if ! grep -q 'lock' "$T/dpkg.out" || [ "$_try" -ge 150 ]; then
			cat "$T/dpkg.out" >&2
			return 1
		fi
		_try=$((_try + 1))
		sleep 2
	done
}

# listing: every path under PLACES, sorted.
listing() {
	# shellcheck disable=SC2086 # PLACES is a list of directories
	find $PLACES 2>/dev/null | sort
}

# tenk_running: a process runs the installed tenkd.
tenk_running() {
	for _e in /proc/[0-9]*/exe; do
		[ "$(readlink "$_e" 2>/dev/null)" = /usr/sbin/tenkd ] &&
		    return 0
	done
	return 1
}

[ "$(id -u)" = 0 ] || skip "installing a package needs root"
command -v dpkg >/dev/null 2>&1 || skip "no dpkg"
[ -f "$deb" ] || fail "no $deb (make deb builds it)"
dpkg -s tenk >/dev/null 2>&1 &&
    skip "a tenk package is installed here, which the test would remove"
# Every path of the package, directories too, and those there before.
dpkg-deb -c "$deb" | awk '{ p = substr($6, 2); sub(/\/$/, "", p)
	print (p == "" ? "/" : p) }' >"$T/paths" || fail "dpkg-deb -c $deb"
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print substr($6, 2) }' >"$T/files"
while read -r f; do
	[ ! -e "$f" ] ||
	    skip "$f is there already (make install?): the test would replace it"
done <"$T/files"
while read -r p; do
	[ ! -e "$p" ] || echo "$p"
done <"$T/paths" >"$T/existed"

# No service starts while the package is installed.
if [ -e "$POLICY" ]; then
	"$POLICY" tenkd.service start >/dev/null 2>&1
	st=$?
	[ "$st" -eq 101 ] ||
	    skip "$POLICY here lets services start (exit $st, not 101)"
else
	ours=1
	if ! { printf '#!/bin/sh\n# make test-deb: no service starts\n%s\n' \
	    'exit 101' >"$POLICY" && chmod 755 "$POLICY"; }; then
		fail "cannot write $POLICY"
	fi
fi

listing >"$T/before"
say "installing $deb"
dpkg_do --install "$deb" || fail "dpkg --install"
installed=1
dpkg -s tenk | grep -q '^Status: install ok installed$' ||
    fail "not installed: $(dpkg -s tenk)"

# Where Debian puts them, and /etc's as conffiles.
for f in /usr/sbin/tenkd /usr/bin/tenkload /usr/bin/tenkbench; do
	[ -x "$f" ] || fail "no $f"
done
for f in /usr/share/man/man8/tenkd.8.gz /usr/share/man/man1/tenkload.1.gz \
    /usr/share/man/man1/tenkbench.1.gz /lib/systemd/system/tenkd.service \
    /lib/systemd/system/tenkd.socket /usr/share/doc/tenk/copyright \
    /usr/share/doc/tenk/changelog.gz; do
	[ -f "$f" ] || fail "no $f"
done
dpkg-query -W -f '${Conffiles}\n' tenk >"$T/conffiles"
for f in /etc/default/tenkd /etc/tenk/tenkd.conf /etc/logrotate.d/tenkd; do
	grep -q "^ $f " "$T/conffiles" ||
	    fail "$f is not a conffile: $(cat "$T/conffiles")"
done
# shellcheck disable=SC2016 # the unit's own $VARIABLES
grep -q '^ExecStart=/usr/sbin/tenkd \$TENKD_MODE \$TENKD_OPTS$' \
    /lib/systemd/system/tenkd.service || fail "tenkd.service's ExecStart"
grep -q '^EnvironmentFile=-/etc/default/tenkd$' \
    /lib/systemd/system/tenkd.service || fail "tenkd.service's environment"
# tenkd.service enabled for the next boot, tenkd.socket not (it binds
# the same address); neither started.
[ -L /etc/systemd/system/multi-user.target.wants/tenkd.service ] ||
    fail "tenkd.service not enabled"
[ ! -e /etc/systemd/system/sockets.target.wants/tenkd.socket ] ||
    fail "tenkd.socket enabled"
! tenk_running || fail "the installation started tenkd"

# The installed programs.
/usr/sbin/tenkd --version >"$T/version" || fail "tenkd --version"
/usr/bin/tenkbench --help >/dev/null || fail "tenkbench --help"
/usr/sbin/tenkd echo -f /etc/tenk/tenkd.conf --check 2>"$T/check" ||
    fail "tenkd --check: $(cat "$T/check")"
grep -q 'configuration OK' "$T/check" || fail "--check: $(cat "$T/check")"
/usr/sbin/tenkd echo --threads 1 --listen 127.0.0.1:0 2>"$T/tenkd.log" &
pid=$!
i=0
while ! grep -qs 'listening on 127.0.0.1:' "$T/tenkd.log"; do
	i=$((i + 1))
	if [ "$i" -ge 100 ] || ! kill -0 "$pid" 2>/dev/null; then
		fail "tenkd did not listen: $(cat "$T/tenkd.log")"
	fi
	sleep 0.1
done
addr=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' \
    "$T/tenkd.log")
/usr/bin/tenkload --connections 10 --duration 1s "$addr" >"$T/load" 2>&1 ||
    fail "tenkload against the installed tenkd: $(tail -n 5 "$T/load")"
grep -q '^result: ok' "$T/load" || fail "tenkload: $(tail -n 5 "$T/load")"
kill -TERM "$pid"
wait "$pid"
st=$?
pid=
[ "$st" -eq 0 ] || fail "tenkd exit status $st: $(tail -n 3 "$T/tenkd.log")"
say "$(cat "$T/version"): --check and a verified echo: $(grep '^verified:' \
    "$T/load")"

# Removed: the conffiles stay, the programs and units go.
dpkg_do --remove tenk || fail "dpkg --remove"
for f in /usr/sbin/tenkd /usr/bin/tenkload /lib/systemd/system/tenkd.service
do
	[ ! -e "$f" ] || fail "$f left after dpkg --remove"
done
for f in /etc/default/tenkd /etc/tenk/tenkd.conf; do
	[ -f "$f" ] || fail "conffile $f gone at dpkg --remove"
done
dpkg_do --purge tenk || fail "dpkg --purge"
installed=0
! dpkg -s tenk >/dev/null 2>&1 || fail "dpkg still knows tenk after purge"

# Purged: nothing left.
listing >"$T/after"
comm -3 "$T/before" "$T/after" >"$T/changed"
left=$(grep tenk "$T/changed" | tr -d '\t')
while read -r p; do
	if [ -e "$p" ] && ! grep -qxF "$p" "$T/existed"; then
		left="$left $p"
	fi
done <"$T/paths"
[ -z "$left" ] || fail "left behind or changed: $left"
if [ -s "$T/changed" ]; then
	say "changed meanwhile, not by tenk: $(tr -d '\t' <"$T/changed" |
	    tr '\n' ' ')"
fi
say "OK: installed, used, removed and purged; nothing left"
