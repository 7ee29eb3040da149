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
 * little.  worker_cap() counts and rate-limits their log lines.
 */
#include <stdio.h>
#include <string.h>

#include "tenk/loop.h"
#include "tenk/log.h"
#include "../tenkd.h"


/* As the caps are named on the "stats caps" line; see enum cap_kind. */
const char *const cap_names[CAP_NKINDS] = {
	"max-conns",
	"ip-limit",
};

static void	stats_line(FILE *, const char *, const struct stats *);
static void	stats_caps(FILE *);
static void	stats_reply(struct tk_loop *, struct tk_msg *);

/*
 * The counters of src added to dst; with gauges, its gauges too (what
 * is in use now: a sum over workers, never over time).  The master sums
 * the workers' figures with it as well.
 */
void
stats_add(struct stats *dst, const struct stats *src, int gauges)
{
	int	i;

	dst->accepted += src->accepted;
	for (i = 0; i < CONN_NREASONS; i++)
		dst->closed[i] += src->closed[i];
	for (i = 0; i < SIDE_N; i++) {
		dst->bytes_in[i] += src->bytes_in[i];
		dst->bytes_out[i] += src->bytes_out[i];
	}
	dst->noport += src->noport;
	dst->spliced += src->spliced;
	dst->fpbytes += src->fpbytes;
	dst->fpsess += src->fpsess;
	dst->nopipe += src->nopipe;
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
	if (!gauges)
		return;
	dst->active += src->active;
	dst->bufs_inuse += src->bufs_inuse;
	dst->bufs_free += src->bufs_free;
	dst->pipes += src->pipes;
	dst->piped += src->piped;
}

/*
 * "stats thread 0: accepted 12 active 2 closed eof 9 reset 1 ... memory 0
 * proxy-header 0 proxy-untrusted 0 in 123 out 123 bufs 0 spare 4" (in
 * and out: the clients' bytes), then the protocol's own part (proxy.c:
 * " up-in 123 up-out 123 no-port 0 ..."), to f.
 */
static void
stats_line(FILE *f, const char *who, const struct stats *s)
{
	int	i;

	fprintf(f, "stats %s: accepted %llu active %llu closed", who,
	    (unsigned long long)s->accepted, (unsigned long long)s->active);
	for (i = 0; i < CONN_NREASONS; i++)
		fprintf(f, " %s %llu", conn_reasons[i],
		    (unsigned long long)s->closed[i]);
	fprintf(f, " in %llu out %llu bufs %llu spare %llu",
	    (unsigned long long)s->bytes_in[SIDE_CLIENT],
	    (unsigned long long)s->bytes_out[SIDE_CLIENT],
	    (unsigned long long)s->bufs_inuse,
	    (unsigned long long)s->bufs_free);
	if (srv.proto->stats_line != NULL)
		srv.proto->stats_line(f, s);
	/*
	 * io_uring's completion data path: the ring ran dry, the CQ full,
	 * connections by multishot accept and those it brought that were
	 * closed unserved.
	 */
	if (srv.cfg.backend != NULL &&
	    strcmp(srv.cfg.backend, "io_uring") == 0)
		fprintf(f, " ring-dry %llu cq-overflow %llu ms-accepted %llu "
		    "accept-dropped %llu", (unsigned long long)s->ring_dry,
		    (unsigned long long)s->cq_overflow,
		    (unsigned long long)s->ms_accepted,
		    (unsigned long long)s->accept_dropped);
	/* Access-log records dropped, the log behind (alog.c). */
	if (srv.access_fd != -1)
		fprintf(f, " log-dropped %llu",
		    (unsigned long long)s->log_dropped);
	fputc('\n', f);
}

/* "stats caps: max-conns 3 ip-limit 0": how often each cap was reached. */
static void
stats_caps(FILE *f)
{
	int	i;

	fprintf(f, "stats caps:");
	for (i = 0; i < CAP_NKINDS; i++)
		fprintf(f, " %s %llu", cap_names[i],
		    atomic_load(&srv.caps[i].n));
	fputc('\n', f);
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
 * lines of /stats, written into ms->text (cut at its end, if ever that
 * short).  Main thread.
 */
void
stats_fill(struct msnap *ms)
{
	struct stats	 total;
	FILE		*f;
	char		 who[32];
	long		 n;
	int		 i;

	memset(&total, 0, sizeof(total));
	for (i = 0; i < srv.nworkers; i++)
		stats_add(&total, &srv.workers[i].snap, 1);
	if ((f = fmemopen(ms->text, sizeof(ms->text), "w")) != NULL) {
		for (i = 0; i < srv.nworkers; i++) {
			snprintf(who, sizeof(who), "thread %d", i);
			stats_line(f, who, &srv.workers[i].snap);
		}
		stats_line(f, "total", &total);
		if (srv.mem_budget > 0)
			fprintf(f, "stats memory: budget %zu queued %zu tight "
			    "%d episodes %llu\n", srv.mem_budget,
			    atomic_load_explicit(&srv.mem_held,
			    memory_order_relaxed),
			    atomic_load(&srv.mem_tight) != 0,
			    (unsigned long long)atomic_load(&srv.mem_episodes));
		stats_caps(f);
		if (srv.proto->stats != NULL)
			srv.proto->stats(f);
		fflush(f);
		n = ftell(f);
		ms->textlen = n > 0 ? (uint32_t)n : 0;
		fclose(f);
	}
	total.iterations += tk_loop_iterations(srv.l);
	ms->st = total;
	for (i = 0; i < CAP_NKINDS; i++)
		ms->caps[i] = atomic_load(&srv.caps[i].n);
	ms->mem_held = atomic_load_explicit(&srv.mem_held,
	    memory_order_relaxed);
}
