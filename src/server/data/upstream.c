/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The proxy's upstreams: the list given with --upstream, the choice of
 * one per connect attempt (weighted round-robin, least connections or
 * a consistent hash of the client, chash.c), passive health (--fail-max
 * consecutive connect failures take an upstream out for --fail-timeout)
 * and the per-upstream counters of /stats and /metrics.  Connecting and
 * moving bytes are proxy.c's.
 *
 * The list is fixed after start-up and shared by all worker threads of
 * a process; everything that changes is an atomic, so picking takes no
 * lock.  Weighted round-robin walks a schedule built once at start-up by
 * the smooth weighted algorithm (each upstream gets its share spread
 * evenly through the cycle, not in runs), indexed by a shared counter.
 * Bytes are added to an upstream's counters when a session ends, not
 * per read, so the data path touches no shared cache line.
 *
 * Active health checks (--check-interval) run in the main thread's loop,
 * which holds no connections: every interval a connect to each
 * upstream (then, with --check-send, a line sent and the reply's first
 * bytes compared with --check-expect), failed if not done within
 * --check-timeout; --check-fall failures in a row take an upstream
 * out, --check-rise successes bring it back.  The
 * verdict is one atomic that workers read when they pick.  A backup
 * upstream (",backup") is picked only while no primary is usable, by
 * either kind of health.
 *
 * --source gives the local addresses upstream connects leave from,
 * taken in turn (a shared counter, as for round-robin).  Each address
 * has the whole ephemeral port range toward each upstream (sock.c binds
 * with IP_BIND_ADDRESS_NO_PORT), so n addresses give n times the
 * sessions before connect(2) runs out of ports.
 * XXX With --workers each process keeps its own health and counters.
 */
#include <sys/types.h>

#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/cli.h"
#include "tenk/clock.h"
#include "tenk/log.h"
#include "tenk/sock.h"
#include "tenk/timer.h"
#include "tenk/xmalloc.h"
#include "../tenkd.h"

struct upstream {
	struct tk_addr		 addr;
	char			 name[TK_ADDRSTRLEN];
	int			 idx;
	int			 weight;
	atomic_ullong		 active;	/* connecting, connected */
	atomic_ullong		 sessions;	/* connects done */
	atomic_ullong		 fails;		/* failed */
	atomic_ullong		 tx;		/* bytes sent to it */
	atomic_ullong		 rx;		/* bytes from it */
	atomic_int		 nfail;		/* failures in a row */
	atomic_ullong		 down_until;	/* ns; 0 = up */
	atomic_int		 hc_down;	/* health checks say down */
	int			 backup;	/* only if no primary is up */
	char			 hname[UPS_NAMEMAX]; /* name=, or the address */
	struct chash_member	 hm;		/* --balance hash */

	/* The health check, main thread only. */
	struct tk_io		 hc_io;		/* fd -1: none in flight */
	struct tk_timer		 hc_timer;	/* its --check-timeout */
	int			 hc_sent;	/* now reading the reply */
	size_t			 hc_got;	/* reply bytes matched */
	uint64_t		 hc_ok;		/* successes in a row */
	uint64_t		 hc_bad;	/* failures in a row */
};

/* The options, as short as globals'. */
static const struct pxconf *const pxc = &srv.cfg.px;
static const struct hcconf *const hc = &srv.cfg.hc;

static struct tk_timer	 hc_timer;
static struct tk_loop	*hc_loop;

static struct upstream	 ups[MAXUPSTREAMS];
static int		 nups;
static int		*sched;			/* upstream indexes */
static int		 nsched;
static atomic_uint	 rr_next;
static struct chash	 ch;			/* --balance hash */
static size_t		 nsrcs;			/* --source addresses */

/* --source by family ([0] IPv4, [1] IPv6), each taken in its own turn. */
static struct srcset {
	struct tk_addr	*a;
	size_t		 n;
	atomic_uint	 next;
} srcset[2];

