/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TLS over OpenSSL 3 (tls.h), one connection: the BIO that carries its
 * records between the library and the socket, and its handshake,
 * reads, writes and close inside a watcher's handler.  Contexts are
 * tlsctx.c's, session ticket keys tlsticket.c's.  Built only with
 * OpenSSL 3; tlsnone.c stands in for all three otherwise.
 *
 * The BIO.  OpenSSL's socket BIO would do, but it cannot say that a
 * recv came back short, and so every read of a record would end in one
 * more recv that says EAGAIN; ours records it (t->drained), and
 * tk_tls_read() blocks READ at once when the library holds nothing more
 * (SSL_has_pending), as the copying data path does after a short recv.
 * Read-ahead lets one recv bring in as many records as the library's
 * buffer holds.  Records are read into and sent from the library's own
 * buffers, as with the socket BIO: no memory BIO and no copy.
 *
 * Errors.  SSL_get_error() needs the thread's error queue empty before
 * the call it judges: every path that may leave an error clears the
 * queue after it (tls_err, the contexts' set-up), so reads and writes
 * need not clear it first, which cost 4% of a proxied TLS message's
 * instructions.
 *
 * Wants.  SSL_ERROR_WANT_READ comes only from a recv that said EAGAIN
 * (SSL_MODE_AUTO_RETRY, OpenSSL's default since 1.1.1, retries after a
 * record that carried no data, such as a session ticket), and
 * SSL_ERROR_WANT_WRITE only from a send that did: so blocking that
 * direction on the watcher is exact, on edge and level backends alike.
 * A read may wait for WRITE and a write for READ; t->rwant and t->wwant
 * say which.
 *
 * Closes.  close_notify and the FIN map onto each other: the peer's
 * close_notify, or its FIN without one (SSL_OP_IGNORE_UNEXPECTED_EOF),
 * reads as 0, after which writing still works (TLS 1.3 allows the
 * half-close, and OpenSSL keeps writing after a close_notify in 1.2
 * too); tk_tls_shutdown() sends close_notify and then the FIN.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "tenk/loop.h"
#include "tenk/tls.h"
#include "tlspriv.h"

#define RECORD_MAX	16384		/* plaintext of one record */
#define REC_HANDSHAKE	22		/* record types: RFC 8446 5.1 */
#define REC_ALERT	21

static BIO_METHOD	*bio_method;
static pthread_once_t	 bio_once = PTHREAD_ONCE_INIT;
/* Handshakes ended and buffers swept: what leaves holes in the heap. */
static _Atomic uint64_t	 churn;
static uint64_t		 churn_seen;	/* at the last tk_tls_trim */
static uint64_t		 churn_trimmed;	/* at the last trim */
static pthread_mutex_t	 trim_mtx = PTHREAD_MUTEX_INITIALIZER;

/* The thread's connections that hold record buffers, and the sweep. */
TAILQ_HEAD(warmlist, tk_tls);
static _Thread_local struct warmlist	 warm;	/* TAILQ_INIT on first use */
static _Thread_local uint32_t		 sweep_gen;

/* t moves records: it holds buffers until a sweep finds it quiet. */
static inline void
used(struct tk_tls *t)
{
	t->gen = sweep_gen;
	if (!t->warmed) {
		if (warm.tqh_last == NULL)
			TAILQ_INIT(&warm);
		TAILQ_INSERT_TAIL(&warm, t, warm);
		t->warmhead = &warm;
		t->warmed = 1;
	}
}

void
tk_tls_sweep(void)
{
	struct tk_tls	*t, *next;
	int		 n = 0;

	if (warm.tqh_last == NULL)
		return;
	sweep_gen++;
	TAILQ_FOREACH_SAFE(t, &warm, warm, next) {
		if (sweep_gen - t->gen < 2)
			continue;
		/* 0 while a buffer holds bytes: the next sweep tries. */
		if (SSL_free_buffers(t->ssl) != 1)
			continue;
		TAILQ_REMOVE(&warm, t, warm);
		t->warmed = 0;
		n++;
	}
	if (n > 0)
		atomic_fetch_add_explicit(&churn, 1, memory_order_relaxed);
}

static int
bio_read(BIO *b, char *buf, size_t len, size_t *got)
{
	struct tk_tls	*t = BIO_get_data(b);
	ssize_t		 n;

	BIO_clear_retry_flags(b);
	do {
		n = recv(t->io->fd, buf, len, 0);
	} while (n == -1 && errno == EINTR);
	if (n > 0) {
		t->drained = (size_t)n < len;
		if (!t->seen) {
			t->seen = 1;
			t->nottls = buf[0] != REC_HANDSHAKE &&
			    buf[0] != REC_ALERT;
		}
		*got = (size_t)n;
		return 1;
	}
	*got = 0;
	if (n == 0)
		t->fin = 1;
	else if (errno == EAGAIN || errno == EWOULDBLOCK)
		BIO_set_retry_read(b);
	else
		t->err = (unsigned long)errno;
	return 0;
}

static int
bio_write(BIO *b, const char *buf, size_t len, size_t *put)
{
	struct tk_tls	*t = BIO_get_data(b);
	ssize_t		 n;

	BIO_clear_retry_flags(b);
	do {
		n = send(t->io->fd, buf, len, MSG_NOSIGNAL);
	} while (n == -1 && errno == EINTR);
	if (n >= 0) {
		*put = (size_t)n;
		return 1;
	}
	*put = 0;
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		BIO_set_retry_write(b);
	else
		t->err = (unsigned long)errno;
	return 0;
}

static long
bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	struct tk_tls	*t = BIO_get_data(b);

	(void)num;
	(void)ptr;
	switch (cmd) {
	case BIO_CTRL_FLUSH:
		return 1;
	case BIO_CTRL_EOF:
		return t != NULL && t->fin;
	}
	return 0;
}

