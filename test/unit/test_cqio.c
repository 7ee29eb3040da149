/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Completion I/O (tenk/uring.h) on socketpairs: echo through a multishot
 * recv and a send; the watcher's handler run from the run queue once an
 * iteration, however many completions came, never from a callback, and
 * by tk_io_wake; EOF and a reset as calls with 0 and -ECONNRESET; a
 * buffer ring far smaller than the data (ENOBUFS re-armed, bytes in
 * order, for one socket and for many at once); a recv capped at a byte
 * count; stopping and resuming a
 * recv; closing with a recv and a send in flight, submitted or not; and
 * ENOTSUP on a readiness backend.  Multishot accept on a TCP listener:
 * connections from a full backlog and as they come, a stop from the
 * callback (what the kernel took before the cancel still arrives, then
 * the end) and with connects in flight, a close from the callback (the
 * loop closes the rest), EMFILE and the refusal of old kernels handed
 * up; no descriptor leaked (/proc/self/fd).  Each test skips where
 * io_uring is not compiled in or the kernel refuses it.
 */
#include <sys/resource.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/loop.h"
#include "tenk/sock.h"
#include "tenk/uring.h"
#include "../t.h"

struct cw {
	struct tk_io	 io;
	int		 peer;
	char		 got[8192];
	size_t		 ngot;
	int		 eof;
	ssize_t		 err;
	int		 echo;		/* send back what arrives */
	char		 out[8192];	/* the send in flight */
	size_t		 nout;
	int		 sends;		/* completed */
	ssize_t		 sent;
	int		 cbs;		/* callbacks, recv and send */
	int		 steps;		/* handler calls */
	int		 cbs_seen;	/* cbs at the last handler call */
	unsigned int	 ready;		/* ready bits it found */
};

static struct tk_loop *
cq_loop(void)
{
	struct tk_loop	*l;

	l = t_uring_loop(0);
	T_EQ(tk_loop_completion(l), 1);
	return l;
}

static void	cw_sent(struct tk_loop *, struct tk_io *, ssize_t);

static void
cw_recv(struct tk_loop *l, struct tk_io *io, const void *data, ssize_t n)
{
	struct cw	*x = io->arg;
	struct iovec	 iov;

	x->cbs++;
	if (n == 0) {
		x->eof++;
		return;
	}
	if (n < 0) {
		x->err = n;
		return;
	}
	T_PTR(data);
	T_LE((size_t)n, sizeof(x->got) - x->ngot);
	memcpy(x->got + x->ngot, data, (size_t)n);
	x->ngot += (size_t)n;
	if (x->echo) {
		T_EQ(x->nout, 0);
		memcpy(x->out, data, (size_t)n);
		x->nout = (size_t)n;
		iov.iov_base = x->out;
		iov.iov_len = x->nout;
		T_EQ(tk_io_send(l, io, &iov, 1, cw_sent), 0);
	}
}

static void
cw_sent(struct tk_loop *l, struct tk_io *io, ssize_t n)
{
	struct cw	*x = io->arg;

	(void)l;
	x->cbs++;
	x->sends++;
	x->sent = n;
	x->nout = 0;
}

/* A watcher's handler: counts its calls, notes what it saw. */
static void
cw_step(struct tk_loop *l, struct tk_io *io)
{
	struct cw	*x = io->arg;

	(void)l;
	x->steps++;
	x->cbs_seen = x->cbs;
	x->ready = io->ready;
}

static void
cw_open(struct cw *x)
{
	int	sv[2];

	memset(x, 0, sizeof(*x));
	t_sockpair(sv);
	x->peer = sv[1];
	tk_io_init(&x->io, sv[0], NULL, x);
}

