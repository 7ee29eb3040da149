/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The self-pipe signals of signal.h: SIGTERM, SIGHUP and SIGUSR1 reach
 * their callbacks on the loop's thread; a signal wakes a blocked wait; a
 * burst of 10,000 SIGUSR1 (from a thread, and from a child process)
 * followed by one SIGTERM neither deadlocks nor loses the SIGTERM;
 * errno survives the handler; bad numbers, SIGKILL and SIGSTOP are
 * refused; a second loop cannot take signals; unwatch restores SIG_DFL;
 * a child of fork() that forgets the loop leaves the parent's working.
 *
 * Each test runs in its own forked child, so each may own signals.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tenk/loop.h"
#include "tenk/signal.h"
#include "tenk/timer.h"
#include "../t.h"

#define BURST	10000

static int		 seen[NSIG];
static void		*seen_arg[NSIG];
static pthread_t	 seen_thr[NSIG];
static int		 stop_on = -1;

static void
sig_cb(struct tk_loop *l, int signo, void *arg)
{
	T_OK(signo > 0 && signo < NSIG);
	seen[signo]++;
	seen_arg[signo] = arg;
	seen_thr[signo] = pthread_self();
	if (signo == stop_on)
		tk_loop_stop(l);
}

static void
guard_fn(struct tk_loop *l, struct tk_timer *t)
{
	(void)l;
	(void)t;
	T_FAIL("guard timer fired: a signal did not come through");
}

static struct tk_loop *
newloop(struct tk_timer *guard)
{
	struct tk_loop	*l;

	l = tk_loop_new(t_backend, 0);
	T_PTR(l);
	tk_timer_init(guard, guard_fn, NULL);
	T_EQ(tk_timer_arm(l, guard, 30 * TK_SEC), 0);
	return l;
}

