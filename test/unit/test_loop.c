/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fd-watcher contract of loop.h, checked on every compiled backend
 * from the header alone: readiness through the run queue, edge and level
 * triggering as the caller sees them, interest changes, stopping and
 * freeing watchers from inside a batch, fds past 1024, peer close, and
 * the run modes.  Timers are in test_timer.c, wake-ups in test_wake.c.
 *
 * Every test drives the loop with TK_RUN_NOWAIT passes (data written to
 * a socketpair is readable at once), so a broken loop fails an assertion
 * instead of hanging; tests that must block arm a guard timer.
 */
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/clock.h"
#include "tenk/loop.h"
#include "tenk/timer.h"
#include "../t.h"

/* Passes that are plenty for an fd that is already ready to be served. */
#define SETTLE		50

/* What the test handler does when it is called. */
enum mode {
	M_DRAIN = 0,	/* read to EAGAIN, tk_io_block(READ) */
	M_IDLE,		/* touch nothing, block nothing */
	M_ONEBYTE,	/* read one byte per call; block on EAGAIN */
	M_FILL,		/* write until EAGAIN, tk_io_block(WRITE) */
	M_STOP,		/* drain, then tk_loop_stop() */
	M_MODEL		/* drain READ; block WRITE without writing */
};

struct w {
	struct tk_io	 io;
	int		 peer;
	enum mode	 mode;
	int		 calls;
	int		 rcalls;	/* calls with READ ready, wanted */
	int		 wcalls;	/* calls with WRITE ready, wanted */
	unsigned int	 first_ready;
	unsigned int	 last_ready;
	size_t		 got;
	size_t		 put;
	int		 eof;
	char		 data[64];
};

static void
put(int fd, const char *s)
{
	ssize_t	n;

	n = send(fd, s, strlen(s), MSG_NOSIGNAL);
	if (n == -1)
		T_FAIL("send: %s", strerror(errno));
	T_EQ(n, (ssize_t)strlen(s));
}

/* Read fd to EAGAIN or EOF; returns bytes read. */
static size_t
drain(struct w *x)
{
	char	buf[4096];
	ssize_t	n;
	size_t	total = 0;

	for (;;) {
		n = read(x->io.fd, buf, sizeof(buf));
		if (n > 0) {
			if (x->got < sizeof(x->data)) {
				size_t c = sizeof(x->data) - 1 - x->got;

				if ((size_t)n < c)
					c = n;
				memcpy(x->data + x->got, buf, c);
			}
			x->got += n;
			total += n;
			continue;
		}
		if (n == 0) {
			x->eof = 1;
			break;
		}
		if (errno == EINTR)
			continue;
		T_EQ(errno, EAGAIN);
		tk_io_block(&x->io, TK_EV_READ);
		break;
	}
	return total;
}

static void
handler(struct tk_loop *l, struct tk_io *io)
{
	struct w	*x = io->arg;
	char		 c, buf[4096];
	ssize_t		 n;
	unsigned int	 r;

	T_OK(x != NULL && &x->io == io);
	/* Called only when runnable. */
	T_NE(io->ready & io->want, 0);
	if (x->calls == 0)
		x->first_ready = io->ready;
	x->calls++;
	x->last_ready = io->ready;
	if (io->ready & io->want & TK_EV_READ)
		x->rcalls++;
	if (io->ready & io->want & TK_EV_WRITE)
		x->wcalls++;

	switch (x->mode) {
	case M_DRAIN:
		if (io->ready & io->want & TK_EV_READ)
			drain(x);
		break;
	case M_IDLE:
		break;
	case M_ONEBYTE:
		if ((io->ready & io->want & TK_EV_READ) == 0)
			break;
		n = read(io->fd, &c, 1);
		if (n == 1)
			x->got++;
		else if (n == 0)
			x->eof = 1;
		else {
			T_EQ(errno, EAGAIN);
			tk_io_block(io, TK_EV_READ);
		}
		break;
	case M_FILL:
		if ((io->ready & io->want & TK_EV_WRITE) == 0)
			break;
		memset(buf, 'x', sizeof(buf));
		for (;;) {
			n = send(io->fd, buf, sizeof(buf), MSG_NOSIGNAL);
			if (n > 0) {
				x->put += n;
				continue;
			}
			T_EQ(n, -1);
			if (errno == EPIPE || errno == ECONNRESET) {
				x->eof = 1;
				tk_io_stop(l, io);
				break;
			}
			T_EQ(errno, EAGAIN);
			tk_io_block(io, TK_EV_WRITE);
			break;
		}
		break;
	case M_STOP:
		if (io->ready & io->want & TK_EV_READ)
			drain(x);
		tk_loop_stop(l);
		break;
	case M_MODEL:
		r = io->ready & io->want;
		if (r & TK_EV_READ)
			drain(x);
		if (r & TK_EV_WRITE)
			tk_io_block(io, TK_EV_WRITE);
		break;
	}
}

static void
w_open(struct w *x, enum mode mode)
{
	int	sv[2];

	memset(x, 0, sizeof(*x));
	t_sockpair(sv);
	x->peer = sv[1];
	x->mode = mode;
	tk_io_init(&x->io, sv[0], handler, x);
	T_EQ(x->io.fd, sv[0]);
	T_EQ(x->io.active, 0);
}

/* w_open(), then x watched for ev on l. */
static void
w_start(struct tk_loop *l, struct w *x, enum mode mode, unsigned int ev)
{
	w_open(x, mode);
	T_EQ(tk_io_start(l, &x->io, ev), 0);
}

