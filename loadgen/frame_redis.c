/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * "redis": one complete RESP reply (https://redis.io/docs/latest/
 * develop/reference/protocol-spec/).  RESP2: simple string "+", error
 * "-", integer ":", bulk string "$" (null "$-1"), array "*" (null
 * "*-1"), nested.  RESP3, cheap once aggregates nest: null "_",
 * boolean "#", double ",", big number "(", blob error "!", verbatim
 * string "=", map "%" (two elements per entry), set "~", push ">", and
 * the attribute "|", a map that precedes a reply and is not counted as
 * one of its parent's elements.  Streamed strings and aggregates
 * ("$?", "*?") are not supported: they are a mismatch.
 *
 * The state is a stack of elements still due per open aggregate, at
 * most FR_REDIS_DEPTH deep; a header line is read byte by byte into a
 * number, a bulk string's payload is skipped by its length and must be
 * followed by CRLF.  Lines end with CRLF, as the protocol says; a bare
 * LF is a mismatch.
 *
 * XXX A RESP3 push (">") that the server sends on its own (client
 * tracking, pub/sub) is taken as the reply to the oldest request; a
 * load test has no use for pushes yet.
 */
#include <string.h>

#include "framing.h"

enum rd_phase {
	RD_TYPE = 0,		/* the type byte of an element */
	RD_LINE,		/* the rest of its header line */
	RD_LF,			/* the LF after the line's CR */
	RD_BULK			/* a bulk string's payload and its CRLF */
};

#define RD_MAXDIG	18		/* digits of a length or integer */

/*
 * One element is complete: count it against the innermost open
 * aggregate and close those it completes.  Returns 1 when the reply is
 * complete.  An attribute, when complete, leaves its parent's count
 * alone: the element it annotates is still to come.
 */
static int
rd_element(struct fr_redis *r)
{
	unsigned int	 top;

	r->phase = RD_TYPE;
	while (r->depth > 0) {
		top = r->depth - 1U;
		if (--r->rem[top] > 0)
			return 0;
		r->depth--;
		if (r->attr & (1U << top)) {
			r->attr &= (uint16_t)~(1U << top);
			return 0;
		}
	}
	return 1;
}

/* The type byte starts an element: returns 0, or -1 if c is none. */
static int
rd_type(struct fr_redis *r, unsigned char c)
{
	if (strchr("+-:$*_#,(!=%~>|", c) == NULL || c == '\0')
		return -1;
	r->kind = c;
	r->num = 0;
	r->ndig = 0;
	r->neg = 0;
	r->linelen = 0;
	r->phase = RD_LINE;
	return 0;
}

/* A simple string, an error or a double: its line is text, any bytes. */
static int
rd_text(int kind)
{
	return kind == '+' || kind == '-' || kind == ',';
}

/* A byte of a header line (not CR): returns NULL or why it is wrong. */
static const char *
rd_line(struct fr_redis *r, unsigned char c)
{
	if (c == '\n')
		return "LF without CR";
	if (++r->linelen > FR_REDIS_MAXLINE)
		return "line too long";
	if (rd_text(r->kind))
		return NULL;
	switch (r->kind) {
	case '#':
		return r->linelen == 1 && (c == 't' || c == 'f') ? NULL :
		    "bad boolean";
	case '_':
		return "bad null";
	case '(':
		if (r->linelen == 1 && (c == '-' || c == '+'))
			return NULL;
		if (c < '0' || c > '9')
			return "bad big number";
		r->ndig = 1;
		return NULL;
	default:
		break;
	}
	if (r->linelen == 1 && (c == '-' || (c == '+' && r->kind == ':'))) {
		r->neg = c == '-';
		return NULL;
	}
	if (c < '0' || c > '9')
		return "bad number";
	if (r->ndig == RD_MAXDIG)
		return "number too long";
	r->num = r->num * 10 + (c - '0');
	r->ndig++;
	return NULL;
}