static struct srcset *
srcset_of(const struct tk_addr *a)
{
	return &srcset[a->ss.ss_family == AF_INET6];
}

/*
 * The --source addresses by family (config.c checked that each is local
 * and that every upstream has one of its family).  Start-up.
 */
static void
sources_init(void)
{
	const struct config	*c = &srv.cfg;
	struct srcset		*ss;
	size_t			 i;

	atomic_init(&srcset[0].next, 0);
	atomic_init(&srcset[1].next, 0);
	nsrcs = c->nsources;
	for (i = 0; i < nsrcs; i++) {
		ss = srcset_of(&c->sources[i]);
		ss->a = xreallocarray(ss->a, ss->n + 1, sizeof(*ss->a));
		ss->a[ss->n++] = c->sources[i];
	}
}

/*
 * A nonblocking connect to u, from the next --source address of its
 * family in turn (without --source, the kernel chooses).  When an
 * address has no local port left toward u, each other one is tried
 * once, from this call's turn on, whatever other threads take
 * meanwhile.  Returns the fd, or -1 with errno set.  Any thread.
 */
int
upstream_connect(const struct upstream *u)
{
	struct srcset	*ss = srcset_of(&u->addr);
	unsigned int	 start;
	size_t		 i;
	int		 fd = -1;

	if (nsrcs == 0)
		return tk_sock_connect(&u->addr, NULL);
	start = atomic_fetch_add_explicit(&ss->next, 1, memory_order_relaxed);
	for (i = 0; i < ss->n; i++) {
		fd = tk_sock_connect(&u->addr, &ss->a[(start + i) % ss->n]);
		if (fd != -1 || !upstream_port_error(errno))
			break;
	}
	return fd;
}

/*
 * --balance hash: every upstream's place in the order of chash.c, from
 * its name (config.c refused two of one name), and the table of the
 * primaries.  Start-up.
 */
static void
hash_init(void)
{
	struct chash_member	m[MAXUPSTREAMS];
	int			i;

	for (i = 0; i < nups; i++) {
		ups[i].hm.seed = chash_seed(ups[i].hname);
		ups[i].hm.weight = ups[i].weight;
		m[i] = ups[i].hm;
		if (ups[i].backup)
			m[i].weight = 0;
	}
	if (chash_build(&ch, m, nups) == -1)
		fatal("--balance hash");
}

/*
 * The upstreams of srv.cfg, the round-robin schedule or the hash table,
 * and the --source addresses.  Start-up, in the process that serves.
 */
void
upstream_init(void)
{
	const struct upconf	*uc;
	int			 cur[MAXUPSTREAMS], total = 0, i, k, best;

	nups = srv.cfg.nups;
	for (i = 0; i < nups; i++) {
		uc = &srv.cfg.ups[i];
		ups[i].addr = uc->addr;
		strlcpy(ups[i].name, uc->name, sizeof(ups[i].name));
		strlcpy(ups[i].hname, uc->hname, sizeof(ups[i].hname));
		ups[i].idx = i;
		ups[i].weight = uc->weight;
		ups[i].backup = uc->backup;
	}
	sources_init();
	if (pxc->balance == BALANCE_HASH)
		hash_init();

	for (i = 0; i < nups; i++) {
		total += ups[i].weight;
		cur[i] = 0;
		atomic_init(&ups[i].active, 0);
		atomic_init(&ups[i].sessions, 0);
		atomic_init(&ups[i].fails, 0);
		atomic_init(&ups[i].tx, 0);
		atomic_init(&ups[i].rx, 0);
		atomic_init(&ups[i].nfail, 0);
		atomic_init(&ups[i].down_until, 0);
		atomic_init(&ups[i].hc_down, 0);
		tk_io_init(&ups[i].hc_io, -1, NULL, &ups[i]);
	}
	sched = xcalloc(total, sizeof(*sched));
	nsched = total;
	for (k = 0; k < total; k++) {
		best = 0;
		for (i = 0; i < nups; i++) {
			cur[i] += ups[i].weight;
			if (cur[i] > cur[best])
				best = i;
		}
		cur[best] -= total;
		sched[k] = best;
	}
	atomic_init(&rr_next, 0);
}