static void
w_close(struct tk_loop *l, struct w *x)
{
	tk_io_stop(l, &x->io);
	if (x->io.fd != -1)
		close(x->io.fd);
	if (x->peer != -1)
		close(x->peer);
	x->io.fd = x->peer = -1;
}

static void
passes(struct tk_loop *l, int n)
{
	while (n-- > 0)
		tk_loop_run(l, TK_RUN_NOWAIT);
}

/* Run NOWAIT passes until *p > v; fail after a generous bound. */
static void
until_gt(struct tk_loop *l, const int *p, int v, const char *what)
{
	int	i;

	for (i = 0; i < 1000 && *p <= v; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	if (*p <= v)
		T_FAIL("%s: still %d after 1000 passes", what, *p);
}

static struct tk_loop *
newloop(void)
{
	struct tk_loop	*l;

	l = tk_loop_new(t_backend, 0);
	T_PTR(l);
	return l;
}

/* Make room for n fds; skip when the hard limit is too low. */
static void
need_fds(rlim_t n)
{
	struct rlimit	rl;

	T_SYS(getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_cur >= n)
		return;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < n)
		T_SKIP("RLIMIT_NOFILE hard limit too low");
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? n : rl.rlim_max;
	T_SYS(setrlimit(RLIMIT_NOFILE, &rl));
}

TEST(loop_names)
{
	const char *const	*be;
	struct tk_loop		*l;
	int			 n = 0, have_poll = 0, have_select = 0;

	be = tk_backend_names();
	T_PTR(be);
	for (; *be != NULL; be++, n++) {
		l = tk_loop_new(*be, 0);
		T_PTR(l);
		T_STREQ(tk_loop_backend(l), *be);
		tk_loop_free(l);
		if (strcmp(*be, "poll") == 0)
			have_poll = 1;
		if (strcmp(*be, "select") == 0)
			have_select = 1;
	}
	T_GT(n, 0);
	T_OK(have_poll && have_select);

	/* NULL picks the best backend, which is listed first. */
	l = tk_loop_new(NULL, 0);
	T_PTR(l);
	T_STREQ(tk_loop_backend(l), tk_backend_names()[0]);
	tk_loop_free(l);

	errno = 0;
	T_OK(tk_loop_new("no-such-backend", 0) == NULL);
	T_EQ(errno, ENOENT);
}

TEST_BE(loop_new_free)
{
	struct tk_loop	*l = newloop();
	uint64_t	 now;

	T_STREQ(tk_loop_backend(l), t_backend);
	now = tk_loop_now(l);
	T_GT(now, 0);
	T_GE(tk_loop_update_now(l), now);
	T_GE(tk_loop_now(l), now);
	/* Nothing registered: a pass returns 0 at once. */
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	tk_loop_free(l);

	/* A loop freed with a watcher still started forgets it. */
	{
		struct w	x;

		l = newloop();
		w_start(l, &x, M_DRAIN, TK_EV_READ);
		put(x.peer, "a");
		tk_loop_free(l);
		T_EQ(x.calls, 0);
		close(x.io.fd);
		close(x.peer);
	}
}

/*
 * Readable: not called before data arrives; called with READ once it
 * does; a handler that drains and blocks is not called again until the
 * next write, and each write makes exactly one call.
 */
TEST_BE(loop_readable)
{
	struct tk_loop	*l = newloop();
	struct w	 x;
	int		 i;

	w_start(l, &x, M_DRAIN, TK_EV_READ);
	T_EQ(x.io.active, 1);
	T_EQ(x.io.want, TK_EV_READ);
	passes(l, SETTLE);
	T_EQ(x.calls, 0);

	for (i = 0; i < 20; i++) {
		put(x.peer, "ping");
		until_gt(l, &x.calls, i, "read call");
		passes(l, SETTLE);
		T_EQ(x.calls, i + 1);
		T_OK(x.last_ready & TK_EV_READ);
		T_EQ(x.io.ready & TK_EV_READ, 0);
		T_EQ(x.got, 4 * (size_t)(i + 1));
	}
	T_EQ(x.rcalls, 20);
	T_EQ(x.wcalls, 0);
	T_EQ(memcmp(x.data, "pingping", 8), 0);
	w_close(l, &x);
	tk_loop_free(l);
}

/*
 * Several writes before the loop looks coalesce into one call when the
 * handler drains; on an edge backend no further wake-up follows.
 */
TEST_BE(loop_one_wakeup)
{
	struct tk_loop	*l = newloop();
	struct w	 x;

	w_start(l, &x, M_DRAIN, TK_EV_READ);
	put(x.peer, "a");
	put(x.peer, "b");
	put(x.peer, "c");
	until_gt(l, &x.calls, 0, "read call");
	passes(l, SETTLE);
	T_EQ(x.calls, 1);
	T_EQ(x.got, 3);
	T_EQ(memcmp(x.data, "abc", 3), 0);

	/*
	 * The peer reading and writing changes our socket's state in the
	 * other direction; a read-only watcher must not be woken by it.
	 */
	put(x.io.fd, "zz");
	passes(l, SETTLE);
	T_EQ(x.calls, 1);
	w_close(l, &x);
	tk_loop_free(l);
}

