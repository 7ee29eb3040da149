/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --fastpath sockmap: the proxy's sessions forwarded by the kernel.  At
 * start (before privileges go) pxfast_load() loads fastpath.c's program;
 * once a session is connected and its queues are empty, both sockets go
 * into its map and each direction is handed to the kernel whenever tenkd
 * has nothing of its own queued toward the destination.  The rules that
 * keep the bytes exact are fastpath.c's; this file is what a session
 * does with them, one direction at a time:
 *
 *	state		the kernel		tenkd
 *	FP_COPY		passes every segment	dp_pump() as without the
 *						fast path, then a grant once
 *						the queue is empty and the
 *						source read to EAGAIN
 *	FP_KERNEL	redirects under the	wants READ on the source:
 *			grant, counts, stamps	a segment passed, a FIN or
 *						an RST makes it readable
 *	FP_DRAIN	passes			waits (a timer, from 20 us
 *						doubling to 50 ms) until the
 *						redirect has drained, then
 *						FP_COPY
 *
 * So a FIN, an RST, a window spent (backpressure), a slow reader and a
 * bulk stream all come back to the copying path, which handles them as
 * it always has; a bulk stream, whose source is never read to EAGAIN
 * with the queue empty, stays there and moves by splice(2).  A session
 * whose sockets cannot go into the map (the map full, a refusal) stays
 * copying; one whose grant fails keeps copying from there, exactly.
 *
 * What tenkd keeps: the bytes the kernel moved are added to the
 * session's counts (access log, upstream counters) at its end and to
 * the thread's (/metrics) at each drain and at the end; the idle wheel
 * and the fin timeout read the program's stamp (pxfast_touch) before
 * they judge a session idle.  The state lives behind a pointer allocated
 * only for sessions that enter the fast path, so an idle session without
 * it costs no more.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/log.h"
#include "../tenkd.h"
#include "fastpath.h"

enum fp_state {
	FP_COPY = 0,
	FP_KERNEL,
	FP_DRAIN,
};

#define FP_POLL_MIN	(20 * 1000)	/* ns */
#define FP_POLL_MAX	(50 * TK_MSEC)
#define FP_WINDOW_MIN	(256 * 1024)	/* a grant's bytes, at least */
#define FP_WINDOW_MAX	(1024 * 1024)
#define FP_MAXSOCKS	(1 << 22)	/* the maps' entries, at most */

struct pxfast {
	struct fp_dir		 d[2];		/* by direction */
	uint8_t			 st[2];		/* enum fp_state */
	struct tk_timer		 timer;		/* a drain's poll */
	uint64_t		 poll;		/* its next interval */
	struct conn		*c;		/* the session */
};

static void	drain_tick(struct tk_loop *, struct tk_timer *);
static void	count(struct worker *, struct pxfast *, int, uint64_t);

/*
 * The bytes a grant allows: --buffer-limit, but at least 256k, as a
 * splice's pipe (dpath.c): kernel memory, not tenkd's, and each grant
 * costs system calls.
 */
static uint64_t	window;

/*
 * Start-up, before privileges are dropped: load the program if
 * --fastpath sockmap asks for it.  Where that cannot be (not built in,
 * no CAP_BPF, the completion data path) one line says why and the
 * proxy runs without it.  The maps are preallocated for every socket
 * the proxy may have in them, two a session, in every worker process
 * (they share them); what the kernel holds for them counts against
 * each process's memory budget, its share, as the io_uring rings do.
 */
void
pxfast_load(void)
{
	const struct config *cfg = &srv.cfg;
	uint64_t	 n;
	char		 why[256];

	if (!cfg->fastpath)		/* a proxy option */
		return;
	if (cfg->backend != NULL && strcmp(cfg->backend, "io_uring") == 0) {
		log_warnx("--fastpath sockmap: not with io_uring's completion "
		    "data path; off");
		return;
	}
	n = srv.nofile;
	if (srv.max_conns > 0 && 2 * srv.max_conns < n)
		n = 2 * srv.max_conns;
	n *= (uint64_t)(cfg->workers > 1 ? cfg->workers : 1);
	if (n > FP_MAXSOCKS)
		n = FP_MAXSOCKS;
	if (fastpath_load((int)n, 0, why, sizeof(why)) == -1) {
		log_warnx("--fastpath sockmap: %s; off", why);
		return;
	}
	window = cfg->buffer_limit;
	if (window < FP_WINDOW_MIN)
		window = FP_WINDOW_MIN;
	if (window > FP_WINDOW_MAX)
		window = FP_WINDOW_MAX;
	srv.fastpath = 1;
	mem_fixed(pxfast_mem());
	log_info("--fastpath sockmap: sessions forwarded by the kernel "
	    "(%llu sockets at most, maps %zu KiB)", (unsigned long long)n,
	    fastpath_mem() / 1024);
	log_warnx("--fastpath sockmap: Linux 6.18 was seen to deliver a "
	    "passed segment twice under load; not exact there (tenkd(8))");
}