/* u is up by both kinds of health at now. */
static int
healthy(struct upstream *u, uint64_t now)
{
	uint64_t	d = atomic_load_explicit(&u->down_until,
			    memory_order_relaxed);

	if (atomic_load_explicit(&u->hc_down, memory_order_relaxed))
		return 0;
	return d == 0 || d <= now;
}

/* u may be picked: healthy, and a backup only when bk (no primary is). */
static int
usable(struct upstream *u, uint64_t now, int bk)
{
	return u->backup == bk && healthy(u, now);
}

/*
 * --balance hash: the slot's owner if it may be picked and is not in
 * tried; else the best for the slot (chash_better) of those that may and
 * are not, which is the owner the slot has in a table of those alone.
 * So a down upstream's clients go each to its next choice, spread over
 * the others by weight, and come back when it does; nobody else moves.
 * Only this way are backups (bk) picked, by their names too.
 */
static struct upstream *
hash_pick(uint32_t slot, uint64_t tried, uint64_t now, int bk)
{
	struct upstream	*u, *best = &ups[ch.slot[slot]];
	int		 i;

	if (!bk && healthy(best, now) && !(tried & (1ULL << best->idx)))
		return best;
	best = NULL;
	for (i = 0; i < nups; i++) {
		u = &ups[i];
		if (!usable(u, now, bk) || (tried & (1ULL << u->idx)))
			continue;
		if (best == NULL || chash_better(&u->hm, &best->hm, slot))
			best = u;
	}
	return best;
}

/*
 * Choose an upstream for a connect attempt: one that is up and not in
 * the bitmask tried, else one that is up, else NULL (all are down).  For
 * --balance hash, slot is the session's key's (chash_addr).  The choice
 * counts as active until upstream_failed() or upstream_release().  Any
 * thread.
 */
struct upstream *
upstream_pick(uint32_t slot, uint64_t tried, uint64_t now)
{
	struct upstream	*u, *best = NULL;
	unsigned int	 start;
	uint64_t	 a, ba = 0;
	int		 pass, i, k, bk = 1;

	/* The backups stand in only while every primary is down. */
	for (i = 0; i < nups && bk; i++)
		if (!ups[i].backup && healthy(&ups[i], now))
			bk = 0;
	for (pass = 0; pass < 2 && best == NULL; pass++) {
		switch (pxc->balance) {
		case BALANCE_LEASTCONN:
			/* Fewest active per unit of weight; ties rotate. */
			start = atomic_fetch_add(&rr_next, 1);
			for (i = 0; i < nups; i++) {
				u = &ups[(start + i) % nups];
				if (!usable(u, now, bk) || (pass == 0 &&
				    (tried & (1ULL << u->idx))))
					continue;
				a = atomic_load(&u->active);
				if (best == NULL || a * best->weight <
				    ba * u->weight) {
					best = u;
					ba = a;
				}
			}
			break;
		case BALANCE_HASH:
			best = hash_pick(slot, pass == 0 ? tried : 0, now, bk);
			break;
		case BALANCE_RR:
			start = atomic_fetch_add(&rr_next, 1);
			for (k = 0; k < nsched; k++) {
				u = &ups[sched[(start + k) % nsched]];
				if (!usable(u, now, bk) || (pass == 0 &&
				    (tried & (1ULL << u->idx))))
					continue;
				best = u;
				break;
			}
			break;
		}
	}
	if (best != NULL)
		atomic_fetch_add(&best->active, 1);
	return best;
}

/*
 * u itself, for a session routed to it (--sni-route), counted as
 * upstream_pick() counts its pick; NULL while u is down.  Any thread.
 */
struct upstream *
upstream_pick_this(struct upstream *u, uint64_t now)
{
	if (!healthy(u, now))
		return NULL;
	atomic_fetch_add(&u->active, 1);
	return u;
}

