/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fast path's kernel half (src/server/data/fastpath.c) on real loopback
 * sockets, before any proxy: a client c talks to a through the relay's
 * socket a, whose peer b talks to the server s:
 *
 *	c <-> a ==(sockhash: a's bytes to b, b's to a)== b <-> s
 *
 * The relay here does what tenkd's does per direction (pxfast.c): let
 * the kernel forward under a grant; when the source turns readable (a
 * segment passed, a FIN, an RST), wait for the redirect to drain, copy
 * what is passed itself, then grant again; a recv of 0 is the end only
 * once every passed byte was read.  The tests check the bytes
 * exactly (small messages, 1 GiB each way), the FIN after the last
 * redirected byte, what an RST with bytes in the redirect does, a slow
 * reader's bound and a direction that falls back mid-stream.  Each
 * needs BPF (root, or CAP_BPF and CAP_NET_ADMIN) and a build with the
 * fast path, and skips with one line otherwise.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <linux/sockios.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../src/server/data/fastpath.h"
#include "../t.h"

#define WINDOW		(256 * 1024)
#define RBUF		(64 * 1024)

enum { R_KERNEL, R_DRAIN, R_COPY };

/* One direction of the relay. */
struct rdir {
	int		 src, dst;
	struct fp_dir	*d;
	int		 state;
	uint64_t	 window;	/* per grant */
	uint64_t	 segs;
	int		 nogrant;	/* fall back: grant no more */
	char		 buf[RBUF];
	size_t		 off, len;
	int		 eof, shut, err;
	uint64_t	 copied;	/* bytes the relay moved itself */
	unsigned int	 grants, drains, waits;
};

struct rig {
	int		 c, a, b, s;
	struct fp_dir	 d[2];
	struct rdir	 r[2];		/* 0: a to b, 1: b to a */
};

static void	rig_open_some(struct rig *, uint64_t, uint64_t,
		    unsigned int);

/* Load the program or skip, saying why. */
static void
need_bpf(unsigned int opts)
{
	static char	why[256];

	if (fastpath_load(4096, opts, why, sizeof(why)) == -1)
		T_SKIP(why);
}

static void
nonblock(int fd)
{
	T_SYS(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK));
}

/* A connected loopback pair: *cfd connected, *afd accepted. */
static void
tcp_pair(int *cfd, int *afd)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof(sin);
	int			l;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	T_SYS(l = socket(AF_INET, SOCK_STREAM, 0));
	T_SYS(bind(l, (struct sockaddr *)&sin, sizeof(sin)));
	T_SYS(listen(l, 1));
	T_SYS(getsockname(l, (struct sockaddr *)&sin, &len));
	T_SYS(*cfd = socket(AF_INET, SOCK_STREAM, 0));
	T_SYS(connect(*cfd, (struct sockaddr *)&sin, sizeof(sin)));
	T_SYS(*afd = accept(l, NULL, NULL));
	close(l);
}

static void
rig_open(struct rig *g, uint64_t window, uint64_t segs)
{
	rig_open_some(g, window, segs, 3);
}

/* rig_open, granting only the directions in mask (1 << r). */
static void
rig_open_some(struct rig *g, uint64_t window, uint64_t segs,
    unsigned int mask)
{
	int	i;

	memset(g, 0, sizeof(*g));
	tcp_pair(&g->c, &g->a);
	tcp_pair(&g->b, &g->s);
	nonblock(g->c);
	nonblock(g->a);
	nonblock(g->b);
	nonblock(g->s);
	T_SYS(fastpath_pair(g->a, g->b, 0, 1, g->d));
	for (i = 0; i < 2; i++) {
		g->r[i].src = i == 0 ? g->a : g->b;
		g->r[i].dst = i == 0 ? g->b : g->a;
		g->r[i].d = &g->d[i];
		g->r[i].window = window;
		g->r[i].segs = segs;
		if (!(mask & 1U << i)) {
			g->r[i].state = R_COPY;
			continue;
		}
		/* Quiet sockets: the first grant takes (see fastpath.c). */
		T_EQ(fastpath_grant(g->r[i].src, g->r[i].dst, &g->d[i],
		    window, segs, 0), 1);
		g->r[i].state = R_KERNEL;
	}
}

