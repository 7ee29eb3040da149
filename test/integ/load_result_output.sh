#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Every output path is checked before the run starts: an unwritable
# --json or --hgrm is a usage error (exit 2, one line naming it), the
# server sees no connection, and the check leaves no file behind.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

tenkd_start echo --threads 1

mkdir "$T/ro" "$T/dir"
chmod 555 "$T/ro"
# root writes anywhere: the read-only directory proves nothing then.
if touch "$T/ro/probe" 2>/dev/null; then
	rm -f "$T/ro/probe"
	ro=
else
	ro=$T/ro/r.json
fi

for args in "--json $T/nodir/r.json" "--hgrm $T/nodir/r.hgrm" \
    "--json $T/dir" ${ro:+"--json $ro"} "--json - --hgrm -"; do
	opt=${args%% *}
	[ "$args" = "--json - --hgrm -" ] && opt=--hgrm
	# shellcheck disable=SC2086
	usage_error "$opt" "$TENKLOAD" -q -c 2 -t 1 -d 5s $args "$ADDR"
done
# shellcheck disable=SC2086
usage_error "--json $T/nodir/m.json" "$TENKLOAD" merge \
    --json "$T/nodir/m.json" "$T/none.json"

s=$(tenkd_stats) || exit 1
[ "$(stat_val "$s" accepted)" = 0 ] ||
    fail "tenkd accepted connections: $s"
[ -z "$(ls -A "$T/dir")$(ls -A "$T/ro")" ] ||
    fail "a probe file was left behind"

# A writable one works, and the probe leaves only the report.
timeout 20 "$TENKLOAD" -q -c 2 -t 1 -d 1s --json "$T/dir/r.json" \
    --hgrm "$T/dir/r.hgrm" "$ADDR" >/dev/null 2>&1 || fail "writable: exit $?"
[ -f "$T/dir/r.json" ] || fail "no r.json"
[ -f "$T/dir/r.hgrm" ] || fail "no r.hgrm"
[ "$(find "$T/dir" -type f | wc -l)" -eq 2 ] ||
    fail "files: $(find "$T/dir" -type f)"
pass
