/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The io_uring backend's own cases, beyond test_loop.c (which it passes
 * as every backend does): watchers closed or stopped and freed with a
 * poll in flight (the file really released, no completion reaching the
 * freed memory, a reused fd number served by its new watcher only), a
 * completion queue far smaller than the burst, a loop created on one
 * thread and run on another (single issuer), the refusal path, the
 * default choice, and 20,000 open-watch-close cycles that leave no
 * descriptor behind.  Each test skips when io_uring is not compiled in or
 * the kernel refuses it.
 */
#include <sys/socket.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/loop.h"
#include "tenk/uring.h"
#include "../t.h"

struct uw {
	struct tk_io	 io;
	int		 peer;
	int		 calls;
	size_t		 got;
};

static void
uw_fn(struct tk_loop *l, struct tk_io *io)
{
	struct uw	*x = io->arg;
	char		 buf[256];
	ssize_t		 n;

	(void)l;
	x->calls++;
	for (;;) {
		n = read(io->fd, buf, sizeof(buf));
		if (n > 0) {
			x->got += n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			tk_io_block(io, TK_EV_READ);
		break;
	}
}

static void
uw_open(struct tk_loop *l, struct uw *x)
{
	int	sv[2];

	memset(x, 0, sizeof(*x));
	t_sockpair(sv);
	x->peer = sv[1];
	tk_io_init(&x->io, sv[0], uw_fn, x);
	T_EQ(tk_io_start(l, &x->io, TK_EV_READ), 0);
}

/* n watchers in one allocation, each started; the caller frees it. */
static struct uw *
uw_open_n(struct tk_loop *l, int n)
{
	struct uw	*x;
	int		 i;

	T_PTR(x = calloc(n, sizeof(*x)));
	for (i = 0; i < n; i++)
		uw_open(l, &x[i]);
	return x;
}

static void
uw_close(struct tk_loop *l, struct uw *x)
{
	T_EQ(tk_io_close(l, &x->io), 0);
	close(x->peer);
}

static void
put(int fd)
{
	T_EQ(write(fd, "u", 1), 1);
}

static void
passes(struct tk_loop *l, int n)
{
	while (n-- > 0)
		tk_loop_run(l, TK_RUN_NOWAIT);
}

TEST(uring_default_and_names)
{
	const char *const	*be;
	struct tk_loop		*l;
	int			 found = 0;

	T_EQ(tk_backend_probe("nosuch"), -1);
	T_EQ(errno, ENOENT);
	for (be = tk_backend_names(); *be != NULL; be++)
		if (strcmp(*be, "io_uring") == 0) {
			found = 1;
			/* Last, after the readiness backends. */
			T_PTR(be[-1]);
			T_OK(be[1] == NULL);
		}
	l = tk_loop_new(NULL, 0);
	T_PTR(l);
	T_OK(strcmp(tk_loop_backend(l), "io_uring") != 0);
	tk_loop_free(l);
	if (!found)
		T_SKIP("io_uring is not compiled in");
}

TEST(uring_refused)
{
	const char *const	*be;
	int			 found = 0;

	for (be = tk_backend_names(); *be != NULL; be++)
		found |= strcmp(*be, "io_uring") == 0;
	if (!found)
		T_SKIP("io_uring is not compiled in");
	T_SYS(setenv("TK_IO_URING_REFUSE", "1", 1));
	T_EQ(tk_backend_probe("io_uring"), -1);
	T_EQ(errno, ENOSYS);
	errno = 0;
	T_OK(tk_loop_new("io_uring", 0) == NULL);
	T_EQ(errno, ENOSYS);
}

/*
 * Close 64 watchers whose polls are armed and have a wake-up on its way,
 * and free them: each peer must see the close after the next pass (the
 * poll's reference to the file is dropped; IORING_OP_POLL_REMOVE would
 * have left the polls running), and nothing is called.
 */
#define NCLOSE	64

TEST(uring_close_in_flight)
{
	struct tk_loop	*l;
	struct uw	*x;
	ssize_t		 n;
	char		 c;
	int		 i, peer[NCLOSE];

	l = t_uring_loop(0);
	x = uw_open_n(l, NCLOSE);
	passes(l, 2);
	for (i = 0; i < NCLOSE; i++) {
		T_EQ(x[i].calls, 0);
		peer[i] = x[i].peer;
		put(peer[i]);
		T_EQ(tk_io_close(l, &x[i].io), 0);
	}
	free(x);
	passes(l, 2);
	for (i = 0; i < NCLOSE; i++) {
		/* ECONNRESET: the closed end had the byte unread. */
		if ((n = read(peer[i], &c, 1)) != 0 && errno != ECONNRESET)
			T_FAIL("peer %d: read %zd (%s): the file is still "
			    "open", i, n, strerror(errno));
		close(peer[i]);
	}
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	tk_loop_free(l);
}

/*
 * Stop a watcher with an event on its way and free it; the fd number,
 * closed, comes back for a new socket whose watcher alone is called.
 */
TEST(uring_stop_reuse)
{
	struct tk_loop	*l;
	struct uw	*x, y;
	int		 fd;

	l = t_uring_loop(0);
	T_PTR(x = malloc(sizeof(*x)));
	uw_open(l, x);
	passes(l, 1);
	put(x->peer);
	tk_io_stop(l, &x->io);
	fd = x->io.fd;
	close(x->io.fd);
	close(x->peer);
	free(x);
	uw_open(l, &y);
	T_EQ(y.io.fd, fd);
	passes(l, 2);
	T_EQ(y.calls, 0);
	put(y.peer);
	passes(l, 2);
	T_EQ(y.calls, 1);
	T_UEQ(y.got, 1);
	uw_close(l, &y);
	tk_loop_free(l);
}

/*
 * 300 watchers against a 16-entry completion queue (maxfds 8): every
 * arm and every byte must still reach its watcher, the overflow being
 * kept by the kernel or the ended multishot polls armed again.
 */
#define NBURST	300

TEST(uring_cq_overflow)
{
	struct tk_loop		*l;
	struct tk_loop_stats	 st;
	struct uw		*x;
	int			 i, round, done;

	l = t_uring_loop(8);
	x = uw_open_n(l, NBURST);
	passes(l, 4);
	for (round = 1; round <= 3; round++) {
		for (i = 0; i < NBURST; i++)
			put(x[i].peer);
		for (i = 0, done = 0; i < 1000 && done < NBURST; i++) {
			int k;

			passes(l, 1);
			for (k = 0, done = 0; k < NBURST; k++)
				done += x[k].got == (size_t)round;
		}
		for (i = 0; i < NBURST; i++)
			if (x[i].got != (size_t)round)
				T_FAIL("round %d: watcher %d got %zu bytes",
				    round, i, x[i].got);
	}
	tk_loop_stats(l, &st);
	printf("cq_overflow %llu, rearms %llu, sq_full %llu\n",
	    (unsigned long long)st.cq_overflow,
	    (unsigned long long)st.rearms, (unsigned long long)st.sq_full);
	T_GT(st.cq_overflow + st.rearms, 0);
	for (i = 0; i < NBURST; i++) {
		uw_close(l, &x[i]);
	}
	free(x);
	tk_loop_free(l);
}

/*
 * tenkd creates a worker's loop on the main thread and runs it on the
 * worker's: the ring, single issuer, must start on the running thread.
 */
static void *
run_once(void *arg)
{
	struct tk_loop	*l = arg;

	tk_loop_run(l, TK_RUN_ONCE);
	return NULL;
}

TEST(uring_other_thread)
{
	struct tk_loop	*l;
	struct uw	 x;
	pthread_t	 t;

	l = t_uring_loop(0);
	uw_open(l, &x);
	put(x.peer);
	T_EQ(pthread_create(&t, NULL, run_once, l), 0);
	T_EQ(pthread_join(t, NULL), 0);
	T_EQ(x.calls, 1);
	T_UEQ(x.got, 1);
	uw_close(l, &x);
	tk_loop_free(l);
}

/*
 * 20,000 cycles of open, watch, one pass, close, alternately with a
 * poll and with a recv in flight: every peer sees its close, and the
 * descriptors are back to where they were.
 */
#define NCYCLE	20000

static void
cyc_recv(struct tk_loop *l, struct tk_io *io, const void *data, ssize_t n)
{
	(void)l;
	(void)io;
	(void)data;
	(void)n;
}

TEST_T(uring_cycles, 120)
{
	struct tk_loop	*l;
	struct uw	 x;
	char		 c;
	ssize_t		 n;
	int		 i, base;

	l = t_uring_loop(0);
	passes(l, 1);
	base = t_nfds();
	for (i = 0; i < NCYCLE; i++) {
		if (i % 2 == 0 || !tk_loop_completion(l))
			uw_open(l, &x);
		else {
			uw_open(l, &x);
			tk_io_stop(l, &x.io);
			T_EQ(tk_io_recv_start(l, &x.io, cyc_recv, 0), 0);
		}
		passes(l, 1);
		T_EQ(tk_io_close(l, &x.io), 0);
		passes(l, 1);
		if ((n = read(x.peer, &c, 1)) != 0)
			T_FAIL("cycle %d: peer read %zd (%s)", i, n,
			    strerror(errno));
		close(x.peer);
	}
	T_EQ(t_nfds(), base);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	tk_loop_free(l);
}
