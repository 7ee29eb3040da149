/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The framing registry: every framing compiled in, found by the name
 * before the ':' of a --reply spec; the --reply-check test, which holds
 * for every framing and so lives here rather than in each parser; and
 * the calls the engine makes, which dispatch to the framing's table.
 * The parsers themselves are in frame_*.c.
 */
#include <assert.h>
#include <string.h>

#include "framing.h"

static const struct framing_ops *const framings[] = {
	&framing_echo,
	&framing_bytes,
	&framing_line,
	&framing_until,
	&framing_prefix,
	&framing_redis,
	&framing_http,
	&framing_memcache,
	NULL
};

/*
 * Parse a --reply spec ("echo", "bytes:64", "until:\r\nEND\r\n", ...)
 * into fr, which is cleared first.  Returns 0, or -1 with *errstr a
 * short phrase ("unknown framing", "bytes needs a size", ...).
 */
int
framing_parse(struct framing *fr, const char *spec, const char **errstr)
{
	const struct framing_ops *const	*op;
	const char			*colon, *arg = NULL;
	size_t				 len;

	memset(fr, 0, sizeof(*fr));
	if ((colon = strchr(spec, ':')) != NULL) {
		len = (size_t)(colon - spec);
		arg = colon + 1;
	} else
		len = strlen(spec);
	for (op = framings; *op != NULL; op++) {
		if (strlen((*op)->name) != len ||
		    strncmp((*op)->name, spec, len) != 0)
			continue;
		fr->ops = *op;
		if (arg != NULL && (*op)->noarg != NULL) {
			*errstr = (*op)->noarg;
			return -1;
		}
		return (*op)->parse != NULL ? (*op)->parse(fr, arg, errstr) : 0;
	}
	*errstr = "unknown framing";
	return -1;
}

/*
 * Require every reply to begin with text, given with C escapes
 * (--reply-check "+PONG").  Returns 0, or -1 with *errstr set.
 */
int
framing_check(struct framing *fr, const char *text, const char **errstr)
{
	ssize_t	 n;

	if ((n = escape_parse_some(text, fr->check, sizeof(fr->check),
	    "empty", errstr)) == -1)
		return -1;
	fr->clen = (size_t)n;
	return 0;
}

/*
 * Start a reply: st forgets the previous one.  req is the request this
 * reply answers (see struct fr_req); NULL means not known.
 */
void
framing_begin(const struct framing *fr, struct fr_state *st,
    const struct fr_req *req)
{
	static const struct fr_req	 none;

	memset(st, 0, sizeof(*st));
	if (fr->ops->begin != NULL)
		fr->ops->begin(fr, st, req != NULL ? req : &none);
}

/*
 * Take up to the end of one reply from buf[0..n).  See framing.h for
 * the three results and what *used means with each.
 */
enum fr_res
framing_feed(const struct framing *fr, struct fr_state *st, const void *buf,
    size_t n, size_t *used)
{
	const unsigned char	*p = buf;
	enum fr_res		 r;
	size_t			 k, i;

	assert(st->why == NULL);
	if (n == 0) {
		*used = 0;
		return FR_MORE;
	}
	r = fr->ops->feed(fr, st, p, n, used);
	assert(r == FR_MISMATCH ? *used < n :
	    r == FR_DONE ? *used >= 1 && *used <= n : *used == n);

	/*
	 * The check runs on the bytes the parser took, never on those
	 * past the reply's end, which belong to the next reply.  A check
	 * failing before the parser's own mismatch is reported first.
	 */
	if (fr->clen > st->pos) {
		k = fr->clen - st->pos;
		if (k > *used)
			k = *used;
		for (i = 0; i < k; i++)
			if (p[i] != fr->check[st->pos + i])
				break;
		if (i < k) {
			*used = i;
			st->why = "reply does not begin with the check text";
			r = FR_MISMATCH;
		} else if (r == FR_DONE && st->pos + *used < fr->clen) {
			/* The reply ended inside the check text. */
			*used = *used - 1;
			st->why = "reply shorter than the check text";
			r = FR_MISMATCH;
		}
	}
	/* After a mismatch, pos is where in the reply the bad byte is. */
	st->pos += *used;
	return r;
}

/*
 * The peer closed while st was in a reply: returns 1 when EOF completes
 * that reply (an HTTP body delimited by the close; st->close is then
 * set), 0 when the reply is cut short.
 */
int
framing_eof(const struct framing *fr, struct fr_state *st)
{
	if (st->why != NULL || fr->ops->eof == NULL || st->pos < fr->clen ||
	    fr->ops->eof(fr, st) == 0)
		return 0;
	st->close = 1;
	return 1;
}