int
upstream_index(const struct upstream *u)
{
	return u->idx;
}

const char *
upstream_name(const struct upstream *u)
{
	return u->name;
}

/* A connect to u succeeded: it is healthy again. */
void
upstream_connected(struct upstream *u)
{
	atomic_fetch_add(&u->sessions, 1);
	if (atomic_exchange(&u->nfail, 0) >= pxc->fail_max &&
	    atomic_exchange(&u->down_until, 0) != 0)
		log_info("upstream %s is up again", u->name);
}

/*
 * connect(2) found no local port (EADDRNOTAVAIL; EADDRINUSE when bind
 * or connect finds the 4-tuple taken): our shortage, not a sign that
 * the upstream is sick (HAProxy's "RC" termination state).
 */
int
upstream_port_error(int err)
{
	return err == EADDRNOTAVAIL || err == EADDRINUSE;
}

/*
 * A connect to u failed (err: the errno, or ETIMEDOUT): count it, and
 * after --fail-max in a row take u out for --fail-timeout.  A local
 * port shortage is not counted against u: taking a healthy upstream out
 * would turn the shortage into an outage.  Releases the pick.
 */
void
upstream_failed(struct upstream *u, uint64_t now, int err)
{
	int	n;

	atomic_fetch_sub(&u->active, 1);
	if (upstream_port_error(err))
		return;
	atomic_fetch_add(&u->fails, 1);
	n = atomic_fetch_add(&u->nfail, 1) + 1;
	if (n < pxc->fail_max || pxc->fail_timeout == 0)
		return;
	/* One thread logs the transition; later failures only extend. */
	if (atomic_exchange(&u->down_until, now + pxc->fail_timeout) <= now)
		log_warnx("upstream %s is down after %d failed connect%s "
		    "(last: %s)", u->name, n, n == 1 ? "" : "s",
		    strerror(err));
}

/* A session on u ended: release the pick, add its bytes. */
void
upstream_release(struct upstream *u, uint64_t tx, uint64_t rx)
{
	atomic_fetch_sub(&u->active, 1);
	atomic_fetch_add(&u->tx, tx);
	atomic_fetch_add(&u->rx, rx);
}

/*
 * One line per upstream on /stats, after the thread totals:
 * "stats upstream 127.0.0.1:7000: up weight 1 active 2 sessions 9
 * fails 0 tx 123 rx 123", and with --balance hash " hash web1 slots
 * 52429 share 20.00%": the name it hashes by and its part of the
 * table, which it serves while up, to f.  Main thread.
 */
void
upstream_stats(FILE *f)
{
	struct upstream	*u;
	uint64_t	 d, now;
	char		 hs[UPS_NAMEMAX + 64];
	int		 i;

	now = tk_clock_mono();
	for (i = 0; i < nups; i++) {
		u = &ups[i];
		d = atomic_load(&u->down_until);
		hs[0] = '\0';
		if (ch.slot != NULL)
			snprintf(hs, sizeof(hs), " hash %s slots %u share "
			    "%.2f%%", u->hname, ch.owned[i],
			    100.0 * ch.owned[i] / CHASH_SLOTS);
		fprintf(f, "stats upstream %s: %s weight %d active %llu "
		    "sessions %llu fails %llu tx %llu rx %llu%s\n", u->name,
		    (d != 0 && d > now) || atomic_load(&u->hc_down) ?
		    "down" : "up", u->weight,
		    (unsigned long long)atomic_load(&u->active),
		    (unsigned long long)atomic_load(&u->sessions),
		    (unsigned long long)atomic_load(&u->fails),
		    (unsigned long long)atomic_load(&u->tx),
		    (unsigned long long)atomic_load(&u->rx), hs);
	}
}

/*
 * The end of u's health check: ok or not, why (for the log) when not.
 * --check-fall failures in a row take u out, --check-rise successes
 * bring it back, each change logged once.  Main thread.
 */