TEST_BE(loop_writable)
{
	struct tk_loop	*l = newloop();
	struct w	 x;
	char		 buf[65536];
	ssize_t		 n;
	size_t		 back = 0;
	int		 c;

	w_start(l, &x, M_FILL, TK_EV_WRITE);
	until_gt(l, &x.calls, 0, "write call");
	T_OK(x.first_ready & TK_EV_WRITE);
	T_EQ(x.rcalls, 0);
	T_GT(x.put, 0);

	/* Full and blocked: not called while the peer reads nothing. */
	passes(l, SETTLE);
	T_EQ(x.calls, 1);

	/* The peer drains: writable again, called again. */
	while ((n = read(x.peer, buf, sizeof(buf))) > 0)
		back += n;
	T_EQ(back, x.put);
	c = x.calls;
	until_gt(l, &x.calls, c, "write call after drain");
	T_OK(x.last_ready & TK_EV_WRITE);
	w_close(l, &x);
	tk_loop_free(l);
}

/*
 * Both directions: the first call sees READ and WRITE.  A handler that
 * blocks only READ while WRITE stays ready and wanted remains runnable.
 */
TEST_BE(loop_both)
{
	struct tk_loop	*l = newloop();
	struct w	 x;

	w_open(&x, M_DRAIN);
	put(x.peer, "both");
	T_EQ(tk_io_start(l, &x.io, TK_EV_READ | TK_EV_WRITE), 0);
	until_gt(l, &x.calls, 0, "call");
	T_EQ(x.first_ready & (TK_EV_READ | TK_EV_WRITE),
	    TK_EV_READ | TK_EV_WRITE);
	T_EQ(x.got, 4);
	passes(l, 10);
	/* Still runnable through WRITE: one call per pass, not fewer. */
	T_GE(x.calls, 1 + 10 - 1);
	T_LE(x.calls, 1 + 10 + 1);
	T_EQ(x.rcalls, 1);

	/* Drop WRITE: quiet until new data. */
	T_EQ(tk_io_want(l, &x.io, TK_EV_READ), 0);
	T_EQ(x.io.want, TK_EV_READ);
	passes(l, 2);
	x.calls = 0;
	passes(l, SETTLE);
	T_EQ(x.calls, 0);
	put(x.peer, "x");
	until_gt(l, &x.calls, 0, "read call");
	passes(l, SETTLE);
	T_EQ(x.calls, 1);
	w_close(l, &x);
	tk_loop_free(l);
}

/*
 * Fairness: a handler that neither blocks nor reads stays runnable and is
 * called once per pass, on every backend (edge included, though no new
 * edge arrives); and it does not starve another watcher.
 */
TEST_BE(loop_stays_runnable)
{
	struct tk_loop	*l = newloop();
	struct w	 x, y;
	int		 c;

	alarm(20);		/* a pass that never ends is a failure */
	w_open(&x, M_IDLE);
	w_open(&y, M_DRAIN);
	T_EQ(tk_io_start(l, &x.io, TK_EV_READ), 0);
	T_EQ(tk_io_start(l, &y.io, TK_EV_READ), 0);
	put(x.peer, "data");
	until_gt(l, &x.calls, 0, "idle call");
	c = x.calls;
	passes(l, 20);
	T_GE(x.calls, c + 19);
	T_LE(x.calls, c + 21);

	put(y.peer, "y");
	until_gt(l, &y.calls, 0, "other watcher call");
	T_EQ(y.calls, 1);

	/* The hog now drains and blocks: quiet from then on. */
	x.mode = M_DRAIN;
	c = x.calls;
	until_gt(l, &x.calls, c, "hog drained");
	T_EQ(x.got, 4);
	c = x.calls;
	passes(l, SETTLE);
	T_EQ(x.calls, c);
	w_close(l, &x);
	w_close(l, &y);
	tk_loop_free(l);
}

/*
 * Partial reads without tk_io_block: one byte per call.  Ten bytes take
 * ten calls and an eleventh that meets EAGAIN; nothing after that, even
 * on an edge backend where only one edge was ever raised.
 */
TEST_BE(loop_partial_reads)
{
	struct tk_loop	*l = newloop();
	struct w	 x;

	w_start(l, &x, M_ONEBYTE, TK_EV_READ);
	put(x.peer, "0123456789");
	until_gt(l, &x.calls, 10, "eleven calls");
	passes(l, SETTLE);
	T_EQ(x.got, 10);
	T_EQ(x.calls, 11);
	w_close(l, &x);
	tk_loop_free(l);
}

/*
 * Interest changes: read-only, then write-only, then none.  Data that
 * arrives while READ is not wanted is not lost: wanting READ again later
 * finds it (an edge backend must have kept the edge in user space).
 */
TEST_BE(loop_want_changes)
{
	struct tk_loop	*l = newloop();
	struct w	 x;
	int		 c;

	w_start(l, &x, M_DRAIN, TK_EV_READ);
	put(x.peer, "r1");
	until_gt(l, &x.rcalls, 0, "read call");
	passes(l, SETTLE);
	T_EQ(x.calls, 1);
	T_EQ(x.wcalls, 0);

	/* Write-only: the socket is writable, so the handler runs. */
	T_EQ(tk_io_want(l, &x.io, TK_EV_WRITE), 0);
	T_EQ(x.io.want, TK_EV_WRITE);
	until_gt(l, &x.wcalls, 0, "write call");
	T_OK(x.last_ready & TK_EV_WRITE);
	/* Data now is not wanted: no read call. */
	put(x.peer, "r2");
	passes(l, 5);
	T_EQ(x.rcalls, 1);

	/* None: not called at all, though writable and readable. */
	T_EQ(tk_io_want(l, &x.io, 0), 0);
	T_EQ(x.io.want, 0);
	T_EQ(x.io.active, 1);
	c = x.calls;
	passes(l, SETTLE);
	put(x.peer, "r3");
	passes(l, SETTLE);
	T_EQ(x.calls, c);
	T_EQ(x.got, 2);

	/* Read again: r2 and r3 are still there. */
	T_EQ(tk_io_want(l, &x.io, TK_EV_READ), 0);
	until_gt(l, &x.rcalls, 1, "read call after want");
	passes(l, SETTLE);
	T_EQ(x.rcalls, 2);
	T_EQ(x.got, 6);
	T_EQ(memcmp(x.data, "r1r2r3", 6), 0);

	/* Setting the same interest again changes nothing. */
	T_EQ(tk_io_want(l, &x.io, TK_EV_READ), 0);
	passes(l, SETTLE);
	T_EQ(x.rcalls, 2);
	w_close(l, &x);
	tk_loop_free(l);
}

