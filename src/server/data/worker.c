/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Worker threads: each owns one loop, one SO_REUSEPORT listener per
 * --listen address (the kernel spreads new connections over the threads'
 * listeners), a scratch buffer, a buffer pool and its connections.  This
 * file sets a worker up, runs its thread and answers the main thread's
 * stop and stats messages; accept.c decides when it accepts, and runs
 * the drain.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/log.h"
#include "tenk/signal.h"
#include "tenk/uring.h"
#include "tenk/xmalloc.h"
#include "../tenkd.h"

static void	*worker_main(void *);
static void	 worker_close(struct worker *);
static void	 msg_stop(struct tk_loop *, struct tk_msg *);
static void	 msg_stats(struct tk_loop *, struct tk_msg *);

/*
 * Set up worker w number id on the main thread, before any worker runs:
 * its loop, buffers, wheel and the listeners on the already bound fds
 * lfds[0..nlisten-1].  Dies on failure (start-up).
 */
void
worker_init(struct worker *w, int id, const int *lfds)
{
	memset(w, 0, sizeof(*w));
	w->id = id;
	w->proto = srv.proto;
	if ((w->l = tk_loop_new(srv.cfg.backend, (int)srv.nofile)) == NULL)
		fatal("thread %d: %s backend", id,
		    srv.cfg.backend != NULL ? srv.cfg.backend : "default");
	/*
	 * io_uring on Linux 6.1 or later: the completion data path; poll
	 * mode where TLS is spoken or peeked at (tlsterm.c).
	 */
	w->cq = tk_loop_completion(w->l) && !tlsterm_any();
	if (w->cq && tk_loop_bufring(w->l, mem_ring_bufs(),
	    DP_RING_BUFSIZE) == -1)
		fatal("thread %d: io_uring buffer ring", id);
	w->scratch = xmalloc(SCRATCH_SIZE);
	tk_bufpool_init(&w->pool, POOL_BUFSIZE, POOL_MAXFREE);
	/*
	 * Small buffers only on completions, where every message waits in
	 * a queue for its send.  On readiness a queue holds only what a
	 * send left, rarely a few bytes: nothing to gain there, and under
	 * ThreadSanitizer's allocator the memory budget's test went past
	 * its RSS bound with them.
	 */
	if (w->cq)
		tk_bufpool_small(&w->pool, POOL_SMALL, POOL_MAXSFREE);
	conn_wheel_init(w);
	conn_access_init(w);
	tlsterm_worker_init(w);
	mem_worker_init(w);
	w->m_stop.fn = msg_stop;
	w->m_stats.fn = msg_stats;
	w->m_stop.arg = w->m_stats.arg = w;
	w->m_done.arg = w->m_stats_reply.arg = w;
	accept_init(w, lfds);
}

void
worker_start(struct worker *w)
{
	int	error;

	if ((error = pthread_create(&w->thread, NULL, worker_main, w)) != 0) {
		errno = error;
		fatal("pthread_create");
	}
}

static void *
worker_main(void *arg)
{
	struct worker	*w = arg;

	/* Signals belong to the main thread (its self-pipe). */
	tk_signal_block_all();
	tk_loop_update_now(w->l);
	tk_loop_run(w->l, 0);
	worker_close(w);
	return NULL;
}

/*
 * Close what w still has open as its loop stops, on w's own thread:
 * closing a connection on io_uring cancels its requests, which the
 * ring takes only from the thread that owns it (single issuer; from
 * another the synchronous cancel of a send fails with EEXIST and the
 * kernel might still read a buffer being freed).  A worker stops only
 * once drained (worker_done in main.c), so this finds nothing today;
 * it once ran in worker_free, on the main thread.
 */
static void
worker_close(struct worker *w)
{
	conn_close_all(w, CONN_SHUTDOWN);
	accept_close(w);
}

/*
 * Free w after its thread has been joined (worker_close closed what
 * was left).  Main thread.
 */
void
worker_free(struct worker *w)
{
	conn_access_free(w);
	accept_free(w);
	tk_timer_cancel(w->l, &w->wheel_timer);
	tk_timer_cancel(w->l, &w->mem_timer);
	tlsterm_worker_free(w);
	tk_bufpool_drain(&w->pool);
	dp_pipes_free(w);
	tlsorig_worker_free(w);
	free(w->scratch);
	tk_loop_free(w->l);
	w->l = NULL;
}

/*
 * The protocol of c's mode (config.c checked it: "echo" or "proxy"),
 * echo's over TLS with a certificate.
 */
const struct proto *
worker_proto(const struct config *c)
{
	if (strcmp(c->mode, "proxy") == 0)
		return &proto_proxy;
	return c->tls.ctx != NULL ? &proto_echo_tls : &proto_echo;
}

/* Copy w's counters with the figures kept elsewhere.  Worker thread. */
void
worker_snapshot(struct worker *w, struct stats *s)
{
	struct tk_loop_stats	ls;

	*s = w->st;
	s->active = w->nconns;
	s->bufs_inuse = w->pool.inuse;
	s->bufs_free = w->pool.nfree;
	s->pipes = w->npipes - w->npipes_free;
	s->piped = w->piped;
	s->iterations = tk_loop_iterations(w->l);
	if (w->cq) {
		tk_loop_stats(w->l, &ls);
		s->ring_dry = ls.nobufs;
		s->cq_overflow = ls.cq_overflow;
		s->ms_accepted = ls.accepts;
		s->accept_dropped += ls.accept_closed;
	}
}

static void
msg_stop(struct tk_loop *l, struct tk_msg *m)
{
	struct worker	*w = m->arg;

	if (w->alog_len > 0)
		conn_access_flush(w);
	tk_loop_stop(l);
}

static void
msg_stats(struct tk_loop *l, struct tk_msg *m)
{
	struct worker	*w = m->arg;

	(void)l;
	worker_snapshot(w, &w->snap);
	tk_loop_post(srv.l, &w->m_stats_reply);
}
