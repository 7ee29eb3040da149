/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The memory budget (--max-memory): what keeps tenkd alive when its
 * peers stop reading.  Idle connections hold no buffer; what grows
 * without bound is the queued bytes, up to --buffer-limit per queue
 * times however many connections do not read.  So the budget caps the
 * bytes in pool buffers handed out across all threads.
 *
 * Accounting: every worker's pool adds a buffer's full cost to one
 * gauge (srv.mem_held) when it hands the buffer out and takes it off
 * when it comes back, a relaxed atomic add per buffer, never per
 * message or byte (buf.c); a connection that keeps up never takes a
 * buffer, so it never touches the gauge.  A take that leaves the gauge
 * at or above the high mark raises the pool's alert, which the caller
 * of each step looks at (conn.c's conn_io, and proxy.c's up_io for the
 * upstream's side), when closing connections is safe.  Whom to close is
 * scored on everything a connection holds queued (proto->queued: both
 * of a proxy session's directions).
 *
 * An episode begins at 90% of the budget (logged once, counted):
 * connections that hold queued bytes stop reading (conn_limit() in
 * tenkd.h) and the workers stop accepting, leaving new connections in
 * the backlog.  Connections with nothing queued go on as before.  Each
 * worker then looks again every MEM_TICK.  At the budget, or when the
 * episode has lasted MEM_GRACE (whoever holds the memory is not reading
 * it back; without this, accepting would stay paused for as long as they
 * hold it), a worker closes its stalled connections (no read or send
 * for a tick) holding the most buffers for the longest time (worst()),
 * reason "memory", until the gauge is under 80%.  One that still makes
 * progress is closed only while the gauge is at the budget, and by a
 * worker holding at least its share of the gauge, so that the threads
 * that hold the memory are the ones that give it back.  Under 80% the
 * episode ends (logged once): reading and accepting resume.
 *
 * On io_uring's completion data path the receive rings count too: their
 * buffers are resident from the start, a fixed part of the budget that
 * the gauge's marks leave out (marks()), and they are sized from the
 * budget where it is tight, at most a quarter of it (mem_ring_bufs).
 * What a completion brings past --buffer-limit (a recv's last chunk, up
 * to a ring buffer) goes into pool buffers like any queued byte, so the
 * gauge counts it; and since a ring buffer goes back only after its
 * callback, one loop iteration brings at most a ring's worth before the
 * steps that follow see the alert.
 *
 * The default budget is half the memory tenkd may use: the cgroup's
 * limit (v2 memory.max, v1 memory.limit_in_bytes, the tightest on the
 * way to the root) if there is one below physical memory, else physical
 * memory.  Half, because queued buffers are not all that is charged:
 * the kernel's socket buffers of the same connections (counted against
 * a cgroup v2 limit too), the connection structs, per-thread spares and
 * the allocator's slack need the rest.  --workers N splits it evenly.
 */
#include <sys/types.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/clock.h"
#include "tenk/log.h"
#include "tenk/parse.h"
#include "../tenkd.h"

#define MEM_SHARE	2		/* default: 1/MEM_SHARE of the limit */
#define MEM_HIGH_PCT	90		/* an episode from here */
#define MEM_LOW_PCT	80		/* until below here */
#define MEM_TICK	(100 * TK_MSEC)	/* a worker's look while it lasts */
/* Not a read or send for a tick: stalled, in CONN_TSHIFT units. */
#define MEM_STALLED	((uint32_t)(MEM_TICK >> CONN_TSHIFT))
#define MEM_GRACE	TK_SEC		/* tight this long: shed anyway */
#define MEM_RING_SHARE	4		/* rings: at most 1/4 of the budget */

#define CG_ROOT		"/sys/fs/cgroup"

static void		 mem_tick(struct tk_loop *, struct tk_timer *);
static void		 msg_mem(struct tk_loop *, struct tk_msg *);
static void		 enter(struct worker *, size_t);
static void		 leave(size_t);
static void		 shed(struct worker *);
static struct conn	*worst(struct worker *, int *);
static void		 marks(void);
static uint64_t		 cgroup_limit(char *, size_t);
static const char	*fmt_mib(uint64_t, char *, size_t);

/* Main thread, after the command line: the budget and its marks. */
void
mem_init(void)
{
	struct config	*cfg = &srv.cfg;
	uint64_t	 phys = 0, lim, b;
	long		 pages, psz;
	char		 src[256], what[64], s1[32], s2[32];

	pages = sysconf(_SC_PHYS_PAGES);
	psz = sysconf(_SC_PAGESIZE);
	if (pages > 0 && psz > 0)
		phys = (uint64_t)pages * (uint64_t)psz;
	if (cfg->max_memory >= 0) {
		b = (uint64_t)cfg->max_memory;
		strlcpy(src, "--max-memory", sizeof(src));
	} else if ((lim = cgroup_limit(what, sizeof(what))) != 0 &&
	    (phys == 0 || lim < phys)) {
		b = lim / MEM_SHARE;
		snprintf(src, sizeof(src), "1/%d of %s %s", MEM_SHARE, what,
		    fmt_mib(lim, s1, sizeof(s1)));
	} else {
		b = phys / MEM_SHARE;
		snprintf(src, sizeof(src), "1/%d of physical memory %s",
		    MEM_SHARE, fmt_mib(phys, s1, sizeof(s1)));
	}
	if (cfg->workers > 1 && b > 0) {
		b /= (uint64_t)cfg->workers;
		snprintf(src + strlen(src), sizeof(src) - strlen(src),
		    ", split over %d worker processes", cfg->workers);
	}
	if (b > SIZE_MAX / 2)
		b = SIZE_MAX / 2;
	srv.mem_budget = (size_t)b;
	/* A reload's: the fast path's maps are still loaded. */
	srv.mem_rings = 0;
	mem_fixed(pxfast_mem());
	atomic_init(&srv.mem_held, 0);
	atomic_init(&srv.mem_tight, 0);
	atomic_init(&srv.mem_since, 0);
	atomic_init(&srv.mem_episodes, 0);
	atomic_init(&srv.mem_shed, 0);
	if (b == 0)
		log_info("memory budget: none (%s)", src);
	else
		log_info("memory budget %s (%s): %llu bytes of queued "
		    "buffers, backpressure from %d%%", fmt_mib(b, s2,
		    sizeof(s2)), src, (unsigned long long)b, MEM_HIGH_PCT);
}

/*
 * The marks the gauge (pool buffers) is held to: the budget's, less
 * the io_uring rings and the fast path's maps, held from the start.
 */
static void
marks(void)
{
	size_t	r = srv.mem_rings, b = srv.mem_budget;

	srv.mem_cap = b > r ? b - r : 0;
	srv.mem_high = b / 100 * MEM_HIGH_PCT > r ?
	    b / 100 * MEM_HIGH_PCT - r : 0;
	srv.mem_low = b / 100 * MEM_LOW_PCT > r ? b / 100 * MEM_LOW_PCT - r : 0;
}

/*
 * n bytes of kernel memory held from the start, such as the fast path's
 * maps (pxfast_load): a fixed part of the budget, as the rings are.
 */
void
mem_fixed(size_t n)
{
	srv.mem_rings += n;
	marks();
}

/*
 * The receive buffers (DP_RING_BUFSIZE each) of each worker's io_uring
 * ring: --ring-buffers, else DP_RING_BUFS (4 MiB a thread) halved while
 * the threads' rings would take more than a quarter of the budget, down
 * to DP_RING_MIN.  The rings are resident from the start and count
 * against the budget (mem_worker_init).  Start-up, after mem_init.
 */
unsigned int
mem_ring_bufs(void)
{
	unsigned int	n = DP_RING_BUFS;

	if (srv.cfg.ring_bufs != 0)
		return srv.cfg.ring_bufs;
	while (n > DP_RING_MIN && srv.mem_budget > 0 &&
	    (uint64_t)srv.cfg.threads * n * DP_RING_BUFSIZE >
	    srv.mem_budget / MEM_RING_SHARE)
		n /= 2;
	return n;
}

/*
 * Worker w's share of the set-up, before its thread starts: its io_uring
 * ring (queues, and on completions the receive buffers) is part of the
 * budget from now on, and every pool's mark so far follows.
 */
void
mem_worker_init(struct worker *w)
{
	struct tk_loop_stats	 ls;
	char			 s1[32];
	int			 i;

	tk_timer_init(&w->mem_timer, mem_tick, w);
	w->m_mem.fn = msg_mem;
	w->m_mem.arg = w;
	atomic_init(&w->mem_posted, 0);
	if (srv.mem_budget == 0)
		return;
	tk_loop_stats(w->l, &ls);
	if (ls.ring_bytes > 0) {
		srv.mem_rings += (size_t)ls.ring_bytes;
		marks();
		if (w == &srv.workers[srv.nworkers - 1])
			log_info("memory budget: %s of it for the io_uring "
			    "rings%s%s", fmt_mib(srv.mem_rings, s1,
			    sizeof(s1)), w->cq ? ", with their receive "
			    "buffers" : "", srv.mem_rings > srv.mem_budget /
			    2 ? " (more than half: see --ring-buffers)" : "");
	}
	for (i = 0; &srv.workers[i] <= w; i++)
		tk_bufpool_account(&srv.workers[i].pool, &srv.mem_held,
		    srv.mem_high);
}

/*
 * A step of this thread took a buffer with the gauge at the high mark
 * or above (the pool's alert): begin an episode, shed at the budget.
 * Worker thread, where closing connections is safe.
 */
void
mem_check(struct worker *w)
{
	size_t	held;

	w->pool.alert = 0;
	held = atomic_load_explicit(&srv.mem_held, memory_order_relaxed);
	if (held < srv.mem_high)
		return;
	if (atomic_load(&srv.mem_tight) == 0)
		enter(w, held);
	if (held >= srv.mem_cap)
		shed(w);
	(void)mem_watch(w);
}

/* Look again in MEM_TICK (if not already due).  -1 if no timer. */
int
mem_watch(struct worker *w)
{
	if (tk_timer_pending(&w->mem_timer))
		return 0;
	return tk_timer_arm(w->l, &w->mem_timer, MEM_TICK);
}

/* The episode begins: the first to see it logs and tells the others. */
static void
enter(struct worker *self, size_t held)
{
	struct worker	*w;
	int		 zero = 0, i;
	char		 s1[32], s2[32], s3[32];

	/*
	 * Tight is 2 until the episode's start is stored, then 1: a
	 * worker's mem_tick that saw 1 with the last episode's start
	 * would take the grace as spent and shed at once.
	 */
	if (!atomic_compare_exchange_strong(&srv.mem_tight, &zero, 2))
		return;
	atomic_store(&srv.mem_since, tk_loop_now(self->l));
	atomic_store(&srv.mem_tight, 1);
	atomic_fetch_add(&srv.mem_episodes, 1);
	log_warnx("memory: %s queued, %d%% of the %s budget%s%s%s: "
	    "connections holding queued bytes stop reading, accepting paused",
	    fmt_mib(held, s1, sizeof(s1)), MEM_HIGH_PCT,
	    fmt_mib(srv.mem_budget, s2, sizeof(s2)), srv.mem_rings > 0 ?
	    " with the rings' and maps' " : "", srv.mem_rings > 0 ?
	    fmt_mib(srv.mem_rings, s3, sizeof(s3)) : "", srv.mem_rings > 0 ?
	    " in it" : "");
	for (i = 0; i < srv.nworkers; i++) {
		w = &srv.workers[i];
		if (w != self && atomic_exchange(&w->mem_posted, 1) == 0)
			tk_loop_post(w->l, &w->m_mem);
	}
}

/* The episode ends: the first to see it logs. */
static void
leave(size_t held)
{
	uint64_t	 n, ns;
	int		 one = 1;
	char		 s1[32], dur[32];

	if (!atomic_compare_exchange_strong(&srv.mem_tight, &one, 0))
		return;
	n = atomic_exchange(&srv.mem_shed, 0);
	ns = tk_clock_mono() - atomic_load(&srv.mem_since);
	log_info("memory: %s queued, under %d%% of the budget after %s: "
	    "reading and accepting again (%llu connection%s closed)",
	    fmt_mib(held, s1, sizeof(s1)), MEM_LOW_PCT,
	    tk_fmt_duration(ns, dur, sizeof(dur)), (unsigned long long)n,
	    n == 1 ? "" : "s");
}

/* Another worker began an episode: look at ours too. */
static void
msg_mem(struct tk_loop *l, struct tk_msg *m)
{
	struct worker	*w = m->arg;

	(void)l;
	atomic_store(&w->mem_posted, 0);
	(void)mem_watch(w);
}

/*
 * Every MEM_TICK while an episode lasts or this worker's accepting is
 * paused: end the episode under the low mark, shed at the budget or
 * past the grace, and resume accepting once it is over.
 */
static void
mem_tick(struct tk_loop *l, struct tk_timer *t)
{
	struct worker	*w = t->arg;
	uint64_t	 now = tk_loop_now(l), since;
	size_t		 held;

	if (atomic_load(&srv.mem_tight) == 1) {
		held = atomic_load_explicit(&srv.mem_held,
		    memory_order_relaxed);
		since = atomic_load(&srv.mem_since);
		if (held < srv.mem_low)
			leave(held);
		else if (held >= srv.mem_cap ||
		    (now > since && now - since >= MEM_GRACE))
			shed(w);
	}
	if (atomic_load(&srv.mem_tight) && mem_watch(w) == 0)
		return;
	worker_mem_resume(w);
}

/*
 * Close this worker's worst connections until the gauge is under the
 * low mark, or nothing it holds is queued on a connection.  A stalled
 * one (worst()) goes whatever share of the gauge this worker holds: it
 * is what keeps the episode going.  One that keeps up goes only while
 * the gauge is at the budget itself and this worker holds at least its
 * share: the budget holds, but below it a client being served is not
 * closed to make room (it gives its bytes back as its peer reads them),
 * nor while another worker holds more.
 */
static void
shed(struct worker *w)
{
	struct conn	*c;
	uint64_t	 n = 0;
	size_t		 held;
	int		 stalled;

	for (;;) {
		held = atomic_load_explicit(&srv.mem_held,
		    memory_order_relaxed);
		if (held < srv.mem_low)
			break;
		/* Holding no buffer, it has none to give back: no walk. */
		if (tk_bufpool_held(&w->pool) == 0 ||
		    (c = worst(w, &stalled)) == NULL)
			break;
		if (!stalled && (held < srv.mem_cap ||
		    (uint64_t)tk_bufpool_held(&w->pool) *
		    (uint64_t)srv.nworkers < held))
			break;
		conn_close(w, c, CONN_MEMORY);
		n++;
	}
	if (n > 0) {
		atomic_fetch_add(&srv.mem_shed, n);
		log_debug("%s: thread %d closed %llu", __func__, w->id,
		    (unsigned long long)n);
	}
	if (held < srv.mem_low)
		leave(held);
}

/*
 * The connection of w that sits on the most queued bytes, and in
 * *stalled whether it has not read or sent for a MEM_TICK (its peer is
 * not taking its bytes back).  The stalled come first, so that a client
 * that keeps up is not closed for the ones that do not, whatever it
 * holds queued in passing (on io_uring every message waits in a queue:
 * up to --buffer-limit and a receive's last chunk past it, as much as a
 * stalled client holds; integ/echo_memory's client beside the stuck
 * ones was closed so, 3 runs in 12); then the most pool buffers (what
 * a close gives back, so as few close as can be); then the longest
 * without a read or send.  Walks every connection (the wheel): an
 * episode is rare, and a score kept up to date would cost every read.
 */
static struct conn *
worst(struct worker *w, int *stalled)
{
	struct conn	*c, *top = NULL;
	uint64_t	 score, best = 0;
	uint32_t	 nowu, idle;
	size_t		 q;
	int		 i;

	nowu = (uint32_t)(tk_loop_now(w->l) >> CONN_TSHIFT);
	for (i = 0; i < WHEEL_SLOTS; i++)
		LIST_FOREACH(c, &w->wheel[i], slot) {
			q = w->proto->queued != NULL ? w->proto->queued(c) :
			    c->outq.len;
			if (q == 0)
				continue;
			idle = nowu - c->last;
			score = (uint64_t)(idle >= MEM_STALLED) << 63 |
			    (uint64_t)((q + POOL_BUFSIZE - 1) / POOL_BUFSIZE) <<
			    32 | idle;
			if (score > best) {
				best = score;
				top = c;
			}
		}
	*stalled = best >> 63;
	return top;
}

/* Bytes in a cgroup file: a number, or 0 for "max", absent or junk. */
static uint64_t
cg_read(const char *path)
{
	FILE			*f;
	unsigned long long	 v;
	char			 buf[64], *end;

	if ((f = fopen(path, "re")) == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) == NULL) {
		fclose(f);
		return 0;
	}
	fclose(f);
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno != 0 || end == buf || (*end != '\n' && *end != '\0'))
		return 0;
	return v;
}

