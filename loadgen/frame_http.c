/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * "http": one HTTP/1.0 or 1.1 response (RFC 9112): status line, header
 * fields, then the body as section 6.3 of the RFC delimits it.  In
 * order: no body after a HEAD request or for 1xx, 204 and 304; a
 * Transfer-Encoding whose last coding is chunked gives chunks (with
 * extensions, ignored) ending in a zero-size chunk and trailer fields;
 * any other Transfer-Encoding, or neither it nor Content-Length, gives
 * a body that ends when the server closes (framing_eof()); else
 * Content-Length bytes.  Interim 1xx responses other than 101 are part
 * of the reply: the final response follows in the same one.
 *
 * "Connection: close", and HTTP/1.0 without "Connection: keep-alive",
 * set st->close so that the engine reconnects and counts it.  A URL's
 * run (target.c) sets fr->maxstatus to 399: a final status of 400 or
 * above is then a mismatch at its last digit, as a request that fails
 * is no load served.
 *
 * The parser reads lines byte by byte, keeping only the header name or
 * value token it needs (a few bytes); bodies are skipped by length.
 * Lines end with CRLF or a bare LF (section 2.2 allows a recipient to
 * take either).  Beyond FR_HTTP_MAXLINE bytes per line or
 * FR_HTTP_MAXHDRS lines of header or trailer, a response is a mismatch;
 * so are folded header lines and whitespace before a colon, which
 * section 5 lets a recipient reject.
 */
#include <string.h>

#include "framing.h"

enum ht_phase {
	HT_VER = 0,		/* "HTTP/1.x" */
	HT_SP,			/* the space after it */
	HT_CODE,		/* three digits */
	HT_REASON,		/* the rest of the status line */
	HT_NAME,		/* a header name, or the empty line */
	HT_VALUE,		/* a header value */
	HT_BODY,		/* Content-Length bytes */
	HT_CSIZE,		/* a chunk's size in hex */
	HT_CEXT,		/* the rest of that line */
	HT_CDATA,		/* a chunk's bytes */
	HT_CDATA_END,		/* the CRLF after them */
	HT_TRAILER,		/* trailer lines, then the empty line */
	HT_EOF			/* body until the server closes */
};

enum ht_hdr {
	HH_OTHER = 0,
	HH_CLEN,
	HH_TE,
	HH_CONN
};

#define HT_MAXDIG	17		/* Content-Length: < 10^17 */
#define HT_MAXHEX	15		/* chunk size: < 2^60 */

/*
 * The token characters of RFC 9110 section 5.6.2 as a bitmap of the
 * 128 ASCII codes, low and high halves: digits and "!#$%&'*+-." below
 * 64, letters and "^_`|~" above.
 */
#define HT_B(c)		(1ULL << ((c) & 63))
#define HT_TLO		(0x03ff000000000000ULL | HT_B('!') | HT_B('#') | \
			    HT_B('$') | HT_B('%') | HT_B('&') | HT_B('\'') | \
			    HT_B('*') | HT_B('+') | HT_B('-') | HT_B('.'))
#define HT_THI		(0x07fffffe07fffffeULL | HT_B('^') | HT_B('_') | \
			    HT_B('`') | HT_B('|') | HT_B('~'))

static inline int
ht_tchar(unsigned char c)
{
	if (c >= 128)
		return 0;
	return ((c < 64 ? HT_TLO : HT_THI) >> (c & 63)) & 1;
}

/*
 * The bytes of a line that no check reads (the reason phrase, a value
 * of a header other than the three, a chunk extension, a trailer) up to
 * its CR or LF, or the end of buf: how many from buf[i], at most the
 * line's room left under FR_HTTP_MAXLINE.
 */
static size_t
ht_skip(const unsigned char *buf, size_t i, size_t n, size_t room)
{
	const unsigned char	*p, *q;
	size_t			 len = n - i < room ? n - i : room;

	if (len == 0)
		return 0;
	if ((p = memchr(buf + i, '\r', len)) != NULL)
		len = (size_t)(p - (buf + i));
	if ((q = memchr(buf + i, '\n', len)) != NULL)
		len = (size_t)(q - (buf + i));
	return len;
}