/* The line's CR: is the line whole? */
static const char *
rd_line_end(struct fr_redis *r)
{
	if (rd_text(r->kind))
		return NULL;
	switch (r->kind) {
	case '#':
		return r->linelen == 1 ? NULL : "bad boolean";
	case '_':
		return NULL;
	default:
		return r->ndig > 0 ? NULL : "bad number";
	}
}

/*
 * The length on the header line of a bulk string or aggregate, at most
 * max: returns 0 with it in *n, 1 for the RESP2 null ("$-1" or "*-1",
 * where the kind is null), or -1 with a phrase in *why.
 */
static int
rd_length(const struct fr_redis *r, unsigned char null, uint64_t max,
    const char *toolong, uint64_t *n, const char **why)
{
	if (r->neg) {
		if (r->num == 1 && r->kind == null)
			return 1;
		*why = "bad length";
		return -1;
	}
	if ((uint64_t)r->num > max) {
		*why = toolong;
		return -1;
	}
	*n = (uint64_t)r->num;
	return 0;
}

/*
 * The header line is complete.  Returns 1 when the reply is, 0 when
 * more elements or bytes follow, or a phrase in *why.
 */
static int
rd_header(struct fr_redis *r, const char **why)
{
	uint64_t	 n;
	int		 k;

	switch (r->kind) {
	case '$':
	case '!':
	case '=':
		if ((k = rd_length(r, '$', FR_REDIS_MAXBULK,
		    "bulk string too long", &n, why)) != 0)
			return k == 1 ? rd_element(r) : -1;
		r->left = n + 2;
		r->phase = RD_BULK;
		return 0;
	case '*':
	case '~':
	case '>':
	case '%':
	case '|':
		if ((k = rd_length(r, '*', FR_REDIS_MAXAGG,
		    "aggregate too long", &n, why)) != 0)
			return k == 1 ? rd_element(r) : -1;
		if (r->kind == '%' || r->kind == '|')
			n *= 2;
		if (n == 0) {
			if (r->kind != '|')
				return rd_element(r);
			r->phase = RD_TYPE;
			return 0;
		}
		if (r->depth == FR_REDIS_DEPTH) {
			*why = "aggregates nested too deep";
			return -1;
		}
		r->rem[r->depth] = (uint32_t)n;
		if (r->kind == '|')
			r->attr |= (uint16_t)(1U << r->depth);
		r->depth++;
		r->phase = RD_TYPE;
		return 0;
	default:
		return rd_element(r);
	}
}

static enum fr_res
rd_feed(const struct framing *fr, struct fr_state *st,
    const unsigned char *buf, size_t n, size_t *used)
{
	struct fr_redis	*r = &st->u.redis;
	const char	*why = NULL;
	size_t		 i;
	int		 done;

	(void)fr;
	for (i = 0; i < n; i++) {
		done = 0;
		switch (r->phase) {
		case RD_TYPE:
			if (rd_type(r, buf[i]) == -1)
				why = "not a RESP type";
			break;
		case RD_LINE:
			if (buf[i] != '\r') {
				why = rd_line(r, buf[i]);
				break;
			}
			if ((why = rd_line_end(r)) == NULL)
				r->phase = RD_LF;
			break;
		case RD_LF:
			if (buf[i] != '\n')
				why = "CR without LF";
			else if ((done = rd_header(r, &why)) == -1)
				done = 0;
			break;
		case RD_BULK:
			if (framing_crlf(&r->left, buf, n, &i,
			    "bulk string longer than its length", &why) == 1)
				done = rd_element(r);
			break;
		}
		if (why != NULL) {
			*used = i;
			st->why = why;
			return FR_MISMATCH;
		}
		if (done) {
			*used = i + 1;
			return FR_DONE;
		}
	}
	*used = n;
	return FR_MORE;
}

const struct framing_ops framing_redis = {
	"redis",
	"redis takes no argument",
	NULL,
	NULL,
	rd_feed,
	NULL
};
