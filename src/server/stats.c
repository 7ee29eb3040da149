/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Statistics for the metrics listener (metrics.c): one line per worker
 * thread and a total on /stats, and the figures of /metrics.  Each
 * worker owns its counters and nobody else reads them: the main thread
 * posts a request to every worker, each copies its counters into its
 * snapshot in its own thread and posts the reply back, and when all
 * replies are in the main thread hands them to metrics.c.  One round at
 * a time: a request during a round asks for one more round after it,
 * so a storm of scrapes costs at most one extra round, not one per
 * request.  The memory budget's figures are process-wide atomics
 * (mem.c), read here.
 *
 * The caps (--max-conns, --max-conns-per-ip) are counted for the whole
 * process, not per worker: the per-IP count is shared by the threads
 * and --max-conns is one count for all, so a thread's share would mean
 * little.  stats_cap() counts and rate-limits their log lines.
 */
#include <stdio.h>
#include <string.h>

#include "tenk/loop.h"
#include "tenk/clock.h"
#include "tenk/log.h"
#include "tenkd.h"

#define CAP_WARN_EVERY	((long long)TK_SEC) /* a line per cap and second */

/* As the caps are named on the "stats caps" line; see enum cap_kind. */
const char *const cap_names[CAP_NKINDS] = {
	"max-conns",
	"ip-limit",
};

static void	stats_add(struct stats *, const struct stats *);
static void	stats_log(const char *, const struct stats *);
static void	stats_caps(void);
static void	stats_reply(struct tk_loop *, struct tk_msg *);

/*
 * Count one more time cap k was reached, and say whether its line may
 * be logged now: at most one a second for the whole process, whichever
 * thread gets there first.  *skipped gets how many were held back since
 * the last line.  Any thread.
 */
int
stats_cap(enum cap_kind k, uint64_t *skipped)
{
	struct capcount		*cc = &srv.caps[k];
	unsigned long long	 now = tk_clock_mono(), last;

	atomic_fetch_add(&cc->n, 1);
	last = atomic_load(&cc->last);
	/* Signed: another thread may have stored a later now. */
	if ((last != 0 && (long long)(now - last) < CAP_WARN_EVERY) ||
	    !atomic_compare_exchange_strong(&cc->last, &last, now)) {
		atomic_fetch_add(&cc->skipped, 1);
		return 0;
	}
	*skipped = atomic_exchange(&cc->skipped, 0);
	return 1;
}

/* Copy w's counters with the figures kept elsewhere.  Worker thread. */
void
stats_snapshot(struct worker *w, struct stats *s)
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
stats_add(struct stats *dst, const struct stats *src)
{
	int	i;

	dst->accepted += src->accepted;
	dst->active += src->active;
	for (i = 0; i < CONN_NREASONS; i++)
		dst->closed[i] += src->closed[i];
	for (i = 0; i < SIDE_N; i++) {
		dst->bytes_in[i] += src->bytes_in[i];
		dst->bytes_out[i] += src->bytes_out[i];
	}
	dst->bufs_inuse += src->bufs_inuse;
	dst->bufs_free += src->bufs_free;
	dst->noport += src->noport;
	dst->spliced += src->spliced;
	dst->fpbytes += src->fpbytes;
	dst->fpsess += src->fpsess;
	dst->nopipe += src->nopipe;
	dst->pipes += src->pipes;
	dst->piped += src->piped;
	dst->iterations += src->iterations;
	dst->ring_dry += src->ring_dry;
	dst->cq_overflow += src->cq_overflow;
	dst->ms_accepted += src->ms_accepted;
	dst->accept_dropped += src->accept_dropped;
	dst->tls_new += src->tls_new;
	dst->tls_resumed += src->tls_resumed;
	for (i = 0; i < TK_TLS_F_MAX; i++)
		dst->tls_fail[i] += src->tls_fail[i];
	dst->log_dropped += src->log_dropped;
}

/*
 * "stats thread 0: accepted 12 active 2 closed eof 9 reset 1 ... memory 0
 * proxy-header 0 proxy-untrusted 0 in 123 out 123 bufs 0 spare 4" (in
 * and out: the clients' bytes), and in proxy mode " up-in 123 up-out 123
 * no-port 0 spliced 0 nopipe 0 pipes 0 piped 0 fastpath 0
 * fastpath-bytes 0", logged at level info.
 */
