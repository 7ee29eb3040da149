#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# lint-width.sh FILE...: every line wider than 80 columns, one line each as
# "file:line: what".  A tab advances to the next multiple of 8; a UTF-8
# character counts once.  Exit 1 on a finding.
set -eu

[ $# -gt 0 ] || { echo "usage: lint-width.sh file ..." >&2; exit 2; }
LC_ALL=C awk '
	{
		col = 0
		n = length($0)
		for (i = 1; i <= n; i++) {
			c = substr($0, i, 1)
			if (c == "\t")
				col = col - col % 8 + 8
			else if (c < "\200" || c >= "\300")
				col++
		}
		if (col > 80) {
			printf "%s:%d: %d columns, over 80\n", FILENAME, FNR, col
			bad = 1
		}
	}
	END { exit bad }' "$@"
