/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The loop: iteration, run queue, dispatch and the cached clock.  Timers
 * live in timer.c, wake-ups in wake.c, signals in signal.c and each kernel
 * interface in its backend file.
 *
 * A watcher carries two sets of bits kept in user space:
 *
 *	want	directions the handler wants (tk_io_want)
 *	ready	directions the kernel said were ready and that have not met
 *		EAGAIN since (backend events set them, tk_io_block clears)
 *
 * It is runnable when (ready & want) != 0.  Each iteration waits on the
 * backend (without blocking if anything is runnable), ORs each event into
 * its watcher's ready bits and queues the watchers that became runnable,
 * fires expired timers, then runs the queue once: every watcher queued at
 * the start of the pass gets one call; one that is still runnable after
 * its call (its budget ran out before EAGAIN) goes to the back and waits
 * for the next pass, so one busy peer cannot starve the others under
 * edge triggering.
 *
 *	event	 backend	 want	 what the loop does
 *	-------	 -------	 ----	 ------------------------------------
 *	any	 edge (epoll)	 any	 ready |= ev; queue if runnable
 *	any	 level		 any	 ready |= ev; queue if runnable
 *	-	 edge		 flips	 no system call; queue if runnable
 *	-	 level		 flips	 mod() with the new set
 *
 * Edge backends register both directions once; level backends are told
 * the want set, and an empty want set removes the fd from the kernel's
 * view entirely (so a hung-up fd that nobody wants cannot make poll spin).
 *
 * A completion watcher (tenk/uring.h) runs its handler the same way: the
 * backend's dispatch() hands each completion's data to its callback,
 * which only takes it, then marks the watcher ready (READ for a recv,
 * WRITE for a send) and queues it, so its handler runs in the pass that
 * follows, once however many completions came, within the pass's
 * budget like any other.  Its want is READ|WRITE and the pass clears
 * its ready bits as it calls it: there is no EAGAIN to wait for, the
 * next completion queues it again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/clock.h"
#include "tenk/loop.h"
#include "tenk/timer.h"
#include "backend.h"

#define EVENTS_MIN	256
#define EVENTS_MAX	8192

struct tk_loop *
tk_loop_new(const char *name, int maxfds)
{
	const struct tk_backend *const	*bp;
	const struct tk_backend		*be = NULL;
	struct tk_loop			*l;
	int				 saved;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	TAILQ_INIT(&l->runq);
	TAILQ_INIT(&l->expired);
	l->maxfds = maxfds > 0 ? maxfds : 1024;
	l->wfd = l->wfd_w = -1;
	l->sio.fd = -1;
	STAILQ_INIT(&l->mq);
	l->now = tk_clock_mono();
	l->nevents = EVENTS_MIN;
	if ((l->events = calloc(l->nevents, sizeof(*l->events))) == NULL)
		goto fail;
	if (pthread_mutex_init(&l->mqlock, NULL) != 0) {
		errno = ENOMEM;
		goto fail;
	}

	if (name != NULL) {
		if ((be = backend_find(name)) == NULL) {
			errno = ENOENT;
			goto fail_mutex;
		}
		l->ops = be;
		if (be->init(l, l->maxfds) == -1)
			goto fail_mutex;
	} else {
		/* The first backend whose init succeeds, best first. */
		errno = ENOENT;
		for (bp = backend_all(); *bp != NULL; bp++) {
			if ((*bp)->flags & TK_BE_EXPLICIT)
				continue;
			l->ops = *bp;
			if ((*bp)->init(l, l->maxfds) == 0)
				break;
		}
		if (*bp == NULL)
			goto fail_mutex;
	}
	if (wake_init(l) == -1)
		goto fail_backend;
	return l;

 fail_backend:
	saved = errno;
	l->ops->free(l);
	errno = saved;
 fail_mutex:
	saved = errno;
	pthread_mutex_destroy(&l->mqlock);
	errno = saved;
 fail:
	saved = errno;
	free(l->events);
	free(l);
	errno = saved;
	return NULL;
}

/*
 * Free the loop; with forget, unregister nothing from the kernel
 * (tk_loop_forget), and leave the mutex alone, which a thread of the
 * parent may have held at the fork.
 */
static void
loop_release(struct tk_loop *l, int forget)
{
	signal_loop_free(l, forget);
	wake_free(l, forget);
	timer_free_all(l);
	l->ops->free(l);
	if (!forget)
		pthread_mutex_destroy(&l->mqlock);
	free(l->events);
	free(l);
}