static void
rig_close(struct rig *g)
{
	close(g->c);
	close(g->a);
	close(g->b);
	close(g->s);
	fastpath_forget(g->d);
}

/* One turn of direction r, as pxfast.c takes it. */
static void
rdir_step(struct rdir *r)
{
	ssize_t	n;
	int	g;

	if (r->err != 0 || r->shut)
		return;
	if (r->state == R_KERNEL) {
		T_SYS(g = fastpath_readable(r->src));
		if (g == 0)
			return;
		T_SYS(g = fastpath_revoke(r->src, r->d));
		if (g == 0)
			return;
		r->state = R_DRAIN;
		r->drains++;
	}
	if (r->state == R_DRAIN) {
		T_SYS(g = fastpath_drained(r->dst, r->d));
		if (g == 0) {
			r->waits++;
			return;
		}
		r->state = R_COPY;
	}
	for (;;) {
		while (r->len > 0) {
			n = send(r->dst, r->buf + r->off, r->len,
			    MSG_NOSIGNAL);
			if (n == -1) {
				if (errno != EAGAIN)
					r->err = errno;
				return;
			}
			r->off += n;
			r->len -= n;
		}
		if (r->eof) {
			T_SYS(shutdown(r->dst, SHUT_WR));
			r->shut = 1;
			return;
		}
		n = recv(r->src, r->buf, sizeof(r->buf), 0);
		if (n > 0) {
			r->off = 0;
			r->len = n;
			r->copied += n;
			continue;
		}
		/* Not the end while passed bytes are on their way. */
		if (n == 0 && fastpath_unread(r->d, r->copied) != 1) {
			r->eof = 1;
			continue;
		}
		if (n == 0)
			return;
		if (errno != EAGAIN) {
			r->err = errno;
			return;
		}
		if (r->nogrant)
			return;
		T_SYS(g = fastpath_grant(r->src, r->dst, r->d, r->window,
		    r->segs, r->copied));
		if (g == 1) {
			r->state = R_KERNEL;
			r->grants++;
		}
		return;
	}
}

static void
rig_step(struct rig *g)
{
	struct pollfd	pfd[2] = {
		{ .fd = g->a, .events = POLLIN | POLLRDHUP },
		{ .fd = g->b, .events = POLLIN | POLLRDHUP },
	};

	(void)poll(pfd, 2, 1);
	rdir_step(&g->r[0]);
	rdir_step(&g->r[1]);
}

/* The byte at offset i of stream k. */
static inline unsigned char
pat(uint64_t i, int k)
{
	return (unsigned char)((i * 131 + (i >> 11) + (uint64_t)k * 7) % 251);
}

static void
fill(char *p, size_t n, uint64_t off, int k)
{
	size_t	i;

	for (i = 0; i < n; i++)
		p[i] = (char)pat(off + i, k);
}

static void
check(const char *p, size_t n, uint64_t off, int k)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if ((unsigned char)p[i] != pat(off + i, k))
			T_FAIL("stream %d: byte %llu is %u, want %u", k,
			    (unsigned long long)(off + i),
			    (unsigned char)p[i], pat(off + i, k));
}

/* A sender and a reader of one stream, through the rig. */
struct end {
	int		 fd;
	int		 k;		/* pattern */
	uint64_t	 want;		/* bytes to send */
	uint64_t	 sent, got;
	int		 fin;		/* shut down after the last byte */
	int		 eof;		/* the reader saw 0 */
};

