/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A server's session ticket keys (tk_tls_ctx_tickets): derived from a
 * secret and the wall clock's period, so that keys rotate every period
 * and the processes that share the secret share the keys, with no
 * message between them.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>

#include "tenk/tls.h"
#include "tlspriv.h"

#define TICKET_NAMELEN	16

/* One period's ticket keys. */
struct tkey {
	const struct tk_tls_ctx	*ctx;
	uint64_t		 epoch;
	unsigned char		 name[TICKET_NAMELEN];
	unsigned char		 aes[32];
	unsigned char		 mac[32];
};

/* The keys of the two periods in use, per thread. */
static _Thread_local struct tkey tkeys[2];

/* HMAC-SHA256(secret, label || epoch), 32 bytes into out. */
static int
derive(const struct tk_tls_ctx *ctx, const char *label, uint64_t epoch,
    unsigned char *out)
{
	unsigned char	 in[32];
	size_t		 n = strlen(label), outlen;
	int		 i;

	memcpy(in, label, n);
	for (i = 7; i >= 0; i--)
		in[n++] = (unsigned char)(epoch >> (8 * i));
	return EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, ctx->secret,
	    sizeof(ctx->secret), in, n, out, 32, &outlen) == NULL ? -1 : 0;
}

/* The keys of epoch, from this thread's two, derived when missing. */
static const struct tkey *
tkey_get(const struct tk_tls_ctx *ctx, uint64_t epoch)
{
	unsigned char	 name[32];
	struct tkey	*k = &tkeys[epoch & 1];

	if (k->ctx == ctx && k->epoch == epoch)
		return k;
	if (derive(ctx, "tenk ticket name", epoch, name) == -1 ||
	    derive(ctx, "tenk ticket aes", epoch, k->aes) == -1 ||
	    derive(ctx, "tenk ticket mac", epoch, k->mac) == -1) {
		k->ctx = NULL;
		return NULL;
	}
	memcpy(k->name, name, sizeof(k->name));
	k->ctx = ctx;
	k->epoch = epoch;
	return k;
}

/*
 * Seal (enc) or open a ticket: AES-256-CBC and HMAC-SHA256 under the
 * keys of the current period, or to open, of the one before.  Opening
 * returns 2, a fresh ticket to follow, for one of the period before and
 * for TLS 1.3, whose tickets are meant for one use (RFC 8446 C.4); 1 for
 * a TLS 1.2 ticket that stays good; 0 for a key unknown, a full
 * handshake.
 */
static int
ticket_cb(SSL *s, unsigned char *name, unsigned char *iv,
    EVP_CIPHER_CTX *ectx, EVP_MAC_CTX *hctx, int enc)
{
	const struct tk_tls_ctx	*ctx;
	const struct tkey	*k;
	OSSL_PARAM		 params[3];
	uint64_t		 now;
	int			 r = 1;

	ctx = SSL_CTX_get_app_data(SSL_get_SSL_CTX(s));
	now = (uint64_t)time(NULL) / ctx->period;
	if (enc) {
		if ((k = tkey_get(ctx, now)) == NULL ||
		    RAND_bytes(iv, EVP_CIPHER_iv_length(EVP_aes_256_cbc())) !=
		    1 || EVP_EncryptInit_ex(ectx, EVP_aes_256_cbc(), NULL,
		    k->aes, iv) != 1)
			return -1;
		memcpy(name, k->name, TICKET_NAMELEN);
	} else {
		if ((k = tkey_get(ctx, now)) == NULL)
			return -1;
		if (memcmp(name, k->name, TICKET_NAMELEN) != 0) {
			if ((k = tkey_get(ctx, now - 1)) == NULL)
				return -1;
			if (memcmp(name, k->name, TICKET_NAMELEN) != 0)
				return 0;
			r = 2;
		} else if (SSL_version(s) == TLS1_3_VERSION)
			r = 2;
		if (EVP_DecryptInit_ex(ectx, EVP_aes_256_cbc(), NULL, k->aes,
		    iv) != 1)
			return -1;
	}
	params[0] = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY,
	    (void *)(uintptr_t)k->mac, sizeof(k->mac));
	params[1] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
	    (char *)(uintptr_t)"SHA256", 0);
	params[2] = OSSL_PARAM_construct_end();
	if (EVP_MAC_CTX_set_params(hctx, params) != 1)
		return -1;
	return r;
}

int
tk_tls_ctx_tickets(struct tk_tls_ctx *ctx, const unsigned char *secret,
    uint64_t period)
{
	SSL_CTX	*c = ctx->pairs[0];

	if (!ctx->server || period == 0) {
		errno = EINVAL;
		return -1;
	}
	memcpy(ctx->secret, secret, sizeof(ctx->secret));
	ctx->period = period;
	SSL_CTX_clear_options(c, SSL_OP_NO_TICKET);
	/* One ticket a handshake: each resumption brings the next. */
	SSL_CTX_set_num_tickets(c, 1);
	SSL_CTX_set_timeout(c, (long)period);
	if (SSL_CTX_set_tlsext_ticket_key_evp_cb(c, ticket_cb) != 1) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

