/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Replies that end with a delimiter: "line", up to and including "\n",
 * and "until:TEXT", up to and including TEXT (C escapes, so
 * "until:\r\nEND\r\n" is memcached's end of a get).  One parser: line
 * is until with a one-byte delimiter.
 *
 * A delimiter may be split across chunks, so the state is how many of
 * its bytes the stream has matched; on a byte that breaks the match the
 * Knuth-Morris-Pratt failure table, computed once per run, says how
 * much of the match survives ("\r\n\r\nEND" after "\r\n" keeps "\r\n").
 * While nothing is matched, memchr() finds the delimiter's first byte,
 * so a reply costs about one pass of memchr.  A reply longer than
 * FR_MAXLINE without its delimiter is a mismatch: the server is not
 * speaking this framing, and a reply timeout would say so much later.
 */
#include <string.h>

#include "framing.h"

/* fail[i]: the longest proper prefix of delim[0..i] that ends there. */
static void
fu_table(struct framing *fr)
{
	size_t	 i, k = 0;

	fr->fail[0] = 0;
	for (i = 1; i < fr->dlen; i++) {
		while (k > 0 && fr->delim[i] != fr->delim[k])
			k = fr->fail[k - 1];
		if (fr->delim[i] == fr->delim[k])
			k++;
		fr->fail[i] = (uint8_t)k;
	}
}

static int
fu_line_parse(struct framing *fr, const char *arg, const char **errstr)
{
	/* Any argument was refused by framing_line.noarg. */
	(void)arg;
	(void)errstr;
	fr->delim[0] = '\n';
	fr->dlen = 1;
	fu_table(fr);
	return 0;
}

static int
fu_until_parse(struct framing *fr, const char *arg, const char **errstr)
{
	ssize_t	 n;

	if ((n = escape_parse_some(arg != NULL ? arg : "", fr->delim,
	    sizeof(fr->delim), "until needs a text", errstr)) == -1)
		return -1;
	fr->dlen = (size_t)n;
	fu_table(fr);
	return 0;
}

static enum fr_res
fu_feed(const struct framing *fr, struct fr_state *st,
    const unsigned char *buf, size_t n, size_t *used)
{
	const unsigned char	*p;
	enum fr_res		 r = FR_MORE;
	size_t			 m = st->u.until, i, end = n;

	for (i = 0; i < n; i++) {
		if (m == 0) {
			p = memchr(buf + i, fr->delim[0], n - i);
			if (p == NULL)
				break;
			i = (size_t)(p - buf);
			m = 1;
		} else {
			while (m > 0 && fr->delim[m] != buf[i])
				m = fr->fail[m - 1];
			if (fr->delim[m] == buf[i])
				m++;
		}
		if (m == fr->dlen) {
			end = i + 1;
			r = FR_DONE;
			break;
		}
	}
	if (st->pos + end > FR_MAXLINE) {
		*used = (size_t)(FR_MAXLINE - st->pos);
		st->why = "no delimiter within the reply size limit";
		return FR_MISMATCH;
	}
	st->u.until = (uint32_t)m;
	*used = end;
	return r;
}

const struct framing_ops framing_line = {
	"line",
	"line takes no argument",
	fu_line_parse,
	NULL,
	fu_feed,
	NULL
};

const struct framing_ops framing_until = {
	"until",
	NULL,
	fu_until_parse,
	NULL,
	fu_feed,
	NULL
};