static void
end_send(struct end *e)
{
	char	buf[RBUF];
	size_t	n;
	ssize_t	k;

	while (e->sent < e->want) {
		n = e->want - e->sent < sizeof(buf) ? e->want - e->sent :
		    sizeof(buf);
		fill(buf, n, e->sent, e->k);
		if ((k = send(e->fd, buf, n, MSG_NOSIGNAL)) == -1) {
			if (errno == EAGAIN)
				return;
			T_FAIL("send: %s", strerror(errno));
		}
		e->sent += k;
	}
	if (e->fin && e->fin++ == 1)
		T_SYS(shutdown(e->fd, SHUT_WR));
}

static void
end_recv(struct end *e)
{
	char	buf[RBUF];
	ssize_t	n;

	while (!e->eof) {
		if ((n = recv(e->fd, buf, sizeof(buf), 0)) == -1) {
			if (errno == EAGAIN)
				return;
			T_FAIL("recv: %s", strerror(errno));
		}
		if (n == 0) {
			e->eof = 1;
			return;
		}
		check(buf, n, e->got, e->k);
		e->got += n;
	}
}

/* One turn of one stream: send what fits, let the rig move it, read. */
static void
turn(struct rig *g, struct end *e, struct end *er)
{
	end_send(e);
	rig_step(g);
	end_recv(er);
}

/* Turns until the reader has seen the stream's end. */
static void
to_eof(struct rig *g, struct end *e, struct end *er)
{
	while (!er->eof)
		turn(g, e, er);
}

static uint64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Both ways at once: n bytes from c to s and from s to c, each with a
 * FIN after its last byte.  Each reader must see every byte in order,
 * then the FIN, which the relay passed on only after the drain.
 */
static void
both_ways(struct rig *g, uint64_t n)
{
	struct end	up = { .fd = g->c, .k = 1, .want = n, .fin = 1 };
	struct end	upr = { .fd = g->s, .k = 1 };
	struct end	down = { .fd = g->s, .k = 2, .want = n, .fin = 1 };
	struct end	downr = { .fd = g->c, .k = 2 };
	struct fp_out	o0, o1;

	while (!upr.eof || !downr.eof) {
		end_send(&up);
		end_send(&down);
		rig_step(g);
		end_recv(&upr);
		end_recv(&downr);
		T_EQ(g->r[0].err, 0);
		T_EQ(g->r[1].err, 0);
	}
	T_UEQ(upr.got, n);
	T_UEQ(downr.got, n);
	T_SYS(fastpath_out(&g->d[0], &o0));
	T_SYS(fastpath_out(&g->d[1], &o1));
	/* Every byte went one way or the other, once. */
	T_UEQ(o0.bytes + g->r[0].copied, n);
	T_UEQ(o1.bytes + g->r[1].copied, n);
	T_UEQ(o0.passed, g->r[0].copied);
	T_UEQ(o1.passed, g->r[1].copied);
	fprintf(stderr, "# %llu bytes each way: kernel %llu+%llu, relay "
	    "%llu+%llu, grants %u+%u, drains waited %u+%u\n",
	    (unsigned long long)n, (unsigned long long)o0.bytes,
	    (unsigned long long)o1.bytes,
	    (unsigned long long)g->r[0].copied,
	    (unsigned long long)g->r[1].copied, g->r[0].grants,
	    g->r[1].grants, g->r[0].waits, g->r[1].waits);
}

