/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A TLS ClientHello read without TLS: the server name (SNI) and the
 * version a client asks for, for routing a connection by name without
 * decrypting it (as nginx's ssl_preread and HAProxy's req.ssl_sni do).
 * No library: built with or without OpenSSL.
 *
 * tk_hello_parse() is given the bytes read so far from the start of
 * the connection and says whether they hold the whole ClientHello, and
 * if not, how many more to read: never more than the end of the record
 * in hand (or the next record's header), so a reader that reads only
 * what it is told never takes a byte past the ClientHello, and can pass
 * the bytes on untouched.  A ClientHello may span several handshake
 * records (RFC 8446 5.1).  Anything malformed or past the limits below
 * is refused with a reason.  Any thread; no state between calls.
 */
#ifndef TENK_TLSHELLO_H
#define TENK_TLSHELLO_H

#include <stddef.h>
#include <stdint.h>

/* The ClientHello message, its 4-byte header included, at most. */
#define TK_HELLO_MAX	16384
/* The records that carry it, at most, and their bytes, headers included. */
#define TK_HELLO_MAXREC	64
#define TK_HELLO_INMAX	(TK_HELLO_MAX + TK_HELLO_MAXREC * 5)

#define TK_HELLO_BAD	(-1)		/* h->why says why */
#define TK_HELLO_MORE	0		/* read up to h->want bytes more */
#define TK_HELLO_DONE	1		/* the ClientHello is h->len bytes */

struct tk_hello {
	size_t		 want;		/* MORE: at most this many */
	size_t		 len;		/* DONE: the records' bytes */
	const char	*why;		/* BAD: a constant phrase */
	char		 sni[256];	/* DONE: host_name, lowercase; "" */
	uint16_t	 version;	/* DONE: the highest offered */
};

int		 tk_hello_parse(const void *buf, size_t len,
		    struct tk_hello *h);

#endif /* TENK_TLSHELLO_H */
