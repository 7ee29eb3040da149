/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Length-prefixed replies, "prefix:u16be" and "prefix:u32be": an
 * unsigned big-endian length of 2 or 4 bytes, then that many bytes of
 * payload (the length does not count itself).  Any payload is valid,
 * so this framing never reports a mismatch; a server that speaks
 * something else shows as replies of absurd lengths, which the reply
 * timeout catches.
 */
#include <string.h>

#include "framing.h"

static int
fp_parse(struct framing *fr, const char *arg, const char **errstr)
{
	if (arg == NULL) {
		*errstr = "prefix needs u16be or u32be";
		return -1;
	}
	if (strcmp(arg, "u16be") == 0)
		fr->n = 2;
	else if (strcmp(arg, "u32be") == 0)
		fr->n = 4;
	else {
		*errstr = "prefix is u16be or u32be";
		return -1;
	}
	return 0;
}

static enum fr_res
fp_feed(const struct framing *fr, struct fr_state *st,
    const unsigned char *buf, size_t n, size_t *used)
{
	size_t		 i = 0;
	uint64_t	 left;

	while (st->u.prefix.have < fr->n) {
		if (i == n) {
			*used = n;
			return FR_MORE;
		}
		st->u.prefix.len = st->u.prefix.len << 8 | buf[i++];
		st->u.prefix.have++;
	}
	/* st->pos counts only earlier chunks; i of this one are header. */
	left = fr->n + st->u.prefix.len - st->pos - i;
	if (left > n - i) {
		*used = n;
		return FR_MORE;
	}
	*used = i + (size_t)left;
	return FR_DONE;
}

const struct framing_ops framing_prefix = {
	"prefix",
	NULL,
	fp_parse,
	NULL,
	fp_feed,
	NULL
};
