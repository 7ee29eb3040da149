/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The TLS layer (tls.h) between two of its own ends on a loopback TCP
 * connection, driven by one loop on every backend: handshakes whose
 * wants become the watchers', a megabyte echoed through small socket
 * buffers (so that writes meet EAGAIN mid-record and reads find records
 * split), close_notify and the FIN each way, a FIN without close_notify,
 * plaintext to a server, verification, SNI, resumption by ticket, a
 * record split at every byte, and the context's refusals of bad files.
 * Certificates are made here with the library, in the test's own
 * directory.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/clock.h"
#include "tenk/loop.h"
#include "tenk/sock.h"
#include "tenk/timer.h"
#include "tenk/tls.h"
#include "../t.h"

#ifdef TENK_HAVE_TLS
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#define BIG		(1024 * 1024)
#define SMALLBUF	32768		/* SO_SNDBUF and SO_RCVBUF */

/* One end: a watcher, its TLS, what it has to send and what it got. */
struct end {
	struct tk_io	 io;
	struct tk_tls	*t;
	int		 echo;		/* send back what comes in */
	int		 shut_at_end;	/* close_notify once all is sent */
	int		 raw_fin;	/* ... or only the FIN */
	unsigned char	*out;
	size_t		 outlen;
	size_t		 outoff;
	unsigned char	*in;
	size_t		 inlen;
	size_t		 chunk;		/* largest write */
	int		 hs;		/* 1 done, -1 failed */
	int		 eof;
	int		 shut;
	int		 failed;
	int		 reads;
	int		 wagain;	/* writes that met EAGAIN */
};

static char	dir[] = "/tmp/tk-tls.XXXXXX";
static char	path_a[256], path_ak[256], path_b[256], path_bk[256];

/* A self-signed P-256 certificate for cn with DNS name san. */
static void
mkcert(const char *cert, const char *key, const char *cn, const char *san)
{
	EVP_PKEY	*k;
	X509		*x;
	X509_NAME	*n;
	X509_EXTENSION	*ext;
	FILE		*f;
	char		 alt[128];

	T_PTR(k = EVP_EC_gen("P-256"));
	T_PTR(x = X509_new());
	T_OK(X509_set_version(x, 2) == 1);
	ASN1_INTEGER_set(X509_get_serialNumber(x), (long)(t_rand() & 0xffff));
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400);
	T_OK(X509_set_pubkey(x, k) == 1);
	n = X509_get_subject_name(x);
	T_OK(X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
	    (const unsigned char *)cn, -1, -1, 0) == 1);
	T_OK(X509_set_issuer_name(x, n) == 1);
	snprintf(alt, sizeof(alt), "DNS:%s", san);
	T_PTR(ext = X509V3_EXT_conf_nid(NULL, NULL, NID_subject_alt_name,
	    alt));
	T_OK(X509_add_ext(x, ext, -1) == 1);
	X509_EXTENSION_free(ext);
	T_OK(X509_sign(x, k, EVP_sha256()) > 0);
	T_PTR(f = fopen(cert, "w"));
	T_OK(PEM_write_X509(f, x) == 1);
	fclose(f);
	T_PTR(f = fopen(key, "w"));
	T_OK(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL) == 1);
	fclose(f);
	X509_free(x);
	EVP_PKEY_free(k);
}

static void
certs(void)
{
	T_PTR(mkdtemp(dir));
	snprintf(path_a, sizeof(path_a), "%s/a.pem", dir);
	snprintf(path_ak, sizeof(path_ak), "%s/a.key", dir);
	snprintf(path_b, sizeof(path_b), "%s/b.pem", dir);
	snprintf(path_bk, sizeof(path_bk), "%s/b.key", dir);
	mkcert(path_a, path_ak, "a.test", "a.test");
	mkcert(path_b, path_bk, "b.test", "*.b.test");
}

static void
certs_gone(void)
{
	unlink(path_a);
	unlink(path_ak);
	unlink(path_b);
	unlink(path_bk);
	rmdir(dir);
}