/*
 * This process's share of the kernel memory the maps hold: they are
 * loaded once and shared by every worker process.
 */
size_t
pxfast_mem(void)
{
	return fastpath_mem() / (size_t)(srv.cfg.workers > 1 ?
	    srv.cfg.workers : 1);
}

/*
 * Put the sockets of c's flows fl[0] (client to upstream) and fl[1]
 * into the map, the program being loaded (srv.fastpath).  Returns the
 * state to keep behind the session's pointer, or NULL with errno:
 * EAGAIN, try again once the sources are read (fastpath_pair); else the
 * session stays copying (logged at debug).  A full map is swept of dead
 * processes' entries, at most once a second (fastpath_sweep).  Worker
 * thread.
 */
struct pxfast *
pxfast_new(struct worker *w, struct conn *c, const struct dp_flow *fl)
{
	static _Atomic uint64_t	 swept;
	struct pxfast		*fp;
	uint64_t		 now, last;
	int			 i;

	if ((fp = calloc(1, sizeof(*fp))) == NULL)
		return NULL;
	if (fastpath_pair(fl[0].src->fd, fl[1].src->fd, 0, 0, fp->d) == -1) {
		i = errno;
		now = tk_loop_now(w->l);
		last = atomic_load(&swept);
		if (i == E2BIG && now - last >= TK_SEC &&
		    atomic_compare_exchange_strong(&swept, &last, now))
			log_info("--fastpath sockmap: map full, %d entries of "
			    "closed sockets dropped", fastpath_sweep());
		if (i != EAGAIN)
			log_debug("%s: fd %d and %d: %s: copying", __func__,
			    fl[0].src->fd, fl[1].src->fd, strerror(i));
		free(fp);
		errno = i;
		return NULL;
	}
	for (i = 0; i < 2; i++)
		fp->d[i].rbase = *fl[i].nin;
	tk_timer_init(&fp->timer, drain_tick, fp);
	fp->c = c;
	w->st.fpsess++;
	return fp;
}

/* A drain's poll: run the session's step, which looks again. */
static void
drain_tick(struct tk_loop *l, struct tk_timer *t)
{
	struct pxfast	*fp = t->arg;

	(void)l;
	conn_step(fp->c->io.arg, fp->c);
}

/*
 * Add what the kernel moved for direction dir (0: client to upstream,
 * 1: back) since last time to the thread's counts, by side.
 */
static void
count(struct worker *w, struct pxfast *fp, int dir, uint64_t bytes)
{
	struct fp_dir	*d = &fp->d[dir];
	uint64_t	 n;

	if (bytes <= d->counted)
		return;
	n = bytes - d->counted;
	w->st.bytes_in[dir == 0 ? SIDE_CLIENT : SIDE_UPSTREAM] += n;
	w->st.bytes_out[dir == 0 ? SIDE_UPSTREAM : SIDE_CLIENT] += n;
	w->st.fpbytes += n;
	d->counted = bytes;
}

/*
 * Before dp_pump() on direction dir (flow f): returns 1 while the kernel
 * has the direction (or tenkd waits for its drain), so that the caller
 * skips the pump; 0 when tenkd moves the bytes itself.
 */
