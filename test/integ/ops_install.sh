#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# make install with DESTDIR: tenkd in sbin, tenkload and tenkbench in
# bin, the systemd units with the installed paths, the environment file
# (an example, and the real one only where none exists), the manuals;
# make uninstall takes them away again but for the settings.
# backends: none
# timeout: 120
. "$(dirname "$0")/lib.sh"

command -v make >/dev/null 2>&1 || skip "no make"
d=$T/root
# The build is the runner's: install from it without rebuilding, with
# its sanitizers (SANITIZE names build/NAME), or every object changes.
san=$(sanitizer | tr - ,)
mk() {
	make -s -C "$TK_SRC" ${san:+SANITIZE="$san"} DESTDIR="$d" \
	    PREFIX=/usr SYSCONFDIR=/etc "$@" >"$T/make.out" 2>&1 ||
	    fail "make $*: $(tail -n 20 "$T/make.out")"
}
mk install
for f in usr/sbin/tenkd usr/bin/tenkload usr/bin/tenkbench; do
	[ -x "$d/$f" ] || fail "no $f"
done
[ ! -e "$d/usr/bin/tenkd" ] || fail "tenkd in bin"
u=$d/usr/lib/systemd/system
[ -f "$u/tenkd.service" ] || fail "no tenkd.service"
[ -f "$u/tenkd.socket" ] || fail "no tenkd.socket"
grep -q '^ExecStart=/usr/sbin/tenkd ' "$u/tenkd.service" ||
    fail "ExecStart: $(grep ExecStart "$u/tenkd.service")"
grep -q '^EnvironmentFile=-/etc/default/tenkd$' "$u/tenkd.service" ||
    fail "EnvironmentFile"
grep -q '^Type=notify$' "$u/tenkd.service" || fail "not Type=notify"
grep -q '@' "$u/tenkd.service" && grep '@[A-Z]*@' "$u/tenkd.service" &&
    fail "a placeholder left"
[ -f "$d/etc/default/tenkd" ] || fail "no environment file"
[ -f "$d/usr/share/man/man8/tenkd.8" ] || fail "no tenkd.8"
if command -v systemd-analyze >/dev/null 2>&1; then
	# Only the unit's syntax: the binary is not at /usr/sbin here.
	systemd-analyze verify "$u/tenkd.service" "$u/tenkd.socket" \
	    >"$T/verify" 2>&1
	grep -v 'is not executable\|man tenkd\|Command .* failed' \
	    "$T/verify" | grep -q . && fail "systemd-analyze: $(cat "$T/verify")"
fi
# The installed tenkd runs, and tenkbench finds it in ../sbin.
"$d/usr/sbin/tenkd" --version | grep -q '^tenkd ' || fail "installed tenkd"
"$d/usr/bin/tenkbench" --help >/dev/null || fail "installed tenkbench"

# A second install keeps the user's settings.
echo "TENKD_MODE=proxy" >"$d/etc/default/tenkd"
mk install
grep -q '^TENKD_MODE=proxy$' "$d/etc/default/tenkd" ||
    fail "install overwrote the environment file"
mk uninstall
for f in usr/sbin/tenkd usr/bin/tenkload usr/lib/systemd/system/tenkd.service
do
	[ ! -e "$d/$f" ] || fail "uninstall left $f"
done
[ -f "$d/etc/default/tenkd" ] || fail "uninstall removed the settings"
pass
