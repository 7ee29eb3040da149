#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# lint-unused.sh OBJECT...: every exported function (a global text symbol,
# T in nm) that no other of the given objects references (U), one line
# each as "file:line: what", pointing at its definition.  Give it every
# object of every program, the test runner and the test tools: a function
# only the tests call is still used.  main is exempt; the backend tables
# are data, not text, so nm's T never names them.  An object's source is
# its path after ".../obj/" with ".c" for ".o".  Exit 1 on a finding.
set -eu

[ $# -gt 0 ] || { echo "usage: lint-unused.sh object ..." >&2; exit 2; }
syms=$(mktemp)
trap 'rm -f "$syms"' EXIT
# One nm for all: "object: symbol type ...", a process per object being
# most of the time this took.
nm -A -P "$@" | awk '$3 == "T" || $3 == "U" {
	o = $1
	sub(/:$/, "", o)
	print $3, $2, o
}' >"$syms"

# The definitions nothing refers to, as "symbol object".  An object never
# has U for a symbol it defines, so any U is from another object.
unused=$(awk '
	$1 == "T" && $2 != "main" { def[$2 " " $3] = $2 }
	$1 == "U" { ref[$2] = 1 }
	END {
		for (d in def)
			if (!(def[d] in ref))
				print d
	}' "$syms")
[ -n "$unused" ] || exit 0

echo "$unused" | while read -r sym o; do
	src=${o#*/obj/}
	src=${src%.o}.c
	# KNF puts the name of a function being defined at the start of a line.
	line=$(grep -n "^$sym(" "$src" 2>/dev/null | head -n 1 | cut -d: -f1)
	if [ -z "$line" ]; then
		line=1
	fi
	if grep -v "^$sym(" "$src" 2>/dev/null | grep -qw "$sym"; then
		what="used only in this file: make it static"
	else
		what="called by nothing"
	fi
	echo "$src:$line: $sym() is exported but $what"
done | sort -t: -k1,1 -k2,2n
exit 1
