/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Cross-thread entry points of loop.h: tk_loop_post from four threads at
 * once (none lost, none run twice, each thread's order kept),
 * tk_loop_stop and tk_loop_wake from another thread ending a blocked
 * wait, and posting from the owner thread.  Meant to be clean under
 * ThreadSanitizer (make SAN=tsan): every datum shared with a poster
 * thread is either handed over through tk_loop_post or atomic.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/clock.h"
#include "tenk/loop.h"
#include "tenk/timer.h"
#include "../t.h"

#define NTHR	4
#define NPER	25000

struct pmsg {
	struct tk_msg	 m;
	int		 thr;
	int		 seq;
	int		 ran;
};

struct poster {
	pthread_t	 tid;
	struct tk_loop	*l;
	struct pmsg	*msgs;		/* NPER, caller-allocated */
	int		 thr;
	int		 errs;
};

static atomic_int	 go;
static int		 nran, nbad, last[NTHR];

static void
guard_fn(struct tk_loop *l, struct tk_timer *t)
{
	(void)l;
	(void)t;
	T_FAIL("guard timer fired: the loop was not woken");
}

/* A loop on the test's backend whose guard fails the test after ns. */
static struct tk_loop *
newloop(struct tk_timer *guard, uint64_t ns)
{
	struct tk_loop	*l;

	l = tk_loop_new(t_backend, 0);
	T_PTR(l);
	tk_timer_init(guard, guard_fn, NULL);
	T_EQ(tk_timer_arm(l, guard, ns), 0);
	return l;
}

/* The end of a loop from newloop(): its guard disarmed, the loop freed. */
static void
endloop(struct tk_loop *l, struct tk_timer *guard)
{
	tk_timer_cancel(l, guard);
	tk_loop_free(l);
}

/* Runs on the loop's thread. */
static void
pmsg_run(struct tk_loop *l, struct tk_msg *m)
{
	struct pmsg	*p = m->arg;

	if (p == NULL || &p->m != m || p->thr < 0 || p->thr >= NTHR) {
		nbad++;
		return;
	}
	if (p->ran++ != 0)
		nbad++;
	if (p->seq != last[p->thr] + 1)
		T_FAIL("thread %d: message %d after %d", p->thr, p->seq,
		    last[p->thr]);
	last[p->thr] = p->seq;
	if (++nran == NTHR * NPER)
		tk_loop_stop(l);
}

static void *
poster_main(void *arg)
{
	struct poster	*ps = arg;
	int		 i;

	while (atomic_load(&go) == 0)
		;
	for (i = 0; i < NPER; i++) {
		ps->msgs[i].m.fn = pmsg_run;
		ps->msgs[i].m.arg = &ps->msgs[i];
		ps->msgs[i].thr = ps->thr;
		ps->msgs[i].seq = i;
		if (tk_loop_post(ps->l, &ps->msgs[i].m) == -1)
			ps->errs++;
		/* Let the loop catch up now and then, emptying the queue. */
		if (i % 5000 == 4999)
			sched_yield();
	}
	return NULL;
}

TEST_BE_T(wake_post_threads, 120)
{
	struct tk_loop	*l;
	struct tk_timer	 guard;
	struct poster	 ps[NTHR];
	int		 i, j;

	l = newloop(&guard, 60 * TK_SEC);
	for (i = 0; i < NTHR; i++) {
		last[i] = -1;
		ps[i].l = l;
		ps[i].thr = i;
		ps[i].errs = 0;
		ps[i].msgs = calloc(NPER, sizeof(struct pmsg));
		T_PTR(ps[i].msgs);
		T_EQ(pthread_create(&ps[i].tid, NULL, poster_main, &ps[i]), 0);
	}
	atomic_store(&go, 1);
	T_EQ(tk_loop_run(l, 0), 0);
	for (i = 0; i < NTHR; i++)
		T_EQ(pthread_join(ps[i].tid, NULL), 0);
	T_EQ(nran, NTHR * NPER);
	T_EQ(nbad, 0);
	for (i = 0; i < NTHR; i++) {
		T_EQ(ps[i].errs, 0);
		T_EQ(last[i], NPER - 1);
		for (j = 0; j < NPER; j++)
			if (ps[i].msgs[j].ran != 1)
				T_FAIL("thread %d message %d ran %d times", i,
				    j, ps[i].msgs[j].ran);
	}
	/* Nothing more arrives. */
	for (i = 0; i < 10; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(nran, NTHR * NPER);
	endloop(l, &guard);
	for (i = 0; i < NTHR; i++)
		free(ps[i].msgs);
}

/*
 * A helper thread that waits until the loop has run (it sets "running"
 * from a timer callback), gives it time to block, then acts.
 */
enum act { A_STOP = 0, A_WAKE, A_POST };

struct helper {
	pthread_t	 tid;
	struct tk_loop	*l;
	enum act	 act;
	atomic_int	 running;
	atomic_int	 acting;
	atomic_int	 done;
	struct tk_msg	 m;
	uint64_t	 at;		/* when it acted; read after join */
};

static void
set_running(struct tk_loop *l, struct tk_timer *t)
{
	struct helper	*h = t->arg;

	(void)l;
	atomic_store(&h->running, 1);
}

static void *
helper_main(void *arg)
{
	struct helper	*h = arg;

	while (atomic_load(&h->running) == 0)
		usleep(1000);
	usleep(50000);
	h->at = tk_clock_mono();
	atomic_store(&h->acting, 1);
	switch (h->act) {
	case A_STOP:
		tk_loop_stop(h->l);
		break;
	case A_WAKE:
		tk_loop_wake(h->l);
		break;
	case A_POST:
		if (tk_loop_post(h->l, &h->m) == -1)
			abort();
		break;
	}
	atomic_store(&h->done, 1);
	return NULL;
}

static int	posted_ran;

static void
posted_fn(struct tk_loop *l, struct tk_msg *m)
{
	(void)l;
	T_EQ((intptr_t)m->arg, 42);
	posted_ran++;
}

static void
helper_start(struct helper *h, struct tk_loop *l, enum act act,
    struct tk_timer *kick, tk_msg_fn *fn)
{
	memset(h, 0, sizeof(*h));
	h->l = l;
	h->act = act;
	h->m.fn = fn;
	h->m.arg = (void *)(intptr_t)42;
	tk_timer_init(kick, set_running, h);
	T_EQ(tk_timer_arm(l, kick, 0), 0);
	T_EQ(pthread_create(&h->tid, NULL, helper_main, h), 0);
}

/* tk_loop_stop from another thread ends a tk_loop_run(l, 0) blocked. */
TEST_BE(wake_stop_other_thread)
{
	struct tk_loop	*l;
	struct tk_timer	 guard, kick;
	struct helper	 h;
	uint64_t	 t0;

	l = newloop(&guard, 10 * TK_SEC);
	helper_start(&h, l, A_STOP, &kick, NULL);
	t0 = tk_clock_mono();
	T_EQ(tk_loop_run(l, 0), 0);
	T_EQ(pthread_join(h.tid, NULL), 0);
	T_EQ(atomic_load(&h.done), 1);
	T_GE(tk_clock_mono() - t0, 50 * TK_MSEC);
	endloop(l, &guard);
}

/* tk_loop_wake ends one blocked TK_RUN_ONCE wait and does nothing else. */
TEST_BE(wake_wake_other_thread)
{
	struct tk_loop	*l;
	struct tk_timer	 guard, kick;
	struct helper	 h;
	int		 i;

	l = newloop(&guard, 10 * TK_SEC);
	helper_start(&h, l, A_WAKE, &kick, NULL);
	/* The kick timer fires, then one ONCE blocks until the wake. */
	for (i = 0; i < 100 && atomic_load(&h.running) == 0; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(atomic_load(&h.running), 1);
	for (i = 0; i < 10 && atomic_load(&h.acting) == 0; i++)
		T_EQ(tk_loop_run(l, TK_RUN_ONCE), 1);
	T_EQ(pthread_join(h.tid, NULL), 0);
	T_EQ(atomic_load(&h.done), 1);
	/* A spurious return may cost an extra pass, not a spin. */
	T_LE(i, 3);
	T_GE(tk_clock_mono(), h.at);
	T_OK(tk_timer_pending(&guard));
	endloop(l, &guard);
}

/* A wake sent before the loop blocks is not lost. */
TEST_BE(wake_before_wait)
{
	struct tk_loop	*l;
	struct tk_timer	 guard;
	uint64_t	 t0;

	l = newloop(&guard, 10 * TK_SEC);
	tk_loop_wake(l);
	tk_loop_wake(l);
	t0 = tk_clock_mono();
	T_EQ(tk_loop_run(l, TK_RUN_ONCE), 1);
	T_LT(tk_clock_mono() - t0, 5 * TK_SEC);
	endloop(l, &guard);
}

/* A post from another thread wakes a blocked loop and runs there. */
static void
post_stop_fn(struct tk_loop *l, struct tk_msg *m)
{
	posted_fn(l, m);
	tk_loop_stop(l);
}

TEST_BE(wake_post_wakes)
{
	struct tk_loop	*l;
	struct tk_timer	 guard, kick;
	struct helper	 h;

	l = newloop(&guard, 10 * TK_SEC);
	helper_start(&h, l, A_POST, &kick, post_stop_fn);
	T_EQ(tk_loop_run(l, 0), 0);
	T_EQ(posted_ran, 1);
	T_EQ(pthread_join(h.tid, NULL), 0);
	endloop(l, &guard);
}

/*
 * Posting from the owner thread: runs in a later iteration, in order; a
 * message may free itself and post another.
 */
static int	own_seq[8], own_n;

static void
own_fn(struct tk_loop *l, struct tk_msg *m)
{
	(void)l;
	own_seq[own_n++] = (int)(intptr_t)m->arg;
}

static void
self_free_fn(struct tk_loop *l, struct tk_msg *m)
{
	struct tk_msg	*m2;

	own_seq[own_n++] = (int)(intptr_t)m->arg;
	free(m);
	if (own_n < 5) {
		m2 = calloc(1, sizeof(*m2));
		T_PTR(m2);
		m2->fn = self_free_fn;
		m2->arg = (void *)(intptr_t)(10 + own_n);
		T_EQ(tk_loop_post(l, m2), 0);
	}
}

TEST_BE(wake_post_own_thread)
{
	struct tk_loop	*l;
	struct tk_msg	 m[3], *hm;
	int		 i;

	l = tk_loop_new(t_backend, 0);
	T_PTR(l);
	for (i = 0; i < 3; i++) {
		m[i].fn = own_fn;
		m[i].arg = (void *)(intptr_t)i;
		T_EQ(tk_loop_post(l, &m[i]), 0);
	}
	for (i = 0; i < 10 && own_n < 3; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(own_n, 3);
	for (i = 0; i < 3; i++)
		T_EQ(own_seq[i], i);

	hm = calloc(1, sizeof(*hm));
	T_PTR(hm);
	hm->fn = self_free_fn;
	hm->arg = (void *)(intptr_t)13;
	T_EQ(tk_loop_post(l, hm), 0);
	for (i = 0; i < 50 && own_n < 5; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(own_n, 5);
	T_EQ(own_seq[3], 13);
	T_EQ(own_seq[4], 14);
	tk_loop_free(l);
}

/* Messages not yet run when the loop is freed are dropped, not run. */
static int	dropped_ran;

static void
dropped_fn(struct tk_loop *l, struct tk_msg *m)
{
	(void)l;
	(void)m;
	dropped_ran++;
}

TEST_BE(wake_free_drops_posts)
{
	struct tk_loop	*l;
	struct tk_msg	 m;

	l = tk_loop_new(t_backend, 0);
	T_PTR(l);
	m.fn = dropped_fn;
	m.arg = NULL;
	T_EQ(tk_loop_post(l, &m), 0);
	tk_loop_free(l);
	T_EQ(dropped_ran, 0);
}

/*
 * A message that posts itself again from its own function: the batch it
 * was taken in must still run to its end, in order, and the re-posted
 * message runs once more after it.  Walking the batch without saving the
 * next link first would end it at the re-posted message.
 */
#define NREPOST	64
static int	rp_seq[NREPOST + 1], rp_n;

static void
repost_fn(struct tk_loop *l, struct tk_msg *m)
{
	int	i = (int)(intptr_t)m->arg;

	if (rp_n <= NREPOST)
		rp_seq[rp_n] = i;
	rp_n++;
	if (i == 0 && rp_n == 1)
		T_EQ(tk_loop_post(l, m), 0);
}

TEST_BE(wake_post_repost_in_batch)
{
	struct tk_loop	*l;
	struct tk_msg	 m[NREPOST];
	int		 i;

	l = tk_loop_new(t_backend, 0);
	T_PTR(l);
	for (i = 0; i < NREPOST; i++) {
		m[i].fn = repost_fn;
		m[i].arg = (void *)(intptr_t)i;
		T_EQ(tk_loop_post(l, &m[i]), 0);
	}
	for (i = 0; i < 50 && rp_n < NREPOST + 1; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(rp_n, NREPOST + 1);
	for (i = 0; i < NREPOST; i++)
		T_EQ(rp_seq[i], i);
	T_EQ(rp_seq[NREPOST], 0);
	/* Nothing else is left to run. */
	for (i = 0; i < 5; i++)
		tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(rp_n, NREPOST + 1);
	tk_loop_free(l);
}

/*
 * Many messages still queued when the loop is freed: none runs, the loop
 * neither frees nor touches them, and the poster frees them afterwards.
 * Under ASan a loop that freed them would show as a double free, and one
 * that kept them as a leak.
 */
static int	left_ran;

static void
left_fn(struct tk_loop *l, struct tk_msg *m)
{
	(void)l;
	(void)m;
	left_ran++;
}

TEST_BE(wake_free_leaves_posts)
{
	struct tk_loop	*l;
	struct tk_msg	*m[32];
	int		 i;

	l = tk_loop_new(t_backend, 0);
	T_PTR(l);
	for (i = 0; i < 32; i++) {
		T_PTR(m[i] = calloc(1, sizeof(*m[i])));
		m[i]->fn = left_fn;
		m[i]->arg = m[i];
		T_EQ(tk_loop_post(l, m[i]), 0);
	}
	tk_loop_free(l);
	T_EQ(left_ran, 0);
	for (i = 0; i < 32; i++) {
		T_OK(m[i]->fn == left_fn && m[i]->arg == m[i]);
		free(m[i]);
	}
}
