/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * JSON for the reports: members written one a line (their strings by
 * tk_json_str(), tenk/json.h, as tenkd's access log writes its own),
 * and a small recursive-descent reader into a tree of values, only as
 * general as our own files need.  What a report holds and where is
 * report_json.c's.
 *
 * The reader turns "\u0080".."\u00ff" back into those bytes, as the
 * writer escapes a byte of no valid UTF-8 sequence, so a string comes
 * back byte for byte.  The price: a foreign file's "\u00e9" reads back
 * as the byte 0xe9, not as UTF-8 "é"; escapes from U+0100 up (surrogate
 * pairs included) are read as UTF-8.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/json.h"
#include "framing.h"
#include "loadgen.h"

#define JSON_MAXDEPTH	32

struct jp {
	const char	*p;
	const char	*end;
	const char	*err;
	int		 depth;
};

/*
 * One object member a line, after the indentation ind: a whole number,
 * a real (3 decimals; not finite as 0), a string.  last leaves out the
 * comma.
 */
void
json_u(FILE *f, const char *ind, const char *key, uint64_t v, int last)
{
	fprintf(f, "%s\"%s\": %llu%s\n", ind, key, (unsigned long long)v,
	    last ? "" : ",");
}

void
json_d(FILE *f, const char *ind, const char *key, double v, int last)
{
	if (!isfinite(v))
		v = 0;
	fprintf(f, "%s\"%s\": %.3f%s\n", ind, key, v, last ? "" : ",");
}

void
json_s(FILE *f, const char *ind, const char *key, const char *v, int last)
{
	fprintf(f, "%s\"%s\": ", ind, key);
	tk_json_str(f, v);
	fprintf(f, "%s\n", last ? "" : ",");
}

/* Free what v holds (not v itself) and leave it J_NULL. */
void
json_free(struct jv *v)
{
	size_t	i;

	for (i = 0; i < v->n; i++)
		json_free(&v->kid[i]);
	free(v->kid);
	free(v->key);
	free(v->s);
	memset(v, 0, sizeof(*v));
}

static void
jp_ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' ||
	    *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int
jp_fail(struct jp *j, const char *why)
{
	if (j->err == NULL)
		j->err = why;
	return -1;
}

/* Four hex digits after "\u" into *c; -1 if they are not. */
static int
jp_hex4(struct jp *j, unsigned int *c)
{
	int	k, d;

	if (j->end - j->p < 4)
		return jp_fail(j, "bad \\u escape");
	*c = 0;
	for (k = 0; k < 4; k++) {
		if ((d = escape_hexval(*j->p++)) == -1)
			return jp_fail(j, "bad \\u escape");
		*c = *c << 4 | (unsigned int)d;
	}
	return 0;
}

/*
 * The character of a "\u" escape (the "\u" read) into out[], returning
 * its length: up to U+00FF the byte itself, above as UTF-8, a
 * surrogate pair as one character, a lone surrogate as U+FFFD.
 */
static int
jp_unicode(struct jp *j, char *out)
{
	unsigned int	c, lo;

	if (jp_hex4(j, &c) == -1)
		return -1;
	if (c < 0x100) {
		out[0] = (char)c;
		return 1;
	}
	if (c >= 0xd800 && c <= 0xdbff) {
		if (j->end - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u') {
			j->p += 2;
			if (jp_hex4(j, &lo) == -1)
				return -1;
			if (lo >= 0xdc00 && lo <= 0xdfff)
				c = 0x10000 + ((c - 0xd800) << 10) +
				    (lo - 0xdc00);
			else
				c = 0xfffd;
		} else
			c = 0xfffd;
	} else if (c >= 0xdc00 && c <= 0xdfff)
		c = 0xfffd;
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

static int
jp_string(struct jp *j, char **out)
{
	static const char	 named[] = "ntrbf", plain[] = "\n\t\r\b\f";
	const char		*q;
	char			*buf, *nb, ch[4];
	size_t			 len = 0, cap = 16;
	int			 n;

	if (j->p >= j->end || *j->p != '"')
		return jp_fail(j, "expected a string");
	j->p++;
	if ((buf = malloc(cap)) == NULL)
		return jp_fail(j, "out of memory");
	for (;;) {
		if (j->p >= j->end) {
			free(buf);
			return jp_fail(j, "unterminated string");
		}
		ch[0] = *j->p++;
		n = 1;
		if (ch[0] == '"')
			break;
		if (ch[0] == '\\' && j->p < j->end) {
			ch[0] = *j->p++;
			if (ch[0] == 'u') {
				if ((n = jp_unicode(j, ch)) == -1) {
					free(buf);
					return -1;
				}
			} else if (ch[0] != '\0' &&
			    (q = strchr(named, ch[0])) != NULL)
				ch[0] = plain[q - named];
			/* else \" \\ \/ stand for themselves */
		}
		if (len + (size_t)n + 1 > cap) {
			cap *= 2;
			if ((nb = realloc(buf, cap)) == NULL) {
				free(buf);
				return jp_fail(j, "out of memory");
			}
			buf = nb;
		}
		memcpy(buf + len, ch, (size_t)n);
		len += (size_t)n;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

static int	jp_value(struct jp *, struct jv *);

static int
jp_push(struct jp *j, struct jv *v, struct jv **kid)
{
	struct jv	*nk;
	size_t		 cap;

	/*
	 * Doubling: a histogram's bucket array has thousands of members,
	 * and growing by one copied the array each time (quadratic, and
	 * seconds under AddressSanitizer, whose realloc always moves).
	 */
	if (v->n == v->cap) {
		cap = v->cap > 0 ? 2 * v->cap : 8;
		if ((nk = reallocarray(v->kid, cap, sizeof(*nk))) == NULL)
			return jp_fail(j, "out of memory");
		v->kid = nk;
		v->cap = cap;
	}
	*kid = &v->kid[v->n++];
	memset(*kid, 0, sizeof(**kid));
	return 0;
}

static int
jp_container(struct jp *j, struct jv *v, char close)
{
	struct jv	*kid;
	char		*key = NULL;

	v->t = close == '}' ? JV_OBJ : JV_ARR;
	j->p++;
	if (++j->depth > JSON_MAXDEPTH)
		return jp_fail(j, "nested too deep");
	jp_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		j->depth--;
		return 0;
	}
	for (;;) {
		jp_ws(j);
		if (v->t == JV_OBJ) {
			if (jp_string(j, &key) == -1)
				return -1;
			jp_ws(j);
			if (j->p >= j->end || *j->p != ':') {
				free(key);
				return jp_fail(j, "expected ':'");
			}
			j->p++;
		}
		if (jp_push(j, v, &kid) == -1) {
			free(key);
			return -1;
		}
		kid->key = key;
		key = NULL;
		if (jp_value(j, kid) == -1)
			return -1;
		jp_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			j->depth--;
			return 0;
		}
		return jp_fail(j, close == '}' ? "expected ',' or '}'" :
		    "expected ',' or ']'");
	}
}

static int
jp_number(struct jp *j, struct jv *v)
{
	const char	*s = j->p;
	char		 buf[64], *ep;
	size_t		 n;
	int		 isint = 1;

	while (j->p < j->end && strchr("+-0123456789.eE", *j->p) != NULL) {
		if (strchr(".eE-", *j->p) != NULL)
			isint = 0;
		j->p++;
	}
	n = (size_t)(j->p - s);
	if (n == 0 || n >= sizeof(buf))
		return jp_fail(j, "bad number");
	memcpy(buf, s, n);
	buf[n] = '\0';
	v->t = JV_NUM;
	errno = 0;
	v->d = strtod(buf, &ep);
	if (*ep != '\0' || errno != 0)
		return jp_fail(j, "bad number");
	if (isint) {
		v->u = strtoull(buf, &ep, 10);
		if (*ep != '\0' || errno != 0)
			return jp_fail(j, "bad number");
		v->isint = 1;
	}
	return 0;
}

static int
jp_word(struct jp *j, const char *w)
{
	size_t	n = strlen(w);

	if ((size_t)(j->end - j->p) < n || strncmp(j->p, w, n) != 0)
		return jp_fail(j, "unexpected character");
	j->p += n;
	return 0;
}

static int
jp_value(struct jp *j, struct jv *v)
{
	jp_ws(j);
	if (j->p >= j->end)
		return jp_fail(j, "unexpected end");
	switch (*j->p) {
	case '{':
		return jp_container(j, v, '}');
	case '[':
		return jp_container(j, v, ']');
	case '"':
		v->t = JV_STR;
		return jp_string(j, &v->s);
	case 't':
		v->t = JV_BOOL;
		v->d = 1;
		v->u = 1;
		return jp_word(j, "true");
	case 'f':
		v->t = JV_BOOL;
		return jp_word(j, "false");
	case 'n':
		v->t = JV_NULL;
		return jp_word(j, "null");
	default:
		return jp_number(j, v);
	}
}

/*
 * Parse the one JSON value in buf[0..len), surrounded by white space
 * at most, into the tree *root, which the caller frees with json_free()
 * either way.  Returns 0, or -1 with a phrase and the byte offset in
 * err[0..errlen).
 */
int
json_parse(const char *buf, size_t len, struct jv *root, char *err,
    size_t errlen)
{
	struct jp	j = { buf, buf + len, NULL, 0 };

	memset(root, 0, sizeof(*root));
	if (jp_value(&j, root) == 0) {
		jp_ws(&j);
		if (j.p == j.end)
			return 0;
		jp_fail(&j, "trailing data");
	}
	snprintf(err, errlen, "%s at byte %zu", j.err, (size_t)(j.p - buf));
	return -1;
}

/* The member key of object o; NULL if o is none or lacks it. */
const struct jv *
json_get(const struct jv *o, const char *key)
{
	size_t	i;

	if (o == NULL || o->t != JV_OBJ)
		return NULL;
	for (i = 0; i < o->n; i++)
		if (o->kid[i].key != NULL && strcmp(o->kid[i].key, key) == 0)
			return &o->kid[i];
	return NULL;
}

/* Member key as a whole number, a real, a string; 0 or "" if none. */
uint64_t
json_get_u(const struct jv *o, const char *key)
{
	const struct jv	*v = json_get(o, key);

	if (v == NULL || (v->t != JV_NUM && v->t != JV_BOOL))
		return 0;
	if (v->isint || v->t == JV_BOOL)
		return v->u;
	return v->d > 0 ? (uint64_t)v->d : 0;
}

double
json_get_d(const struct jv *o, const char *key)
{
	const struct jv	*v = json_get(o, key);

	return v != NULL && v->t == JV_NUM ? v->d : 0;
}

void
json_get_s(const struct jv *o, const char *key, char *buf, size_t len)
{
	const struct jv	*v = json_get(o, key);

	strlcpy(buf, v != NULL && v->t == JV_STR ? v->s : "", len);
}
