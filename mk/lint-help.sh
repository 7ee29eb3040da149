#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# lint-help.sh BINDIR: every long option that tenkd, tenkload or tenkbench
# prints in --help is in its manual page, docs/PROGRAM.[18], as an mdoc
# flag: "Fl -name", also after a comma or a bar ("Fl b , -backend",
# "Fl -help | -version"), up to the next macro.  One line per missing
# option, "page:line: what", the line being where the page's option list
# starts.  Run from the top of the source tree; exit 1 on a finding.
set -eu

[ $# -eq 1 ] || { echo "usage: lint-help.sh bindir" >&2; exit 2; }
bin=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
st=0

for p in tenkd tenkload tenkbench; do
	man=
	for m in docs/"$p".[18]; do
		[ -f "$m" ] && man=$m
	done
	if [ -z "$man" ]; then
		echo "docs/$p.8:1: $p has no manual page"
		st=1
		continue
	fi
	# The page's long flags, one a line without the dashes.
	flags=$(awk '
		/^\./ {
			fl = 0
			for (i = 1; i <= NF; i++) {
				w = $i
				if (w == "Fl" || w == ".Fl") {
					fl = 1
					continue
				}
				if (w ~ /^\.?[A-Z][a-z][a-z]?$/)
					fl = 0
				else if (fl) {
					sub(/^\\/, "", w)
					if (w ~ /^-[a-z0-9]/) {
						sub(/[^a-z0-9]*$/, "", w)
						print substr(w, 2)
					}
				}
			}
		}' "$man" | sort -u)
	line=$(grep -n '^\.It Fl' "$man" | head -n 1 | cut -d: -f1)
	[ -n "$line" ] || line=1
	rc=0
	"$bin/$p" --help >"$out" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "$man:1: $p --help exits $rc"
		st=1
		continue
	fi
	bad=$(grep -o -e '--[a-z0-9][a-z0-9-]*[a-z0-9]' "$out" | sort -u |
	    while read -r o; do
		printf '%s\n' "$flags" | grep -qx -e "${o#--}" ||
		    echo "$man:$line: $o is in $p --help, not in the page"
	    done)
	if [ -n "$bad" ]; then
		echo "$bad"
		st=1
	fi
done
exit "$st"