/* Small messages, ping-pong: nearly every byte goes through the kernel. */
static void
pingpong(unsigned int opts)
{
	struct rig	 g;
	struct end	 q, qr, a, ar;
	struct fp_out	 o0, o1;
	uint64_t	 tot[2] = { 0, 0 };
	int		 i;

	need_bpf(opts);
	rig_open(&g, WINDOW, FP_SEGS);
	memset(&q, 0, sizeof(q));
	memset(&qr, 0, sizeof(qr));
	memset(&a, 0, sizeof(a));
	memset(&ar, 0, sizeof(ar));
	q.fd = ar.fd = g.c;
	qr.fd = a.fd = g.s;
	q.k = qr.k = 3;
	a.k = ar.k = 4;
	t_srand(26);
	for (i = 0; i < 3000; i++) {
		q.want += 1 + t_rand() % 200;
		while (qr.got < q.want)
			turn(&g, &q, &qr);
		a.want += 1 + t_rand() % 300;
		while (ar.got < a.want)
			turn(&g, &a, &ar);
		T_UEQ(qr.got, q.want);
		T_UEQ(ar.got, a.want);
	}
	tot[0] = q.want;
	tot[1] = a.want;
	T_SYS(fastpath_out(&g.d[0], &o0));
	T_SYS(fastpath_out(&g.d[1], &o1));
	T_UEQ(o0.bytes + g.r[0].copied, tot[0]);
	T_UEQ(o1.bytes + g.r[1].copied, tot[1]);
	/* A grant spans FP_SEGS messages: most bytes went by the kernel. */
	T_GT(o0.bytes, tot[0] * 9 / 10);
	T_GT(o1.bytes, tot[1] * 9 / 10);
	/* And it stamped the last one. */
	T_GT(o1.last, 0);
	rig_close(&g);
}

TEST(fastpath_pingpong)
{
	pingpong(0);
}

/* The other map and the stream parser forward as exactly. */
TEST(fastpath_pingpong_sockmap)
{
	pingpong(FP_O_SOCKMAP);
}

TEST(fastpath_pingpong_parser)
{
	pingpong(FP_O_PARSER);
}

TEST_T(fastpath_gib, 900)
{
	struct rig	g;

	need_bpf(0);
	rig_open(&g, WINDOW, FP_SEGS);
	both_ways(&g, 1ULL << 30);
	rig_close(&g);
}

/*
 * A FIN right behind its data: the reader gets all the bytes, then 0;
 * the FIN reached the relay as a readable source and recv 0.
 */
TEST(fastpath_fin)
{
	struct rig	g;

	need_bpf(0);
	rig_open(&g, WINDOW, FP_SEGS);
	both_ways(&g, 3 * 1024 * 1024 + 17);
	T_EQ(g.r[0].eof, 1);
	T_EQ(g.r[1].eof, 1);
	rig_close(&g);
}

/*
 * Half-close: the client finishes while the server goes on sending,
 * and its bytes still flow through the kernel after the FIN passed.
 */
TEST(fastpath_halfclose)
{
	struct rig	g;
	struct end	up = { .k = 5, .want = 100000, .fin = 1 };
	struct end	upr = { .k = 5 };
	struct end	down = { .k = 6, .want = 5000000, .fin = 1 };
	struct end	downr = { .k = 6 };
	struct fp_out	o1;

	need_bpf(0);
	rig_open(&g, WINDOW, FP_SEGS);
	up.fd = downr.fd = g.c;
	upr.fd = down.fd = g.s;
	to_eof(&g, &up, &upr);
	T_UEQ(upr.got, 100000);
	T_SYS(fastpath_out(&g.d[1], &o1));
	T_UEQ(o1.bytes, 0);
	to_eof(&g, &down, &downr);
	T_UEQ(downr.got, 5000000);
	T_SYS(fastpath_out(&g.d[1], &o1));
	T_GT(o1.bytes, 0);
	rig_close(&g);
}

/*
 * A direction that stops being granted mid-stream (a map update
 * refused, say) goes on through the relay with its bytes exact.
 */
TEST(fastpath_fallback)
{
	struct rig	g;
	struct end	up = { .k = 7, .want = 20000000, .fin = 1 };
	struct end	upr = { .k = 7 };
	struct fp_out	o0, o1;

	need_bpf(0);
	rig_open(&g, WINDOW, FP_SEGS);
	up.fd = g.c;
	upr.fd = g.s;
	while (upr.got < up.want / 2)
		turn(&g, &up, &upr);
	T_SYS(fastpath_out(&g.d[0], &o0));
	g.r[0].nogrant = 1;
	to_eof(&g, &up, &upr);
	T_UEQ(upr.got, up.want);
	T_SYS(fastpath_out(&g.d[0], &o1));
	T_GT(o0.bytes, 0);
	/* At most the grant then running: the rest went by the relay. */
	T_LE(o1.bytes - o0.bytes, WINDOW);
	T_UEQ(o1.bytes + g.r[0].copied, up.want);
	rig_close(&g);
}