void
tk_loop_free(struct tk_loop *l)
{
	if (l != NULL)
		loop_release(l, 0);
}

/*
 * What each backend's free() does is the process's own: epoll's closes
 * its descriptor of the instance, io_uring's unmaps the rings and closes
 * the ring's descriptor (io_uring_queue_exit; the ring fd it registered
 * was the parent's task's, not inherited), poll's and select's free
 * memory.  What would reach the shared kernel objects are the internal
 * watchers' stops (EPOLL_CTL_DEL, a cancellation submitted on the
 * parent's ring), which forget skips.
 */
void
tk_loop_forget(struct tk_loop *l)
{
	if (l != NULL)
		loop_release(l, 1);
}

uint64_t
tk_loop_now(struct tk_loop *l)
{
	return l->now;
}

uint64_t
tk_loop_update_now(struct tk_loop *l)
{
	return l->now = tk_clock_mono();
}

uint64_t
tk_loop_iterations(struct tk_loop *l)
{
	return l->iterations;
}

const char *
tk_loop_backend(struct tk_loop *l)
{
	return l->ops->name;
}

void
tk_loop_stats(struct tk_loop *l, struct tk_loop_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (l->ops->stats != NULL)
		l->ops->stats(l, st);
}

void
tk_loop_stop(struct tk_loop *l)
{
	atomic_store(&l->stopping, 1);
	tk_loop_wake(l);
}

static inline void
enqueue(struct tk_loop *l, struct tk_io *io)
{
	io->queued = 1;
	TAILQ_INSERT_TAIL(&l->runq, io, rq);
	l->nrunq++;
}

static inline int
runnable(const struct tk_io *io)
{
	return (io->ready & io->want) != 0;
}

void
tk_io_init(struct tk_io *io, int fd, tk_io_fn *fn, void *arg)
{
	memset(io, 0, sizeof(*io));
	io->fd = fd;
	io->fn = fn;
	io->arg = arg;
}

int
loop_io_start_internal(struct tk_loop *l, struct tk_io *io, unsigned int want)
{
	unsigned int	reg;

	if (io->active) {
		errno = EEXIST;
		return -1;
	}
	want &= TK_EV_READ | TK_EV_WRITE;
	reg = (l->ops->flags & TK_BE_EDGE) ? TK_EV_READ | TK_EV_WRITE : want;
	if (l->ops->add(l, io->fd, reg, io) == -1)
		return -1;
	io->want = want;
	io->regd = reg;
	io->ready = 0;
	io->active = 1;
	io->queued = 0;
	return 0;
}

int
tk_io_start(struct tk_loop *l, struct tk_io *io, unsigned int want)
{
	if (loop_io_start_internal(l, io, want) == -1)
		return -1;
	l->nio++;
	return 0;
}

int
tk_io_want(struct tk_loop *l, struct tk_io *io, unsigned int want)
{
	want &= TK_EV_READ | TK_EV_WRITE;
	if (!io->active) {
		errno = EINVAL;
		return -1;
	}
	if ((l->ops->flags & TK_BE_EDGE) == 0 && want != io->regd) {
		if (l->ops->mod(l, io->fd, want, io) == -1)
			return -1;
		io->regd = want;
	}
	io->want = want;
	if (runnable(io) && !io->queued)
		enqueue(l, io);
	return 0;
}

void
tk_io_block(struct tk_io *io, unsigned int ev)
{
	io->ready &= ~ev;
}

static void
io_forget(struct tk_loop *l, struct tk_io *io)
{
	if (io->queued) {
		TAILQ_REMOVE(&l->runq, io, rq);
		io->queued = 0;
		l->nrunq--;
	}
	if (l->cur == io)
		l->cur = NULL;
	io->active = 0;
	io->ready = 0;
}

/*
 * io, not a readiness watcher, is ready for ev (a completion came, or
 * tk_io_wake): queue its handler.  For the backend's dispatch().
 */
void
loop_io_ready(struct tk_loop *l, struct tk_io *io, unsigned int ev)
{
	io->want = TK_EV_READ | TK_EV_WRITE;
	io->ready |= ev;
	if (!io->queued && io->fn != NULL)
		enqueue(l, io);
}

void
loop_io_stop_internal(struct tk_loop *l, struct tk_io *io)
{
	if (!io->active)
		return;
	(void)l->ops->del(l, io->fd);
	io_forget(l, io);
}

