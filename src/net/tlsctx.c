/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TLS contexts (tls.h): the settings, certificates and verification a
 * side's connections share, the server's choice of certificate by SNI
 * and of ALPN protocol, and the run-time
 * probe for kTLS.  Connections are tls.c's, ticket keys tlsticket.c's.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "tenk/tls.h"
#include "tlspriv.h"

#ifndef TCP_ULP
#define TCP_ULP		31		/* Linux 4.13, <linux/tcp.h> */
#endif

static int		 ktls_ok = -1;
static char		 ktls_why[128];
static pthread_once_t	 ktls_once = PTHREAD_ONCE_INIT;

const char *
tk_tls_library(void)
{
	return OpenSSL_version(OPENSSL_VERSION);
}

/*
 * An unconnected TCP socket asks for the ULP: ENOENT means the kernel
 * has no "tls" module (nor may load one), while ENOTCONN means it has
 * one that wants an established connection (net/tls/tls_main.c).
 */
static void
ktls_probe_once(void)
{
	int	fd, e = 0;

	ktls_ok = 0;
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		snprintf(ktls_why, sizeof(ktls_why), "socket: %s",
		    strerror(errno));
		return;
	}
	if (setsockopt(fd, IPPROTO_TCP, TCP_ULP, "tls", sizeof("tls")) == -1)
		e = errno;
	close(fd);
	if (e == 0 || e == ENOTCONN) {
		ktls_ok = 1;
		return;
	}
	snprintf(ktls_why, sizeof(ktls_why), "TCP_ULP \"tls\": %s%s",
	    strerror(e), e == ENOENT ? " (no CONFIG_TLS)" : "");
}

static int
ktls_probe(char *why, size_t len)
{
	pthread_once(&ktls_once, ktls_probe_once);
	if (!ktls_ok && why != NULL)
		strlcpy(why, ktls_why, len);
	return ktls_ok;
}

/* "what: the library's reason" into err. */
static int
ctx_err(char *err, size_t len, const char *what)
{
	unsigned long	 e = ERR_peek_last_error();
	const char	*r = e != 0 ? ERR_reason_error_string(e) : NULL;

	if (r != NULL)
		snprintf(err, len, "%s: %s", what, r);
	else
		snprintf(err, len, "%s", what);
	ERR_clear_error();
	return -1;
}

/* A file that cannot be opened, said in the system's words. */
static int
file_check(const char *path, char *err, size_t len)
{
	int	fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

/* The settings every context of ours starts from. */
static SSL_CTX *
ctx_make(int server)
{
	SSL_CTX	*c;

	if ((c = SSL_CTX_new(server ? TLS_server_method() :
	    TLS_client_method())) == NULL)
		return NULL;
	if (SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_max_proto_version(c, TLS1_3_VERSION) != 1) {
		SSL_CTX_free(c);
		return NULL;
	}
	SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION |
	    SSL_OP_NO_COMPRESSION | SSL_OP_IGNORE_UNEXPECTED_EOF |
	    (server ? SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_TICKET : 0));
	SSL_CTX_set_mode(c, SSL_MODE_ENABLE_PARTIAL_WRITE |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
	    SSL_MODE_AUTO_RETRY);
	SSL_CTX_set_read_ahead(c, 1);
	SSL_CTX_set_verify(c, SSL_VERIFY_NONE, NULL);
	if (server) {
		/* Tickets only, when asked for (tk_tls_ctx_tickets). */
		SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
		SSL_CTX_set_num_tickets(c, 0);
		(void)SSL_CTX_set_session_id_context(c,
		    (const unsigned char *)"tenk", 4);
	} else
		SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
	return c;
}

struct tk_tls_ctx *
tk_tls_ctx_new(int server, char *err, size_t len)
{
	struct tk_tls_ctx	*ctx;

	if ((ctx = calloc(1, sizeof(*ctx))) == NULL) {
		snprintf(err, len, "TLS: %s", strerror(errno));
		return NULL;
	}
	ctx->server = server;
	if ((ctx->pairs[0] = ctx_make(server)) == NULL) {
		ctx_err(err, len, "TLS: cannot make a context");
		free(ctx);
		errno = ENOMEM;
		return NULL;
	}
	SSL_CTX_set_app_data(ctx->pairs[0], ctx);
	ERR_clear_error();
	return ctx;
}

void
tk_tls_ctx_free(struct tk_tls_ctx *ctx)
{
	int	i;

	if (ctx == NULL)
		return;
	for (i = 0; i < MAXPAIRS; i++)
		SSL_CTX_free(ctx->pairs[i]);
	OPENSSL_cleanse(ctx->secret, sizeof(ctx->secret));
	free(ctx);
}