/*
 * A reader that reads nothing: what the writer can push is bounded (its
 * send buffer, a's receive buffer, one window in the redirect, b's send
 * buffer, s's receive buffer), and once the reader reads, every byte
 * arrives in order.  Asked for an unbounded window, a grant is still
 * held to what b's send queue can take (fastpath_grant): before that,
 * the kernel queued on b's psock whatever a received (256 MiB, the
 * test's cap).
 */
static uint64_t
stall(uint64_t window, uint64_t segs, uint64_t cap)
{
	struct rig	 g;
	struct end	 up = { .k = 8 };
	struct end	 upr = { .k = 8 };
	uint64_t	 last = 0, t = now_ms(), pushed;

	rig_open(&g, window, segs);
	up.fd = g.c;
	upr.fd = g.s;
	up.want = cap;
	/* Push until nothing moved for 300 ms of turns. */
	while (up.sent < cap && now_ms() - t < 300) {
		end_send(&up);
		rig_step(&g);
		if (up.sent != last) {
			last = up.sent;
			t = now_ms();
		}
	}
	pushed = up.sent;
	up.want = up.sent;
	up.fin = 1;
	to_eof(&g, &up, &upr);
	T_UEQ(upr.got, pushed);
	fprintf(stderr, "# reader stalled: window %llu, %llu segments: "
	    "writer pushed %llu bytes, grants %u, drains %u, waited %u\n",
	    (unsigned long long)window, (unsigned long long)segs,
	    (unsigned long long)pushed, g.r[0].grants, g.r[0].drains,
	    g.r[0].waits);
	rig_close(&g);
	return pushed;
}

TEST_T(fastpath_slow_reader, 300)
{
	uint64_t	bounded, unbounded;

	need_bpf(0);
	bounded = stall(WINDOW, FP_SEGS, 256ULL << 20);
	/* The four socket buffers at tcp_{w,r}mem's defaults' maxima. */
	T_LT(bounded, 64ULL << 20);
	unbounded = stall(UINT64_MAX / 2, UINT64_MAX / 2, 256ULL << 20);
	fprintf(stderr, "# without a window: %llu bytes held for a reader "
	    "that reads nothing\n", (unsigned long long)unbounded);
	T_LT(unbounded, 64ULL << 20);
}

/*
 * The client resets with bytes still in the redirect: the server does
 * not read and b's send buffer is small, so most of what a received
 * waits on b's psock.  Then, in order: the relay sees a turn readable
 * (the reset) and waits for the drain while the server reads; once
 * drained, recv says ECONNRESET and the relay closes b, as tenkd ends a
 * session; the server gets every byte a received, in order, then EOF.
 * With wait = 0 the relay closes b at once instead, and the bytes still
 * in the redirect are lost: the test shows how many.
 */
