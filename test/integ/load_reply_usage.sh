#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The options of requests and replies refuse bad values as every other
# option does: exit 2 and one line on stderr naming the option.
# backends: none
# timeout: 60
. "$(dirname "$0")/lib.sh"

A=127.0.0.1:9
head -c 16777217 /dev/zero | tr '\0' x >"$T/big"
: >"$T/empty"
printf 'GET /a\nGET /\\q\n' >"$T/badline"
printf 'a\0b\n' >"$T/nul"
load_bad '-m: empty message' -m '' $A
load_bad '-m a\\q: column 2: unknown escape' -m 'a\q' $A
load_bad '--message \\x4: column 1: \\x needs two hex digits' \
    --message '\x4' $A
load_bad '--message \\012: column 1: octal escapes' --message '\012' $A
load_bad '--first-message: empty message' --first-message= $A
load_bad "--message-file $T/nope: No such file" --message-file "$T/nope" $A
load_bad "--message-file $T/big: larger than 16 MiB" --message-file "$T/big" $A
load_bad "--message-file $T/empty: no request in the file" \
    --message-file "$T/empty" $A
load_bad "--message-file $T/badline: line 2, column 6: unknown escape" \
    --message-file "$T/badline" $A
load_bad "--message-file $T/nul: line 1: a NUL byte" --message-file "$T/nul" $A
load_bad '--message-file: one message only' -m x --message-file "$T/big" $A
load_bad '-m: one message only' -m x -m y $A
load_bad '--size: not with a message' -m x -s 10 $A
load_bad '--reply bogus: unknown framing' --reply bogus $A
load_bad '--reply bytes: bytes needs a size' --reply bytes $A
load_bad '--reply echo:1: echo takes no argument' --reply echo:1 $A
load_bad '--reply-check \\z: unknown escape' --reply-check '\z' $A
load_bad '--window: not with --mode connect' -M connect --window 2 $A
load_bad '--conn-lifetime 0: too small' --conn-lifetime 0 $A
load_bad '--conn-lifetime: not with --mode idle' -M idle --conn-lifetime 5 $A
load_bad '--conn-lifetime: not with --mode connect' -M connect \
    --conn-lifetime 5 $A
load_bad '-M bogus: not a mode (pingpong, rate, stream, idle, connect)' \
    -M bogus $A
pass
