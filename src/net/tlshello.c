/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ClientHello reader (tlshello.h).  Records first (RFC 8446 5.1):
 * each a handshake record of TLS major version 3 holding 1 to 16384
 * bytes; their bodies join into the handshake message, which must be a
 * ClientHello (4.1.2) ending exactly where a record does.  Then the
 * message: version, random, session id, cipher suites, compression
 * methods, and the extensions, each inside its parent's length, of
 * which server_name (RFC 6066 3) and supported_versions (RFC 8446
 * 4.2.1) are read.  Every length is checked against what holds it
 * before it is used, so no byte past buf[len) is ever read.
 */
#include <string.h>

#include "tenk/tlshello.h"

#define REC_HEADER	5
#define REC_MAX		16384		/* a record's plaintext, at most */
#define REC_HANDSHAKE	22
#define HS_CLIENTHELLO	1
#define EXT_SNI		0
#define EXT_VERSIONS	43
#define SNI_HOSTNAME	0

/* A cursor over [p, end). */
struct cur {
	const unsigned char	*p;
	const unsigned char	*end;
};

static int
take(struct cur *c, size_t n, const unsigned char **out)
{
	if ((size_t)(c->end - c->p) < n)
		return -1;
	if (out != NULL)
		*out = c->p;
	c->p += n;
	return 0;
}

/* The n (1 to 3) bytes at b as a big-endian number (RFC 8446 3.3). */
static size_t
be(const unsigned char *b, size_t n)
{
	size_t	v = 0;

	while (n-- > 0)
		v = v << 8 | *b++;
	return v;
}

/* The next n bytes of c as a number (a uint8 or uint16), skipped. */
static int
num(struct cur *c, size_t n, size_t *v)
{
	const unsigned char	*b;

	if (take(c, n, &b) == -1)
		return -1;
	*v = be(b, n);
	return 0;
}

/* A sub-cursor over the next n bytes of c, which it skips. */
static int
sub(struct cur *c, size_t n, struct cur *s)
{
	if (take(c, n, &s->p) == -1)
		return -1;
	s->end = s->p + n;
	return 0;
}

static int
bad(struct tk_hello *h, const char *why)
{
	h->why = why;
	return TK_HELLO_BAD;
}

/* server_name: one host_name, of letters, digits, '-', '_' and '.'. */
static int
ext_sni(struct cur *e, struct tk_hello *h)
{
	struct cur	 list, name;
	size_t		 n, type, i;
	int		 seen = 0;

	if (num(e, 2, &n) == -1 || n != (size_t)(e->end - e->p) || n == 0 ||
	    sub(e, n, &list) == -1)
		return bad(h, "a malformed server_name");
	while (list.p < list.end) {
		if (num(&list, 1, &type) == -1 || num(&list, 2, &n) == -1 ||
		    sub(&list, n, &name) == -1)
			return bad(h, "a malformed server_name");
		if (type != SNI_HOSTNAME)
			continue;
		if (seen++)
			return bad(h, "two host names in server_name");
		if (n == 0 || n >= sizeof(h->sni))
			return bad(h, "a host name of 0 or over 255 bytes");
		for (i = 0; i < n; i++) {
			unsigned char	ch = name.p[i];

			if (ch >= 'A' && ch <= 'Z')
				ch = (unsigned char)(ch - 'A' + 'a');
			else if (!((ch >= 'a' && ch <= 'z') ||
			    (ch >= '0' && ch <= '9') || ch == '-' ||
			    ch == '_' || ch == '.'))
				return bad(h, "a host name with a character "
				    "no name has");
			h->sni[i] = (char)ch;
		}
		h->sni[n] = '\0';
	}
	return 0;
}

/* supported_versions: the highest of TLS 1.0 to 1.3 offered. */
static int
ext_versions(struct cur *e, struct tk_hello *h)
{
	struct cur	 list;
	size_t		 n, v;

	if (num(e, 1, &n) == -1 || n != (size_t)(e->end - e->p) || n == 0 ||
	    n % 2 != 0 || sub(e, n, &list) == -1)
		return bad(h, "a malformed supported_versions");
	h->version = 0;
	/* An even length: every uint16 is whole. */
	while (num(&list, 2, &v) == 0) {
		if (v >= 0x0301 && v <= 0x0304 && v > h->version)
			h->version = (uint16_t)v;
	}
	if (h->version == 0)
		return bad(h, "no TLS version in supported_versions");
	return 0;
}