/*
 * The tightest memory limit of this process's cgroup and its ancestors
 * (v2 "0::/path", else the v1 memory controller's), or 0 when there is
 * none; what says which.  v1 writes "no limit" as a huge number, which
 * the caller's comparison with physical memory turns away.
 */
static uint64_t
cgroup_limit(char *what, size_t len)
{
	FILE		*f;
	char		 line[4096], dir[4096], path[4096 + 64], *p, *q;
	const char	*base = NULL, *file = NULL;
	uint64_t	 v, lim = 0;

	if ((f = fopen("/proc/self/cgroup", "re")) == NULL)
		return 0;
	dir[0] = '\0';
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((p = strchr(line, ':')) == NULL ||
		    (q = strchr(p + 1, ':')) == NULL)
			continue;
		*q = '\0';
		if (strcmp(line, "0") == 0 && p[1] == '\0') {
			/* v2; a v1 memory line, if any, wins below. */
			if (base == NULL) {
				strlcpy(dir, q + 1, sizeof(dir));
				base = CG_ROOT;
				file = "memory.max";
			}
		} else if (strstr(p + 1, "memory") != NULL) {
			strlcpy(dir, q + 1, sizeof(dir));
			base = CG_ROOT "/memory";
			file = "memory.limit_in_bytes";
			break;
		}
	}
	fclose(f);
	if (base == NULL || dir[0] != '/')
		return 0;
	for (;;) {
		snprintf(path, sizeof(path), "%s%s/%s", base,
		    strcmp(dir, "/") == 0 ? "" : dir, file);
		if ((v = cg_read(path)) != 0 && (lim == 0 || v < lim))
			lim = v;
		if (strcmp(dir, "/") == 0)
			break;
		p = strrchr(dir, '/');
		if (p == dir)
			p[1] = '\0';
		else
			*p = '\0';
	}
	snprintf(what, len, "cgroup %s", file);
	return lim;
}

/* n bytes as "4.0 MiB". */
static const char *
fmt_mib(uint64_t n, char *buf, size_t len)
{
	snprintf(buf, len, "%.1f MiB", (double)n / (1 << 20));
	return buf;
}