static void
stats_log(const char *who, const struct stats *s)
{
	char	closed[320], noport[288], ring[128], alog[48];
	size_t	len = 0;
	int	i, n;

	closed[0] = '\0';
	for (i = 0; i < CONN_NREASONS; i++) {
		n = snprintf(closed + len, sizeof(closed) - len, " %s %llu",
		    conn_reasons[i], (unsigned long long)s->closed[i]);
		if (n < 0 || (size_t)n >= sizeof(closed) - len)
			break;
		len += n;
	}
	/*
	 * The proxy's own: bytes from and to the upstreams, clients closed
	 * for want of a local port, bytes sent by splice(2), bulk flows
	 * that found no pipe, pipes in use and the bytes in them, sessions
	 * and bytes the kernel forwarded (--fastpath).
	 */
	noport[0] = '\0';
	if (srv.proto == &proto_proxy)
		snprintf(noport, sizeof(noport), " up-in %llu up-out %llu "
		    "no-port %llu spliced %llu nopipe %llu pipes %llu "
		    "piped %llu fastpath %llu fastpath-bytes %llu",
		    (unsigned long long)s->bytes_in[SIDE_UPSTREAM],
		    (unsigned long long)s->bytes_out[SIDE_UPSTREAM],
		    (unsigned long long)s->noport,
		    (unsigned long long)s->spliced,
		    (unsigned long long)s->nopipe,
		    (unsigned long long)s->pipes,
		    (unsigned long long)s->piped,
		    (unsigned long long)s->fpsess,
		    (unsigned long long)s->fpbytes);
	/*
	 * io_uring's completion data path: the ring ran dry, the CQ full,
	 * connections by multishot accept and those it brought that were
	 * closed unserved.
	 */
	ring[0] = '\0';
	if (srv.cfg.backend != NULL &&
	    strcmp(srv.cfg.backend, "io_uring") == 0)
		snprintf(ring, sizeof(ring), " ring-dry %llu cq-overflow %llu "
		    "ms-accepted %llu accept-dropped %llu",
		    (unsigned long long)s->ring_dry,
		    (unsigned long long)s->cq_overflow,
		    (unsigned long long)s->ms_accepted,
		    (unsigned long long)s->accept_dropped);
	/* Access-log records dropped, the log behind (alog.c). */
	alog[0] = '\0';
	if (srv.access_fd != -1)
		snprintf(alog, sizeof(alog), " log-dropped %llu",
		    (unsigned long long)s->log_dropped);
	log_info("stats %s: accepted %llu active %llu closed%s in %llu "
	    "out %llu bufs %llu spare %llu%s%s%s", who,
	    (unsigned long long)s->accepted, (unsigned long long)s->active,
	    closed, (unsigned long long)s->bytes_in[SIDE_CLIENT],
	    (unsigned long long)s->bytes_out[SIDE_CLIENT],
	    (unsigned long long)s->bufs_inuse,
	    (unsigned long long)s->bufs_free, noport, ring, alog);
}

/* "stats caps: max-conns 3 ip-limit 0": how often each cap was reached. */
static void
stats_caps(void)
{
	char	line[256];
	size_t	len = 0;
	int	i, n;

	line[0] = '\0';
	for (i = 0; i < CAP_NKINDS; i++) {
		n = snprintf(line + len, sizeof(line) - len, " %s %llu",
		    cap_names[i], atomic_load(&srv.caps[i].n));
		if (n < 0 || (size_t)n >= sizeof(line) - len)
			break;
		len += n;
	}
	log_info("stats caps:%s", line);
}

/* Main thread: start a round, or ask for one more. */
void
stats_request(void)
{
	int	i;

	if (srv.stats_busy) {
		srv.stats_again = 1;
		return;
	}
	srv.stats_busy = 1;
	srv.stats_again = 0;
	srv.nstats = 0;
	for (i = 0; i < srv.nworkers; i++) {
		srv.workers[i].m_stats_reply.fn = stats_reply;
		tk_loop_post(srv.workers[i].l, &srv.workers[i].m_stats);
	}
}

static void
stats_reply(struct tk_loop *l, struct tk_msg *m)
{
	(void)l;
	(void)m;
	if (++srv.nstats < srv.nworkers)
		return;
	srv.stats_busy = 0;
	metrics_collected();
	if (srv.stats_again)
		stats_request();
}

/*
 * The figures of the last round into ms: the sum of the threads (and
 * the main loop's iterations), the caps, the memory gauge, and the
 * lines /stats shows, which are the ones SIGUSR1 logged before: they
 * are logged here into a buffer (log_capture), since the protocol's
 * own lines come from proxy.c and upstream.c.  Main thread.
 */
void
stats_fill(struct msnap *ms)
{
	struct stats	 total;
	FILE		*f;
	char		 who[32];
	int		 i;

	memset(&total, 0, sizeof(total));
	if ((f = fmemopen(ms->text, sizeof(ms->text), "w")) != NULL) {
		setvbuf(f, NULL, _IONBF, 0);
		log_capture(f);
	}
	for (i = 0; i < srv.nworkers; i++) {
		snprintf(who, sizeof(who), "thread %d", i);
		if (f != NULL)
			stats_log(who, &srv.workers[i].snap);
		stats_add(&total, &srv.workers[i].snap);
	}
	if (f != NULL) {
		stats_log("total", &total);
		if (srv.mem_budget > 0)
			log_info("stats memory: budget %zu queued %zu tight %d "
			    "episodes %llu", srv.mem_budget,
			    atomic_load_explicit(&srv.mem_held,
			    memory_order_relaxed),
			    atomic_load(&srv.mem_tight) != 0,
			    (unsigned long long)atomic_load(&srv.mem_episodes));
		stats_caps();
		if (srv.proto->stats != NULL)
			srv.proto->stats();
		log_capture(NULL);
		ms->textlen = (uint32_t)ftell(f);
		fclose(f);
	}
	total.iterations += tk_loop_iterations(srv.l);
	ms->st = total;
	for (i = 0; i < CAP_NKINDS; i++)
		ms->caps[i] = atomic_load(&srv.caps[i].n);
	ms->mem_held = atomic_load_explicit(&srv.mem_held,
	    memory_order_relaxed);
}