/* Run NOWAIT passes until seen[signo] > v. */
static void
until_seen(struct tk_loop *l, int signo, int v)
{
	int	i;

	for (i = 0; i < 1000 && seen[signo] <= v; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	if (seen[signo] <= v)
		T_FAIL("signal %d: no callback after 1000 passes", signo);
}

/* Each signal to its own callback, with its argument, on our thread. */
TEST_BE(signal_deliver)
{
	static const int	 sigs[] = { SIGTERM, SIGHUP, SIGUSR1 };
	struct tk_loop		*l;
	struct tk_timer		 guard;
	int			 i, j;

	l = newloop(&guard);
	for (i = 0; i < 3; i++)
		T_EQ(tk_signal_watch(l, sigs[i], sig_cb,
		    (void *)(intptr_t)(100 + i)), 0);
	for (i = 0; i < 3; i++) {
		T_EQ(raise(sigs[i]), 0);
		until_seen(l, sigs[i], 0);
		T_EQ(seen[sigs[i]], 1);
		T_EQ((intptr_t)seen_arg[sigs[i]], 100 + i);
		T_OK(pthread_equal(seen_thr[sigs[i]], pthread_self()));
		for (j = 0; j < 3; j++)
			if (j > i)
				T_EQ(seen[sigs[j]], 0);
	}
	/* kill(getpid()) too, and a second time: not a one-shot. */
	T_SYS(kill(getpid(), SIGHUP));
	until_seen(l, SIGHUP, 1);
	T_EQ(seen[SIGHUP], 2);
	T_EQ(raise(SIGUSR1), 0);
	until_seen(l, SIGUSR1, 1);
	T_EQ(seen[SIGUSR1], 2);
	T_EQ(seen[SIGTERM], 1);
	tk_timer_cancel(l, &guard);
	tk_loop_free(l);
}

/*
 * A thread with every signal blocked (tk_signal_block_all), so that what
 * it sends to the process reaches the loop's thread.
 */
struct sender {
	pthread_t	 tid;
	atomic_int	*running;
	int		 count;		/* SIGUSR1s, then SIGTERM */
	int		 hup;		/* one SIGHUP instead */
	int		 errs;
};

static void *
sender_main(void *arg)
{
	struct sender	*s = arg;
	int		 i;

	if (tk_signal_block_all() != 0)
		s->errs++;
	while (atomic_load(s->running) == 0)
		usleep(1000);
	usleep(50000);
	if (s->hup) {
		if (kill(getpid(), SIGHUP) == -1)
			s->errs++;
		return NULL;
	}
	for (i = 0; i < s->count; i++)
		if (kill(getpid(), SIGUSR1) == -1)
			s->errs++;
	if (kill(getpid(), SIGTERM) == -1)
		s->errs++;
	return NULL;
}

static atomic_int	 running;

static void
set_running(struct tk_loop *l, struct tk_timer *t)
{
	(void)l;
	(void)t;
	atomic_store(&running, 1);
}

/*
 * Run l until a callback stops it, while a sender thread, started once
 * the loop runs, sends one SIGHUP (hup) or count SIGUSR1 then SIGTERM.
 */
static void
sender_run(struct tk_loop *l, int hup, int count)
{
	struct tk_timer	 kick;
	struct sender	 s;

	memset(&s, 0, sizeof(s));
	s.running = &running;
	s.hup = hup;
	s.count = count;
	tk_timer_init(&kick, set_running, NULL);
	T_EQ(tk_timer_arm(l, &kick, 0), 0);
	T_EQ(pthread_create(&s.tid, NULL, sender_main, &s), 0);
	T_EQ(tk_loop_run(l, 0), 0);
	T_EQ(pthread_join(s.tid, NULL), 0);
	T_EQ(s.errs, 0);
}

/* A signal ends a blocking wait. */
TEST_BE(signal_wakes_wait)
{
	struct tk_loop	*l;
	struct tk_timer	 guard;

	l = newloop(&guard);
	T_EQ(tk_signal_watch(l, SIGHUP, sig_cb, NULL), 0);
	stop_on = SIGHUP;
	sender_run(l, 1, 0);
	T_EQ(seen[SIGHUP], 1);
	tk_timer_cancel(l, &guard);
	tk_loop_free(l);
}

static void
burst_check(struct tk_loop *l)
{
	int	i;

	/* Callbacks for signals read in the last pass may remain. */
	for (i = 0; i < 10; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	printf("SIGUSR1 callbacks: %d for %d signals\n", seen[SIGUSR1],
	    BURST);
	T_EQ(seen[SIGTERM], 1);
	T_GE(seen[SIGUSR1], 1);
	T_LE(seen[SIGUSR1], BURST);
}

/* 10,000 SIGUSR1 from a thread, then SIGTERM. */
TEST_BE(signal_burst_thread)
{
	struct tk_loop	*l;
	struct tk_timer	 guard;

	l = newloop(&guard);
	T_EQ(tk_signal_watch(l, SIGUSR1, sig_cb, NULL), 0);
	T_EQ(tk_signal_watch(l, SIGTERM, sig_cb, NULL), 0);
	stop_on = SIGTERM;
	sender_run(l, 0, BURST);
	burst_check(l);
	tk_timer_cancel(l, &guard);
	tk_loop_free(l);
}

/* The same burst from a child process to its parent. */
TEST_BE(signal_burst_fork)
{
	struct tk_loop	*l;
	struct tk_timer	 guard;
	pid_t		 pid, parent = getpid();
	int		 i, status, bad = 0;

	l = newloop(&guard);
	T_EQ(tk_signal_watch(l, SIGUSR1, sig_cb, NULL), 0);
	T_EQ(tk_signal_watch(l, SIGTERM, sig_cb, NULL), 0);
	stop_on = SIGTERM;
	switch (pid = fork()) {
	case -1:
		T_FAIL("fork: %s", strerror(errno));
	case 0:
		usleep(50000);
		for (i = 0; i < BURST; i++)
			if (kill(parent, SIGUSR1) == -1)
				bad++;
		if (kill(parent, SIGTERM) == -1)
			bad++;
		_exit(bad ? 1 : 0);
	}
	T_EQ(tk_loop_run(l, 0), 0);
	while (waitpid(pid, &status, 0) == -1)
		T_EQ(errno, EINTR);
	T_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	burst_check(l);
	tk_timer_cancel(l, &guard);
	tk_loop_free(l);
}

/*
 * errno across the handler: the main thread keeps errno at a marker
 * while another thread aims SIGUSR1 at it.  The loop does not run, so
 * a handler that writes one byte per signal fills the pipe and meets
 * EAGAIN; it must restore errno either way.
 */
struct aimer {
	pthread_t	 tid;
	pthread_t	 target;
	atomic_int	 stop;
	long		 sent;
};

static void *
aimer_main(void *arg)
{
	struct aimer	*a = arg;

	tk_signal_block_all();
	while (atomic_load(&a->stop) == 0 && a->sent < 200000) {
		if (pthread_kill(a->target, SIGUSR1) != 0)
			break;
		a->sent++;
	}
	return NULL;
}

TEST_BE(signal_errno_thread)
{
	struct tk_loop	*l;
	struct tk_timer	 guard;
	struct aimer	 a;
	struct timespec	 t0, t1;
	volatile int	*ep = &errno;
	long		 checks = 0;
	int		 k;

	l = newloop(&guard);
	T_EQ(tk_signal_watch(l, SIGUSR1, sig_cb, NULL), 0);
	memset(&a, 0, sizeof(a));
	a.target = pthread_self();
	T_EQ(pthread_create(&a.tid, NULL, aimer_main, &a), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		*ep = 4242;
		for (k = 0; k < 1000; k++, checks++)
			if (*ep != 4242)
				T_FAIL("errno changed to %d by the handler",
				    *ep);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (t1.tv_sec - t0.tv_sec >= 2)
			break;
	}
	atomic_store(&a.stop, 1);
	T_EQ(pthread_join(a.tid, NULL), 0);
	printf("%ld signals sent, %ld errno checks\n", a.sent, checks);
	until_seen(l, SIGUSR1, 0);
	T_GE(seen[SIGUSR1], 1);
	tk_timer_cancel(l, &guard);
	tk_loop_free(l);
}

/*
 * errno across the handler, deterministically: 100,000 raise() calls
 * with the loop not running.  raise() runs the handler before it
 * returns and leaves errno alone on success, so errno must still hold
 * the marker afterwards.  A handler that writes a byte per signal fills
 * the 64 KiB pipe and meets EAGAIN on the way.  Afterwards the loop
 * still delivers, and a later signal still wakes it.
 */
TEST_BE(signal_errno_raise)
{
	struct tk_loop	*l;
	struct tk_timer	 guard;
	int		 i, e;

	l = newloop(&guard);
	T_EQ(tk_signal_watch(l, SIGUSR1, sig_cb, NULL), 0);
	T_EQ(tk_signal_watch(l, SIGHUP, sig_cb, NULL), 0);
	for (i = 0; i < 100000; i++) {
		errno = 4242;
		if (raise(SIGUSR1) != 0)
			T_FAIL("raise: %s", strerror(errno));
		if ((e = errno) != 4242)
			T_FAIL("signal %d: errno changed to %d (%s) by the "
			    "handler", i, e, strerror(e));
	}
	until_seen(l, SIGUSR1, 0);
	T_GE(seen[SIGUSR1], 1);
	T_LE(seen[SIGUSR1], 100000);
	/* Drained: the next signal wakes a blocking run. */
	stop_on = SIGHUP;
	T_EQ(raise(SIGHUP), 0);
	T_EQ(tk_loop_run(l, 0), 0);
	T_EQ(seen[SIGHUP], 1);
	tk_timer_cancel(l, &guard);
	tk_loop_free(l);
}

TEST(signal_einval)
{
	struct tk_loop	*l;

	l = tk_loop_new(NULL, 0);
	T_PTR(l);
	errno = 0;
	T_EQ(tk_signal_watch(l, SIGKILL, sig_cb, NULL), -1);
	T_EQ(errno, EINVAL);
	errno = 0;
	T_EQ(tk_signal_watch(l, SIGSTOP, sig_cb, NULL), -1);
	T_EQ(errno, EINVAL);
	errno = 0;
	T_EQ(tk_signal_watch(l, 0, sig_cb, NULL), -1);
	T_EQ(errno, EINVAL);
	errno = 0;
	T_EQ(tk_signal_watch(l, -1, sig_cb, NULL), -1);
	T_EQ(errno, EINVAL);
	errno = 0;
	T_EQ(tk_signal_watch(l, NSIG + 10, sig_cb, NULL), -1);
	T_EQ(errno, EINVAL);
	/* Still usable for a good one. */
	T_EQ(tk_signal_watch(l, SIGUSR2, sig_cb, NULL), 0);
	tk_loop_free(l);
}

/* A second loop cannot own signals while the first does. */
TEST(signal_ebusy)
{
	struct tk_loop	*a, *b;

	a = tk_loop_new(NULL, 0);
	b = tk_loop_new(NULL, 0);
	T_PTR(a);
	T_PTR(b);
	T_EQ(tk_signal_watch(a, SIGUSR1, sig_cb, NULL), 0);
	errno = 0;
	T_EQ(tk_signal_watch(b, SIGUSR2, sig_cb, NULL), -1);
	T_EQ(errno, EBUSY);
	/* The owner can add more. */
	T_EQ(tk_signal_watch(a, SIGUSR2, sig_cb, NULL), 0);
	/* Freeing the owner hands signals back: b may take them now. */
	tk_loop_free(a);
	T_EQ(tk_signal_watch(b, SIGUSR2, sig_cb, NULL), 0);
	T_EQ(raise(SIGUSR2), 0);
	until_seen(b, SIGUSR2, 0);
	tk_loop_free(b);
}

/* Unwatch restores SIG_DFL and leaves the other signals working. */
TEST_BE(signal_unwatch)
{
	struct tk_loop		*l;
	struct tk_timer		 guard;
	struct sigaction	 sa;

	l = newloop(&guard);
	T_EQ(tk_signal_watch(l, SIGHUP, sig_cb, NULL), 0);
	T_EQ(tk_signal_watch(l, SIGUSR1, sig_cb, NULL), 0);
	T_SYS(sigaction(SIGHUP, NULL, &sa));
	T_OK(sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN);
	T_OK(sa.sa_flags & SA_RESTART);
	tk_signal_unwatch(l, SIGHUP);
	T_SYS(sigaction(SIGHUP, NULL, &sa));
	T_OK(sa.sa_handler == SIG_DFL);
	T_EQ(raise(SIGUSR1), 0);
	until_seen(l, SIGUSR1, 0);
	T_EQ(seen[SIGHUP], 0);
	/* Watching again works. */
	T_EQ(tk_signal_watch(l, SIGHUP, sig_cb, NULL), 0);
	T_EQ(raise(SIGHUP), 0);
	until_seen(l, SIGHUP, 0);
	tk_timer_cancel(l, &guard);
	tk_loop_free(l);
}

static int	forget_reads;

static void
forget_io(struct tk_loop *l, struct tk_io *io)
{
	char	c;

	(void)l;
	while (read(io->fd, &c, 1) == 1)
		forget_reads++;
	tk_io_block(io, TK_EV_READ);
}

static int	forget_posted;

static void
forget_msg(struct tk_loop *l, struct tk_msg *m)
{
	(void)l;
	(void)m;
	forget_posted++;
}

/*
 * The child's side of loop_forget_fork: it forgets the parent's loop,
 * closes the pipe, then takes SIGUSR2 on a loop of its own.  Exits 0
 * when that signal came through.
 */
static void
forget_child(struct tk_loop *l, const int *p)
{
	struct tk_loop	*c;
	int		 i;

	tk_loop_forget(l);
	close(p[0]);
	close(p[1]);
	if ((c = tk_loop_new(t_backend, 0)) == NULL ||
	    tk_signal_watch(c, SIGUSR2, sig_cb, NULL) == -1 ||
	    raise(SIGUSR2) != 0)
		_exit(1);
	for (i = 0; i < 1000 && seen[SIGUSR2] == 0; i++)
		tk_loop_run(c, TK_RUN_NOWAIT);
	tk_loop_free(c);
	_exit(seen[SIGUSR2] == 1 ? 0 : 2);
}

/*
 * A child of fork() forgets the loop (tk_loop_forget) and its parent's
 * signal watcher, fd watcher and wake-up still fire.  The child freeing
 * it instead (tk_loop_free) takes the self-pipe and the wake-up out of
 * the epoll instance the two processes share; io_uring's ring, single
 * issuer, refuses the child's cancellations, and poll and select have
 * nothing in the kernel, but all four must pass.
 */
TEST_BE(loop_forget_fork)
{
	struct tk_loop	*l;
	struct tk_timer	 guard;
	struct tk_io	 io;
	struct tk_msg	 m = { .fn = forget_msg };
	pid_t		 pid;
	int		 p[2], status, i;

	l = newloop(&guard);
	T_EQ(tk_signal_watch(l, SIGUSR1, sig_cb, NULL), 0);
	T_SYS(pipe2(p, O_NONBLOCK | O_CLOEXEC));
	tk_io_init(&io, p[0], forget_io, NULL);
	T_EQ(tk_io_start(l, &io, TK_EV_READ), 0);
	/* A pass first: io_uring arms its requests in its first wait. */
	tk_loop_run(l, TK_RUN_NOWAIT);
	switch (pid = fork()) {
	case -1:
		T_FAIL("fork: %s", strerror(errno));
	case 0:
		forget_child(l, p);
	}
	while (waitpid(pid, &status, 0) == -1)
		T_EQ(errno, EINTR);
	T_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	T_SYS(kill(getpid(), SIGUSR1));
	until_seen(l, SIGUSR1, 0);
	T_EQ(write(p[1], "x", 1), 1);
	for (i = 0; i < 1000 && forget_reads == 0; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(forget_reads, 1);
	T_EQ(tk_loop_post(l, &m), 0);
	for (i = 0; i < 1000 && forget_posted == 0; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(forget_posted, 1);
	tk_io_stop(l, &io);
	close(p[0]);
	close(p[1]);
	tk_timer_cancel(l, &guard);
	tk_loop_free(l);
}

/* tk_signal_block_all blocks everything that can be blocked. */
TEST(signal_block_all)
{
	sigset_t	set;

	T_EQ(tk_signal_block_all(), 0);
	T_EQ(pthread_sigmask(SIG_BLOCK, NULL, &set), 0);
	T_EQ(sigismember(&set, SIGTERM), 1);
	T_EQ(sigismember(&set, SIGHUP), 1);
	T_EQ(sigismember(&set, SIGUSR1), 1);
	T_EQ(sigismember(&set, SIGINT), 1);
}