static int
ht_tok_is(const struct fr_http *h, const char *s)
{
	size_t	 n = strlen(s);

	return h->ntok == n && memcmp(h->tok, s, n) == 0;
}

/* Append c, lower-cased, to the token; mark it too long to matter. */
static void
ht_tok_add(struct fr_http *h, unsigned char c)
{
	if (h->ntok >= sizeof(h->tok)) {
		h->ntok = 0xff;
		return;
	}
	h->tok[h->ntok++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
}

/* A token of a Transfer-Encoding or Connection list ended. */
static void
ht_tok_end(struct fr_http *h)
{
	if (h->ntok > 0 && h->hdr == HH_TE) {
		/* Only the last coding decides (RFC 9112 section 6.3). */
		h->te = 1;
		h->chunked = ht_tok_is(h, "chunked");
	} else if (h->ntok > 0 && h->hdr == HH_CONN) {
		if (ht_tok_is(h, "close"))
			h->close = 1;
		else if (ht_tok_is(h, "keep-alive"))
			h->keep = 1;
	}
	h->ntok = 0;
	h->tokend = 0;
}

static const char *
ht_value(struct fr_http *h, unsigned char c)
{
	int	 ws = c == ' ' || c == '\t';

	switch (h->hdr) {
	case HH_CLEN:
		/* sub: 0 leading space, 1 digits, 2 trailing space */
		if (ws) {
			if (h->sub == 1)
				h->sub = 2;
			return NULL;
		}
		if (c < '0' || c > '9' || h->sub == 2)
			return "bad Content-Length";
		if (++h->ntok > HT_MAXDIG)
			return "Content-Length too large";
		h->num = h->num * 10 + (uint64_t)(c - '0');
		h->sub = 1;
		return NULL;
	case HH_TE:
	case HH_CONN:
		if (c == ',')
			ht_tok_end(h);
		else if (ht_tchar(c) && !h->tokend)
			ht_tok_add(h, c);
		else if (h->ntok > 0)
			h->tokend = 1;	/* spaces, then parameters */
		return NULL;
	default:
		return NULL;
	}
}

/* One byte of a line, not CR or LF: NULL, or why it is wrong. */
static const char *
ht_byte(struct fr_http *h, unsigned char c)
{
	static const char	 ver[] = "HTTP/1.";
	int			 d;

	switch (h->phase) {
	case HT_VER:
		if (h->sub < sizeof(ver) - 1) {
			if (c != (unsigned char)ver[h->sub++])
				return "not an HTTP/1.x status line";
			return NULL;
		}
		if (c < '0' || c > '9')
			return "not an HTTP/1.x status line";
		h->minor = c != '0';
		h->phase = HT_SP;
		return NULL;
	case HT_SP:
		if (c != ' ')
			return "bad status line";
		h->phase = HT_CODE;
		h->sub = 0;
		return NULL;
	case HT_CODE:
		if (h->sub == 3) {
			if (c != ' ')
				return "bad status code";
			h->phase = HT_REASON;
			return NULL;
		}
		if (c < (h->sub == 0 ? '1' : '0') || c > (h->sub == 0 ?
		    '5' : '9'))
			return "bad status code";
		h->status = (uint16_t)(h->status * 10 + (c - '0'));
		if (++h->sub == 3 && h->max != 0 && h->status > h->max)
			return "status 400 or above in a URL's run";
		return NULL;
	case HT_REASON:
	case HT_CEXT:
	case HT_TRAILER:
		return NULL;
	case HT_NAME:
		if (c == ' ' || c == '\t')
			return h->linelen == 1 ? "folded header line" :
			    "space in a header name";
		if (c != ':') {
			if (!ht_tchar(c))
				return "bad header name";
			ht_tok_add(h, c);
			return NULL;
		}
		if (h->ntok == 0)
			return "empty header name";
		if (ht_tok_is(h, "content-length"))
			h->hdr = HH_CLEN;
		else if (ht_tok_is(h, "transfer-encoding"))
			h->hdr = HH_TE;
		else if (ht_tok_is(h, "connection"))
			h->hdr = HH_CONN;
		else
			h->hdr = HH_OTHER;
		h->phase = HT_VALUE;
		h->ntok = 0;
		h->tokend = 0;
		h->sub = 0;
		h->num = 0;
		return NULL;
	case HT_VALUE:
		return ht_value(h, c);
	case HT_CSIZE:
		if ((d = escape_hexval(c)) != -1) {
			if (++h->sub > HT_MAXHEX)
				return "chunk size too large";
			h->left = h->left * 16 + (uint64_t)d;
			return NULL;
		}
		if (h->sub == 0 || (c != ';' && c != ' ' && c != '\t'))
			return "bad chunk size";
		h->phase = HT_CEXT;
		return NULL;
	case HT_CDATA_END:
		return "chunk longer than its size";
	default:
		return "bug: no line in this phase";
	}
}

/*
 * A header name's token characters from buf[i] (a token character, its
 * line's byte already counted) on, as ht_byte() would take them one by
 * one: only the names the parser looks for (Content-Length,
 * Transfer-Encoding, Connection) are kept, lowercased, in the token;
 * any other whole name marks it as none of them.  Returns how many
 * follow buf[i], at most the line's room left under FR_HTTP_MAXLINE.
 */
static size_t
ht_name(struct fr_http *h, const unsigned char *buf, size_t i, size_t n)
{
	size_t	 k, end, len, room = FR_HTTP_MAXLINE - h->linelen;

	end = n - (i + 1) < room ? n : i + 1 + room;
	for (k = i + 1; k < end && ht_tchar(buf[k]); k++)
		;
	len = k - i;
	/* A name cut by the chunk's end goes on byte by byte. */
	if (h->ntok != 0 || k == n || (len != 10 && len != 14 && len != 17)) {
		if (h->ntok == 0 && k < n)
			h->ntok = 0xff;
		else
			for (end = i; end < k; end++)
				ht_tok_add(h, buf[end]);
	} else
		for (; i < k; i++)
			h->tok[h->ntok++] = (char)(buf[i] >= 'A' &&
			    buf[i] <= 'Z' ? buf[i] + 32 : buf[i]);
	return len - 1;
}

/*
 * The header block ended.  Returns 1 when the response is complete, 0
 * when a body or another response follows.
 */
static int
ht_headers_end(struct fr_state *st)
{
	struct fr_http	*h = &st->u.http;
	unsigned int	 head = h->head;
	uint16_t	 max = h->max;

	if (h->status < 200) {
		if (h->status == 101)
			return 1;
		/* Interim: the final response follows. */
		memset(h, 0, sizeof(*h));
		h->head = head;
		h->max = max;
		h->phase = HT_VER;
		return 0;
	}
	st->close = h->close || (!h->minor && !h->keep);
	if (h->head || h->status == 204 || h->status == 304)
		return 1;
	if (h->te && h->chunked) {
		h->phase = HT_CSIZE;
		h->sub = 0;
		h->left = 0;
	} else if (h->te || !h->has_clen) {
		h->phase = HT_EOF;
		st->close = 1;
	} else if (h->clen == 0)
		return 1;
	else {
		h->phase = HT_BODY;
		h->left = h->clen;
	}
	return 0;
}

/* A line ended: 1 when the response is complete, 0, or -1 and *why. */
static int
ht_eol(struct fr_state *st, const char **why)
{
	struct fr_http	*h = &st->u.http;
	int		 r = 0;

	switch (h->phase) {
	case HT_VER:
	case HT_SP:
	case HT_CODE:
		if (h->phase != HT_CODE || h->sub != 3) {
			*why = "bad status line";
			return -1;
		}
		/* FALLTHROUGH */
	case HT_REASON:
		h->phase = HT_NAME;
		h->ntok = 0;
		break;
	case HT_NAME:
		if (h->linelen > 0) {
			*why = "header line without a colon";
			return -1;
		}
		r = ht_headers_end(st);
		break;
	case HT_VALUE:
		if (h->hdr == HH_CLEN) {
			if (h->sub == 0 || (h->has_clen && h->clen != h->num)) {
				*why = "bad Content-Length";
				return -1;
			}
			h->clen = h->num;
			h->has_clen = 1;
		} else
			ht_tok_end(h);
		if (++h->nhdrs > FR_HTTP_MAXHDRS) {
			*why = "too many header lines";
			return -1;
		}
		h->phase = HT_NAME;
		h->ntok = 0;
		break;
	case HT_CSIZE:
		if (h->sub == 0) {
			*why = "bad chunk size";
			return -1;
		}
		/* FALLTHROUGH */
	case HT_CEXT:
		h->phase = h->left > 0 ? HT_CDATA : HT_TRAILER;
		break;
	case HT_CDATA_END:
		h->phase = HT_CSIZE;
		h->sub = 0;
		h->left = 0;
		break;
	case HT_TRAILER:
		if (h->linelen == 0)
			r = 1;
		else if (++h->nhdrs > FR_HTTP_MAXHDRS) {
			*why = "too many trailer lines";
			return -1;
		}
		break;
	default:
		*why = "bug: no line in this phase";
		return -1;
	}
	h->linelen = 0;
	return r;
}

/* Note a HEAD request, whose response has no body. */
static void
ht_begin(const struct framing *fr, struct fr_state *st,
    const struct fr_req *req)
{
	static const char	 head[] = "HEAD ";
	size_t			 i;

	st->u.http.max = fr->maxstatus;
	if (req->base == NULL || req->len < sizeof(head) - 1)
		return;
	for (i = 0; i < sizeof(head) - 1; i++)
		if (req->base[(req->off + i) % req->period] !=
		    (unsigned char)head[i])
			return;
	st->u.http.head = 1;
}

static enum fr_res
ht_feed(const struct framing *fr, struct fr_state *st,
    const unsigned char *buf, size_t n, size_t *used)
{
	struct fr_http	*h = &st->u.http;
	const char	*why = NULL;
	size_t		 i, k;
	int		 r = 0;

	(void)fr;
	for (i = 0; i < n; i++) {
		switch (h->phase) {
		case HT_BODY:
		case HT_CDATA:
			i += framing_take(&h->left, n - i) - 1;
			if (h->left > 0)
				continue;
			if (h->phase == HT_BODY) {
				*used = i + 1;
				return FR_DONE;
			}
			h->phase = HT_CDATA_END;
			continue;
		case HT_EOF:
			*used = n;
			return FR_MORE;
		default:
			break;
		}
		if (h->cr) {
			h->cr = 0;
			if (buf[i] != '\n')
				why = "CR without LF";
			else
				r = ht_eol(st, &why);
		} else if (buf[i] == '\r')
			h->cr = 1;
		else if (buf[i] == '\n')
			r = ht_eol(st, &why);
		else if (++h->linelen > FR_HTTP_MAXLINE)
			why = "line too long";
		else if ((h->phase == HT_VALUE && h->hdr == HH_OTHER) ||
		    h->phase == HT_REASON || h->phase == HT_CEXT ||
		    h->phase == HT_TRAILER) {
			/* No check reads these: on to the line's end. */
			k = ht_skip(buf, i + 1, n, FR_HTTP_MAXLINE -
			    h->linelen);
			h->linelen += (uint32_t)k;
			i += k;
		} else if (h->phase == HT_NAME && ht_tchar(buf[i])) {
			/* A header name's letters, in a loop of their own. */
			k = ht_name(h, buf, i, n);
			h->linelen += (uint32_t)k;
			i += k;
		} else
			why = ht_byte(h, buf[i]);
		if (why != NULL) {
			*used = i;
			st->why = why;
			return FR_MISMATCH;
		}
		if (r == 1) {
			*used = i + 1;
			return FR_DONE;
		}
	}
	*used = n;
	return FR_MORE;
}

static int
ht_eof(const struct framing *fr, const struct fr_state *st)
{
	(void)fr;
	return st->u.http.phase == HT_EOF;
}

const struct framing_ops framing_http = {
	"http",
	"http takes no argument",
	NULL,
	ht_begin,
	ht_feed,
	ht_eof
};