/*
 * tk_io_stop: no call after it, even with the fd ready (and perhaps
 * already queued); then the fd is closed.  Stopping twice, or a watcher
 * never started, does nothing; a stopped watcher can be started again
 * and the pending data is found.
 */
TEST_BE(loop_stop_close)
{
	struct tk_loop	*l = newloop();
	struct w	 x, y, z;
	int		 c, cy;

	w_open(&x, M_DRAIN);
	tk_io_stop(l, &x.io);		/* never started */
	T_EQ(tk_io_start(l, &x.io, TK_EV_READ), 0);
	put(x.peer, "stop");
	tk_loop_run(l, TK_RUN_NOWAIT);	/* may have queued it */
	c = x.calls;
	tk_io_stop(l, &x.io);
	T_EQ(x.io.active, 0);
	T_EQ(x.io.queued, 0);
	tk_io_stop(l, &x.io);
	passes(l, SETTLE);
	T_EQ(x.calls, c);
	/* New data on the still-open fd: the kernel must not report it. */
	put(x.peer, "more");
	passes(l, SETTLE);
	T_EQ(x.calls, c);

	/* Start again: what is pending is reported afresh. */
	if (c == 0) {
		T_EQ(tk_io_start(l, &x.io, TK_EV_READ), 0);
		until_gt(l, &x.calls, 0, "call after restart");
		T_EQ(x.got, 8);
		tk_io_stop(l, &x.io);
	}
	close(x.io.fd);
	close(x.peer);

	/* Stop, close, and another fd takes the same number at once. */
	w_start(l, &y, M_DRAIN, TK_EV_READ);
	put(y.peer, "old");
	tk_loop_run(l, TK_RUN_NOWAIT);
	cy = y.calls;
	tk_io_stop(l, &y.io);
	c = y.io.fd;
	close(y.io.fd);
	close(y.peer);
	w_open(&z, M_DRAIN);
	if (z.io.fd != c) {
		/* Force the reuse. */
		T_SYS(dup2(z.io.fd, c));
		close(z.io.fd);
		tk_io_init(&z.io, c, handler, &z);
	}
	T_EQ(tk_io_start(l, &z.io, TK_EV_READ), 0);
	passes(l, SETTLE);
	T_EQ(y.calls, cy);
	T_EQ(z.calls, 0);
	put(z.peer, "new");
	until_gt(l, &z.calls, 0, "call on reused fd");
	T_EQ(z.got, 3);
	w_close(l, &z);
	tk_loop_free(l);
}

/*
 * Freeing other watchers mid-batch.  NW watchers, each with data, so all
 * are ready in the same wait.  The first handler to run stops, closes
 * and frees every other one; none of those may ever be called.  The
 * watchers are on the heap so that ASan reports any use after free, and
 * a freed pointer is also remembered and checked on entry.
 */
#define NW	16

struct hw {
	struct tk_io	 io;
	int		 peer;
	int		 idx;
};

static struct hw	*hws[NW];
static const void	*hw_freed[NW];
static int		 hw_calls, hw_bad, hw_newcalls;
static struct hw	*hw_new;

static void
hw_handler(struct tk_loop *l, struct tk_io *io)
{
	struct hw	*h = io->arg, *o;
	char		 buf[64];
	int		 i, sv[2];

	for (i = 0; i < NW; i++)
		if (hw_freed[i] == (const void *)io)
			hw_bad++;
	T_EQ(hw_bad, 0);
	if (h == hw_new) {
		hw_newcalls++;
		while (read(io->fd, buf, sizeof(buf)) > 0)
			;
		tk_io_block(io, TK_EV_READ);
		return;
	}
	hw_calls++;
	while (read(io->fd, buf, sizeof(buf)) > 0)
		;
	tk_io_block(io, TK_EV_READ);
	for (i = 0; i < NW; i++) {
		if ((o = hws[i]) == NULL || o == h)
			continue;
		tk_io_stop(l, &o->io);
		close(o->io.fd);
		close(o->peer);
		hw_freed[i] = &o->io;
		hws[i] = NULL;
		free(o);
	}

	/*
	 * A new watcher on a just-freed fd number, in the same batch: the
	 * stale readiness of the old fd must not reach it.
	 */
	if (hw_new->peer == -1) {
		t_sockpair(sv);
		hw_new->peer = sv[1];
		hw_new->idx = -1;
		tk_io_init(&hw_new->io, sv[0], hw_handler, hw_new);
		T_EQ(tk_io_start(l, &hw_new->io, TK_EV_READ), 0);
	}
}