static void
rst(int wait)
{
	struct rig	g;
	struct end	up = { .k = 9, .want = 200000 };
	struct end	upr = { .k = 9 };
	struct linger	lg = { .l_onoff = 1, .l_linger = 0 };
	struct fp_out	o0;
	uint64_t	t, w;
	int		small = 4096;

	need_bpf(0);
	rig_open(&g, WINDOW, FP_SEGS);
	T_SYS(setsockopt(g.b, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)));
	T_SYS(setsockopt(g.s, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)));
	up.fd = g.c;
	upr.fd = g.s;
	/* Everything into a, redirected: the window holds it all. */
	t = now_ms();
	do {
		end_send(&up);
		rig_step(&g);
		T_SYS(fastpath_out(&g.d[0], &o0));
		T_LT(now_ms() - t, 10000);
	} while (o0.bytes < up.want);
	T_EQ(g.r[0].state, R_KERNEL);
	T_SYS(fastpath_written(g.b, &w));
	fprintf(stderr, "# a received %llu, all redirected; b's send queue "
	    "took %llu of them, the redirect holds the rest\n",
	    (unsigned long long)o0.bytes,
	    (unsigned long long)(w - g.d[0].base));
	T_LT(w - g.d[0].base, o0.bytes);
	T_SYS(setsockopt(g.c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
	close(g.c);
	g.c = -1;
	t = now_ms();
	while (g.r[0].state == R_KERNEL) {
		rig_step(&g);
		T_LT(now_ms() - t, 10000);
	}
	T_EQ(g.r[0].state, R_DRAIN);
	fprintf(stderr, "# reset: a turned readable, %s\n", wait ?
	    "the relay waits for the drain" : "the relay closes b at once");
	if (wait) {
		while (g.r[0].err == 0) {
			rig_step(&g);
			end_recv(&upr);
			T_LT(now_ms() - t, 10000);
		}
		T_EQ(g.r[0].err, ECONNRESET);
		fprintf(stderr, "# drained, then recv(a): %s; the server had "
		    "read %llu\n", strerror(g.r[0].err),
		    (unsigned long long)upr.got);
	}
	close(g.b);
	g.b = -1;
	while (!upr.eof) {
		(void)poll(&(struct pollfd){ .fd = g.s, .events = POLLIN }, 1,
		    100);
		end_recv(&upr);
		T_LT(now_ms() - t, 20000);
	}
	fprintf(stderr, "# the server read %llu of %llu bytes, in order, then "
	    "EOF\n", (unsigned long long)upr.got,
	    (unsigned long long)o0.bytes);
	if (wait)
		T_UEQ(upr.got, o0.bytes);
	else
		T_LT(upr.got, o0.bytes);
	fastpath_forget(g.d);
	close(g.a);
	close(g.s);
}

TEST(fastpath_rst)
{
	rst(1);
}

TEST(fastpath_rst_nowait)
{
	rst(0);
}

/*
 * The first grant with a passed segment parked: c does not read, so
 * what the kernel redirects from b waits on a's psock; a segment c
 * sends meanwhile is passed, and since a's psock queue is not empty
 * it waits behind them there, where neither poll nor recv sees it.
 * Direction a to b is then granted for the first time, a having
 * nothing to read.  The next bytes c sends must not reach s before
 * the parked ones.
 */
TEST(fastpath_first_grant_parked)
{
	struct rig	g;
	struct end	up = { .k = 10, .want = 1000 };
	struct end	upr = { .k = 10 };
	struct end	down = { .k = 11, .want = 8 << 20 };
	struct end	downr = { .k = 11 };
	struct fp_out	o0, o1;
	uint64_t	t, w;
	int		small = 4096;

	need_bpf(0);
	/* Direction a to b not yet granted, as tenkd with bytes queued. */
	rig_open_some(&g, WINDOW, FP_SEGS, 1U << 1);
	g.r[0].nogrant = 1;
	T_SYS(setsockopt(g.a, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)));
	up.fd = downr.fd = g.c;
	upr.fd = down.fd = g.s;
	/* s to c through the kernel until its redirect holds bytes. */
	t = now_ms();
	for (;;) {
		end_send(&down);
		rig_step(&g);
		T_SYS(fastpath_out(&g.d[1], &o1));
		T_SYS(fastpath_written(g.a, &w));
		if (o1.bytes - (w - g.d[1].base) > 64 * 1024)
			break;
		T_LT(now_ms() - t, 10000);
	}
	/* c's bytes are passed, and wait on a's psock behind them. */
	fprintf(stderr, "# redirected %llu, in a's send queue %llu\n",
	    (unsigned long long)o1.bytes,
	    (unsigned long long)(w - g.d[1].base));
	end_send(&up);
	t = now_ms();
	do {
		T_SYS(fastpath_out(&g.d[0], &o0));
		T_LT(now_ms() - t, 10000);
	} while (o0.passed < up.want);
	fprintf(stderr, "# %llu bytes passed, a readable: %d\n",
	    (unsigned long long)o0.passed, fastpath_readable(g.a));
	/* The relay has read nothing: its first grant. */
	g.r[0].nogrant = 0;
	rig_step(&g);
	up.want = 200000;
	up.fin = 1;
	down.want = down.sent;
	down.fin = 1;
	t = now_ms();
	while (!upr.eof || !downr.eof) {
		end_send(&up);
		end_send(&down);
		rig_step(&g);
		end_recv(&upr);
		end_recv(&downr);
		T_EQ(g.r[0].err, 0);
		T_EQ(g.r[1].err, 0);
		T_LT(now_ms() - t, 20000);
	}
	T_UEQ(upr.got, up.want);
	T_UEQ(downr.got, down.want);
	rig_close(&g);
}