static void
hc_done(struct upstream *u, int ok, const char *why)
{
	tk_timer_cancel(hc_loop, &u->hc_timer);
	if (u->hc_io.fd != -1)
		(void)tk_io_close(hc_loop, &u->hc_io);
	u->hc_io.fd = -1;
	if (ok) {
		u->hc_bad = 0;
		if (++u->hc_ok == (uint64_t)hc->rise &&
		    atomic_exchange(&u->hc_down, 0) != 0)
			log_info("upstream %s is up: %llu health check%s "
			    "passed", u->name, (unsigned long long)u->hc_ok,
			    u->hc_ok == 1 ? "" : "s");
		return;
	}
	u->hc_ok = 0;
	if (++u->hc_bad == (uint64_t)hc->fall &&
	    atomic_exchange(&u->hc_down, 1) == 0)
		log_warnx("upstream %s is down: %llu health check%s failed "
		    "(last: %s)", u->name, (unsigned long long)u->hc_bad,
		    u->hc_bad == 1 ? "" : "s", why);
}

/* --check-timeout passed with u's check in flight. */
static void
hc_expired(struct tk_loop *l, struct tk_timer *t)
{
	(void)l;
	hc_done(t->arg, 0, "timed out");
}

/*
 * A health check's socket is ready: the connect finished, then the
 * line may be sent, then the reply read until it matches, differs or
 * ends, all within --check-timeout (hc_expired).  The line is short,
 * so a send that takes only part of it counts as a failure rather than
 * waiting for room.
 */
static void
hc_event(struct tk_loop *l, struct tk_io *io)
{
	struct upstream	*u = io->arg;
	char		 buf[256];
	size_t		 elen, k;
	ssize_t		 n;
	socklen_t	 sl = sizeof(int);
	int		 err = 0;

	if (!u->hc_sent) {
		if (getsockopt(io->fd, SOL_SOCKET, SO_ERROR, &err, &sl) == -1)
			err = errno;
		if (err != 0) {
			hc_done(u, 0, strerror(err));
			return;
		}
		if (hc->send == NULL) {
			hc_done(u, 1, NULL);
			return;
		}
		n = send(io->fd, hc->send, strlen(hc->send), MSG_NOSIGNAL);
		if (n != (ssize_t)strlen(hc->send)) {
			hc_done(u, 0, n == -1 ? strerror(errno) :
			    "short send");
			return;
		}
		u->hc_sent = 1;
		if (tk_io_want(l, io, TK_EV_READ) == -1)
			hc_done(u, 0, strerror(errno));
		return;
	}
	elen = hc->expect != NULL ? strlen(hc->expect) : 0;
	for (;;) {
		n = recv(io->fd, buf, sizeof(buf), 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN) {
			tk_io_block(io, TK_EV_READ);
			return;
		}
		if (n == -1) {
			hc_done(u, 0, strerror(errno));
			return;
		}
		if (n == 0) {
			hc_done(u, 0, "closed before the reply");
			return;
		}
		/* Any reply passes when no prefix is expected. */
		k = elen - u->hc_got < (size_t)n ? elen - u->hc_got :
		    (size_t)n;
		if (memcmp(buf, hc->expect != NULL ?
		    hc->expect + u->hc_got : "", k) != 0) {
			hc_done(u, 0, "unexpected reply");
			return;
		}
		u->hc_got += k;
		if (u->hc_got == elen) {
			hc_done(u, 1, NULL);
			return;
		}
	}
}

/*
 * Every --check-interval, a check of every upstream that has none in
 * flight.  Each fails at its own --check-timeout (hc_expired), so that
 * an upstream that accepts and never answers is down after about
 * --check-fall intervals.  One still in flight goes on (a timeout
 * longer than the interval), so that a short interval never fails a
 * check that a loaded upstream answers a little late.  Main thread.
 */