int
tk_tls_ctx_versions(struct tk_tls_ctx *ctx, int min, int max, char *err,
    size_t len)
{
	SSL_CTX	*c = ctx->pairs[0];

	if (SSL_CTX_set_min_proto_version(c, min) != 1 ||
	    SSL_CTX_set_max_proto_version(c, max) != 1)
		return ctx_err(err, len, "versions");
	return 0;
}

int
tk_tls_ctx_ciphers(struct tk_tls_ctx *ctx, const char *list, char *err,
    size_t len)
{
	SSL_CTX	*c = ctx->pairs[0];
	char	*l12, *l13, *copy, *p, *tok;
	size_t	 n = strlen(list) + 1;
	int	 ret = -1;

	l12 = calloc(1, n);
	l13 = calloc(1, n);
	copy = strdup(list);
	if (l12 == NULL || l13 == NULL || copy == NULL) {
		snprintf(err, len, "ciphers: %s", strerror(errno));
		goto out;
	}
	for (p = copy; (tok = strsep(&p, ":,")) != NULL; ) {
		if (*tok == '\0')
			continue;
		if (strncmp(tok, "TLS_", 4) == 0) {
			if (*l13 != '\0')
				strlcat(l13, ":", n);
			strlcat(l13, tok, n);
		} else {
			if (*l12 != '\0')
				strlcat(l12, ":", n);
			strlcat(l12, tok, n);
		}
	}
	if (*l12 == '\0' && *l13 == '\0') {
		snprintf(err, len, "ciphers: an empty list");
		goto out;
	}
	if (*l12 != '\0' && SSL_CTX_set_cipher_list(c, l12) != 1) {
		ctx_err(err, len, "TLS 1.2 ciphers");
		goto out;
	}
	if (*l13 != '\0' && SSL_CTX_set_ciphersuites(c, l13) != 1) {
		ctx_err(err, len, "TLS 1.3 suites");
		goto out;
	}
	ret = 0;
 out:
	free(l12);
	free(l13);
	free(copy);
	return ret;
}

