/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tlspeer: a TLS server and client for the integration scripts, on
 * OpenSSL with blocking sockets and threads, never libtenk's TLS layer
 * or loop, so that a bug there cannot hide on both ends.  The records
 * pass through memory BIOs, so that the ciphertext can go out in small
 * pieces (-s): a peer reads records split at every size.  Failures are
 * one line on stderr, "tlspeer: ...", and exit status 1; bad usage
 * exits 2.
 *
 *	server -c cert -k key [-s split] [-u addr:port] [-l addr:port]
 *		prints "listening on ADDR:PORT" on stderr; each connection
 *		in a thread of its own: the handshake, then an echo (or,
 *		with -u, the plaintext forwarded to and from that upstream)
 *		until the client's end (close_notify, or its FIN alone),
 *		then close_notify and the FIN once all is sent, as a
 *		half-close passes through TLS.
 *	client [-FR] [-a ca] [-b bytes] [-n name] [-p bytes] [-r size]
 *	    [-s split] [-T secs] addr:port
 *		the handshake (verifying against ca with -a, for name, sent
 *		as SNI), then bytes of a pattern in writes of size (one
 *		record each) while reading the echo, then close_notify and
 *		the FIN (-F: the FIN alone), then reading until the server's
 *		end; the echo must be byte-exact.  Prints "got N bytes, end
 *		close_notify|fin, VERSION CIPHER" on stdout.  -p: send only
 *		the first bytes of the ClientHello and wait for the server
 *		to close; prints "closed after S s".  -R: the other way
 *		round: read until the server's end first (prints "read N
 *		bytes first"), then send and close; no echo is checked.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tenk/sock.h"
#include "tool.h"

#ifdef TENK_HAVE_TLS
#include <openssl/err.h>
#include <openssl/ssl.h>

#define BUFSZ		(64 * 1024)

/* One end of a TLS connection, shared by its reader and writer. */
struct peer {
	int		 fd;
	SSL		*ssl;
	BIO		*rb;		/* ciphertext from the socket */
	BIO		*wb;		/* ciphertext for the socket */
	pthread_mutex_t	 mtx;		/* around every use of ssl */
	pthread_mutex_t	 smtx;		/* around sending, in order */
	int		 fin;		/* the socket read 0 */
	int		 up;		/* -u: the upstream, or -1 */
};

static long	 opt_split;
static const char *opt_upstream;

static noreturn void
usage(void)
{
	fprintf(stderr, "usage: tlspeer server -c cert -k key [-s split] "
	    "[-u addr:port] [-l addr:port]\n"
	    "       tlspeer client [-FR] [-a ca] [-b bytes] [-n name] "
	    "[-p bytes] [-r size]\n"
	    "\t[-s split] [-T secs] addr:port\n");
	exit(2);
}

static noreturn void
ssl_fail(const char *what)
{
	unsigned long	e = ERR_peek_last_error();

	tool_fail("%s: %s", what, e != 0 ? ERR_reason_error_string(e) :
	    "failed");
}