static void
bio_init(void)
{
	BIO_METHOD	*m;

	m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "tenk");
	if (m == NULL || BIO_meth_set_read_ex(m, bio_read) != 1 ||
	    BIO_meth_set_write_ex(m, bio_write) != 1 ||
	    BIO_meth_set_ctrl(m, bio_ctrl) != 1) {
		BIO_meth_free(m);
		return;
	}
	bio_method = m;
}

struct tk_tls_sess *
tk_tls_sess_take(struct tk_tls *t)
{
	SSL_SESSION	*s = SSL_get0_session(t->ssl);

	if (s == NULL || s == t->sess_last || !SSL_SESSION_is_resumable(s))
		return NULL;
	t->sess_last = s;
	SSL_SESSION_up_ref(s);
	return (struct tk_tls_sess *)s;
}

void
tk_tls_sess_free(struct tk_tls_sess *s)
{
	SSL_SESSION_free((SSL_SESSION *)s);
}

/* Whether s is an IPv4 or IPv6 address rather than a host name. */
static int
is_ip(const char *s)
{
	struct in6_addr	a;

	return inet_pton(AF_INET, s, &a) == 1 ||
	    inet_pton(AF_INET6, s, &a) == 1;
}

struct tk_tls *
tk_tls_new(struct tk_tls_ctx *ctx, struct tk_io *io, const char *name,
    struct tk_tls_sess *sess)
{
	struct tk_tls	*t;
	SSL		*ssl;
	BIO		*b = NULL;

	pthread_once(&bio_once, bio_init);
	if (bio_method == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	if ((ssl = SSL_new(ctx->pairs[0])) == NULL)
		goto fail;
	t->ssl = ssl;
	t->io = io;
	t->rwant = TK_EV_READ;
	t->wwant = TK_EV_WRITE;
	SSL_set_app_data(ssl, t);
	if (ctx->ktls) {
		/* OpenSSL's socket BIO: it hands records to the kernel. */
		if (SSL_set_fd(ssl, io->fd) != 1)
			goto fail;
	} else {
		if ((b = BIO_new(bio_method)) == NULL)
			goto fail;
		BIO_set_data(b, t);
		BIO_set_init(b, 1);
		SSL_set_bio(ssl, b, b);
	}
	if (ctx->server) {
		SSL_set_accept_state(ssl);
		return t;
	}
	SSL_set_connect_state(ssl);
	if (name != NULL && *name != '\0') {
		if (is_ip(name)) {
			if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl),
			    name) != 1)
				goto fail;
		} else if (SSL_set_tlsext_host_name(ssl, name) != 1 ||
		    SSL_set1_host(ssl, name) != 1)
			goto fail;
	}
	if (sess != NULL && SSL_set_session(ssl, (SSL_SESSION *)sess) != 1)
		goto fail;
	t->sess_last = sess;
	return t;
 fail:
	ERR_clear_error();
	tk_tls_free(t);
	errno = ENOMEM;
	return NULL;
}

