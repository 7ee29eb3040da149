/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Statistics on SIGUSR1: one line per worker thread and a total.  Each
 * worker owns its counters and nobody else reads them: the main thread
 * posts a request to every worker, each copies its counters into its
 * snapshot in its own thread and posts the reply back, and when all
 * replies are in the main thread logs them.  One round at a time: a
 * SIGUSR1 during a round asks for one more round after it, so a storm
 * of signals costs at most one extra round, not one per signal.  The
 * memory budget's figures are process-wide atomics (mem.c), read here.
 */
#include <stdio.h>
#include <string.h>

#include "tenk/log.h"
#include "tenkd.h"

static void	stats_add(struct stats *, const struct stats *);
static void	stats_log(const char *, const struct stats *);
static void	stats_reply(struct tk_loop *, struct tk_msg *);

/* Copy w's counters with the figures kept elsewhere.  Worker thread. */
void
stats_snapshot(struct worker *w, struct stats *s)
{
	*s = w->st;
	s->active = w->nconns;
	s->bufs_inuse = w->pool.inuse;
	s->bufs_free = w->pool.nfree;
}

static void
stats_add(struct stats *dst, const struct stats *src)
{
	int	i;

	dst->accepted += src->accepted;
	dst->active += src->active;
	for (i = 0; i < CONN_NREASONS; i++)
		dst->closed[i] += src->closed[i];
	dst->bytes_in += src->bytes_in;
	dst->bytes_out += src->bytes_out;
	dst->bufs_inuse += src->bufs_inuse;
	dst->bufs_free += src->bufs_free;
	dst->noport += src->noport;
}

/*
 * "stats thread 0: accepted 12 active 2 closed eof 9 reset 1 ... in 123
 * out 123 bufs 0 spare 4", and in proxy mode " no-port 0", logged at
 * level info.
 */
static void
stats_log(const char *who, const struct stats *s)
{
	char	closed[256], noport[32];
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
	/* Clients closed for want of a local port: the proxy's only. */
	noport[0] = '\0';
	if (srv.proto == &proto_proxy)
		snprintf(noport, sizeof(noport), " no-port %llu",
		    (unsigned long long)s->noport);
	log_info("stats %s: accepted %llu active %llu closed%s in %llu "
	    "out %llu bufs %llu spare %llu%s", who,
	    (unsigned long long)s->accepted, (unsigned long long)s->active,
	    closed, (unsigned long long)s->bytes_in,
	    (unsigned long long)s->bytes_out,
	    (unsigned long long)s->bufs_inuse,
	    (unsigned long long)s->bufs_free, noport);
}

/* SIGUSR1 on the main thread: start a round, or ask for one more. */
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
	struct stats	 total;
	char		 who[32];
	int		 i;

	(void)l;
	(void)m;
	if (++srv.nstats < srv.nworkers)
		return;
	memset(&total, 0, sizeof(total));
	for (i = 0; i < srv.nworkers; i++) {
		snprintf(who, sizeof(who), "thread %d", i);
		stats_log(who, &srv.workers[i].snap);
		stats_add(&total, &srv.workers[i].snap);
	}
	stats_log("total", &total);
	if (srv.mem_budget > 0)
		log_info("stats memory: budget %zu queued %zu tight %d "
		    "episodes %llu", srv.mem_budget,
		    atomic_load_explicit(&srv.mem_held, memory_order_relaxed),
		    atomic_load(&srv.mem_tight),
		    (unsigned long long)atomic_load(&srv.mem_episodes));
	if (srv.proto->stats != NULL)
		srv.proto->stats();
	srv.stats_busy = 0;
	if (srv.stats_again)
		stats_request();
}