/*
 * End a completion watcher (tenk/uring.h): cancel what is in flight,
 * and take it off the run queue.
 */
static void
io_cq_stop(struct tk_loop *l, struct tk_io *io)
{
	l->ops->cq_stop(l, io);
	io->cq = 0;
	l->nio--;
	io_forget(l, io);
}

void
tk_io_stop(struct tk_loop *l, struct tk_io *io)
{
	if (io->cq)
		io_cq_stop(l, io);
	if (!io->active) {
		/* Woken (tk_io_wake) before its first request, maybe. */
		io_forget(l, io);
		return;
	}
	loop_io_stop_internal(l, io);
	l->nio--;
}

int
tk_io_close(struct tk_loop *l, struct tk_io *io)
{
	int	fd = io->fd;

	if (io->cq)
		io_cq_stop(l, io);
	if (io->active) {
		/*
		 * epoll forgets a file when its last descriptor closes, so
		 * the EPOLL_CTL_DEL would be a wasted system call; an
		 * io_uring poll holds the file open until it is removed.
		 */
		if ((l->ops->flags & TK_BE_EDGE) == 0 ||
		    (l->ops->flags & TK_BE_DELCLOSE))
			(void)l->ops->del(l, fd);
		io_forget(l, io);
		l->nio--;
	} else
		io_forget(l, io);
	io->fd = -1;
	return close(fd);
}

/*
 * One pass over the watchers queued when it starts.  A handler may stop
 * (and free) itself or any other watcher: stopping unlinks it from the
 * queue, and l->cur tells whether the one just called is still alive.
 * If a watcher queued at the start is stopped during the pass, one
 * queued during it runs early instead; that is harmless.  A watcher
 * that is not a readiness one (a completion watcher) has its ready bits
 * cleared as it is called: the completions so far are all its handler
 * gets to see.
 */
static void
run_queue(struct tk_loop *l)
{
	struct tk_io	*io;
	int		 n = l->nrunq;

	while (n-- > 0 && (io = TAILQ_FIRST(&l->runq)) != NULL) {
		TAILQ_REMOVE(&l->runq, io, rq);
		io->queued = 0;
		l->nrunq--;
		if (!runnable(io))
			continue;
		if (!io->active)
			io->ready = 0;
		l->cur = io;
		io->fn(l, io);
		if (l->cur == io && runnable(io) && !io->queued)
			enqueue(l, io);
		l->cur = NULL;
	}
}

/* One iteration: wait, turn events into ready bits, timers, run queue. */
static void
loop_once(struct tk_loop *l, int nowait)
{
	struct tk_io	*io;
	int64_t		 timeout;
	int		 n, i;

	if (nowait || !TAILQ_EMPTY(&l->runq) || atomic_load(&l->stopping))
		timeout = 0;
	else {
		/*
		 * Handlers and timers since the last wait may have taken a
		 * while: measure from the real time, or every timer behind a
		 * long pass would be late by the length of that pass.
		 */
		l->now = tk_clock_mono();
		timeout = timer_next_timeout(l);
	}

	n = l->ops->wait(l, l->events, l->nevents, timeout);
	l->now = tk_clock_mono();
	for (i = 0; i < n; i++) {
		io = l->events[i].udata;
		/*
		 * A stopped watcher's late event: epoll keeps a closed fd's
		 * registration while another descriptor holds its file (a
		 * dup, a forked process's copy), so tk_io_close() without
		 * del leaves one behind.  The watcher is not ours to call.
		 */
		if (!io->active)
			continue;
		io->ready |= l->events[i].ev;
		if (!io->queued && runnable(io))
			enqueue(l, io);
	}
	/* A wait that filled the events array: double it, to EVENTS_MAX. */
	if (n == l->nevents)
		(void)array_grow(&l->events, &l->nevents, EVENTS_MIN,
		    l->nevents, EVENTS_MAX, sizeof(*l->events));
	if (l->ops->dispatch != NULL)
		l->ops->dispatch(l);

	timer_run_expired(l);
	run_queue(l);
	l->iterations++;
}

int
tk_loop_run(struct tk_loop *l, int flags)
{
	for (;;) {
		loop_once(l, (flags & TK_RUN_NOWAIT) != 0);
		if (atomic_load(&l->stopping)) {
			atomic_store(&l->stopping, 0);
			return 0;
		}
		if (flags & (TK_RUN_ONCE | TK_RUN_NOWAIT))
			break;
	}
	return l->nio + (int)l->nheap;
}