void
tk_tls_free(struct tk_tls *t)
{
	if (t == NULL)
		return;
	/*
	 * The thread's own list only: tenkd frees the connections of a
	 * worker thread it has joined, whose list is gone with it.
	 */
	if (t->warmed && t->warmhead == &warm)
		TAILQ_REMOVE(&warm, t, warm);
	if (t->ssl != NULL) {
		/* A clean end keeps the session (ssl_clear_bad_session). */
		if (t->done && t->fail == TK_TLS_F_NONE) {
			SSL_set_quiet_shutdown(t->ssl, 1);
			(void)SSL_shutdown(t->ssl);
		}
		SSL_free(t->ssl);
	}
	ERR_clear_error();
	free(t);
}

/* Sort a library failure into its kind. */
static uint8_t
fail_kind(const struct tk_tls *t, unsigned long e)
{
	int	r = ERR_GET_REASON(e);

	if (t->nottls)
		return TK_TLS_F_NOTTLS;
	if (ERR_GET_LIB(e) != ERR_LIB_SSL)
		return TK_TLS_F_PROTOCOL;
	switch (r) {
	case SSL_R_UNEXPECTED_EOF_WHILE_READING:
		return TK_TLS_F_EOF;
	case SSL_R_CERTIFICATE_VERIFY_FAILED:
		return TK_TLS_F_VERIFY;
	case SSL_R_NO_SHARED_CIPHER:
	case SSL_R_NO_CIPHERS_AVAILABLE:
	case SSL_R_UNSUPPORTED_PROTOCOL:
	case SSL_R_NO_PROTOCOLS_AVAILABLE:
	case SSL_R_VERSION_TOO_LOW:
	case SSL_R_VERSION_TOO_HIGH:
	case SSL_R_NO_SHARED_GROUPS:
	case SSL_R_NO_SUITABLE_KEY_SHARE:
	case SSL_R_NO_SHARED_SIGNATURE_ALGORITHMS:
	case SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM:
	case SSL_R_NO_APPLICATION_PROTOCOL:
		return TK_TLS_F_NOSHARED;
	}
	if (r >= SSL_AD_REASON_OFFSET && r < SSL_AD_REASON_OFFSET + 256)
		return TK_TLS_F_ALERT;
	return TK_TLS_F_PROTOCOL;
}

/*
 * After a call on t that did not succeed (ret its return): block the
 * direction it waits for into *want and return -1 with errno EAGAIN;
 * return 0 for the peer's end; or record the failure and return -1
 * with errno EPROTO or the socket's error.
 */
static int
tls_err(struct tk_tls *t, int ret, uint8_t *want)
{
	unsigned long	e;
	int		se;

	switch (SSL_get_error(t->ssl, ret)) {
	case SSL_ERROR_WANT_READ:
		*want = TK_EV_READ;
		tk_io_block(t->io, TK_EV_READ);
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_WANT_WRITE:
		*want = TK_EV_WRITE;
		tk_io_block(t->io, TK_EV_WRITE);
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_ZERO_RETURN:
		t->notify = !t->fin;
		ERR_clear_error();
		return 0;
	case SSL_ERROR_SYSCALL:
		ERR_clear_error();
		se = (int)t->err;
		if (se == 0 && t->fin)
			return 0;
		t->fail = TK_TLS_F_SOCKET;
		if (se == 0)
			se = ECONNRESET;
		t->err = (unsigned long)se;
		errno = se;
		return -1;
	}
	e = ERR_peek_last_error();
	t->err = e;
	t->fail = fail_kind(t, e);
	ERR_clear_error();
	errno = EPROTO;
	return -1;
}

int
tk_tls_handshake(struct tk_tls *t)
{
	int	r, e;

	ERR_clear_error();
	if ((r = SSL_do_handshake(t->ssl)) == 1) {
		atomic_fetch_add_explicit(&churn, 1, memory_order_relaxed);
		/*
		 * The handshake's buffers stay until a read or write after
		 * it empties them (SSL_MODE_RELEASE_BUFFERS acts only
		 * there): an idle connection would keep 35 KiB.  They go
		 * now unless they hold bytes.
		 */
		(void)SSL_free_buffers(t->ssl);
		t->done = 1;
		t->rwant = TK_EV_READ;
		t->wwant = TK_EV_WRITE;
#ifndef OPENSSL_NO_KTLS
		t->ktls_tx = BIO_get_ktls_send(SSL_get_wbio(t->ssl)) != 0;
		t->ktls_rx = BIO_get_ktls_recv(SSL_get_rbio(t->ssl)) != 0;
#endif
		return 1;
	}
	if ((e = tls_err(t, r, &t->rwant)) == -1 && errno == EAGAIN) {
		t->wwant = t->rwant;
		return 0;
	}
	atomic_fetch_add_explicit(&churn, 1, memory_order_relaxed);
	if (e == 0) {
		/* The peer's end before the handshake's. */
		t->fail = TK_TLS_F_EOF;
		errno = EPROTO;
	}
	return -1;
}

