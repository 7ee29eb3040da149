/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libtenk's TLS, private to tls.c (connections), tlsctx.c (contexts)
 * and tlsticket.c (session ticket keys): what a context holds.
 */
#ifndef TENK_NET_TLSPRIV_H
#define TENK_NET_TLSPRIV_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#define MAXPAIRS	16		/* certificate pairs of a server */
#define ALPN_MAX	255		/* the wire list's bytes */

struct tk_tls_ctx {
	SSL_CTX		*pairs[MAXPAIRS];	/* [0]: the default */
	int		 npairs;		/* server: with a certificate */
	int		 server;
	int		 ktls;
	unsigned char	 alpn[ALPN_MAX];	/* server: what it accepts */
	size_t		 alpnlen;
	unsigned char	 secret[32];		/* ticket keys derive from it */
	uint64_t	 period;		/* s, 0: no tickets */
};

#endif /* TENK_NET_TLSPRIV_H */
