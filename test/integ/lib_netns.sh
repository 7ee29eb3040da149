# SPDX-License-Identifier: BSD-2-Clause
# A network namespace of the script's own, for scripts that change the
# network (a sysctl, addresses, links) and must leave the machine's as it
# was.  Sourced first, before lib.sh:
#
#	. "$(dirname "$0")/lib_netns.sh"
#	. "$(dirname "$0")/lib.sh"
#	[ "$TK_NETNS" = 1 ] || skip "no network namespace (unshare -n)"
#
# The script runs itself again under unshare -n (as root) or unshare -rn
# (in a user namespace), with TK_NETNS=1; where neither works it goes on
# with TK_NETNS=none, and should skip.  What it makes there goes with
# the namespace when the script ends.

# shellcheck shell=sh
if [ -z "${TK_NETNS:-}" ]; then
	if unshare -n true 2>/dev/null; then
		TK_NETNS=1 exec unshare -n /bin/sh "$0" "$@"
	fi
	if unshare -rn true 2>/dev/null; then
		TK_NETNS=1 exec unshare -rn /bin/sh "$0" "$@"
	fi
	TK_NETNS=none
fi