static struct tk_tls_ctx *
server_ctx(int tickets)
{
	static const unsigned char	 secret[32] = "tenk test secret";
	struct tk_tls_ctx		*c;
	char				 err[256];

	c = tk_tls_ctx_new(1, err, sizeof(err));
	if (c == NULL)
		T_FAIL("server context: %s", err);
	if (tk_tls_ctx_cert(c, path_a, path_ak, err, sizeof(err)) == -1 ||
	    tk_tls_ctx_cert(c, path_b, path_bk, err, sizeof(err)) == -1)
		T_FAIL("certificate: %s", err);
	if (tickets)
		T_SYS(tk_tls_ctx_tickets(c, secret, 3600));
	return c;
}

static struct tk_tls_ctx *
client_ctx(const char *ca)
{
	struct tk_tls_ctx	*c;
	char			 err[256];

	c = tk_tls_ctx_new(0, err, sizeof(err));
	if (c == NULL)
		T_FAIL("client context: %s", err);
	if (ca != NULL && tk_tls_ctx_verify(c, ca, err, sizeof(err)) == -1)
		T_FAIL("verify: %s", err);
	return c;
}

/* A connected loopback TCP pair, nonblocking, with small buffers. */
static void
tcp_pair(int *cfd, int *sfd, int small)
{
	struct tk_addr	 a;
	int		 lfd, one = 1, sz = SMALLBUF;

	T_SYS(tk_addr_parse("127.0.0.1:0", -1, &a, NULL));
	T_SYS(lfd = tk_sock_listen(&a, 4, 0));
	T_SYS(tk_sock_local(lfd, &a));
	T_SYS(*cfd = tk_sock_connect(&a, NULL));
	do {
		*sfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	} while (*sfd == -1 && errno == EAGAIN);
	T_SYS(*sfd);
	close(lfd);
	(void)setsockopt(*cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	(void)setsockopt(*sfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (small) {
		T_SYS(setsockopt(*cfd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)));
		T_SYS(setsockopt(*sfd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)));
		T_SYS(setsockopt(*cfd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz)));
		T_SYS(setsockopt(*sfd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz)));
	}
}

static void
end_want(struct tk_loop *l, struct end *e)
{
	unsigned int	want = 0;

	if (e->failed || e->hs == -1)
		want = 0;
	else if (e->hs == 0)
		want = e->t->rwant;
	else {
		if (!e->eof)
			want |= e->t->rwant;
		if (e->outoff < e->outlen || (e->shut_at_end && !e->shut &&
		    (!e->echo || e->eof)))
			want |= e->t->wwant;
	}
	T_SYS(tk_io_want(l, &e->io, want));
}

static void
end_send(struct end *e)
{
	size_t	n;
	ssize_t	r;

	while (e->outoff < e->outlen) {
		n = e->outlen - e->outoff;
		if (n > e->chunk)
			n = e->chunk;
		/* A retry offers the same bytes again (tls.h). */
		if (e->t->wpend > 0)
			T_GE(n, e->t->wpend);
		if ((r = tk_tls_write(e->t, e->out + e->outoff, n)) == -1) {
			if (errno != EAGAIN)
				e->failed = 1;
			else
				e->wagain++;
			return;
		}
		T_GT(r, 0);
		e->outoff += (size_t)r;
	}
	if (!e->shut_at_end || e->shut || (e->echo && !e->eof))
		return;
	if (e->raw_fin) {
		T_SYS(shutdown(e->io.fd, SHUT_WR));
		e->shut = 1;
	} else if (tk_tls_shutdown(e->t) == 0)
		e->shut = 1;
	else if (errno != EAGAIN)
		e->failed = 1;
}