static int
sendall(int fd, const char *p, size_t n)
{
	ssize_t	k;

	while (n > 0) {
		if ((k = send(fd, p, n, MSG_NOSIGNAL)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/*
 * Send what the library wrote, whole or in pieces of opt_split bytes a
 * millisecond apart.  Called with p->mtx held, which it lets go once
 * it holds p->smtx: the sends keep their order, and a send blocked on
 * a full socket does not keep the reader from the library (the peer
 * may be waiting for us to read).  -1 on a send error.
 */
static int
out_flush(struct peer *p)
{
	struct timespec	 ms = { 0, 1000 * 1000 };
	char		*buf = NULL, *nb;
	size_t		 len = 0, off, k;
	int		 n, r = 0;

	while ((n = BIO_pending(p->wb)) > 0) {
		if ((nb = realloc(buf, len + (size_t)n)) == NULL)
			tool_die("realloc");
		buf = nb;
		len += (size_t)BIO_read(p->wb, buf + len, n);
	}
	/* The reader has nothing to send, mostly: never wait for smtx. */
	if (len == 0) {
		pthread_mutex_unlock(&p->mtx);
		return 0;
	}
	pthread_mutex_lock(&p->smtx);
	pthread_mutex_unlock(&p->mtx);
	for (off = 0; off < len && r == 0; off += k) {
		k = len - off;
		if (opt_split > 0 && k > (size_t)opt_split)
			k = (size_t)opt_split;
		r = sendall(p->fd, buf + off, k);
		if (opt_split > 0)
			nanosleep(&ms, NULL);
	}
	pthread_mutex_unlock(&p->smtx);
	free(buf);
	return r;
}

/*
 * One recv into the library (outside p->mtx, which the caller does not
 * hold): 1, or 0 once the socket has ended (the library then sees its
 * end too), or -1 on an error.
 */
static int
in_fill(struct peer *p)
{
	char	buf[BUFSZ];
	ssize_t	n;

	do {
		n = recv(p->fd, buf, sizeof(buf), 0);
	} while (n == -1 && errno == EINTR);
	pthread_mutex_lock(&p->mtx);
	if (n > 0)
		BIO_write(p->rb, buf, (int)n);
	else if (n == 0) {
		p->fin = 1;
		BIO_set_mem_eof_return(p->rb, 0);
	}
	pthread_mutex_unlock(&p->mtx);
	return n > 0 ? 1 : (int)n;
}

static void
peer_init(struct peer *p, int fd, SSL_CTX *ctx)
{
	memset(p, 0, sizeof(*p));
	p->fd = fd;
	p->up = -1;
	if ((p->ssl = SSL_new(ctx)) == NULL ||
	    (p->rb = BIO_new(BIO_s_mem())) == NULL ||
	    (p->wb = BIO_new(BIO_s_mem())) == NULL)
		ssl_fail("SSL_new");
	SSL_set_bio(p->ssl, p->rb, p->wb);
	pthread_mutex_init(&p->mtx, NULL);
	pthread_mutex_init(&p->smtx, NULL);
}

static void
peer_free(struct peer *p)
{
	SSL_free(p->ssl);
	pthread_mutex_destroy(&p->mtx);
	pthread_mutex_destroy(&p->smtx);
	close(p->fd);
	if (p->up != -1)
		close(p->up);
}

/* The handshake; 0, or -1 with the reason in why. */
static int
handshake(struct peer *p, char *why, size_t len)
{
	int	r, e;

	for (;;) {
		pthread_mutex_lock(&p->mtx);
		r = SSL_do_handshake(p->ssl);
		e = SSL_get_error(p->ssl, r);
		if (out_flush(p) == -1)
			e = SSL_ERROR_SYSCALL;
		if (r == 1)
			return 0;
		if (e != SSL_ERROR_WANT_READ || in_fill(p) == -1) {
			snprintf(why, len, "handshake: %s",
			    ERR_peek_last_error() != 0 ?
			    ERR_reason_error_string(ERR_peek_last_error()) :
			    "the peer closed");
			return -1;
		}
	}
}

/* Plaintext, or 0 at the peer's end, or -1. */
static ssize_t
tls_read(struct peer *p, char *buf, size_t len)
{
	int	r, e;

	for (;;) {
		pthread_mutex_lock(&p->mtx);
		r = SSL_read(p->ssl, buf, (int)len);
		e = SSL_get_error(p->ssl, r);
		(void)out_flush(p);
		if (r > 0)
			return r;
		if (e == SSL_ERROR_ZERO_RETURN)
			return 0;
		if (e != SSL_ERROR_WANT_READ || in_fill(p) == -1)
			return -1;
	}
}

static int
tls_write(struct peer *p, const char *buf, size_t len)
{
	int	r;

	pthread_mutex_lock(&p->mtx);
	r = SSL_write(p->ssl, buf, (int)len) == (int)len ? 0 : -1;
	if (out_flush(p) == -1)
		r = -1;
	return r;
}

/* close_notify, then the FIN. */
static void
tls_close(struct peer *p)
{
	pthread_mutex_lock(&p->mtx);
	(void)SSL_shutdown(p->ssl);
	(void)out_flush(p);
	(void)shutdown(p->fd, SHUT_WR);
}

/* -u: the upstream's bytes to the client, then close_notify. */
static void *
up_to_client(void *arg)
{
	struct peer	*p = arg;
	char		 buf[BUFSZ];
	ssize_t		 n;

	while ((n = recv(p->up, buf, sizeof(buf), 0)) > 0)
		if (tls_write(p, buf, (size_t)n) == -1)
			break;
	tls_close(p);
	return NULL;
}

static void *
serve(void *arg)
{
	struct peer	*p = arg;
	struct tk_addr	 a;
	pthread_t	 t = 0;
	char		 buf[BUFSZ], why[256];
	ssize_t		 n;

	if (handshake(p, why, sizeof(why)) == -1)
		goto out;
	if (opt_upstream != NULL) {
		if (tk_addr_parse(opt_upstream, -1, &a, NULL) == -1 ||
		    (p->up = socket(a.ss.ss_family, SOCK_STREAM, 0)) == -1 ||
		    connect(p->up, (struct sockaddr *)&a.ss, a.len) == -1)
			goto out;
		if (pthread_create(&t, NULL, up_to_client, p) != 0)
			tool_die("pthread_create");
	}
	while ((n = tls_read(p, buf, sizeof(buf))) > 0) {
		if (p->up != -1) {
			if (sendall(p->up, buf, (size_t)n) == -1)
				break;
		} else if (tls_write(p, buf, (size_t)n) == -1)
			break;
	}
	if (p->up != -1) {
		(void)shutdown(p->up, SHUT_WR);
		pthread_join(t, NULL);
	} else
		tls_close(p);
	/* Wait for the client's close, so that nothing is reset. */
	while (recv(p->fd, buf, sizeof(buf), 0) > 0)
		;
 out:
	peer_free(p);
	free(p);
	return NULL;
}

static int
server_main(int argc, char *argv[])
{
	const char	*cert = NULL, *key = NULL, *listen_on = "127.0.0.1:0";
	SSL_CTX		*ctx;
	struct peer	*p;
	pthread_t	 t;
	int		 ch, lfd, fd;

	while ((ch = getopt(argc, argv, "c:k:l:s:u:")) != -1) {
		switch (ch) {
		case 'c':
			cert = optarg;
			break;
		case 'k':
			key = optarg;
			break;
		case 'l':
			listen_on = optarg;
			break;
		case 's':
			opt_split = atol(optarg);
			break;
		case 'u':
			opt_upstream = optarg;
			break;
		default:
			usage();
		}
	}
	if (cert == NULL || key == NULL || optind != argc)
		usage();
	if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL ||
	    SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1)
		ssl_fail(cert);
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	lfd = tool_listen(listen_on, 128, SOCK_CLOEXEC);
	for (;;) {
		if ((fd = accept(lfd, NULL, NULL)) == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			tool_die("accept");
		}
		if ((p = malloc(sizeof(*p))) == NULL)
			tool_die("malloc");
		peer_init(p, fd, ctx);
		SSL_set_accept_state(p->ssl);
		if (pthread_create(&t, NULL, serve, p) != 0)
			tool_die("pthread_create");
		pthread_detach(t);
	}
}

/* The client's bytes: byte i of every run. */
static inline char
pat(uint64_t i)
{
	return (char)((i * 2654435761u) >> 24);
}

struct sender {
	struct peer	*p;
	uint64_t	 bytes;
	size_t		 rsize;
	int		 fin_only;
};

static void *
client_send(void *arg)
{
	struct sender	*s = arg;
	char		*buf;
	uint64_t	 off = 0;
	size_t		 n, i;

	if ((buf = malloc(s->rsize)) == NULL)
		tool_die("malloc");
	while (off < s->bytes) {
		n = s->bytes - off < s->rsize ? (size_t)(s->bytes - off) :
		    s->rsize;
		for (i = 0; i < n; i++)
			buf[i] = pat(off + i);
		if (tls_write(s->p, buf, n) == -1)
			tool_fail("write after %llu bytes",
			    (unsigned long long)off);
		off += n;
	}
	free(buf);
	if (s->fin_only)
		(void)shutdown(s->p->fd, SHUT_WR);
	else
		tls_close(s->p);
	return NULL;
}

static int
client_main(int argc, char *argv[])
{
	const char	*ca = NULL, *name = NULL;
	struct sender	 s;
	struct peer	 p;
	struct tk_addr	 a;
	SSL_CTX		*ctx;
	pthread_t	 t;
	char		 buf[BUFSZ], why[256];
	uint64_t	 got = 0;
	double		 t0, secs = 60;
	long		 partial = -1;
	ssize_t		 n, i;
	int		 ch, fd, one = 1, first = 0;

	memset(&s, 0, sizeof(s));
	s.bytes = 1000;
	s.rsize = 16384;
	while ((ch = getopt(argc, argv, "a:b:Fn:p:Rr:s:T:")) != -1) {
		switch (ch) {
		case 'a':
			ca = optarg;
			break;
		case 'b':
			s.bytes = strtoull(optarg, NULL, 10);
			break;
		case 'F':
			s.fin_only = 1;
			break;
		case 'n':
			name = optarg;
			break;
		case 'p':
			partial = atol(optarg);
			break;
		case 'R':
			first = 1;
			break;
		case 'r':
			s.rsize = (size_t)atol(optarg);
			break;
		case 's':
			opt_split = atol(optarg);
			break;
		case 'T':
			secs = atof(optarg);
			break;
		default:
			usage();
		}
	}
	if (optind + 1 != argc || s.rsize == 0 || s.rsize > BUFSZ)
		usage();
	if (tk_addr_parse(argv[optind], -1, &a, NULL) == -1)
		tool_fail("%s: bad address", argv[optind]);
	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL)
		ssl_fail("SSL_CTX_new");
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	if (ca != NULL) {
		if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1)
			ssl_fail(ca);
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	}
	if ((fd = socket(a.ss.ss_family, SOCK_STREAM, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&a.ss, a.len) == -1)
		tool_die("connect");
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	alarm((unsigned int)secs + 1);
	peer_init(&p, fd, ctx);
	SSL_set_connect_state(p.ssl);
	if (name != NULL && (SSL_set_tlsext_host_name(p.ssl, name) != 1 ||
	    (ca != NULL && SSL_set1_host(p.ssl, name) != 1)))
		ssl_fail(name);
	t0 = tool_now();
	if (partial >= 0) {
		/* The first bytes of the ClientHello, then nothing. */
		(void)SSL_do_handshake(p.ssl);
		n = BIO_read(p.wb, buf, sizeof(buf));
		if (n < partial)
			tool_fail("a ClientHello of %zd bytes", n);
		if (sendall(fd, buf, (size_t)partial) == -1)
			tool_die("send");
		while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
			;
		printf("closed after %.3f s%s\n", tool_now() - t0,
		    n == -1 ? " (reset)" : "");
		peer_free(&p);
		SSL_CTX_free(ctx);
		return 0;
	}
	if (handshake(&p, why, sizeof(why)) == -1)
		tool_fail("%s", why);
	s.p = &p;
	if (first) {
		/* The server's end first, then ours: no echo to check. */
		while ((n = tls_read(&p, buf, sizeof(buf))) > 0)
			got += (uint64_t)n;
		if (n == -1)
			tool_fail("read after %llu bytes",
			    (unsigned long long)got);
		printf("read %llu bytes first, end %s\n",
		    (unsigned long long)got, p.fin ? "fin" : "close_notify");
		client_send(&s);
		while (recv(fd, buf, sizeof(buf), 0) > 0)
			;
		peer_free(&p);
		SSL_CTX_free(ctx);
		return 0;
	}
	if (pthread_create(&t, NULL, client_send, &s) != 0)
		tool_die("pthread_create");
	while ((n = tls_read(&p, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; i++)
			if (buf[i] != pat(got + (uint64_t)i))
				tool_fail("byte %llu differs",
				    (unsigned long long)(got + (uint64_t)i));
		got += (uint64_t)n;
	}
	pthread_join(t, NULL);
	if (n == -1)
		tool_fail("read after %llu bytes: %s", (unsigned long long)got,
		    ERR_peek_last_error() != 0 ?
		    ERR_reason_error_string(ERR_peek_last_error()) : "reset");
	if (got != s.bytes)
		tool_fail("got %llu bytes of %llu", (unsigned long long)got,
		    (unsigned long long)s.bytes);
	printf("got %llu bytes, end %s, %s %s\n", (unsigned long long)got,
	    p.fin ? "fin" : "close_notify", SSL_get_version(p.ssl),
	    SSL_get_cipher_name(p.ssl));
	peer_free(&p);
	SSL_CTX_free(ctx);
	return 0;
}

int
main(int argc, char *argv[])
{
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2)
		usage();
	optind = 2;
	if (strcmp(argv[1], "server") == 0)
		return server_main(argc, argv);
	if (strcmp(argv[1], "client") == 0)
		return client_main(argc, argv);
	usage();
}
#else
int
main(void)
{
	fprintf(stderr, "tlspeer: built without TLS\n");
	return 77;
}
#endif