int
pxfast_pump(struct worker *w, struct pxfast *fp, int dir, struct dp_flow *f)
{
	struct fp_dir	*d = &fp->d[dir];
	struct fp_out	 out;
	int		 r;

	switch (fp->st[dir]) {
	case FP_COPY:
		return 0;
	case FP_KERNEL:
		if (!(f->src->ready & TK_EV_READ))
			return 1;
		/* Readable in the kernel's eyes too, or a stale event. */
		if ((r = fastpath_readable(f->src->fd)) == 0) {
			tk_io_block(f->src, TK_EV_READ);
			return 1;
		}
		/* Taken back, so that the redirect stops; else again. */
		if (r == -1 || (r = fastpath_revoke(f->src->fd, d)) != 1) {
			if (r == -1)
				log_debug("%s: fd %d: %s", __func__,
				    f->src->fd, strerror(errno));
			if (!tk_timer_pending(&fp->timer))
				(void)tk_timer_arm(w->l, &fp->timer,
				    FP_POLL_MAX);
			return 1;
		}
		fp->st[dir] = FP_DRAIN;
		fp->poll = FP_POLL_MIN;
		/* FALLTHROUGH */
	case FP_DRAIN:
		if ((r = fastpath_drained(f->dst->fd, d)) != 1) {
			if (r == -1)
				log_debug("%s: fd %d: %s", __func__,
				    f->dst->fd, strerror(errno));
			if (!tk_timer_pending(&fp->timer))
				(void)tk_timer_arm(w->l, &fp->timer,
				    fp->poll);
			if (fp->poll < FP_POLL_MAX)
				fp->poll *= 2;
			return 1;
		}
		fp->st[dir] = FP_COPY;
		if (fastpath_out(d, &out) == 0)
			count(w, fp, dir, out.bytes);
		return 0;
	}
	return 0;
}

/*
 * dp_flow's more: f's source read 0, but bytes the program passed may
 * still be on their way to its queue (fastpath_unread).  Then the
 * direction waits as for a drain and reads again.
 */
int
pxfast_more(struct worker *w, struct pxfast *fp, int dir, struct dp_flow *f)
{
	if (fastpath_unread(&fp->d[dir], *f->nin) != 1)
		return 0;
	log_debug("%s: fd %d: passed bytes behind the FIN", __func__,
	    f->src->fd);
	fp->st[dir] = FP_DRAIN;
	fp->poll = FP_POLL_MIN;
	if (!tk_timer_pending(&fp->timer))
		(void)tk_timer_arm(w->l, &fp->timer, fp->poll);
	return 1;
}

/*
 * After dp_pump() on direction dir: hand it to the kernel if tenkd
 * holds nothing for it and its source was read to EAGAIN.
 */
void
pxfast_grant(struct worker *w, struct pxfast *fp, int dir,
    const struct dp_flow *f)
{
	(void)w;
	if (fp->st[dir] != FP_COPY || dp_pending(f) > 0 ||
	    (*f->flags & DP_F_EOF) || (f->src->ready & TK_EV_READ) ||
	    f->nin == NULL)
		return;
	if (fastpath_grant(f->src->fd, f->dst->fd, &fp->d[dir], window,
	    FP_SEGS, *f->nin) == 1)
		fp->st[dir] = FP_KERNEL;
}

/*
 * What direction dir's source may want: not READ while its redirect
 * drains (the timer drives the step then, and a readable source would
 * keep it runnable with nothing to do).
 */
unsigned int
pxfast_want(const struct pxfast *fp, int dir)
{
	return fp->st[dir] == FP_DRAIN ? ~(unsigned int)TK_EV_READ : ~0U;
}

/*
 * The kernel's last activity on the session, if later than c->last: for
 * the idle wheel and the fin timeout.  A segment forwarded since the
 * loop read its clock is stamped after now: it counts as now (refused,
 * a session whose talker wrote just as its idle tick came was closed).
 */
void
pxfast_touch(struct worker *w, struct pxfast *fp, struct conn *c)
{
	struct fp_out	out;
	uint64_t	now = tk_loop_now(w->l), last = 0;
	int		i;

	for (i = 0; i < 2; i++)
		if (fastpath_out(&fp->d[i], &out) == 0 && out.last > last)
			last = out.last;
	if (last > now)
		last = now;
	if (last > conn_last_ns(c, now))
		conn_touch(c, last);
}

/*
 * The session ends: the bytes the kernel moved each way into moved[]
 * (for the session's counts) and the thread's, the map entries dropped
 * (the sockets left the map as they closed), fp freed.
 */
void
pxfast_end(struct worker *w, struct pxfast *fp, uint64_t *moved)
{
	struct fp_out	out;
	int		i;

	tk_timer_cancel(w->l, &fp->timer);
	for (i = 0; i < 2; i++) {
		moved[i] = 0;
		if (fastpath_out(&fp->d[i], &out) == 0) {
			moved[i] = out.bytes;
			count(w, fp, i, out.bytes);
		}
	}
	fastpath_forget(fp->d);
	free(fp);
}