static void
end_io(struct tk_loop *l, struct tk_io *io)
{
	struct end	*e = io->arg;
	unsigned char	 buf[4096];
	ssize_t		 r;
	int		 h;

	if (e->hs == 0) {
		if ((h = tk_tls_handshake(e->t)) == -1) {
			e->hs = -1;
			end_want(l, e);
			return;
		}
		if (h == 0) {
			end_want(l, e);
			return;
		}
		e->hs = 1;
	}
	while (!e->eof && !e->failed && (io->ready & (e->t->rwant |
	    TK_EV_HUP))) {
		r = tk_tls_read(e->t, buf, sizeof(buf));
		if (r == -1) {
			if (errno != EAGAIN)
				e->failed = 1;
			break;
		}
		e->reads++;
		if (r == 0) {
			e->eof = 1;
			break;
		}
		T_LE(e->inlen + (size_t)r, (size_t)BIG);
		memcpy(e->in + e->inlen, buf, (size_t)r);
		e->inlen += (size_t)r;
		if (e->echo)
			e->outlen = e->inlen;
	}
	end_send(e);
	end_want(l, e);
}

static void
end_init(struct end *e, int fd, int echo)
{
	memset(e, 0, sizeof(*e));
	tk_io_init(&e->io, fd, end_io, e);
	e->echo = echo;
	e->chunk = 16384;
	T_PTR(e->in = malloc(BIG));
	if (echo)
		e->out = e->in;
}

static void
end_free(struct tk_loop *l, struct end *e)
{
	tk_io_stop(l, &e->io);
	tk_tls_free(e->t);
	close(e->io.fd);
	free(e->in);
	if (!e->echo)
		free(e->out);
}

/* The end of a test of one client c and server s: all of it freed. */
static void
pair_end(struct tk_loop *l, struct end *c, struct end *s,
    struct tk_tls_ctx *sc, struct tk_tls_ctx *cc)
{
	end_free(l, c);
	end_free(l, s);
	tk_loop_free(l);
	tk_tls_ctx_free(sc);
	tk_tls_ctx_free(cc);
	certs_gone();
}

/* Run l until done(c, s) or 20 s pass. */
static void
run(struct tk_loop *l, struct end *c, struct end *s,
    int (*done)(const struct end *, const struct end *))
{
	uint64_t	deadline = tk_clock_mono() + 20 * TK_SEC;

	if (!c->io.active)
		T_SYS(tk_io_start(l, &c->io, TK_EV_READ | TK_EV_WRITE));
	if (!s->io.active)
		T_SYS(tk_io_start(l, &s->io, TK_EV_READ | TK_EV_WRITE));
	while (!done(c, s)) {
		if (tk_clock_mono() > deadline)
			T_FAIL("no end after 20 s: client hs %d in %zu out "
			    "%zu/%zu eof %d, server hs %d in %zu out %zu/%zu "
			    "eof %d", c->hs, c->inlen, c->outoff, c->outlen,
			    c->eof, s->hs, s->inlen, s->outoff, s->outlen,
			    s->eof);
		tk_loop_run(l, TK_RUN_ONCE);
	}
}

static int
both_closed(const struct end *c, const struct end *s)
{
	return (c->eof && s->eof && c->shut && s->shut) || c->failed ||
	    s->failed || c->hs == -1 || s->hs == -1;
}

static int
hs_over(const struct end *c, const struct end *s)
{
	return (c->hs != 0 && s->hs != 0) || c->hs == -1 || s->hs == -1;
}

/*
 * A client sends size bytes in writes of chunk, then closes its side
 * (close_notify, or the FIN alone with raw); the server echoes it all
 * and then closes its own.  Each end must have read the other's end.
 */