static void
hc_round(struct tk_loop *l, struct tk_timer *t)
{
	struct upstream	*u;
	int		 i, fd;

	for (i = 0; i < nups; i++) {
		u = &ups[i];
		if (u->hc_io.fd != -1)
			continue;
		u->hc_sent = 0;
		u->hc_got = 0;
		if ((fd = upstream_connect(u)) == -1) {
			hc_done(u, 0, strerror(errno));
			continue;
		}
		tk_io_init(&u->hc_io, fd, hc_event, u);
		if (tk_io_start(l, &u->hc_io, TK_EV_WRITE) == -1) {
			close(fd);
			u->hc_io.fd = -1;
			hc_done(u, 0, strerror(errno));
		} else if (tk_timer_arm(l, &u->hc_timer, hc->timeout) == -1)
			hc_done(u, 0, strerror(errno));
	}
	if (tk_timer_arm(l, t, hc->interval) == -1)
		log_warn("health checks stopped");
}

/*
 * Start the health checks in l, the main thread's loop, with a first
 * round at once; nothing when --check-interval is not given.
 */
void
upstream_check_start(struct tk_loop *l)
{
	int	i;

	if (hc->interval == 0 || nups == 0)
		return;
	for (i = 0; i < nups; i++)
		tk_timer_init(&ups[i].hc_timer, hc_expired, &ups[i]);
	hc_loop = l;
	tk_timer_init(&hc_timer, hc_round, NULL);
	if (tk_timer_arm(l, &hc_timer, 0) == -1)
		log_warn("health checks not started");
}

/* Stop the health checks and close their sockets, before l is freed. */
void
upstream_check_stop(void)
{
	int	i;

	if (hc_loop == NULL)
		return;
	tk_timer_cancel(hc_loop, &hc_timer);
	for (i = 0; i < nups; i++) {
		tk_timer_cancel(hc_loop, &ups[i].hc_timer);
		if (ups[i].hc_io.fd != -1) {
			(void)tk_io_close(hc_loop, &ups[i].hc_io);
			ups[i].hc_io.fd = -1;
		}
	}
	hc_loop = NULL;
}

/*
 * The histogram of connect times (issue 14), in seconds as Prometheus
 * wants them: upper bounds from 0.5 ms to 5 s, +Inf last.  One set of
 * atomics for the process: a connect is once per session, where the
 * per-upstream counters above are shared already, never per message.
 */
const double mhist_bounds[MHIST_N - 1] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
	1, 2.5, 5,
};
static atomic_ullong	 chist[MHIST_N];
static atomic_ullong	 chist_sum;		/* ns */

/* A connect took ns from connect(2) to its success.  Any thread. */
void
upstream_connect_time(uint64_t ns)
{
	int	i;

	for (i = 0; i < MHIST_N - 1; i++)
		if ((double)ns <= mhist_bounds[i] * 1e9)
			break;
	atomic_fetch_add_explicit(&chist[i], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&chist_sum, ns, memory_order_relaxed);
}

/* The upstreams' figures and the connect histogram into ms.  Any thread. */
void
upstream_metrics(struct msnap *ms)
{
	struct upstream	*u;
	uint64_t	 d, now = tk_clock_mono();
	int		 i;

	ms->nups = (uint32_t)nups;
	for (i = 0; i < nups; i++) {
		u = &ups[i];
		d = atomic_load(&u->down_until);
		ms->ups[i].up = !(d != 0 && d > now) &&
		    !atomic_load(&u->hc_down);
		ms->ups[i].active = atomic_load(&u->active);
		ms->ups[i].sessions = atomic_load(&u->sessions);
		ms->ups[i].fails = atomic_load(&u->fails);
		ms->ups[i].tx = atomic_load(&u->tx);
		ms->ups[i].rx = atomic_load(&u->rx);
		ms->ups[i].slots = ch.owned[i];
	}
	for (i = 0; i < MHIST_N; i++)
		ms->hist[i] = atomic_load_explicit(&chist[i],
		    memory_order_relaxed);
	ms->hist_sum = atomic_load_explicit(&chist_sum, memory_order_relaxed);
}

/* An upstream by index (upstream_index), which a session keeps. */
struct upstream *
upstream_at(int i)
{
	return &ups[i];
}
