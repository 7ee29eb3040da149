#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# lint-planes.sh DIR: tenkd's control plane (DIR/src/server/control/*.o)
# calls into its data plane (DIR/src/server/data/*.o), never back: each
# symbol a data-plane object refers to (U in nm) that a control-plane
# object defines (a function or a variable) is a finding, one line as
# "file:line: what" at the first line of the file that names it.  DIR is the
# build's object directory.  Exit 1 on a finding.
set -eu
LC_ALL=C
export LC_ALL

[ $# -eq 1 ] || { echo "usage: lint-planes.sh objdir" >&2; exit 2; }
ctl=$(mktemp)
trap 'rm -f "$ctl"' EXIT
nm -P --defined-only "$1"/src/server/control/*.o |
    awk '$2 ~ /^[TDBRC]$/ { print $1 }' | sort -u >"$ctl"
nm -A -P --undefined-only "$1"/src/server/data/*.o | awk '{
	o = $1
	sub(/:$/, "", o)
	sub(/.*\/obj\//, "", o)
	sub(/\.o$/, ".c", o)
	print $2, o
}' | sort | join "$ctl" - | {
	bad=0
	while read -r sym src; do
		line=$(grep -nw -- "$sym" "$src" 2>/dev/null | head -n 1 |
		    cut -d: -f1)
		echo "$src:${line:-1}: refers to $sym, which the control plane" \
		    "defines: move it to src/server/data/ or pass it in"
		bad=1
	done
	exit "$bad"
}