static void
echo_run(size_t size, size_t chunk, int raw)
{
	struct tk_tls_ctx	*sc, *cc;
	struct tk_loop		*l;
	struct end		 c, s;
	size_t			 i;
	int			 cfd, sfd;

	certs();
	sc = server_ctx(0);
	cc = client_ctx(NULL);
	T_PTR(l = tk_loop_new(t_backend, 0));
	tcp_pair(&cfd, &sfd, 1);
	end_init(&c, cfd, 0);
	end_init(&s, sfd, 1);
	T_PTR(c.out = malloc(size));
	for (i = 0; i < size; i++)
		c.out[i] = (unsigned char)(t_rand() >> 56);
	c.outlen = size;
	c.chunk = chunk;
	c.shut_at_end = s.shut_at_end = 1;
	c.raw_fin = raw;
	T_PTR(c.t = tk_tls_new(cc, &c.io, "a.test", NULL));
	T_PTR(s.t = tk_tls_new(sc, &s.io, NULL, NULL));
	run(l, &c, &s, both_closed);
	T_EQ(c.failed, 0);
	T_EQ(s.failed, 0);
	T_UEQ(s.inlen, size);
	T_UEQ(c.inlen, size);
	T_OK(memcmp(c.in, c.out, size) == 0);
	/* How each end ended: the server saw what the client sent. */
	T_EQ(s.t->notify, !raw);
	T_EQ(c.t->notify, 1);
	/* The small buffers made writes wait, mid-record. */
	if (size == BIG)
		T_GT(c.wagain + s.wagain, 0);
	pair_end(l, &c, &s, sc, cc);
}

TEST_BE(tls_echo_big)
{
	echo_run(BIG, 16384, 0);
}

TEST_BE(tls_echo_small_writes)
{
	echo_run(64 * 1024, 7, 0);
}

TEST_BE(tls_fin_without_notify)
{
	echo_run(100000, 1000, 1);
}

/* A handshake between a client of cc and a server of sc, then free. */
static void
hs_run(struct tk_tls_ctx *cc, struct tk_tls_ctx *sc, const char *name,
    struct tk_tls_sess *sess, struct end *c, struct end *s,
    struct tk_loop *l)
{
	int	cfd, sfd;

	tcp_pair(&cfd, &sfd, 0);
	end_init(c, cfd, 0);
	end_init(s, sfd, 1);
	T_PTR(c->t = tk_tls_new(cc, &c->io, name, sess));
	T_PTR(s->t = tk_tls_new(sc, &s->io, NULL, NULL));
	run(l, c, s, hs_over);
}

/*
 * A handshake of a client of cc asking for name with a server of sc ends
 * as want: 1, or -1 with the client's failure fail.
 */
static void
hs_expect(struct tk_tls_ctx *cc, struct tk_tls_ctx *sc, const char *name,
    int want, int fail, struct tk_loop *l)
{
	struct end	c, s;

	hs_run(cc, sc, name, NULL, &c, &s, l);
	T_EQ(c.hs, want);
	if (want == -1)
		T_EQ(c.t->fail, fail);
	end_free(l, &c);
	end_free(l, &s);
}

TEST(tls_verify)
{
	struct tk_tls_ctx	*sc, *plain, *trusting;
	struct tk_loop		*l;
	struct end		 c, s;
	char			 why[256];

	certs();
	sc = server_ctx(0);
	/* The system's CAs know nothing of a self-signed a.test. */
	plain = client_ctx(NULL);
	T_SYS(tk_tls_ctx_verify(plain, NULL, why, sizeof(why)));
	trusting = client_ctx(path_a);
	T_PTR(l = tk_loop_new(NULL, 0));

	hs_run(plain, sc, "a.test", NULL, &c, &s, l);
	T_EQ(c.hs, -1);
	T_EQ(c.t->fail, TK_TLS_F_VERIFY);
	T_OK(strstr(tk_tls_why(c.t, why, sizeof(why)), "self-signed") !=
	    NULL);
	end_free(l, &c);
	end_free(l, &s);

	hs_expect(trusting, sc, "a.test", 1, 0, l);
	/* Trusted, but not for that name. */
	hs_expect(trusting, sc, "c.test", -1, TK_TLS_F_VERIFY, l);

	tk_loop_free(l);
	tk_tls_ctx_free(sc);
	tk_tls_ctx_free(plain);
	tk_tls_ctx_free(trusting);
	certs_gone();
}

