/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TLS where libtenk was built without OpenSSL 3 (mk/deps.sh said so):
 * no context can be made, so no connection ever reaches the functions
 * that need one, which abort if called.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/tls.h"

#define NOTLS	"built without TLS (OpenSSL 3 was not found: " \
		"apt install libssl-dev, then make clean all)"

const char *
tk_tls_library(void)
{
	return "none";
}

struct tk_tls_ctx *
tk_tls_ctx_new(int server, char *err, size_t len)
{
	(void)server;
	snprintf(err, len, "%s", NOTLS);
	errno = ENOTSUP;
	return NULL;
}

void
tk_tls_ctx_free(struct tk_tls_ctx *ctx)
{
	if (ctx != NULL)
		abort();
}

/* Nothing below is reached without a context. */

int
tk_tls_ctx_versions(struct tk_tls_ctx *ctx, int min, int max, char *err,
    size_t len)
{
	(void)ctx, (void)min, (void)max, (void)err, (void)len;
	abort();
}

int
tk_tls_ctx_ciphers(struct tk_tls_ctx *ctx, const char *list, char *err,
    size_t len)
{
	(void)ctx, (void)list, (void)err, (void)len;
	abort();
}

int
tk_tls_ctx_alpn(struct tk_tls_ctx *ctx, const char *list, char *err,
    size_t len)
{
	(void)ctx, (void)list, (void)err, (void)len;
	abort();
}

int
tk_tls_ctx_verify(struct tk_tls_ctx *ctx, const char *cafile, char *err,
    size_t len)
{
	(void)ctx, (void)cafile, (void)err, (void)len;
	abort();
}

int
tk_tls_ctx_cert(struct tk_tls_ctx *ctx, const char *cert, const char *key,
    char *err, size_t len)
{
	(void)ctx, (void)cert, (void)key, (void)err, (void)len;
	abort();
}

int
tk_tls_ctx_tickets(struct tk_tls_ctx *ctx, const unsigned char *secret,
    uint64_t period)
{
	(void)ctx, (void)secret, (void)period;
	abort();
}

int
tk_tls_ctx_ktls(struct tk_tls_ctx *ctx, char *why, size_t len)
{
	(void)ctx, (void)why, (void)len;
	abort();
}

struct tk_tls *
tk_tls_new(struct tk_tls_ctx *ctx, struct tk_io *io, const char *name,
    struct tk_tls_sess *sess)
{
	(void)ctx, (void)io, (void)name, (void)sess;
	abort();
}

void
tk_tls_free(struct tk_tls *t)
{
	if (t != NULL)
		abort();
}

int
tk_tls_handshake(struct tk_tls *t)
{
	(void)t;
	abort();
}

ssize_t
tk_tls_read(struct tk_tls *t, void *buf, size_t len)
{
	(void)t, (void)buf, (void)len;
	abort();
}

ssize_t
tk_tls_write(struct tk_tls *t, const void *buf, size_t len)
{
	(void)t, (void)buf, (void)len;
	abort();
}

int
tk_tls_shutdown(struct tk_tls *t)
{
	(void)t;
	abort();
}

void
tk_tls_info(const struct tk_tls *t, struct tk_tls_info *i)
{
	(void)t, (void)i;
	abort();
}

const char *
tk_tls_why(const struct tk_tls *t, char *buf, size_t len)
{
	(void)t, (void)buf, (void)len;
	abort();
}

struct tk_tls_sess *
tk_tls_sess_take(struct tk_tls *t)
{
	(void)t;
	abort();
}

void
tk_tls_sess_free(struct tk_tls_sess *s)
{
	if (s != NULL)
		abort();
}

void
tk_tls_trim(void)
{
}

void
tk_tls_sweep(void)
{
}
