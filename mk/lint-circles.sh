#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# lint-circles.sh OBJECT...: no circle of more than 6 files in src/.  A
# file refers to another when its object names (U in nm) a symbol the
# other's defines (a function or a variable); files that refer to each
# other, directly or round a loop of others, are one circle, and none of
# them can be read alone.  Only the objects of src/ count.  A circle of
# more than 6 is a finding, one line as "file:1: what" at its first file,
# naming them all.  Exit 1 on a finding.
set -eu
LC_ALL=C
export LC_ALL

[ $# -gt 0 ] || { echo "usage: lint-circles.sh object ..." >&2; exit 2; }
nm -A -P "$@" | awk -v most=6 '
{
	o = $1
	sub(/:$/, "", o)
	if (o !~ /\/obj\/src\//)
		next
	sub(/.*\/obj\//, "", o)
	sub(/\.o$/, ".c", o)
	if (!(o in id)) {
		id[o] = ++n
		name[n] = o
	}
	if ($3 == "U")
		ref[id[o], $2] = 1
	else if ($3 ~ /^[TDBRC]$/)
		def[$2] = id[o]
}
END {
	for (k in ref) {
		split(k, p, SUBSEP)
		if (p[2] in def && def[p[2]] != p[1])
			r[p[1], def[p[2]]] = 1
	}
	# Warshall: r[i, j] once i reaches j by any path.
	for (k = 1; k <= n; k++)
		for (i = 1; i <= n; i++) {
			if (!((i, k) in r))
				continue
			for (j = 1; j <= n; j++)
				if ((k, j) in r)
					r[i, j] = 1
		}
	bad = 0
	for (i = 1; i <= n; i++) {
		if (i in seen)
			continue
		c = 0
		list = ""
		for (j = 1; j <= n; j++)
			if (j == i || ((i, j) in r && (j, i) in r)) {
				seen[j] = 1
				c++
				list = list (c > 1 ? ", " : "") name[j]
			}
		if (c > most) {
			print name[i] ":1: in a circle of " c " files (at " \
			    "most " most "): " list
			bad = 1
		}
	}
	exit bad
}'