/* The server serves the certificate that names what the client asks. */
TEST(tls_sni)
{
	struct tk_tls_ctx	*sc, *ca, *cb;
	struct tk_loop		*l;
	struct tk_tls_info	 i;
	struct end		 c, s;

	certs();
	sc = server_ctx(0);
	ca = client_ctx(path_a);
	cb = client_ctx(path_b);
	T_PTR(l = tk_loop_new(NULL, 0));
	hs_run(cb, sc, "x.b.test", NULL, &c, &s, l);
	T_EQ(c.hs, 1);
	tk_tls_info(s.t, &i);
	T_STREQ(i.sni, "x.b.test");
	end_free(l, &c);
	end_free(l, &s);
	/* An unknown name gets the first pair's. */
	hs_expect(ca, sc, "nowhere.test", -1, TK_TLS_F_VERIFY, l);
	hs_expect(ca, sc, "a.test", 1, 0, l);
	tk_loop_free(l);
	tk_tls_ctx_free(sc);
	tk_tls_ctx_free(ca);
	tk_tls_ctx_free(cb);
	certs_gone();
}

/*
 * A session ticket from one connection resumes the next, in 1.2 and
 * 1.3 (where the ticket comes after the handshake, with the first
 * read); a server without tickets resumes nothing.
 */
static void
resume_run(int version, int tickets)
{
	struct tk_tls_ctx	*sc, *cc;
	struct tk_tls_sess	*sess = NULL, *n;
	struct tk_loop		*l;
	struct tk_tls_info	 i;
	struct end		 c, s;
	char			 err[256];
	int			 k;

	certs();
	sc = server_ctx(tickets);
	cc = client_ctx(NULL);
	T_SYS(tk_tls_ctx_versions(cc, version, version, err, sizeof(err)));
	T_PTR(l = tk_loop_new(NULL, 0));
	for (k = 0; k < 3; k++) {
		hs_run(cc, sc, "a.test", sess, &c, &s, l);
		T_EQ(c.hs, 1);
		tk_tls_info(c.t, &i);
		T_EQ(i.resumed, k > 0 && tickets);
		T_STREQ(i.version, version == TK_TLS_1_3 ? "TLSv1.3" :
		    "TLSv1.2");
		/* A byte each way brings a 1.3 ticket in. */
		c.out = (unsigned char *)strdup("x");
		c.outlen = 1;
		c.shut_at_end = s.shut_at_end = 1;
		end_want(l, &c);
		run(l, &c, &s, both_closed);
		T_UEQ(c.inlen, 1);
		/*
		 * A new session the first time; then 1.3 brings a fresh
		 * ticket each time, while 1.2 resumes the one it has.
		 */
		n = tk_tls_sess_take(c.t);
		if (tickets && (k == 0 || version == TK_TLS_1_3))
			T_PTR(n);
		else
			T_OK(n == NULL);
		if (n != NULL) {
			tk_tls_sess_free(sess);
			sess = n;
		}
		end_free(l, &c);
		end_free(l, &s);
	}
	tk_tls_sess_free(sess);
	tk_loop_free(l);
	tk_tls_ctx_free(sc);
	tk_tls_ctx_free(cc);
	certs_gone();
}

TEST(tls_resume_13)
{
	resume_run(TK_TLS_1_3, 1);
}

TEST(tls_resume_12)
{
	resume_run(TK_TLS_1_2, 1);
}

TEST(tls_resume_none)
{
	resume_run(TK_TLS_1_3, 0);
}

/*
 * A connection that moved records (or tried to read one) holds its
 * buffers until a sweep finds it quiet for a whole interval.
 */
TEST(tls_sweep)
{
	struct tk_tls_ctx	*sc, *cc;
	struct tk_loop		*l;
	struct end		 c, s;

	certs();
	sc = server_ctx(0);
	cc = client_ctx(NULL);
	T_PTR(l = tk_loop_new(NULL, 0));
	hs_run(cc, sc, "a.test", NULL, &c, &s, l);
	T_EQ(c.hs, 1);
	tk_tls_sweep();
	tk_tls_sweep();
	T_EQ(c.t->warmed, 0);
	T_EQ(s.t->warmed, 0);
	c.out = (unsigned char *)strdup("hello");
	c.outlen = 5;
	end_want(l, &c);
	while (c.inlen < 5)
		tk_loop_run(l, TK_RUN_ONCE);
	T_EQ(c.t->warmed, 1);
	T_EQ(s.t->warmed, 1);
	tk_tls_sweep();
	T_EQ(c.t->warmed, 1);
	tk_tls_sweep();
	T_EQ(c.t->warmed, 0);
	T_EQ(s.t->warmed, 0);
	pair_end(l, &c, &s, sc, cc);
}