TEST_BE(loop_free_other_in_batch)
{
	struct tk_loop	*l = newloop();
	struct hw	*h;
	int		 i, sv[2], alive = -1;

	/* Allocated now, so that it cannot reuse a freed watcher's memory. */
	hw_new = calloc(1, sizeof(*hw_new));
	T_PTR(hw_new);
	hw_new->peer = -1;
	for (i = 0; i < NW; i++) {
		t_sockpair(sv);
		h = calloc(1, sizeof(*h));
		T_PTR(h);
		h->peer = sv[1];
		h->idx = i;
		tk_io_init(&h->io, sv[0], hw_handler, h);
		T_EQ(tk_io_start(l, &h->io, TK_EV_READ), 0);
		hws[i] = h;
	}
	for (i = 0; i < NW; i++)
		put(hws[i]->peer, "go");
	until_gt(l, &hw_calls, 0, "first call");
	passes(l, SETTLE);
	T_EQ(hw_calls, 1);
	T_EQ(hw_bad, 0);
	T_EQ(hw_newcalls, 0);
	for (i = 0; i < NW; i++) {
		if (hws[i] != NULL) {
			T_EQ(alive, -1);
			alive = i;
		}
	}
	T_NE(alive, -1);

	/* The new watcher works once its own data comes. */
	T_NE(hw_new->peer, -1);
	put(hw_new->peer, "new");
	until_gt(l, &hw_newcalls, 0, "new watcher call");
	passes(l, SETTLE);
	T_EQ(hw_newcalls, 1);
	T_EQ(hw_calls, 1);

	tk_io_stop(l, &hw_new->io);
	close(hw_new->io.fd);
	close(hw_new->peer);
	free(hw_new);
	h = hws[alive];
	tk_io_stop(l, &h->io);
	close(h->io.fd);
	close(h->peer);
	free(h);
	tk_loop_free(l);
}

/* A handler that stops, closes and frees its own watcher. */
static int	self_calls;

static void
self_free(struct tk_loop *l, struct tk_io *io)
{
	struct hw	*h = io->arg;

	self_calls++;
	tk_io_stop(l, io);
	close(io->fd);
	close(h->peer);
	free(h);
}

TEST_BE(loop_free_self)
{
	struct tk_loop	*l = newloop();
	struct hw	*h[4];
	int		 i, sv[2];

	for (i = 0; i < 4; i++) {
		t_sockpair(sv);
		h[i] = calloc(1, sizeof(*h[i]));
		T_PTR(h[i]);
		h[i]->peer = sv[1];
		tk_io_init(&h[i]->io, sv[0], self_free, h[i]);
		T_EQ(tk_io_start(l, &h[i]->io, TK_EV_READ | TK_EV_WRITE),
		    0);
		put(sv[1], "x");
	}
	until_gt(l, &self_calls, 3, "four calls");
	passes(l, SETTLE);
	T_EQ(self_calls, 4);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	tk_loop_free(l);
}

/*
 * 1,100 watched fds, numbered past 1024.  Every backend takes them all,
 * select too (its fd sets grow past FD_SETSIZE), and delivers one byte to
 * each.
 */
#define NMANY	1100

TEST_BE(loop_many_fds)
{
	struct tk_loop	*l;
	struct w	*x;
	int		 i, sv[2], high = 0, total;

	need_fds(2 * NMANY + 64);
	l = tk_loop_new(t_backend, 2 * NMANY + 64);
	T_PTR(l);
	x = calloc(NMANY, sizeof(*x));
	T_PTR(x);
	for (i = 0; i < NMANY; i++) {
		t_sockpair(sv);
		x[i].peer = sv[1];
		x[i].mode = M_DRAIN;
		tk_io_init(&x[i].io, sv[0], handler, &x[i]);
		if (sv[0] >= FD_SETSIZE)
			high++;
		T_EQ(tk_io_start(l, &x[i].io, TK_EV_READ), 0);
	}
	T_GT(high, 0);

	for (i = 0; i < NMANY; i++)
		put(x[i].peer, "m");
	for (i = 0, total = 0; i < 1000 && total < NMANY; i++) {
		int j;

		tk_loop_run(l, TK_RUN_NOWAIT);
		for (j = 0, total = 0; j < NMANY; j++)
			total += x[j].calls;
	}
	passes(l, 5);
	for (i = 0; i < NMANY; i++) {
		T_EQ(x[i].calls, 1);
		T_EQ(x[i].got, 1);
	}
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), NMANY);
	for (i = 0; i < NMANY; i++)
		w_close(l, &x[i]);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	free(x);
	tk_loop_free(l);
}

/*
 * An fd far above FD_SETSIZE, made with dup2, then one below it: the
 * highest fd leaving must not hide the lower one from select.
 */
TEST_BE(loop_high_fd)
{
	struct tk_loop	*l = newloop();
	struct w	 x, y;
	int		 fd = FD_SETSIZE * 8 + 500;

	need_fds(fd + 16);
	w_open(&x, M_DRAIN);
	T_SYS(dup2(x.io.fd, fd));
	close(x.io.fd);
	tk_io_init(&x.io, fd, handler, &x);
	T_EQ(tk_io_start(l, &x.io, TK_EV_READ), 0);
	w_start(l, &y, M_DRAIN, TK_EV_READ);
	put(x.peer, "hi");
	until_gt(l, &x.calls, 0, "call on high fd");
	T_EQ(x.got, 2);
	w_close(l, &x);
	put(y.peer, "lo");
	until_gt(l, &y.calls, 0, "call on the low fd after the high one");
	T_EQ(y.got, 2);
	w_close(l, &y);
	tk_loop_free(l);
}