/*
 * See tls.h: a burst is over when no handshake ended and no sweep freed
 * buffers since the last call.
 */
void
tk_tls_trim(void)
{
	uint64_t	n;
	int		now = 0;

	n = atomic_load_explicit(&churn, memory_order_relaxed);
	pthread_mutex_lock(&trim_mtx);
	if (n == churn_seen && n != churn_trimmed) {
		churn_trimmed = n;
		now = 1;
	}
	churn_seen = n;
	pthread_mutex_unlock(&trim_mtx);
	if (now)
		(void)malloc_trim(0);
}

ssize_t
tk_tls_read(struct tk_tls *t, void *buf, size_t len)
{
	size_t	n;

	used(t);
	if (SSL_read_ex(t->ssl, buf, len, &n) == 1) {
		t->rwant = TK_EV_READ;
		/* A short recv drained the socket: see the top. */
		if (t->drained && (t->io->ready & TK_EV_HUP) == 0 &&
		    !SSL_has_pending(t->ssl))
			tk_io_block(t->io, TK_EV_READ);
		return (ssize_t)n;
	}
	return tls_err(t, 0, &t->rwant);
}

ssize_t
tk_tls_write(struct tk_tls *t, const void *buf, size_t len)
{
	size_t	n;
	int	r;

	if (len > RECORD_MAX)
		len = RECORD_MAX;
	used(t);
	if (SSL_write_ex(t->ssl, buf, len, &n) == 1) {
		t->wwant = TK_EV_WRITE;
		t->wpend = 0;
		return (ssize_t)n;
	}
	if ((r = tls_err(t, 0, &t->wwant)) == -1 && errno == EAGAIN)
		t->wpend = (uint32_t)len;
	else if (r == 0) {
		/* A write that meets the end: the peer is gone. */
		t->fail = TK_TLS_F_SOCKET;
		errno = EPIPE;
	}
	return -1;
}

int
tk_tls_shutdown(struct tk_tls *t)
{
	if (!t->shut && t->done) {
		if (SSL_shutdown(t->ssl) < 0) {
			if (tls_err(t, -1, &t->wwant) == 0)
				errno = EPIPE;
			return -1;
		}
	}
	t->shut = 1;
	t->wwant = TK_EV_WRITE;
	if (shutdown(t->io->fd, SHUT_WR) == -1 && errno != ENOTCONN)
		return -1;
	return 0;
}

void
tk_tls_info(const struct tk_tls *t, struct tk_tls_info *i)
{
	static _Thread_local char	 alpn[256];
	const unsigned char		*p;
	const char			*s;
	unsigned int			 n;

	i->version = SSL_get_version(t->ssl);
	i->cipher = SSL_get_cipher_name(t->ssl);
	SSL_get0_alpn_selected(t->ssl, &p, &n);
	memcpy(alpn, p != NULL ? p : (const unsigned char *)"", n);
	alpn[n] = '\0';
	i->alpn = alpn;
	s = SSL_get_servername(t->ssl, TLSEXT_NAMETYPE_host_name);
	i->sni = s != NULL ? s : "";
	i->proto = SSL_version(t->ssl);
	i->resumed = SSL_session_reused(t->ssl);
}

const char *
tk_tls_why(const struct tk_tls *t, char *buf, size_t len)
{
	const char	*r;
	long		 v;

	switch (t->fail) {
	case TK_TLS_F_NONE:
		strlcpy(buf, "no failure", len);
		break;
	case TK_TLS_F_SOCKET:
		strlcpy(buf, strerror((int)t->err), len);
		break;
	case TK_TLS_F_TIMEOUT:
		strlcpy(buf, "the handshake took too long", len);
		break;
	case TK_TLS_F_NOTTLS:
		strlcpy(buf, "the peer does not speak TLS", len);
		break;
	case TK_TLS_F_VERIFY:
		v = SSL_get_verify_result(t->ssl);
		snprintf(buf, len, "certificate verify failed: %s",
		    X509_verify_cert_error_string(v));
		break;
	default:
		if (t->err == 0) {
			strlcpy(buf, tk_tls_fail_names[t->fail], len);
			break;
		}
		r = ERR_reason_error_string(t->err);
		strlcpy(buf, r != NULL ? r : tk_tls_fail_names[t->fail], len);
		break;
	}
	return buf;
}