/* Run passes until *p reaches v; fail after a generous bound. */
static void
until(struct tk_loop *l, const size_t *p, size_t v, const char *what)
{
	int	i;

	for (i = 0; i < 2000 && *p < v; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	if (*p < v)
		T_FAIL("%s: %zu of %zu after 2000 passes", what, *p, v);
}

/* Read n bytes from fd, nonblocking, running l meanwhile. */
static void
peer_read(struct tk_loop *l, int fd, char *buf, size_t n)
{
	size_t	got = 0;
	ssize_t	r;
	int	i;

	for (i = 0; i < 2000 && got < n; i++) {
		tk_loop_run(l, TK_RUN_NOWAIT);
		if ((r = read(fd, buf + got, n - got)) > 0)
			got += (size_t)r;
	}
	T_UEQ(got, n);
}

TEST(cqio_echo)
{
	struct tk_loop	*l = cq_loop();
	struct cw	 x;
	char		 buf[16];
	int		 i;

	cw_open(&x);
	x.echo = 1;
	T_EQ(tk_io_recv_start(l, &x.io, cw_recv, 0), 0);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 1);
	for (i = 0; i < 100; i++) {
		T_EQ(write(x.peer, "ping", 4), 4);
		peer_read(l, x.peer, buf, 4);
		T_OK(memcmp(buf, "ping", 4) == 0);
	}
	until(l, (const size_t *)&x.ngot, 400, "bytes in");
	for (i = 0; i < 100 && x.sends < 100; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(x.sends, 100);
	T_EQ(x.sent, 4);
	T_EQ(tk_io_close(l, &x.io), 0);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	close(x.peer);
	tk_loop_free(l);
}

TEST(cqio_eof_reset)
{
	struct tk_loop	*l = cq_loop();
	struct cw	 x, y;
	struct iovec	 iov;
	int		 i;

	cw_open(&x);
	T_EQ(tk_io_recv_start(l, &x.io, cw_recv, 0), 0);
	T_EQ(write(x.peer, "ab", 2), 2);
	T_SYS(shutdown(x.peer, SHUT_WR));
	for (i = 0; i < 1000 && x.eof == 0; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(x.eof, 1);
	T_UEQ(x.ngot, 2);
	T_EQ(x.err, 0);

	/* The peer closes with our bytes unread: a reset on our side. */
	cw_open(&y);
	iov.iov_base = (void *)"xyz";
	iov.iov_len = 3;
	T_EQ(tk_io_send(l, &y.io, &iov, 1, cw_sent), 0);
	for (i = 0; i < 1000 && y.sends == 0; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(y.sent, 3);
	T_EQ(tk_io_recv_start(l, &y.io, cw_recv, 0), 0);
	tk_loop_run(l, TK_RUN_NOWAIT);
	close(y.peer);
	for (i = 0; i < 1000 && y.err == 0 && y.eof == 0; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(y.err, -ECONNRESET);
	T_EQ(tk_io_close(l, &x.io), 0);
	T_EQ(tk_io_close(l, &y.io), 0);
	close(x.peer);
	tk_loop_free(l);
}

/*
 * A recv capped at max bytes, with 8 KiB waiting, takes max bytes and
 * less than a ring buffer more (the kernel's multishot cap ends at the
 * buffer that reaches it), exactly max on the single shots of kernels
 * without that cap, whether the cap is under one buffer or over
 * several; it then ends quietly, and a new one takes the rest in order.
 */
static void
recv_max(int nocap)
{
	static const size_t	 caps[] = { 100, 1000, 3000 };
	struct tk_loop		*l = cq_loop();
	struct cw		 x;
	char			 msg[8192];
	size_t			 i, want = 0;
	int			 k;

	T_EQ(tk_loop_bufring(l, 8, 256), 0);
	cw_open(&x);
	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (char)(i * 13 + i / 241);
	T_EQ(write(x.peer, msg, sizeof(msg)), (ssize_t)sizeof(msg));
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		T_EQ(tk_io_recv_start(l, &x.io, cw_recv, caps[i]), 0);
		T_EQ(tk_io_recv_on(l, &x.io), 1);
		want = x.ngot + caps[i];
		until(l, &x.ngot, want, "bytes up to the cap");
		for (k = 0; k < 20; k++)
			tk_loop_run(l, TK_RUN_NOWAIT);
		if (nocap)
			T_UEQ(x.ngot, want);
		T_GE(x.ngot, want);
		T_LT(x.ngot, want + 256);
		T_EQ(tk_io_recv_on(l, &x.io), 0);
	}
	T_EQ(tk_io_recv_start(l, &x.io, cw_recv, 0), 0);
	until(l, &x.ngot, sizeof(msg), "the rest");
	T_OK(memcmp(x.got, msg, sizeof(msg)) == 0);
	T_EQ(tk_io_recv_on(l, &x.io), 1);
	T_EQ(tk_io_close(l, &x.io), 0);
	close(x.peer);
	tk_loop_free(l);
}

TEST(cqio_recv_max)
{
	recv_max(0);
}

/* The same on the single shots of kernels without the multishot cap. */
TEST(cqio_recv_max_nocap)
{
	T_SYS(setenv("TK_IO_URING_NOCAP", "1", 1));
	recv_max(1);
	T_SYS(unsetenv("TK_IO_URING_NOCAP"));
}

/*
 * Completions queue the watcher's handler, as readiness does: 12 bytes
 * through 4-byte ring buffers come as three recv completions in one
 * dispatch, and the handler runs once in that iteration, after all of
 * them (never from inside a callback), finding its ready bits cleared;
 * an iteration with no completion runs it not at all.  tk_io_wake
 * queues a watcher that has no request yet; closing a queued watcher
 * takes it off the queue.
 */
TEST(cqio_handler_queued)
{
	struct tk_loop	*l = cq_loop();
	struct cw	 x;
	int		 i, cbs, steps, most = 0;

	T_EQ(tk_loop_bufring(l, 4, 4), 0);
	cw_open(&x);
	x.io.fn = cw_step;
	tk_io_wake(l, &x.io);
	T_EQ(x.steps, 0);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	T_EQ(x.steps, 1);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	T_EQ(x.steps, 1);
	T_EQ(tk_io_recv_start(l, &x.io, cw_recv, 0), 0);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 1);
	T_EQ(x.steps, 1);
	T_EQ(write(x.peer, "abcdefghijkl", 12), 12);
	for (i = 0; i < 2000 && x.ngot < 12; i++) {
		cbs = x.cbs;
		steps = x.steps;
		tk_loop_run(l, TK_RUN_NOWAIT);
		T_EQ(x.steps - steps, x.cbs > cbs ? 1 : 0);
		if (x.cbs > cbs) {
			T_EQ(x.cbs_seen, x.cbs);
			T_EQ(x.ready, 0);
		}
		if (x.cbs - cbs > most)
			most = x.cbs - cbs;
	}
	T_UEQ(x.ngot, 12);
	T_OK(memcmp(x.got, "abcdefghijkl", 12) == 0);
	T_GE(most, 2);
	steps = x.steps;
	tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(x.steps, steps);
	/* Queued, then closed before the pass: not called. */
	tk_io_wake(l, &x.io);
	T_EQ(tk_io_close(l, &x.io), 0);
	tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(x.steps, steps);
	close(x.peer);
	tk_loop_free(l);
}

/*
 * Two 64-byte buffers against 4 KiB at once: the recv runs dry again and
 * again, is re-armed each time, and every byte arrives in order.
 */
TEST(cqio_nobufs)
{
	struct tk_loop		*l = cq_loop();
	struct tk_loop_stats	 st;
	struct cw		 x;
	char			 msg[4096];
	size_t			 i;

	T_EQ(tk_loop_bufring(l, 2, 64), 0);
	cw_open(&x);
	T_EQ(tk_io_recv_start(l, &x.io, cw_recv, 0), 0);
	T_EQ(tk_loop_bufring(l, 4, 64), -1);
	T_EQ(errno, EBUSY);
	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (char)(i * 7 + i / 251);
	T_EQ(write(x.peer, msg, sizeof(msg)), (ssize_t)sizeof(msg));
	until(l, &x.ngot, sizeof(msg), "bytes through a 2-buffer ring");
	T_OK(memcmp(x.got, msg, sizeof(msg)) == 0);
	tk_loop_stats(l, &st);
	T_GT(st.nobufs, 0);
	T_EQ(tk_io_close(l, &x.io), 0);
	close(x.peer);
	tk_loop_free(l);
}

/* 64 sockets, each sending more than the whole ring holds. */
#define NMANY	64
#define MANYLEN	2048

TEST(cqio_nobufs_many)
{
	struct tk_loop	*l = cq_loop();
	struct cw	*x;
	char		 msg[MANYLEN];
	size_t		 total;
	int		 i, k, pass;

	T_EQ(tk_loop_bufring(l, 8, 128), 0);
	T_PTR(x = calloc(NMANY, sizeof(*x)));
	for (i = 0; i < NMANY; i++) {
		cw_open(&x[i]);
		T_EQ(tk_io_recv_start(l, &x[i].io, cw_recv, 0), 0);
	}
	for (k = 0; k < MANYLEN; k++)
		msg[k] = (char)(k % 253);
	for (i = 0; i < NMANY; i++)
		T_EQ(write(x[i].peer, msg, sizeof(msg)), (ssize_t)sizeof(msg));
	for (pass = 0, total = 0; pass < 20000 &&
	    total < (size_t)NMANY * MANYLEN; pass++) {
		tk_loop_run(l, TK_RUN_NOWAIT);
		for (i = 0, total = 0; i < NMANY; i++)
			total += x[i].ngot;
	}
	for (i = 0; i < NMANY; i++) {
		T_UEQ(x[i].ngot, (size_t)MANYLEN);
		T_OK(memcmp(x[i].got, msg, MANYLEN) == 0);
		T_EQ(x[i].err, 0);
		T_EQ(tk_io_close(l, &x[i].io), 0);
		close(x[i].peer);
	}
	free(x);
	tk_loop_free(l);
}

TEST(cqio_recv_stop)
{
	struct tk_loop	*l = cq_loop();
	struct cw	 x;
	int		 i;

	cw_open(&x);
	T_EQ(tk_io_recv_start(l, &x.io, cw_recv, 0), 0);
	for (i = 0; i < 4; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	tk_io_recv_stop(l, &x.io);
	for (i = 0; i < 4; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(write(x.peer, "late", 4), 4);
	for (i = 0; i < 8; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_UEQ(x.ngot, 0);
	T_EQ(tk_io_recv_start(l, &x.io, cw_recv, 0), 0);
	until(l, &x.ngot, 4, "bytes after the restart");
	T_OK(memcmp(x.got, "late", 4) == 0);
	/* Stop and start again before the cancel completes. */
	tk_io_recv_stop(l, &x.io);
	T_EQ(tk_io_recv_start(l, &x.io, cw_recv, 0), 0);
	T_EQ(write(x.peer, "more", 4), 4);
	until(l, &x.ngot, 8, "bytes after stop and start in one pass");
	T_EQ(tk_io_close(l, &x.io), 0);
	close(x.peer);
	tk_loop_free(l);
}

static void
never_sent(struct tk_loop *l, struct tk_io *io, ssize_t n)
{
	(void)l;
	(void)io;
	T_FAIL("send callback after close: %zd", n);
}

static void
never_recv(struct tk_loop *l, struct tk_io *io, const void *data, ssize_t n)
{
	(void)l;
	(void)io;
	(void)data;
	T_FAIL("recv callback after close: %zd", n);
}

/*
 * Close with requests in flight: a send the kernel holds (the peer reads
 * nothing, so the socket is full) and a recv; then a send never
 * submitted.  No callback runs, the data may be freed at once, and the
 * peer sees the close.
 */
TEST(cqio_close_in_flight)
{
	struct tk_loop	*l = cq_loop();
	struct cw	*x;
	struct iovec	 iov[2];
	char		*big, c, buf[65536];
	size_t		 len = 4 << 20;
	ssize_t		 n;
	int		 peer, i;

	T_PTR(x = malloc(sizeof(*x)));
	T_PTR(big = calloc(1, len));
	cw_open(x);
	peer = x->peer;
	T_EQ(tk_io_recv_start(l, &x->io, never_recv, 0), 0);
	iov[0].iov_base = big;
	iov[0].iov_len = len / 2;
	iov[1].iov_base = big + len / 2;
	iov[1].iov_len = len / 2;
	T_EQ(tk_io_send(l, &x->io, iov, 2, never_sent), 0);
	T_EQ(tk_io_send(l, &x->io, iov, 1, never_sent), -1);
	T_EQ(errno, EBUSY);
	for (i = 0; i < 4; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(tk_io_close(l, &x->io), 0);
	free(big);
	free(x);
	for (i = 0; i < 4; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	/* Whatever the send had written, then the end. */
	while ((n = read(peer, buf, sizeof(buf))) > 0)
		;
	T_EQ(n, 0);
	close(peer);

	/* A send closed before any submission: nothing reaches the peer. */
	T_PTR(x = malloc(sizeof(*x)));
	cw_open(x);
	peer = x->peer;
	iov[0].iov_base = (void *)"never";
	iov[0].iov_len = 5;
	T_EQ(tk_io_send(l, &x->io, iov, 1, never_sent), 0);
	T_EQ(tk_io_close(l, &x->io), 0);
	free(x);
	for (i = 0; i < 4; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(read(peer, &c, 1), 0);
	close(peer);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	tk_loop_free(l);
}

TEST(cqio_readiness_backend)
{
	struct tk_loop	*l;
	struct cw	 x;
	struct iovec	 iov;

	l = tk_loop_new("poll", 0);
	T_PTR(l);
	T_EQ(tk_loop_completion(l), 0);
	cw_open(&x);
	T_EQ(tk_io_recv_start(l, &x.io, cw_recv, 0), -1);
	T_EQ(errno, ENOTSUP);
	iov.iov_base = (void *)"x";
	iov.iov_len = 1;
	T_EQ(tk_io_send(l, &x.io, &iov, 1, cw_sent), -1);
	T_EQ(errno, ENOTSUP);
	T_EQ(tk_loop_bufring(l, 2, 64), -1);
	T_EQ(errno, ENOTSUP);
	T_EQ(tk_io_accept_start(l, &x.io, NULL), -1);
	T_EQ(errno, ENOTSUP);
	T_EQ(tk_io_accept_stop(l, &x.io), 0);
	close(x.io.fd);
	close(x.peer);
	tk_loop_free(l);
}

/* Multishot accept. */
#define NACC	20
#define ACC_MAX	64

struct acc {
	struct tk_io	 io;		/* the listener */
	struct tk_addr	 addr;		/* where it listens */
	int		 fds[ACC_MAX];	/* accepted, in order */
	int		 nfd;
	int		 err;		/* the last fd < 0 but -ECANCELED */
	int		 ends;		/* -ECANCELED */
	int		 at_first;	/* 1: stop, 2: close at the first fd */
	int		 stopped;	/* what that stop returned */
	int		 clients[ACC_MAX];
	int		 ncl;
	int		 readable;	/* as a readiness watcher */
};

static void
acc_ready(struct tk_loop *l, struct tk_io *lio)
{
	struct acc	*a = lio->arg;

	a->readable = 1;
	T_EQ(tk_io_want(l, lio, 0), 0);
}

static void
acc_cb(struct tk_loop *l, struct tk_io *lio, int fd)
{
	struct acc	*a = lio->arg;

	if (fd == -ECANCELED) {
		a->ends++;
		return;
	}
	if (fd < 0) {
		a->err = fd;
		return;
	}
	T_LT(a->nfd, ACC_MAX);
	a->fds[a->nfd++] = fd;
	if (a->nfd == 1 && a->at_first == 1)
		a->stopped = tk_io_accept_stop(l, lio);
	else if (a->nfd == 1 && a->at_first == 2)
		T_EQ(tk_io_close(l, lio), 0);
}

/*
 * The RLIMIT_NOFILE under which exactly room descriptor numbers are
 * free: the kernel gives the lowest free number, and only below it.
 */
static rlim_t
fd_limit_room(int room)
{
	int	fd;

	for (fd = 0;; fd++)
		if (fcntl(fd, F_GETFD) == -1 && errno == EBADF &&
		    --room == 0)
			return (rlim_t)fd + 1;
}

static void
acc_open(struct acc *a)
{
	struct tk_addr	 any;
	int		 fd;

	memset(a, 0, sizeof(*a));
	T_EQ(tk_addr_parse("127.0.0.1:0", -1, &any, NULL), 0);
	T_SYS(fd = tk_sock_listen(&any, 128, 0));
	T_SYS(tk_sock_local(fd, &a->addr));
	tk_io_init(&a->io, fd, acc_ready, a);
}

/* Connections waiting in lfd's backlog (TCP_INFO of a listener). */
static int
backlog_len(int lfd)
{
	struct tcp_info	ti;
	socklen_t	len = sizeof(ti);

	T_SYS(getsockopt(lfd, IPPROTO_TCP, TCP_INFO, &ti, &len));
	return (int)ti.tcpi_unacked;
}

/* n more clients; with wait, until all n wait in the backlog. */
static void
acc_connect(struct acc *a, int n, int wait)
{
	int	i, want = backlog_len(a->io.fd) + n;

	T_LE(a->ncl + n, ACC_MAX);
	for (i = 0; i < n; i++)
		T_SYS(a->clients[a->ncl++] = tk_sock_connect(&a->addr, NULL));
	for (i = 0; wait && i < 2000 && backlog_len(a->io.fd) < want; i++)
		usleep(1000);
	if (wait)
		T_EQ(backlog_len(a->io.fd), want);
}

static void
acc_until(struct tk_loop *l, const int *p, int v, const char *what)
{
	int	i;

	for (i = 0; i < 2000 && *p < v; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	if (*p < v)
		T_FAIL("%s: %d of %d after 2000 passes", what, *p, v);
}

/* Close what a test accepted and its clients; the listener if open. */
static void
acc_close(struct tk_loop *l, struct acc *a)
{
	int	i;

	for (i = 0; i < a->nfd; i++)
		T_SYS(close(a->fds[i]));
	for (i = 0; i < a->ncl; i++)
		T_SYS(close(a->clients[i]));
	if (a->io.fd != -1)
		T_EQ(tk_io_close(l, &a->io), 0);
}

/*
 * A listener with n clients in its backlog, already connected, and an
 * accept started on it whose callback, at the first connection, does
 * what at_first says.
 */
static void
acc_backlog(struct tk_loop *l, struct acc *a, int n, int at_first)
{
	acc_open(a);
	acc_connect(a, n, 1);
	a->at_first = at_first;
	T_EQ(tk_io_accept_start(l, &a->io, acc_cb), 0);
}

/* Twenty passes that wait for nothing: time for what must not come. */
static void
acc_idle(struct tk_loop *l)
{
	int	i;

	for (i = 0; i < 20; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
}

/*
 * An accept test's end: the loop has nothing left to run, no
 * descriptor is open beyond the fd0 the test began with, and the loop
 * is freed.
 */
static void
acc_end(struct tk_loop *l, int fd0)
{
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	T_EQ(t_nfds(), fd0);
	tk_loop_free(l);
}

TEST(cqio_accept)
{
	struct tk_loop		*l = cq_loop();
	struct tk_loop_stats	 st;
	struct acc		 a;
	struct cw		 x;
	int			 fd0 = t_nfds(), i;

	/* A full backlog at the first submission, then one at a time. */
	acc_backlog(l, &a, NACC, 0);
	acc_until(l, &a.nfd, NACC, "from the backlog");
	for (i = 0; i < NACC; i++) {
		acc_connect(&a, 1, 0);
		acc_until(l, &a.nfd, NACC + i + 1, "one by one");
	}
	for (i = 0; i < a.nfd; i++) {
		T_OK(fcntl(a.fds[i], F_GETFL) & O_NONBLOCK);
		T_OK(fcntl(a.fds[i], F_GETFD) & FD_CLOEXEC);
	}
	T_EQ(a.err, 0);
	T_EQ(a.ends, 0);
	tk_loop_stats(l, &st);
	T_UEQ(st.accepts, (uint64_t)(2 * NACC));

	/* An accepting watcher neither receives nor sends, and back. */
	T_EQ(tk_io_recv_start(l, &a.io, cw_recv, 0), -1);
	T_EQ(errno, EBUSY);
	cw_open(&x);
	T_EQ(tk_io_recv_start(l, &x.io, cw_recv, 0), 0);
	T_EQ(tk_io_accept_start(l, &x.io, acc_cb), -1);
	T_EQ(errno, EBUSY);
	T_EQ(tk_io_close(l, &x.io), 0);
	close(x.peer);

	acc_close(l, &a);
	acc_end(l, fd0);
}

/*
 * A stop from the callback at the first of 20 connections the kernel
 * took at once: the other 19 still arrive, then the end; later clients
 * wait in the backlog until a start.  A stop with connects in flight:
 * whatever arrives before the end is the caller's, the rest waits.
 */
TEST(cqio_accept_stop)
{
	struct tk_loop		*l = cq_loop();
	struct tk_loop_stats	 st;
	struct acc		 a;
	int			 fd0 = t_nfds(), n;

	acc_backlog(l, &a, NACC, 1);
	acc_until(l, &a.ends, 1, "the end after a stop");
	T_EQ(a.stopped, 1);
	T_EQ(a.nfd, NACC);
	acc_connect(&a, 5, 1);
	acc_idle(l);
	T_EQ(a.nfd, NACC);
	T_EQ(backlog_len(a.io.fd), 5);
	T_EQ(tk_io_accept_stop(l, &a.io), 0);
	T_EQ(tk_io_accept_start(l, &a.io, acc_cb), 0);
	acc_until(l, &a.nfd, NACC + 5, "after the restart");

	acc_connect(&a, 10, 0);
	T_EQ(tk_io_accept_stop(l, &a.io), 1);
	acc_until(l, &a.ends, 2, "the end with connects in flight");
	n = a.nfd;
	acc_idle(l);
	T_EQ(a.nfd, n);
	T_EQ(a.ends, 2);
	T_EQ(a.err, 0);
	tk_loop_stats(l, &st);
	T_UEQ(st.accept_closed, 0);
	acc_close(l, &a);
	acc_end(l, fd0);
}

/*
 * A close from the callback at the first of 20: the loop closes the 19
 * others, which no callback can take; a close before the accept was
 * ever submitted.
 */
TEST(cqio_accept_close)
{
	struct tk_loop		*l = cq_loop();
	struct tk_loop_stats	 st;
	struct acc		 a;
	int			 fd0 = t_nfds();

	acc_backlog(l, &a, NACC, 2);
	acc_until(l, &a.nfd, 1, "the first");
	acc_idle(l);
	T_EQ(a.nfd, 1);
	T_EQ(a.ends, 0);
	tk_loop_stats(l, &st);
	T_UEQ(st.accept_closed, (uint64_t)(NACC - 1));
	acc_close(l, &a);

	acc_backlog(l, &a, 5, 0);
	acc_close(l, &a);
	acc_idle(l);
	T_EQ(a.nfd, 0);
	acc_end(l, fd0);
}

/*
 * Out of descriptors: the connections that fit arrive, then -EMFILE
 * and the accept is over; started again with room, it takes the rest.
 */
TEST(cqio_accept_emfile)
{
	struct tk_loop	*l = cq_loop();
	struct rlimit	 rl, low;
	struct acc	 a;
	int		 i;

	acc_open(&a);
	acc_connect(&a, 5, 1);
	/* Room for two connections (the loop's first pass opens nothing). */
	tk_loop_run(l, TK_RUN_NOWAIT);
	T_SYS(getrlimit(RLIMIT_NOFILE, &rl));
	low = rl;
	low.rlim_cur = fd_limit_room(2);
	T_SYS(setrlimit(RLIMIT_NOFILE, &low));
	T_EQ(tk_io_accept_start(l, &a.io, acc_cb), 0);
	for (i = 0; i < 2000 && a.err == 0; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(a.err, -EMFILE);
	T_EQ(a.nfd, 2);
	T_EQ(tk_io_accept_stop(l, &a.io), 0);
	T_SYS(setrlimit(RLIMIT_NOFILE, &rl));
	a.err = 0;
	T_EQ(tk_io_accept_start(l, &a.io, acc_cb), 0);
	acc_until(l, &a.nfd, 5, "the rest with room");
	T_EQ(a.err, 0);
	acc_close(l, &a);
	tk_loop_free(l);
}

/*
 * A kernel that refuses multishot accept (as before 5.19): -EINVAL and
 * the accept is over; the watcher may then watch readiness instead.
 */
TEST(cqio_accept_refused)
{
	struct tk_loop	*l;
	struct acc	 a;
	int		 i;

	T_SYS(setenv("TK_IO_URING_NOACCEPT", "1", 1));
	l = cq_loop();
	T_SYS(unsetenv("TK_IO_URING_NOACCEPT"));
	acc_backlog(l, &a, 1, 0);
	for (i = 0; i < 2000 && a.err == 0; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(a.err, -EINVAL);
	T_EQ(a.nfd, 0);
	T_EQ(tk_io_accept_stop(l, &a.io), 0);
	tk_io_stop(l, &a.io);
	T_EQ(tk_io_start(l, &a.io, TK_EV_READ), 0);
	for (i = 0; i < 2000 && !a.readable; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(a.readable, 1);
	acc_close(l, &a);
	tk_loop_free(l);
}