/* The server's ALPN choice: the first of the client's it accepts. */
static int
alpn_select(SSL *s, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned int inlen, void *arg)
{
	struct tk_tls_ctx	*ctx = arg;
	unsigned char		*o;

	(void)s;
	if (SSL_select_next_proto(&o, outlen, in, inlen, ctx->alpn,
	    (unsigned int)ctx->alpnlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	*out = o;
	return SSL_TLSEXT_ERR_OK;
}

int
tk_tls_ctx_alpn(struct tk_tls_ctx *ctx, const char *list, char *err,
    size_t len)
{
	unsigned char	 wire[ALPN_MAX];
	const char	*p = list, *e;
	size_t		 n = 0, k;
	int		 i;

	while (*p != '\0') {
		e = strchr(p, ',');
		k = e != NULL ? (size_t)(e - p) : strlen(p);
		if (k == 0 || k > 255) {
			snprintf(err, len, "ALPN: a protocol name of %zu "
			    "bytes (1 to 255)", k);
			return -1;
		}
		if (n + 1 + k > sizeof(wire)) {
			snprintf(err, len, "ALPN: the list is longer than "
			    "%d bytes", ALPN_MAX);
			return -1;
		}
		wire[n++] = (unsigned char)k;
		memcpy(wire + n, p, k);
		n += k;
		p += k;
		if (*p == ',' && *++p == '\0') {
			snprintf(err, len, "ALPN: an empty protocol name");
			return -1;
		}
	}
	if (n == 0) {
		snprintf(err, len, "ALPN: an empty list");
		return -1;
	}
	if (!ctx->server) {
		if (SSL_CTX_set_alpn_protos(ctx->pairs[0], wire,
		    (unsigned int)n) != 0)
			return ctx_err(err, len, "ALPN");
		return 0;
	}
	memcpy(ctx->alpn, wire, n);
	ctx->alpnlen = n;
	for (i = 0; i < MAXPAIRS; i++)
		if (ctx->pairs[i] != NULL)
			SSL_CTX_set_alpn_select_cb(ctx->pairs[i], alpn_select,
			    ctx);
	return 0;
}

int
tk_tls_ctx_verify(struct tk_tls_ctx *ctx, const char *cafile, char *err,
    size_t len)
{
	SSL_CTX	*c = ctx->pairs[0];

	if (cafile != NULL) {
		if (file_check(cafile, err, len) == -1)
			return -1;
		if (SSL_CTX_load_verify_locations(c, cafile, NULL) != 1) {
			char	what[512];

			snprintf(what, sizeof(what), "%s: no PEM certificate "
			    "in it", cafile);
			return ctx_err(err, len, what);
		}
	} else if (SSL_CTX_set_default_verify_paths(c) != 1)
		return ctx_err(err, len, "the system's certificates");
	SSL_CTX_set_verify(c, SSL_VERIFY_PEER, NULL);
	ERR_clear_error();	/* what reading the files left */
	return 0;
}

/*
 * The servername callback: serve the first pair whose certificate
 * names the server asked for.  The default pair is already in place,
 * and each pair's context only lends its certificate (SSL_set_SSL_CTX
 * takes nothing else), so versions, ciphers and tickets stay those of
 * the default.
 */
static int
sni_select(SSL *s, int *al, void *arg)
{
	struct tk_tls_ctx	*ctx = arg;
	const char		*name;
	X509			*x;
	int			 i;

	(void)al;
	if ((name = SSL_get_servername(s, TLSEXT_NAMETYPE_host_name)) ==
	    NULL)
		return SSL_TLSEXT_ERR_OK;
	for (i = 0; i < ctx->npairs; i++) {
		x = SSL_CTX_get0_certificate(ctx->pairs[i]);
		if (x != NULL && X509_check_host(x, name, 0, 0, NULL) == 1) {
			if (i > 0 && SSL_set_SSL_CTX(s, ctx->pairs[i]) == NULL)
				return SSL_TLSEXT_ERR_ALERT_FATAL;
			break;
		}
	}
	return SSL_TLSEXT_ERR_OK;
}

int
tk_tls_ctx_cert(struct tk_tls_ctx *ctx, const char *cert, const char *key,
    char *err, size_t len)
{
	SSL_CTX	*c;
	char	 what[1024];

	if (!ctx->server) {
		snprintf(err, len, "%s: a certificate for a client", cert);
		return -1;
	}
	if (ctx->npairs == MAXPAIRS) {
		snprintf(err, len, "%s: more than %d certificates", cert,
		    MAXPAIRS);
		return -1;
	}
	if (file_check(cert, err, len) == -1 || file_check(key, err, len) ==
	    -1)
		return -1;
	c = ctx->npairs == 0 ? ctx->pairs[0] : ctx_make(1);
	if (c == NULL)
		return ctx_err(err, len, "TLS: cannot make a context");
	if (SSL_CTX_use_certificate_chain_file(c, cert) != 1) {
		snprintf(what, sizeof(what), "%s: not a PEM certificate", cert);
		goto fail;
	}
	/* The library compares the key with the certificate already. */
	if (SSL_CTX_use_PrivateKey_file(c, key, SSL_FILETYPE_PEM) != 1 &&
	    ERR_GET_REASON(ERR_peek_last_error()) !=
	    X509_R_KEY_VALUES_MISMATCH) {
		snprintf(what, sizeof(what), "%s: not a PEM private key", key);
		goto fail;
	}
	if (SSL_CTX_check_private_key(c) != 1) {
		ERR_clear_error();
		snprintf(what, sizeof(what), "%s does not match %s", key,
		    cert);
		goto fail;
	}
	if (ctx->npairs > 0) {
		SSL_CTX_set_app_data(c, ctx);
		if (ctx->alpnlen > 0)
			SSL_CTX_set_alpn_select_cb(c, alpn_select, ctx);
		ctx->pairs[ctx->npairs] = c;
		if (ctx->npairs == 1)
			SSL_CTX_set_tlsext_servername_callback(ctx->pairs[0],
			    sni_select);
		SSL_CTX_set_tlsext_servername_arg(ctx->pairs[0], ctx);
	}
	ctx->npairs++;
	ERR_clear_error();	/* what reading the files left */
	return 0;
 fail:
	if (c != ctx->pairs[0])
		SSL_CTX_free(c);
	return ctx_err(err, len, what);
}

int
tk_tls_ctx_ktls(struct tk_tls_ctx *ctx, char *why, size_t len)
{
#ifdef OPENSSL_NO_KTLS
	snprintf(why, len, "%s was built without kTLS", tk_tls_library());
	(void)ctx;
	return 0;
#else
	if (!ktls_probe(why, len))
		return 0;
	SSL_CTX_set_options(ctx->pairs[0], SSL_OP_ENABLE_KTLS);
	ctx->ktls = 1;
	return 1;
#endif
}