/* Peer close: HUP or READ, and read() returns 0 after the data. */
TEST_BE(loop_peer_close)
{
	struct tk_loop	*l = newloop();
	struct w	 x, y;

	w_start(l, &x, M_DRAIN, TK_EV_READ);
	close(x.peer);
	x.peer = -1;
	until_gt(l, &x.calls, 0, "call on close");
	T_NE(x.first_ready & (TK_EV_HUP | TK_EV_READ), 0);
	T_EQ(x.eof, 1);
	T_EQ(x.got, 0);
	w_close(l, &x);

	/* Data then close, both before the loop looks: nothing is lost. */
	w_start(l, &y, M_ONEBYTE, TK_EV_READ);
	put(y.peer, "tail");
	close(y.peer);
	y.peer = -1;
	until_gt(l, &y.eof, 0, "eof after data");
	T_EQ(y.got, 4);
	T_NE(y.last_ready & (TK_EV_HUP | TK_EV_READ), 0);
	w_close(l, &y);
	tk_loop_free(l);
}

/* Close with a write-only watcher: it is woken, and send meets EPIPE. */
TEST_BE(loop_peer_close_write)
{
	struct tk_loop	*l = newloop();
	struct w	 x;
	char		 buf[65536];
	ssize_t		 n;

	w_start(l, &x, M_FILL, TK_EV_WRITE);
	until_gt(l, &x.calls, 0, "write call");
	passes(l, SETTLE);
	T_EQ(x.calls, 1);
	close(x.peer);
	x.peer = -1;
	until_gt(l, &x.calls, 1, "call after peer close");
	T_NE(x.last_ready & (TK_EV_HUP | TK_EV_ERR | TK_EV_WRITE), 0);
	T_EQ(x.eof, 1);		/* the handler met EPIPE */
	memset(buf, 0, sizeof(buf));
	n = send(x.io.fd, buf, 1, MSG_NOSIGNAL);
	T_EQ(n, -1);
	T_EQ(errno, EPIPE);
	w_close(l, &x);
	tk_loop_free(l);
}

static void
guard_fn(struct tk_loop *l, struct tk_timer *t)
{
	(void)l;
	(void)t;
	T_FAIL("guard timer fired: the loop did not return in time");
}

/*
 * TK_RUN_NOWAIT never blocks, whatever is registered; it returns the
 * number of active watchers and timers.
 */
TEST_BE(loop_nowait)
{
	struct tk_loop	*l = newloop();
	struct tk_timer	 t;
	struct w	 x;
	uint64_t	 t0;
	int		 i, r;

	w_start(l, &x, M_DRAIN, TK_EV_READ);
	tk_timer_init(&t, guard_fn, NULL);
	T_EQ(tk_timer_arm(l, &t, 30 * TK_SEC), 0);
	t0 = tk_clock_mono();
	for (i = 0; i < 100; i++) {
		r = tk_loop_run(l, TK_RUN_NOWAIT);
		T_EQ(r, 2);
	}
	T_LT(tk_clock_mono() - t0, 2 * TK_SEC);
	tk_timer_cancel(l, &t);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 1);
	tk_io_stop(l, &x.io);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	w_close(l, &x);
	tk_loop_free(l);
}

static void
stop_timer(struct tk_loop *l, struct tk_timer *t)
{
	(*(int *)t->arg)++;
	tk_loop_stop(l);
}

/*
 * tk_loop_stop from a handler ends tk_loop_run(l, 0), which returns 0,
 * and from a timer callback too.
 */
TEST_BE(loop_stop_from_handler)
{
	struct tk_loop	*l = newloop();
	struct tk_timer	 guard, t;
	struct w	 x;
	int		 round, fired = 0;

	w_start(l, &x, M_STOP, TK_EV_READ);
	tk_timer_init(&guard, guard_fn, NULL);
	/* Twice: a stop must not linger into the next run. */
	for (round = 1; round <= 2; round++) {
		T_EQ(tk_timer_arm(l, &guard, 10 * TK_SEC), 0);
		put(x.peer, "s");
		T_EQ(tk_loop_run(l, 0), 0);
		T_EQ(x.calls, round);
		T_EQ(x.got, (size_t)round);
	}
	tk_timer_cancel(l, &guard);

	/* The stop was consumed: the next run goes on until a new one. */
	tk_timer_init(&t, stop_timer, &fired);
	T_EQ(tk_timer_arm(l, &t, 30 * TK_MSEC), 0);
	T_EQ(tk_loop_run(l, 0), 0);
	T_EQ(fired, 1);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 1);
	w_close(l, &x);
	tk_loop_free(l);
}

/*
 * tk_loop_run(l, 0) blocks in the backend until data arrives: a timer
 * writes to the peer after 30 ms, the handler stops the loop.
 */
static void
late_write(struct tk_loop *l, struct tk_timer *t)
{
	struct w	*x = t->arg;

	(void)l;
	put(x->peer, "late");
}

TEST_BE(loop_blocking_wait)
{
	struct tk_loop	*l = newloop();
	struct tk_timer	 guard, t;
	struct w	 x;
	uint64_t	 t0;

	w_start(l, &x, M_STOP, TK_EV_READ);
	tk_timer_init(&guard, guard_fn, NULL);
	tk_timer_init(&t, late_write, &x);
	tk_loop_update_now(l);
	T_EQ(tk_timer_arm(l, &guard, 10 * TK_SEC), 0);
	T_EQ(tk_timer_arm(l, &t, 30 * TK_MSEC), 0);
	t0 = tk_clock_mono();
	T_EQ(tk_loop_run(l, 0), 0);
	T_EQ(x.calls, 1);
	T_EQ(x.got, 4);
	T_GE(tk_clock_mono() - t0, 25 * TK_MSEC);
	tk_timer_cancel(l, &guard);
	w_close(l, &x);
	tk_loop_free(l);
}