/* The ClientHello's body, msg[0..n), after its 4-byte header. */
static int
hello(const unsigned char *msg, size_t n, struct tk_hello *h)
{
	struct cur	 c = { msg, msg + n }, exts, e;
	size_t		 v, len, type;
	int		 sni = 0, versions = 0;

	if (num(&c, 2, &v) == -1 || v >> 8 != 3)
		return bad(h, "a ClientHello of no TLS version");
	h->version = (uint16_t)v;
	if (take(&c, 32, NULL) == -1 || num(&c, 1, &len) == -1 || len > 32 ||
	    take(&c, len, NULL) == -1)
		return bad(h, "a malformed session id");
	if (num(&c, 2, &len) == -1 || len < 2 || len % 2 != 0 ||
	    take(&c, len, NULL) == -1)
		return bad(h, "malformed cipher suites");
	if (num(&c, 1, &len) == -1 || len < 1 || take(&c, len, NULL) == -1)
		return bad(h, "malformed compression methods");
	if (c.p == c.end)
		return 0;		/* no extensions: no name */
	if (num(&c, 2, &len) == -1 || len != (size_t)(c.end - c.p) ||
	    sub(&c, len, &exts) == -1)
		return bad(h, "extensions that do not fill the ClientHello");
	while (exts.p < exts.end) {
		if (num(&exts, 2, &type) == -1 || num(&exts, 2, &len) == -1 ||
		    sub(&exts, len, &e) == -1)
			return bad(h, "an extension past the end");
		if (type == EXT_SNI) {
			if (sni++)
				return bad(h, "two server_name extensions");
			if (ext_sni(&e, h) == TK_HELLO_BAD)
				return TK_HELLO_BAD;
		} else if (type == EXT_VERSIONS) {
			if (versions++)
				return bad(h, "two supported_versions");
			if (ext_versions(&e, h) == TK_HELLO_BAD)
				return TK_HELLO_BAD;
		}
	}
	return 0;
}

int
tk_hello_parse(const void *buf, size_t len, struct tk_hello *h)
{
	const unsigned char	*b = buf;
	unsigned char		 msg[TK_HELLO_MAX];
	size_t			 off = 0, mlen = 0, rlen, hlen, nrec = 0;

	memset(h, 0, sizeof(*h));
	for (;;) {
		if (len - off < REC_HEADER) {
			h->want = REC_HEADER - (len - off);
			break;
		}
		if (b[off] != REC_HANDSHAKE)
			return bad(h, off == 0 ? "not a TLS handshake" :
			    "a record other than a handshake's in the "
			    "ClientHello");
		if (b[off + 1] != 3)
			return bad(h, "a record of no TLS version");
		rlen = be(b + off + 3, 2);
		if (rlen == 0 || rlen > REC_MAX)
			return bad(h, "a record of 0 or over 16384 bytes");
		if (++nrec > TK_HELLO_MAXREC)
			return bad(h, "a ClientHello in too many records");
		if (len - off - REC_HEADER < rlen) {
			h->want = rlen - (len - off - REC_HEADER);
			break;
		}
		if (mlen + rlen > sizeof(msg))
			return bad(h, "a ClientHello over 16384 bytes");
		memcpy(msg + mlen, b + off + REC_HEADER, rlen);
		mlen += rlen;
		off += REC_HEADER + rlen;
		if (mlen < 4)
			continue;
		if (msg[0] != HS_CLIENTHELLO)
			return bad(h, "a handshake other than a ClientHello");
		hlen = be(msg + 1, 3);
		if (hlen + 4 > TK_HELLO_MAX)
			return bad(h, "a ClientHello over 16384 bytes");
		if (mlen < hlen + 4)
			continue;
		if (mlen > hlen + 4)
			return bad(h, "bytes after the ClientHello in its "
			    "record");
		if (hello(msg + 4, hlen, h) == TK_HELLO_BAD)
			return TK_HELLO_BAD;
		h->len = off;
		return TK_HELLO_DONE;
	}
	return TK_HELLO_MORE;
}