/*
 * A server end on a fresh pair whose client sends "plain" (NULL: shuts
 * down its side instead): the handshake fails for reason "fail".
 */
static void
server_refuses(struct tk_loop *l, struct tk_tls_ctx *sc, const char *plain,
    int fail)
{
	struct end	 s;
	int		 cfd, sfd;

	tcp_pair(&cfd, &sfd, 0);
	end_init(&s, sfd, 1);
	T_PTR(s.t = tk_tls_new(sc, &s.io, NULL, NULL));
	T_SYS(tk_io_start(l, &s.io, TK_EV_READ));
	if (plain != NULL)
		T_EQ(write(cfd, plain, strlen(plain)), (ssize_t)strlen(plain));
	else
		T_SYS(shutdown(cfd, SHUT_WR));
	while (s.hs == 0)
		tk_loop_run(l, TK_RUN_ONCE);
	T_EQ(s.hs, -1);
	T_EQ(s.t->fail, fail);
	close(cfd);
	end_free(l, &s);
}

/* Plaintext to a server is "not-tls"; a client that closes, "eof". */
TEST_BE(tls_not_tls)
{
	struct tk_tls_ctx	*sc;
	struct tk_loop		*l;

	certs();
	sc = server_ctx(0);
	T_PTR(l = tk_loop_new(t_backend, 0));
	server_refuses(l, sc, "GET / HTTP/1.1\r\n\r\n", TK_TLS_F_NOTTLS);
	server_refuses(l, sc, NULL, TK_TLS_F_EOF);
	tk_loop_free(l);
	tk_tls_ctx_free(sc);
	certs_gone();
}

/*
 * Every split of a record: the client's records pass through the test
 * (the client writes to x1, the test to x2, the server reads sfd), two
 * records of MSG bytes at a time, cut into two sends at every byte
 * offset k of the pair.  After the first piece the server, on the
 * loop, must have returned the first record's plaintext if the piece
 * holds it whole, and nothing otherwise (a record is not plaintext
 * until its last byte; a READ blocked with a whole record in the
 * library would lose its wake-up); after the rest, both, in order.
 */
#define MSG	64

struct splitsrv {
	struct tk_io	 io;
	struct tk_tls	*t;
	unsigned char	 in[4 * MSG];
	size_t		 got;
	int		 failed;
};

static void
split_io(struct tk_loop *l, struct tk_io *io)
{
	struct splitsrv	*s = io->arg;
	ssize_t		 r;

	while (io->ready & s->t->rwant) {
		r = tk_tls_read(s->t, s->in + s->got, sizeof(s->in) - s->got);
		if (r == -1 && errno == EAGAIN)
			break;
		if (r <= 0) {
			s->failed = 1;
			break;
		}
		s->got += (size_t)r;
	}
	T_SYS(tk_io_want(l, io, s->failed ? 0 : s->t->rwant));
}

/* What fd holds unread. */
static int
unread(int fd)
{
	int	n;

	T_SYS(ioctl(fd, FIONREAD, &n));
	return n;
}

