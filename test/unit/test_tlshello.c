/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ClientHello reader, tk_hello_parse(): hellos built here with and
 * without a name and supported_versions, whole and split at every byte
 * by a reader that reads only what it is told (so never past the
 * ClientHello), spread over several records, followed by other bytes;
 * each refusal with its phrase; and, built with OpenSSL, the library's
 * own ClientHello.
 */
#include <string.h>

#include "tenk/tlshello.h"
#include "../t.h"

#ifdef TENK_HAVE_TLS
#include <openssl/ssl.h>
#endif

#define BUFSZ	(2 * TK_HELLO_INMAX)

static void
put16(unsigned char *p, size_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

/*
 * A ClientHello into out, in nrec records: server name sni unless NULL,
 * supported_versions 1.2 and 1.3 if versions, pad bytes of padding.
 * Returns its length.
 */
static size_t
build(unsigned char *out, const char *sni, int versions, size_t pad,
    size_t nrec)
{
	static unsigned char	 m[TK_HELLO_MAX + 1024];
	unsigned char		*b = m + 4, *ext;
	size_t			 n = 0, e = 0, len, off, k, r;

	put16(b, 0x0303);
	memset(b + 2, 0xaa, 32);
	b[34] = 32;
	memset(b + 35, 0xbb, 32);
	n = 67;
	put16(b + n, 4);
	put16(b + n + 2, 0x1301);
	put16(b + n + 4, 0xc02b);
	n += 6;
	b[n++] = 1;
	b[n++] = 0;
	ext = b + n + 2;
	if (sni != NULL) {
		len = strlen(sni);
		put16(ext + e, 0);
		put16(ext + e + 2, len + 5);
		put16(ext + e + 4, len + 3);
		ext[e + 6] = 0;
		put16(ext + e + 7, len);
		memcpy(ext + e + 9, sni, len);
		e += 9 + len;
	}
	if (versions) {
		put16(ext + e, 43);
		put16(ext + e + 2, 5);
		ext[e + 4] = 4;
		put16(ext + e + 5, 0x0304);
		put16(ext + e + 7, 0x0303);
		e += 9;
	}
	if (pad > 0) {
		put16(ext + e, 21);
		put16(ext + e + 2, pad);
		memset(ext + e + 4, 0, pad);
		e += 4 + pad;
	}
	put16(b + n, e);
	n += 2 + e;
	m[0] = 1;
	m[1] = (unsigned char)(n >> 16);
	m[2] = (unsigned char)(n >> 8);
	m[3] = (unsigned char)n;
	n += 4;
	/* Cut into nrec records of about equal size. */
	for (off = 0, k = 0, r = 0; r < nrec; r++) {
		len = r + 1 == nrec ? n - off : n / nrec;
		out[k] = 22;
		put16(out + k + 1, 0x0301);
		put16(out + k + 3, len);
		memcpy(out + k + 5, m + off, len);
		k += 5 + len;
		off += len;
	}
	return k;
}

/*
 * A reader that reads only what tk_hello_parse asks, from b of n bytes
 * (more may follow the hello): it must end at DONE having read exactly
 * the hello's want bytes, never past it.
 */
static size_t
read_as_told(const unsigned char *b, size_t n, struct tk_hello *h)
{
	size_t	have = 0;
	int	r;

	while ((r = tk_hello_parse(b, have, h)) == TK_HELLO_MORE) {
		T_GE(h->want, 1);
		T_LE(have + h->want, n);
		have += h->want;
	}
	T_EQ(r, TK_HELLO_DONE);
	T_UEQ(h->len, have);
	return have;
}

static void
good(const char *sni, const char *want, int versions, size_t pad,
    size_t nrec)
{
	static unsigned char	 b[BUFSZ];
	struct tk_hello		 h;
	size_t			 n, k;

	n = build(b, sni, versions, pad, nrec);
	/* Whole, then with more bytes after it. */
	T_EQ(tk_hello_parse(b, n, &h), TK_HELLO_DONE);
	T_UEQ(h.len, n);
	T_STREQ(h.sni, want);
	T_EQ(h.version, versions ? 0x0304 : 0x0303);
	memcpy(b + n, "\x17\x03\x03\x00\x10", 5);
	T_EQ(tk_hello_parse(b, n + 5, &h), TK_HELLO_DONE);
	T_UEQ(h.len, n);
	T_UEQ(read_as_told(b, n + 5, &h), n);
	/* Every prefix asks for more, and never past the end. */
	for (k = 0; k < n; k++) {
		T_EQ(tk_hello_parse(b, k, &h), TK_HELLO_MORE);
		T_LE(k + h.want, n);
	}
}

TEST(tlshello_good)
{
	good("Example.COM", "example.com", 1, 0, 1);
	good(NULL, "", 0, 0, 1);
	good("a.b-c_d.test", "a.b-c_d.test", 0, 300, 1);
	good("x.test", "x.test", 1, 1000, 3);
	good("big.test", "big.test", 1, 16000, 2);
	/* Every record but the last 1 byte of message. */
	good("tiny.test", "tiny.test", 1, 0, 40);
}

/* b (n bytes) is refused, with a phrase containing why. */
static void
refused(const unsigned char *b, size_t n, const char *why)
{
	struct tk_hello	h;

	if (tk_hello_parse(b, n, &h) != TK_HELLO_BAD)
		T_FAIL("not refused: %s", why);
	T_PTR(h.why);
	if (strstr(h.why, why) == NULL)
		T_FAIL("\"%s\" is not \"%s\"", h.why, why);
}

TEST(tlshello_bad)
{
	static unsigned char	 b[BUFSZ];
	size_t			 n, i;

	refused((const unsigned char *)"GET / HTTP/1.1\r\n", 16,
	    "not a TLS handshake");
	refused((const unsigned char *)"\x17\x03\x03\x00\x01x", 6,
	    "not a TLS handshake");
	refused((const unsigned char *)"\x16\x02\x00\x00\x01x", 6,
	    "no TLS version");
	refused((const unsigned char *)"\x16\x03\x01\x00\x00", 5,
	    "0 or over 16384");
	refused((const unsigned char *)"\x16\x03\x01\x40\x01", 5,
	    "0 or over 16384");
	refused((const unsigned char *)"\x16\x03\x01\x00\x04\x02\x00\x00\x00",
	    9, "other than a ClientHello");
	refused((const unsigned char *)"\x16\x03\x01\x00\x04\x01\x01\x00\x00",
	    9, "over 16384");
	/* A hello and one byte more in its record. */
	n = build(b, "a.test", 1, 0, 1);
	b[n] = 0;
	put16(b + 3, n - 5 + 1);
	refused(b, n + 1, "bytes after the ClientHello");
	/* A second record of application data in the middle. */
	n = build(b, "a.test", 1, 0, 2);
	b[5 + (n - 10) / 2] = 23;
	refused(b, n, "other than a handshake");
	/* Host names: a bad byte, two of them, two extensions. */
	n = build(b, "a/b.test", 1, 0, 1);
	refused(b, n, "no name has");
	n = build(b, "a.test", 0, 0, 1);
	for (i = 0; i + 6 < n; i++)
		if (memcmp(b + i, "a.test", 6) == 0)
			break;
	b[i - 3] = 1;			/* name type: not host_name */
	T_EQ(tk_hello_parse(b, n, &(struct tk_hello){ 0 }), TK_HELLO_DONE);
	/* A cipher suite list of odd length. */
	n = build(b, "a.test", 1, 0, 1);
	put16(b + 5 + 4 + 67, 3);
	refused(b, n, "cipher suites");
	/* An extension longer than the extensions. */
	n = build(b, NULL, 1, 10, 1);
	put16(b + n - 12, 200);
	refused(b, n, "past the end");
	/* 1-byte records: more than 64 of them. */
	n = build(b, "a.test", 1, 0, 100);
	refused(b, n, "too many records");
}

#ifdef TENK_HAVE_TLS
/* OpenSSL's own ClientHello, for a name. */
TEST(tlshello_openssl)
{
	SSL_CTX		*ctx;
	SSL		*s;
	BIO		*rb, *wb;
	unsigned char	 b[BUFSZ];
	struct tk_hello	 h;
	int		 n;

	T_PTR(ctx = SSL_CTX_new(TLS_client_method()));
	T_PTR(s = SSL_new(ctx));
	T_PTR(rb = BIO_new(BIO_s_mem()));
	T_PTR(wb = BIO_new(BIO_s_mem()));
	SSL_set_bio(s, rb, wb);
	SSL_set_connect_state(s);
	T_EQ(SSL_set_tlsext_host_name(s, "Route.Example"), 1);
	(void)SSL_do_handshake(s);
	T_GT(n = BIO_read(wb, b, sizeof(b)), 0);
	T_UEQ(read_as_told(b, (size_t)n, &h), (size_t)n);
	T_STREQ(h.sni, "route.example");
	T_EQ(h.version, 0x0304);
	SSL_free(s);
	SSL_CTX_free(ctx);
}
#endif