/*
 * A socket read part way through a segment does not go into the map:
 * the kernel would hand the whole segment to the program again, and
 * the bytes already read would come twice (Linux 6.18: byte 1000 of a
 * 60,000-byte segment read 1,000 bytes in came as byte 0 again).  Once
 * read to the end it goes in, and what comes next comes once.
 */
TEST(fastpath_pair_partial)
{
	struct rig	g;
	char		buf[RBUF];
	uint64_t	got = 0, t;
	ssize_t		n;
	int		inq = 0;

	need_bpf(0);
	memset(&g, 0, sizeof(g));
	tcp_pair(&g.c, &g.a);
	tcp_pair(&g.b, &g.s);
	nonblock(g.a);
	fill(buf, 60000, 0, 12);
	T_EQ(send(g.c, buf, 60000, 0), 60000);
	t = now_ms();
	while (inq < 60000) {
		T_SYS(ioctl(g.a, SIOCINQ, &inq));
		T_LT(now_ms() - t, 5000);
	}
	T_EQ(recv(g.a, buf, 1000, 0), 1000);
	check(buf, 1000, 0, 12);
	got = 1000;
	T_EQ(fastpath_pair(g.a, g.b, 0, 1, g.d), -1);
	T_EQ(errno, EAGAIN);
	while ((n = recv(g.a, buf, sizeof(buf), 0)) > 0) {
		check(buf, n, got, 12);
		got += n;
	}
	T_UEQ(got, 60000);
	T_SYS(fastpath_pair(g.a, g.b, 0, 1, g.d));
	fill(buf, 60000, got, 12);
	T_EQ(send(g.c, buf, 60000, 0), 60000);
	t = now_ms();
	while (got < 120000) {
		if ((n = recv(g.a, buf, sizeof(buf), 0)) > 0) {
			check(buf, n, got, 12);
			got += n;
		}
		T_LT(now_ms() - t, 5000);
	}
	T_UEQ(got, 120000);
	rig_close(&g);
}

/*
 * A process killed with sessions in the map: its sockets leave the
 * sockhash as they close, their fp_ctl and fp_out entries stay until a
 * sweep finds them gone twice; a live pair's stay.
 */
TEST(fastpath_sweep)
{
	struct rig	dead, live;
	struct fp_out	o;
	int		n;

	need_bpf(0);
	/* What earlier tests left is dropped first. */
	(void)fastpath_sweep();
	(void)fastpath_sweep();
	rig_open(&dead, WINDOW, FP_SEGS);
	rig_open(&live, WINDOW, FP_SEGS);
	close(dead.a);
	close(dead.b);
	T_SYS(n = fastpath_sweep());
	T_EQ(n, 0);
	T_SYS(fastpath_out(&dead.d[0], &o));
	T_SYS(n = fastpath_sweep());
	T_EQ(n, 2);
	T_EQ(fastpath_out(&dead.d[0], &o), -1);
	T_EQ(fastpath_out(&dead.d[1], &o), -1);
	T_SYS(fastpath_out(&live.d[0], &o));
	T_SYS(fastpath_out(&live.d[1], &o));
	close(dead.c);
	close(dead.s);
	rig_close(&live);
}