/* Move what src holds to dst; how many bytes. */
static size_t
relay(int src, int dst)
{
	char	buf[8192];
	ssize_t	n;
	size_t	moved = 0;

	while ((n = recv(src, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		T_EQ(send(dst, buf, (size_t)n, MSG_NOSIGNAL), n);
		moved += (size_t)n;
	}
	return moved;
}

/* Exactly len bytes from fd, within 10 s. */
static void
recv_all(int fd, unsigned char *p, size_t len)
{
	uint64_t	deadline = tk_clock_mono() + 10 * TK_SEC;
	ssize_t		n;
	size_t		off = 0;

	while (off < len) {
		n = recv(fd, p + off, len - off, MSG_DONTWAIT);
		if (n > 0)
			off += (size_t)n;
		else if (n == 0 || errno != EAGAIN)
			T_FAIL("recv: %s", n == 0 ? "eof" : strerror(errno));
		else if (tk_clock_mono() > deadline)
			T_FAIL("%zu of %zu bytes after 10 s", off, len);
		else
			usleep(200);
	}
}

/* Run l until s has got want bytes and sfd is drained, or fail. */
static void
split_wait(struct tk_loop *l, struct splitsrv *s, int sfd, size_t want,
    size_t k)
{
	uint64_t	deadline = tk_clock_mono() + 10 * TK_SEC;

	while (s->got < want || unread(sfd) > 0) {
		if (s->failed)
			T_FAIL("split at %zu: the server failed: %d", k,
			    s->t->fail);
		if (tk_clock_mono() > deadline)
			T_FAIL("split at %zu: got %zu of %zu, %d unread", k,
			    s->got, want, unread(sfd));
		tk_loop_run(l, TK_RUN_NOWAIT);
		usleep(100);
	}
	/* A pass more: nothing beyond what was whole. */
	tk_loop_run(l, TK_RUN_NOWAIT);
	T_UEQ(s->got, want);
}

static void
split_run(int version)
{
	struct tk_tls_ctx	*sc, *cc;
	struct tk_loop		*l;
	struct tk_io		 cio;
	struct tk_tls		*ct;
	struct splitsrv		 s;
	unsigned char		 msg[2 * MSG], *rec;
	uint64_t		 deadline;
	size_t			 len, k, i, rec1;
	char			 err[256];
	int			 cfd, x1, x2, sfd, hc = 0, hsv = 0;

	certs();
	sc = server_ctx(0);
	cc = client_ctx(NULL);
	T_SYS(tk_tls_ctx_versions(cc, version, version, err, sizeof(err)));
	T_PTR(l = tk_loop_new(t_backend, 0));
	tcp_pair(&cfd, &x1, 0);
	tcp_pair(&x2, &sfd, 0);
	memset(&s, 0, sizeof(s));
	tk_io_init(&cio, cfd, split_io, NULL);
	tk_io_init(&s.io, sfd, split_io, &s);
	T_PTR(ct = tk_tls_new(cc, &cio, "a.test", NULL));
	T_PTR(s.t = tk_tls_new(sc, &s.io, NULL, NULL));
	deadline = tk_clock_mono() + 10 * TK_SEC;
	while (hc != 1 || hsv != 1) {
		if (hc != 1)
			T_GE(hc = tk_tls_handshake(ct), 0);
		if (hsv != 1)
			T_GE(hsv = tk_tls_handshake(s.t), 0);
		if (relay(x1, x2) + relay(x2, x1) == 0)
			usleep(200);
		if (tk_clock_mono() > deadline)
			T_FAIL("no handshake after 10 s");
	}
	/* The last flight (and any ticket) on its way: let it land. */
	usleep(10000);
	(void)relay(x1, x2);
	T_SYS(tk_io_start(l, &s.io, s.t->rwant));
	split_wait(l, &s, sfd, 0, 0);

	rec = NULL;
	len = rec1 = 0;
	for (k = 1; len == 0 || k < len; k++) {
		for (i = 0; i < sizeof(msg); i++)
			msg[i] = (unsigned char)(k * 7 + i);
		T_EQ(tk_tls_write(ct, msg, MSG), MSG);
		T_EQ(tk_tls_write(ct, msg + MSG, MSG), MSG);
		if (len == 0) {
			/* The pair's size, from the first record's header. */
			unsigned char	h[5];

			recv_all(x1, h, 5);
			rec1 = 5 + ((size_t)h[3] << 8 | h[4]);
			len = 2 * rec1;
			T_PTR(rec = malloc(len));
			memcpy(rec, h, 5);
			recv_all(x1, rec + 5, len - 5);
		} else
			recv_all(x1, rec, len);
		s.got = 0;
		T_EQ(send(x2, rec, k, MSG_NOSIGNAL), (ssize_t)k);
		split_wait(l, &s, sfd, k >= rec1 ? MSG : 0, k);
		T_EQ(send(x2, rec + k, len - k, MSG_NOSIGNAL),
		    (ssize_t)(len - k));
		split_wait(l, &s, sfd, 2 * MSG, k);
		T_OK(memcmp(s.in, msg, sizeof(msg)) == 0);
	}
	T_GT(k, 2 * (5 + MSG));
	free(rec);
	tk_io_stop(l, &s.io);
	tk_tls_free(s.t);
	tk_tls_free(ct);
	close(cfd);
	close(x1);
	close(x2);
	close(sfd);
	tk_loop_free(l);
	tk_tls_ctx_free(sc);
	tk_tls_ctx_free(cc);
	certs_gone();
}

TEST_BE(tls_record_splits_13)
{
	split_run(TK_TLS_1_3);
}

TEST_BE(tls_record_splits_12)
{
	split_run(TK_TLS_1_2);
}

/* Each bad file or setting is refused with a line naming it. */
TEST(tls_ctx_refusals)
{
	struct tk_tls_ctx	*c;
	char			 err[512], junk[300];
	int			 fd;

	certs();
	T_PTR(c = tk_tls_ctx_new(1, err, sizeof(err)));
	T_EQ(tk_tls_ctx_cert(c, "/nonexistent.pem", path_ak, err,
	    sizeof(err)), -1);
	T_OK(strstr(err, "No such file") != NULL);
	T_EQ(tk_tls_ctx_cert(c, path_a, path_bk, err, sizeof(err)), -1);
	if (strstr(err, "does not match") == NULL)
		T_FAIL("%s", err);
	snprintf(junk, sizeof(junk), "%s/junk", dir);
	T_SYS(fd = open(junk, O_WRONLY | O_CREAT | O_TRUNC, 0600));
	T_EQ(write(fd, "hello\n", 6), 6);
	close(fd);
	T_EQ(tk_tls_ctx_cert(c, junk, path_ak, err, sizeof(err)), -1);
	T_OK(strstr(err, "not a PEM certificate") != NULL);
	T_EQ(tk_tls_ctx_cert(c, path_a, junk, err, sizeof(err)), -1);
	T_OK(strstr(err, "not a PEM private key") != NULL);
	T_EQ(tk_tls_ctx_ciphers(c, "NOSUCHCIPHER", err, sizeof(err)), -1);
	T_EQ(tk_tls_ctx_ciphers(c, "TLS_NOSUCH", err, sizeof(err)), -1);
	T_SYS(tk_tls_ctx_ciphers(c, "ECDHE-ECDSA-AES128-GCM-SHA256:"
	    "TLS_AES_128_GCM_SHA256", err, sizeof(err)));
	T_EQ(tk_tls_ctx_alpn(c, "h2,,http/1.1", err, sizeof(err)), -1);
	T_EQ(tk_tls_ctx_alpn(c, "h2,", err, sizeof(err)), -1);
	T_SYS(tk_tls_ctx_alpn(c, "h2,http/1.1", err, sizeof(err)));
	tk_tls_ctx_free(c);
	unlink(junk);
	certs_gone();
	T_EQ(tk_tls_version_parse("1.3"), TK_TLS_1_3);
	T_EQ(tk_tls_version_parse("1.1"), -1);
}
#else
TEST(tls_not_built)
{
	char	err[256];

	T_STREQ(tk_tls_library(), "none");
	T_OK(tk_tls_ctx_new(0, err, sizeof(err)) == NULL);
	T_OK(strstr(err, "without TLS") != NULL);
	T_SKIP("built without TLS");
}
#endif