/*
 * tk_io_close: stop and close in one call, from inside a handler, on the
 * other watchers of the batch; the fd numbers then serve new watchers.
 */
static struct w	 cl[8];
static int	 cl_first = -1;

static void
close_others(struct tk_loop *l, struct tk_io *io)
{
	struct w	*x = io->arg;
	int		 i;

	handler(l, io);
	if (cl_first != -1)
		return;
	cl_first = (int)(x - cl);
	for (i = 0; i < 8; i++) {
		if (&cl[i] == x)
			continue;
		T_EQ(tk_io_close(l, &cl[i].io), 0);
		T_EQ(cl[i].io.active, 0);
		T_EQ(cl[i].io.fd, -1);
		close(cl[i].peer);
		cl[i].peer = -1;
	}
}

TEST_BE(loop_io_close)
{
	struct tk_loop	*l = newloop();
	struct w	 y[7];
	int		 i, total = 0;

	for (i = 0; i < 8; i++) {
		w_open(&cl[i], M_DRAIN);
		tk_io_init(&cl[i].io, cl[i].io.fd, close_others, &cl[i]);
		T_EQ(tk_io_start(l, &cl[i].io, TK_EV_READ), 0);
		put(cl[i].peer, "c");
	}
	until_gt(l, &cl_first, -1, "first call");
	passes(l, SETTLE);
	for (i = 0; i < 8; i++)
		total += cl[i].calls;
	T_EQ(total, 1);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 1);

	/* The freed numbers are reused; the backend must accept them. */
	for (i = 0; i < 7; i++) {
		w_start(l, &y[i], M_DRAIN, TK_EV_READ);
	}
	passes(l, SETTLE);
	for (i = 0; i < 7; i++) {
		T_EQ(y[i].calls, 0);
		put(y[i].peer, "n");
	}
	for (i = 0; i < 7; i++)
		until_gt(l, &y[i].calls, 0, "call on a reused number");
	for (i = 0; i < 7; i++)
		w_close(l, &y[i]);
	T_EQ(tk_io_close(l, &cl[cl_first].io), 0);
	close(cl[cl_first].peer);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	tk_loop_free(l);
}

/*
 * A watcher closed while another descriptor holds its file (a draining
 * worker's listener, which the master keeps open): on epoll, which
 * skips the del, the registration outlives the fd, and the file's next
 * event must not call the watcher, whose fd is now -1.  Stopped the same
 * way, a watcher whose fd stays open is not called either.
 */
TEST_BE(loop_closed_shared)
{
	struct tk_loop	*l = newloop();
	struct w	 x, y;
	int		 keep;

	w_open(&x, M_DRAIN);
	T_SYS(keep = dup(x.io.fd));
	T_EQ(tk_io_start(l, &x.io, TK_EV_READ), 0);
	put(x.peer, "a");
	until_gt(l, &x.calls, 0, "first call");
	T_EQ(tk_io_close(l, &x.io), 0);
	put(x.peer, "b");
	passes(l, SETTLE);
	T_EQ(x.calls, 1);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);

	w_start(l, &y, M_IDLE, TK_EV_READ);
	put(y.peer, "c");
	until_gt(l, &y.calls, 0, "first call");
	tk_io_stop(l, &y.io);
	put(y.peer, "d");
	passes(l, SETTLE);
	T_EQ(y.calls, 1);
	w_close(l, &y);
	close(keep);
	close(x.peer);
	tk_loop_free(l);
}

/*
 * No starvation with more ready fds than one wait returns.  8,300
 * watchers, each of which re-arms itself (writes a byte to its own peer
 * after draining), so every fd is readable again at every wait.  Over 40
 * passes each must be served many times; a backend that always scans
 * from the start and stops at the event array's size would never reach
 * the last ones.  select cannot hold that many fds.
 */
#define NBUSY	8300

#define BUSY_LIMIT	60

static void
busy(struct tk_loop *l, struct tk_io *io)
{
	struct w	*x = io->arg;

	(void)l;
	x->calls++;
	drain(x);
	if (x->calls < BUSY_LIMIT && write(x->peer, "b", 1) != 1)
		T_FAIL("write: %s", strerror(errno));
}

TEST_BE_T(loop_no_starvation, 120)
{
	struct tk_loop	*l;
	struct w	*x;
	int		 i, sv[2], min;

	need_fds(2 * NBUSY + 64);
	l = tk_loop_new(t_backend, 2 * NBUSY + 64);
	T_PTR(l);
	x = calloc(NBUSY, sizeof(*x));
	T_PTR(x);
	for (i = 0; i < NBUSY; i++) {
		t_sockpair(sv);
		x[i].peer = sv[1];
		tk_io_init(&x[i].io, sv[0], busy, &x[i]);
		T_EQ(tk_io_start(l, &x[i].io, TK_EV_READ), 0);
		put(sv[1], "b");
	}
	passes(l, 40);
	for (i = 0, min = INT32_MAX; i < NBUSY; i++)
		if (x[i].calls < min)
			min = x[i].calls;
	printf("least-served watcher: %d calls in 40 passes\n", min);
	for (i = 0; i < NBUSY; i++)
		if (x[i].calls < 10)
			T_FAIL("watcher %d (fd %d): %d calls in 40 passes, "
			    "watcher 0: %d", i, x[i].io.fd, x[i].calls,
			    x[0].calls);
	for (i = 0; i < NBUSY; i++)
		w_close(l, &x[i]);
	free(x);
	tk_loop_free(l);
}

