/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * When a worker accepts: in bounded batches, never past --max-conns,
 * never in a busy loop when the process is out of file descriptors or
 * near its memory budget, and not at all once it drains.  conn.c, pin.c
 * and mem.c tell it when a connection is gone or the memory budget has
 * room again; it calls nothing of worker.c or of the protocols.
 *
 * --max-conns is one count for the whole process (srv.nconns), taken
 * with a compare-and-swap before accept4, so it is never exceeded.  A
 * worker that finds the cap reached stops polling its listeners and
 * raises srv.ncapped; whoever closes a connection while ncapped is set
 * posts a resume to the capped workers.  Connections that arrive
 * meanwhile wait in the kernel's backlog: none is accepted and dropped.
 * The worker re-reads the count after raising ncapped, and closers read
 * ncapped after lowering the count (both sequentially consistent), so a
 * close that races with the pause is seen by one side or the other.
 *
 * EMFILE/ENFILE (and ENOBUFS/ENOMEM) from accept4 pause this worker's
 * listeners for a back-off that doubles from 10 ms to 1 s; a close in
 * this thread resumes at once, and a successful accept resets it.  The
 * waiting connections stay in the backlog, so they are served as soon
 * as descriptors free up.
 *
 * Near the memory budget (mem.c) a worker stops polling its listeners
 * the same way, until mem.c's tick sees the episode end; a listener
 * woken meanwhile by another resume just pauses again.
 * XXX A reserved spare descriptor (accept-and-close) would tell those
 * clients no at once; we prefer that they wait and then get served.
 *
 * On io_uring's completion data path (w->cq) each listener accepts
 * through one multishot accept (tenk/uring.h) instead of readiness and
 * accept4.  The kernel then hands over all the backlog holds whenever
 * it runs the request, so no unit can be taken before: each connection
 * takes its unit as it arrives, and at the cap (or the memory budget,
 * or EMFILE) the accepts are cancelled, as readiness stops polling.
 * What the kernel took before it saw the cancel is parked: kept open
 * and unserved, oldest first, until a unit frees up, just as it would
 * have waited in the backlog.  Closing those instead (the simpler way)
 * would drop clients that the kernel handed over and that readiness
 * makes wait; parking costs a descriptor each.  The accept batch holds
 * too: at most ACCEPT_BATCH connections a listener (counted for the
 * worker's listeners together) are set up in one loop iteration and the
 * rest are parked for the next ones (park_timer), so that a burst of
 * connections does not hold up the completions of those already served.
 * While any connection is parked the accepts stay cancelled, so that
 * the backlog holds the rest, as with readiness, and clients that come
 * faster than the turns serve them wait there instead of piling up
 * here: what waits parked is at most what the kernel took in one go,
 * a backlog's worth a listener.  The ring grows for it; a connection
 * that finds no memory is closed and counted (accept-dropped).
 *
 * Errors end a multishot accept: EMFILE and the rest pause as above;
 * EINVAL, a kernel that refuses multishot accept (before Linux 5.19),
 * puts that listener back on readiness and accept4.  A drain cancels
 * the accepts, serves what they still bring and closes each listener
 * when its accept has ended.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "tenk/log.h"
#include "tenk/uring.h"
#include "tenk/xmalloc.h"
#include "../tenkd.h"

#define PAUSE_MIN	(10 * TK_MSEC)
#define PAUSE_MAX	(1000 * TK_MSEC)

static int	 worker_reserve(void);
static void	 worker_accept(struct tk_loop *, struct tk_io *);
static void	 worker_accepted(struct tk_loop *, struct tk_io *, int);
static void	 listener_watch(struct worker *, struct listener *);
static void	 listener_shut(struct worker *, struct listener *);
static void	 listener_close(struct worker *, struct listener *);
static void	 listeners_want(struct worker *, unsigned int);
static int	 admit(struct worker *);
static void	 serve(struct worker *, int);
static void	 park(struct worker *, int);
static int	 park_grow(struct worker *);
static void	 park_soon(struct worker *);
static void	 park_end(struct tk_loop *, struct tk_timer *);
static void	 park_close_all(struct worker *);
static void	 accept_failed(struct worker *, struct listener *, int);
static void	 pause_accept(struct worker *, const char *);
static void	 pause_end(struct tk_loop *, struct tk_timer *);
static int	 mem_pause(struct worker *);
static void	 cap(struct worker *);
static void	 uncap(struct worker *);
static void	 resume_capped(struct worker *);
static void	 check_done(struct worker *);
static void	 msg_drain(struct tk_loop *, struct tk_msg *);
static void	 msg_force(struct tk_loop *, struct tk_msg *);
static void	 msg_resume(struct tk_loop *, struct tk_msg *);

/*
 * Set up w's accepting (worker_init, main thread): its timers, the
 * messages that drain it, force it and resume it at the cap, and its
 * listeners on the already bound fds lfds[0..nlisten-1], watched from
 * now on.  Dies on failure (start-up).
 */
void
accept_init(struct worker *w, const int *lfds)
{
	int	i;

	tk_timer_init(&w->pause_timer, pause_end, w);
	tk_timer_init(&w->park_timer, park_end, w);
	if (w->cq) {
		w->park_cap = PARK_MIN;
		w->park = xcalloc(w->park_cap, sizeof(*w->park));
	}
	atomic_init(&w->resume_posted, 0);
	w->m_drain.fn = msg_drain;
	w->m_force.fn = msg_force;
	w->m_resume.fn = msg_resume;
	w->m_drain.arg = w->m_force.arg = w->m_resume.arg = w;

	w->nls = srv.nlisten;
	for (i = 0; i < w->nls; i++) {
		w->ls[i].w = w;
		w->ls[i].idx = i;
		w->ls[i].batch = ACCEPT_BATCH;
		tk_io_init(&w->ls[i].io, lfds[i], worker_accept, &w->ls[i]);
		listener_watch(w, &w->ls[i]);
	}
}

/*
 * Close what w's accepting still holds as its loop stops, on w's own
 * thread (worker_close): the listeners and the parked connections.
 */
void
accept_close(struct worker *w)
{
	int	i;

	for (i = 0; i < w->nls; i++)
		if (w->ls[i].io.fd != -1)
			(void)tk_io_close(w->l, &w->ls[i].io);
	park_close_all(w);
}

/* Free the rest after w's thread has been joined.  Main thread. */
void
accept_free(struct worker *w)
{
	free(w->park);
	tk_timer_cancel(w->l, &w->pause_timer);
	tk_timer_cancel(w->l, &w->park_timer);
}

/*
 * Start ls accepting: by multishot accept on completions, else by
 * readiness.  Start-up.
 */
static void
listener_watch(struct worker *w, struct listener *ls)
{
	if (w->cq) {
		if (tk_io_accept_start(w->l, &ls->io, worker_accepted) == -1)
			fatal("thread %d: multishot accept on fd %d", w->id,
			    ls->io.fd);
		ls->ms = 1;
	} else if (tk_io_start(w->l, &ls->io, TK_EV_READ) == -1)
		fatal("thread %d: watching listener fd %d", w->id, ls->io.fd);
}

/*
 * Take one unit of --max-conns, or return 0 at the cap.  With no cap
 * the count is still kept, for the statistics.
 */
static int
worker_reserve(void)
{
	unsigned long long	n;

	if (srv.max_conns == 0) {
		atomic_fetch_add(&srv.nconns, 1);
		return 1;
	}
	n = atomic_load(&srv.nconns);
	do {
		if (n >= srv.max_conns)
			return 0;
	} while (!atomic_compare_exchange_weak(&srv.nconns, &n, n + 1));
	return 1;
}

/*
 * A unit for the second socket of a session (the proxy's upstream),
 * taken after accept4 gave the first one.  Threads racing for the last
 * units can leave an accepted client with no unit for its upstream;
 * rather than drop a client that the kernel handed over, this takes it
 * anyway: the count passes --max-conns by at most threads - 1
 * (set_limits() keeps more slack than that under RLIMIT_NOFILE), and
 * accepting stops until it is back under.  XXX Taking both units before
 * accept4 would need this file to know the protocol's socket count.
 * Given back through worker_conn_gone().
 */
void
worker_reserve_more(void)
{
	if (!worker_reserve())
		atomic_fetch_add(&srv.nconns, 1);
}

/*
 * A connection (or a reservation that found no connection) is gone:
 * give its unit back, wake capped workers, resume after EMFILE, and
 * tell main when a draining worker has nothing left.  Worker thread.
 */
void
worker_conn_gone(struct worker *w)
{
	atomic_fetch_sub(&srv.nconns, 1);
	if (atomic_load(&srv.ncapped) > 0)
		resume_capped(w);
	if (w->npark > 0)
		park_soon(w);
	if (w->emfile && !w->draining) {
		/* A descriptor was just freed: try again now. */
		tk_timer_cancel(w->l, &w->pause_timer);
		w->emfile = 0;
		if (!w->capped)
			listeners_want(w, TK_EV_READ);
	}
	check_done(w);
}

/*
 * Accept until the backlog is empty, the batch is spent, the cap is
 * reached or descriptors run out.  A spent batch leaves the listener
 * runnable, so it goes to the back of the run queue.
 */
static void
worker_accept(struct tk_loop *l, struct tk_io *io)
{
	struct listener		*ls = io->arg;
	struct worker		*w = ls->w;
	struct sockaddr_storage	 ss;
	struct sockaddr		*sa = (struct sockaddr *)&ss;
	socklen_t		 salen;
	uint64_t		 skipped;
	int			 fd, n;

	(void)l;
	if (atomic_load_explicit(&srv.mem_tight, memory_order_relaxed) &&
	    mem_pause(w))
		return;
	for (n = 0; n < (int)ls->batch; n++) {
		if (!worker_reserve()) {
			cap(w);
			return;
		}
		salen = sizeof(ss);
		fd = accept4(io->fd, sa, &salen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			worker_conn_gone(w);
			switch (errno) {
			case EINTR:
			case ECONNABORTED:
			case EPROTO:
			case EPERM:
				continue;
			case EAGAIN:
#if EAGAIN != EWOULDBLOCK
			case EWOULDBLOCK:
#endif
				ls->batch = ACCEPT_BATCH;
				tk_io_block(io, TK_EV_READ);
				return;
			case EMFILE:
			case ENFILE:
			case ENOBUFS:
			case ENOMEM:
				pause_accept(w, "accept4");
				return;
			default:
				if (worker_warn_ok(w, WARN_ACCEPT, &skipped))
					log_warn("thread %d: accept4 (%llu "
					    "similar suppressed)", w->id,
					    (unsigned long long)skipped);
				/* Not a busy loop: wait for the next event. */
				tk_io_block(io, TK_EV_READ);
				return;
			}
		}
		w->backoff = 0;
		(void)conn_new(w, fd, sa, salen);
	}
	/*
	 * The backlog held a whole batch: take twice as many at the next
	 * turn, up to ACCEPT_BATCH_MAX, until it runs dry.  A turn comes
	 * once a pass over the run queue, and with thousands of busy
	 * connections on a starved CPU a pass takes 100 ms and more: 64 a
	 * turn then fell behind 1,000 connects a second, and clients waited
	 * unserved in the backlog for seconds (integ/proxy_10k at load 7).
	 * nginx's multi_accept and HAProxy's tune.maxaccept -1 take all.
	 */
	if (ls->batch < ACCEPT_BATCH_MAX)
		ls->batch *= 2;
}

/*
 * The multishot accept's callback (tenk/uring.h): a connection, or the
 * end of the accept.  See the top comment.
 */
static void
worker_accepted(struct tk_loop *l, struct tk_io *lio, int fd)
{
	struct listener	*ls = lio->arg;
	struct worker	*w = ls->w;

	(void)l;
	if (fd >= 0) {
		w->backoff = 0;
		/* Behind the parked ones, or while accepting pauses. */
		if (w->npark > 0 || !admit(w))
			park(w, fd);
		else
			serve(w, fd);
	} else if (fd == -ECANCELED) {
		/* Stopped, and nothing more comes: a drain closes it now. */
		if (w->draining)
			listener_close(w, ls);
	} else
		accept_failed(w, ls, -fd);
}

/*
 * Whether one more connection may be set up now: accepting is not
 * paused, this iteration's turn has room, and a --max-conns unit is
 * taken (else the cap pauses accepting), as worker_accept checks them.
 */
static int
admit(struct worker *w)
{
	uint64_t	it = tk_loop_iterations(w->l);

	if (w->capped || w->mempaused)
		return 0;
	if (atomic_load_explicit(&srv.mem_tight, memory_order_relaxed) &&
	    mem_pause(w))
		return 0;
	if (w->turn_iter != it) {
		w->turn_iter = it;
		w->turn = 0;
	}
	if (w->turn >= (unsigned int)(ACCEPT_BATCH * w->nls))
		return 0;
	if (!worker_reserve()) {
		cap(w);
		return 0;
	}
	return 1;
}

/*
 * Set up the connection on fd, whose unit admit() took.  A multishot
 * accept brings no peer address: it is read only for what uses it,
 * the access log and the protocol (proto->peer).  Failing (the client
 * already reset), the connection goes on without; its recv will tell.
 */
static void
serve(struct worker *w, int fd)
{
	struct sockaddr_storage	 ss;
	struct sockaddr		*sa = (struct sockaddr *)&ss;
	socklen_t		 salen = sizeof(ss);

	w->turn++;
	if ((srv.access_fd == -1 && (w->proto->peer == NULL ||
	    !w->proto->peer())) || getpeername(fd, sa, &salen) == -1) {
		sa = NULL;
		salen = 0;
	}
	(void)conn_new(w, fd, sa, salen);
}

/*
 * Keep fd, accepted, until it may be served, and stop accepting until
 * then; see the top comment.
 */
static void
park(struct worker *w, int fd)
{
	if (w->npark == w->park_cap && park_grow(w) == -1) {
		close(fd);
		w->st.accept_dropped++;
		conn_warn_nomem(w);
		return;
	}
	w->park[(w->park_head + w->npark++) % w->park_cap] = fd;
	if (w->npark == 1)
		listeners_want(w, 0);
	park_soon(w);
}

/* Double the ring of parked connections, its oldest first.  -1: ENOMEM. */
static int
park_grow(struct worker *w)
{
	unsigned int	 n = w->park_cap * 2, i;
	int		*p;

	if ((p = reallocarray(NULL, n, sizeof(*p))) == NULL)
		return -1;
	for (i = 0; i < w->npark; i++)
		p[i] = w->park[(w->park_head + i) % w->park_cap];
	free(w->park);
	w->park = p;
	w->park_cap = n;
	w->park_head = 0;
	return 0;
}

/*
 * Serve the parked connections at the next turn, unless a pause holds
 * them (EMFILE does not: they hold their descriptors already); uncap()
 * and worker_mem_resume() call here when it ends.  Should the timer not
 * arm (no memory to grow the heap, so many timers are armed, so many
 * connections are open), the next close calls here again.
 */
static void
park_soon(struct worker *w)
{
	if (w->npark > 0 && !w->capped && !w->mempaused &&
	    !tk_timer_pending(&w->park_timer))
		(void)tk_timer_arm(w->l, &w->park_timer, 0);
}

/*
 * The next turn: serve parked connections, oldest first; all served,
 * accept again unless a pause holds.
 */
static void
park_end(struct tk_loop *l, struct tk_timer *t)
{
	struct worker	*w = t->arg;
	int		 fd;

	(void)l;
	while (w->npark > 0 && admit(w)) {
		fd = w->park[w->park_head];
		w->park_head = (w->park_head + 1) % w->park_cap;
		w->npark--;
		serve(w, fd);
	}
	if (w->npark > 0)
		park_soon(w);
	else if (!w->draining && !w->capped && !w->emfile && !w->mempaused)
		listeners_want(w, TK_EV_READ);
	check_done(w);
}

/* Close the parked connections, never served: counted as dropped. */
static void
park_close_all(struct worker *w)
{
	for (; w->npark > 0; w->npark--) {
		close(w->park[w->park_head]);
		w->park_head = (w->park_head + 1) % w->park_cap;
		w->st.accept_dropped++;
	}
}

/*
 * The multishot accept of ls ended on error err.  A kernel that refuses
 * it (EINVAL, before Linux 5.19) gets readiness and accept4 for ls from
 * now on.  Anything else pauses accepting as EMFILE does: the accept is
 * over, and arming it again at once could be a busy loop.
 */
static void
accept_failed(struct worker *w, struct listener *ls, int err)
{
	unsigned int	want;

	if (err != EINVAL) {
		errno = err;
		pause_accept(w, "multishot accept");
		return;
	}
	log_debug("%s: thread %d: fd %d: no multishot accept here, accept4 "
	    "on readiness instead", __func__, w->id, ls->io.fd);
	tk_io_stop(w->l, &ls->io);
	ls->ms = 0;
	want = w->capped || w->emfile || w->mempaused ? 0 : TK_EV_READ;
	if (tk_io_start(w->l, &ls->io, want) == -1)
		log_warn("thread %d: listener fd %d", w->id, ls->io.fd);
}

/*
 * Close ls, no longer accepting.  Unwatched first: the master and a
 * new generation hold the same socket, and on epoll a close alone
 * would leave it registered here, waking this draining worker for
 * every client that comes to the others (tk_io_close).
 */
static void
listener_shut(struct worker *w, struct listener *ls)
{
	tk_io_stop(w->l, &ls->io);
	close(ls->io.fd);
	ls->io.fd = -1;
}

/* listener_shut, at the end of its accept; the last one may end a drain. */
static void
listener_close(struct worker *w, struct listener *ls)
{
	listener_shut(w, ls);
	check_done(w);
}

/*
 * Start (want TK_EV_READ) or pause (0) accepting on every listener
 * still open: readiness interest, or the multishot accept, which
 * starts only once no connection is parked (park_end starts it then).
 */
static void
listeners_want(struct worker *w, unsigned int want)
{
	struct listener	*ls;
	int		 i, rv;

	for (i = 0; i < w->nls; i++) {
		ls = &w->ls[i];
		if (ls->io.fd == -1)
			continue;
		rv = 0;
		if (!ls->ms)
			rv = tk_io_want(w->l, &ls->io, want);
		else if (want != 0 && w->npark == 0)
			rv = tk_io_accept_start(w->l, &ls->io,
			    worker_accepted);
		else if (want == 0)
			(void)tk_io_accept_stop(w->l, &ls->io);
		if (rv == -1)
			log_warn("thread %d: listener fd %d", w->id,
			    ls->io.fd);
	}
}

/* Pause accepting after what (errno) failed; see the top comment. */
static void
pause_accept(struct worker *w, const char *what)
{
	uint64_t	skipped;

	w->backoff = w->backoff == 0 ? PAUSE_MIN : w->backoff * 2;
	if (w->backoff > PAUSE_MAX)
		w->backoff = PAUSE_MAX;
	if (worker_warn_ok(w, WARN_EMFILE, &skipped))
		log_warn("thread %d: %s: pausing accepts for %llu ms "
		    "with %llu connection%s open (%llu similar suppressed)",
		    w->id, what, (unsigned long long)(w->backoff / TK_MSEC),
		    (unsigned long long)w->nconns, w->nconns == 1 ? "" : "s",
		    (unsigned long long)skipped);
	w->emfile = 1;
	listeners_want(w, 0);
	if (tk_timer_arm(w->l, &w->pause_timer, w->backoff) == -1) {
		/* No timer, no resume but by a close: try again now. */
		w->emfile = 0;
		listeners_want(w, TK_EV_READ);
	}
}

static void
pause_end(struct tk_loop *l, struct tk_timer *t)
{
	struct worker	*w = t->arg;

	(void)l;
	w->emfile = 0;
	if (!w->draining && !w->capped)
		listeners_want(w, TK_EV_READ);
}

/*
 * Stop polling the listeners while the memory budget is tight; the
 * listener keeps its ready bit, as at the cap.  Returns 0 (go on
 * accepting) if no timer could be set to look again.
 */
static int
mem_pause(struct worker *w)
{
	if (mem_watch(w) == -1)
		return 0;
	if (!w->mempaused)
		log_debug("%s: thread %d", __func__, w->id);
	w->mempaused = 1;
	listeners_want(w, 0);
	return 1;
}

/* mem.c: the episode is over. */
void
worker_mem_resume(struct worker *w)
{
	if (!w->mempaused)
		return;
	w->mempaused = 0;
	park_soon(w);
	if (!w->draining && !w->capped && !w->emfile)
		listeners_want(w, TK_EV_READ);
}

/*
 * Stop polling the listeners at --max-conns; see the top comment.  The
 * first worker to pause counts the cap as reached and may log it (once
 * a second at most); the others pausing with it add nothing.
 */
static void
cap(struct worker *w)
{
	uint64_t	skipped;

	if (!w->capped) {
		w->capped = 1;
		if (atomic_fetch_add(&srv.ncapped, 1) == 0 &&
		    worker_cap(CAP_MAXCONNS, &skipped))
			log_warnx("reached --max-conns %llu: not accepting, "
			    "new clients wait in the backlog (%llu similar "
			    "suppressed)", (unsigned long long)srv.max_conns,
			    (unsigned long long)skipped);
		listeners_want(w, 0);
		log_debug("%s: thread %d at --max-conns %llu", __func__,
		    w->id, (unsigned long long)srv.max_conns);
	}
	if (atomic_load(&srv.nconns) < srv.max_conns)
		uncap(w);
}

static void
uncap(struct worker *w)
{
	if (!w->capped)
		return;
	w->capped = 0;
	atomic_fetch_sub(&srv.ncapped, 1);
	park_soon(w);
	/*
	 * The listener kept its ready bit (we never met EAGAIN), so an
	 * edge backend queues it at once; a level one polls it again.
	 */
	if (!w->draining && !w->emfile)
		listeners_want(w, TK_EV_READ);
}

/* Wake every capped worker; this one directly, others by message. */
static void
resume_capped(struct worker *self)
{
	struct worker	*w;
	int		 i;

	for (i = 0; i < srv.nworkers; i++) {
		w = &srv.workers[i];
		if (w == self)
			uncap(w);
		else if (atomic_exchange(&w->resume_posted, 1) == 0)
			tk_loop_post(w->l, &w->m_resume);
	}
}

static void
msg_resume(struct tk_loop *l, struct tk_msg *m)
{
	struct worker	*w = m->arg;

	(void)l;
	atomic_store(&w->resume_posted, 0);
	uncap(w);
}

/*
 * Tell main once when a draining worker holds no connection, none
 * parked, and no listener whose multishot accept may still bring one.
 */
static void
check_done(struct worker *w)
{
	int	i;

	if (!w->draining || w->nconns > 0 || w->npark > 0 || w->done)
		return;
	for (i = 0; i < w->nls; i++)
		if (w->ls[i].io.fd != -1)
			return;
	w->done = 1;
	/* Drained: the last records go out now, not a second later. */
	if (w->alog_len > 0)
		conn_access_flush(w);
	tk_loop_post(srv.l, &w->m_done);
}

/*
 * Stop accepting: close the listeners; connections go on.  A multishot
 * accept may still bring what the kernel took before it saw the cancel:
 * its listener is closed at its end (worker_accepted).
 */
static void
msg_drain(struct tk_loop *l, struct tk_msg *m)
{
	struct worker	*w = m->arg;
	struct listener	*ls;
	int		 i;

	if (w->draining)
		return;
	w->draining = 1;
	for (i = 0; i < w->nls; i++) {
		ls = &w->ls[i];
		if (ls->io.fd == -1)
			continue;
		if (!ls->ms || tk_io_accept_stop(l, &ls->io) == 0)
			listener_shut(w, ls);
	}
	tk_timer_cancel(l, &w->pause_timer);
	w->emfile = 0;
	if (w->capped) {
		w->capped = 0;
		atomic_fetch_sub(&srv.ncapped, 1);
	}
	log_debug("%s: thread %d: %llu %s left", __func__, w->id,
	    (unsigned long long)w->nconns, worker_sessions(w->nconns));
	check_done(w);
}

/* The drain deadline, or a second signal: close everything now. */
static void
msg_force(struct tk_loop *l, struct tk_msg *m)
{
	struct worker	*w = m->arg;
	int		 i;

	if (!w->draining)
		msg_drain(l, &w->m_drain);
	if (w->nconns > 0)
		log_info("thread %d: closing %llu %s", w->id,
		    (unsigned long long)w->nconns, worker_sessions(w->nconns));
	conn_close_all(w, CONN_SHUTDOWN);
	/* Accepts not over yet: the loop closes what they still bring. */
	for (i = 0; i < w->nls; i++)
		if (w->ls[i].io.fd != -1)
			listener_shut(w, &w->ls[i]);
	park_close_all(w);
	check_done(w);
}