/*
 * More fds ready than one wait can return, then most watchers stopped:
 * a backend that remembers where its last scan stopped (poll) must not
 * carry that position past the end of its shrunken array, where stale
 * entries would hand back watchers already stopped.
 */
#define NFULL	300
#define NKEEP	10

TEST_BE(loop_stop_after_full_batch)
{
	struct tk_loop	*l;
	struct w	*x;
	int		 i, sv[2], before[NFULL];

	need_fds(2 * NFULL + 64);
	l = newloop();
	x = calloc(NFULL, sizeof(*x));
	T_PTR(x);
	for (i = 0; i < NFULL; i++) {
		t_sockpair(sv);
		x[i].peer = sv[1];
		x[i].mode = M_DRAIN;
		tk_io_init(&x[i].io, sv[0], handler, &x[i]);
		T_EQ(tk_io_start(l, &x[i].io, TK_EV_READ), 0);
		put(sv[1], "f");
	}
	/* The first wait returns a full event array and leaves some over. */
	tk_loop_run(l, TK_RUN_NOWAIT);
	for (i = NKEEP; i < NFULL; i++) {
		w_close(l, &x[i]);
		before[i] = x[i].calls;
	}
	for (i = 0; i < NKEEP; i++)
		put(x[i].peer, "g");
	passes(l, SETTLE);
	for (i = NKEEP; i < NFULL; i++)
		if (x[i].calls != before[i])
			T_FAIL("stopped watcher %d called after its stop", i);
	for (i = 0; i < NKEEP; i++) {
		T_GE(x[i].got, 2);
		w_close(l, &x[i]);
	}
	free(x);
	tk_loop_free(l);
}

/*
 * The backends' bookkeeping against a model: 64 watchers go through
 * 3,000 random starts, stops, interest changes and restarts on a fresh
 * fd (which reuses numbers), in every order, so that entries move inside
 * the backend's arrays.  Every 10 operations each peer gets a byte, and
 * then exactly the active watchers are called: with READ when they want
 * it (and the byte is read), with WRITE when they want it, never when
 * stopped or wanting nothing.
 */
#define NMODEL	64

/* Below n, from t_rand(): seeded, so that a failure repeats. */
static unsigned int
mrnd(unsigned int n)
{
	return t_rand() % n;
}

TEST_BE(loop_model)
{
	static const unsigned int wants[] = { 0, TK_EV_READ, TK_EV_WRITE,
	    TK_EV_READ | TK_EV_WRITE };
	struct tk_loop	*l = newloop();
	struct w	*x;
	size_t		 got[NMODEL];
	int		 i, op, active[NMODEL], nact, checks = 0;

	t_srand(4711);
	x = calloc(NMODEL, sizeof(*x));
	T_PTR(x);
	for (i = 0; i < NMODEL; i++) {
		w_open(&x[i], M_MODEL);
		active[i] = 0;
	}
	for (op = 0; op < 3000; op++) {
		i = mrnd(NMODEL);
		switch (mrnd(4)) {
		case 0:
			if (active[i])
				break;
			T_EQ(tk_io_start(l, &x[i].io, wants[mrnd(4)]), 0);
			active[i] = 1;
			break;
		case 1:
			tk_io_stop(l, &x[i].io);
			T_EQ(x[i].io.active, 0);
			active[i] = 0;
			break;
		case 2:
			if (!active[i])
				break;
			T_EQ(tk_io_want(l, &x[i].io, wants[mrnd(4)]), 0);
			break;
		case 3:
			w_close(l, &x[i]);
			w_open(&x[i], M_MODEL);
			active[i] = 0;
			if (mrnd(2) == 0) {
				T_EQ(tk_io_start(l, &x[i].io,
				    wants[mrnd(4)]), 0);
				active[i] = 1;
			}
			break;
		}
		if (op % 10 != 9)
			continue;

		/* Check: one byte to every peer, then let the loop settle. */
		for (i = 0, nact = 0; i < NMODEL; i++) {
			x[i].calls = x[i].rcalls = x[i].wcalls = 0;
			got[i] = x[i].got;
			put(x[i].peer, "m");
			nact += active[i];
		}
		passes(l, 8);
		for (i = 0; i < NMODEL; i++) {
			unsigned int want = active[i] ? x[i].io.want : 0;

			if (want == 0 && x[i].calls != 0)
				T_FAIL("op %d: watcher %d (fd %d, %s) called "
				    "%d times", op, i, x[i].io.fd,
				    active[i] ? "wants nothing" : "stopped",
				    x[i].calls);
			if ((want & TK_EV_READ) &&
			    (x[i].rcalls == 0 || x[i].got == got[i]))
				T_FAIL("op %d: watcher %d (fd %d) wants READ: "
				    "%d read calls, %zu bytes", op, i,
				    x[i].io.fd, x[i].rcalls,
				    x[i].got - got[i]);
			if ((want & TK_EV_READ) == 0 && x[i].got != got[i])
				T_FAIL("op %d: watcher %d read without READ",
				    op, i);
			if ((want & TK_EV_WRITE) && x[i].wcalls == 0)
				T_FAIL("op %d: watcher %d (fd %d) wants "
				    "WRITE: no write call", op, i,
				    x[i].io.fd);
		}
		T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), nact);
		checks++;
	}
	T_EQ(checks, 300);
	for (i = 0; i < NMODEL; i++)
		w_close(l, &x[i]);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	free(x);
	tk_loop_free(l);
}
