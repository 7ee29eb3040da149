/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The timer contract of timer.h: deadline order, arming order for equal
 * deadlines, cancel and re-arm (from outside and from callbacks), the
 * pending state, a 100,000-operation random run against a reference
 * model, and real waits on every backend.
 *
 * The heap tests use a fake clock: absolute times at or below
 * tk_loop_now() are "expired" and fire in the next TK_RUN_NOWAIT pass,
 * times a million seconds ahead never fire.  A pass collects every
 * expired timer before running any callback, so one pass shows the whole
 * expired part of the heap in order.  Only the wait tests read the real
 * clock, and they assert lower bounds only (plus a 2 s ceiling).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/clock.h"
#include "tenk/loop.h"
#include "tenk/timer.h"
#include "../t.h"

#define FAR	(1000000ULL * TK_SEC)	/* "never", in this process */

struct tt {
	struct tk_timer	 t;
	int		 id;
	int		 fired;
};

static int	 order[4096];
static int	 norder;

static void
record(struct tk_loop *l, struct tk_timer *t)
{
	struct tt	*x = t->arg;

	(void)l;
	T_OK(&x->t == t);
	/* Our own callback is running: no longer pending. */
	T_EQ(tk_timer_pending(t), 0);
	x->fired++;
	if (norder < (int)(sizeof(order) / sizeof(order[0])))
		order[norder] = x->id;
	norder++;
}

static struct tk_loop *
heaploop(void)
{
	struct tk_loop	*l;

	l = tk_loop_new(NULL, 0);
	T_PTR(l);
	/* The fake clock needs room below now. */
	if (tk_loop_now(l) < 10 * TK_SEC)
		T_SKIP("monotonic clock too close to zero");
	return l;
}

static void
tt_init(struct tt *x, int id)
{
	memset(x, 0, sizeof(*x));
	x->id = id;
	tk_timer_init(&x->t, record, x);
	T_EQ(tk_timer_pending(&x->t), 0);
}

/* Deadlines in shuffled order, with ties: fire by (deadline, arming). */
TEST(timer_order)
{
	static const int	 back[] = { 50, 10, 30, 10, 50, 20, 10, 40,
				    60, 5, 30, 5 };
	static const int	 want[] = { 8, 0, 4, 7, 2, 10, 5, 1, 3, 6,
				    9, 11 };
	struct tk_loop		*l = heaploop();
	struct tt		 x[12];
	uint64_t		 now = tk_loop_now(l);
	int			 i;

	for (i = 0; i < 12; i++) {
		tt_init(&x[i], i);
		T_EQ(tk_timer_arm_at(l, &x[i].t, now - back[i] * TK_MSEC), 0);
		T_NE(tk_timer_pending(&x[i].t), 0);
	}
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	T_EQ(norder, 12);
	for (i = 0; i < 12; i++) {
		if (order[i] != want[i])
			T_FAIL("fire %d: timer %d, expected %d", i, order[i],
			    want[i]);
		T_EQ(x[i].fired, 1);
		T_EQ(tk_timer_pending(&x[i].t), 0);
	}
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	T_EQ(norder, 12);
	tk_loop_free(l);
}

/* Equal deadlines fire in arming order; re-arming moves to the back. */
TEST(timer_fifo)
{
	struct tk_loop	*l = heaploop();
	struct tt	*x;
	uint64_t	 when = tk_loop_now(l) - TK_SEC;
	int		 i, n = 1000;

	x = calloc(n, sizeof(*x));
	T_PTR(x);
	for (i = 0; i < n; i++) {
		tt_init(&x[i], i);
		T_EQ(tk_timer_arm_at(l, &x[i].t, when), 0);
	}
	/* Re-arm the even ones at the same deadline: now after the odd. */
	for (i = 0; i < n; i += 2)
		T_EQ(tk_timer_arm_at(l, &x[i].t, when), 0);
	tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(norder, n);
	for (i = 0; i < n / 2; i++)
		T_EQ(order[i], 2 * i + 1);
	for (i = 0; i < n / 2; i++)
		T_EQ(order[n / 2 + i], 2 * i);

	/* Relative arming with delay 0, from the same cached now. */
	norder = 0;
	for (i = 0; i < 10; i++)
		T_EQ(tk_timer_arm(l, &x[i].t, 0), 0);
	tk_loop_run(l, TK_RUN_NOWAIT);
	T_EQ(norder, 10);
	for (i = 0; i < 10; i++)
		T_EQ(order[i], i);
	free(x);
	tk_loop_free(l);
}

/* Cancel: cancelled timers never fire; cancelling idle ones is a no-op. */
TEST(timer_cancel)
{
	struct tk_loop	*l = heaploop();
	struct tt	 x[20], idle, fut;
	uint64_t	 now = tk_loop_now(l);
	int		 i;

	tt_init(&idle, 100);
	tk_timer_cancel(l, &idle.t);
	tk_timer_cancel(l, &idle.t);
	T_EQ(tk_timer_pending(&idle.t), 0);

	tt_init(&fut, 101);
	T_EQ(tk_timer_arm_at(l, &fut.t, now + FAR), 0);
	for (i = 0; i < 20; i++) {
		tt_init(&x[i], i);
		T_EQ(tk_timer_arm_at(l, &x[i].t, now - (20 - i)), 0);
	}
	for (i = 1; i < 20; i += 2) {
		tk_timer_cancel(l, &x[i].t);
		T_EQ(tk_timer_pending(&x[i].t), 0);
		tk_timer_cancel(l, &x[i].t);
	}
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 1);
	T_EQ(norder, 10);
	for (i = 0; i < 10; i++)
		T_EQ(order[i], 2 * i);
	T_EQ(fut.fired, 0);
	T_NE(tk_timer_pending(&fut.t), 0);

	/* A cancelled timer can be armed again. */
	T_EQ(tk_timer_arm_at(l, &x[1].t, now), 0);
	tk_timer_cancel(l, &fut.t);
	T_EQ(tk_timer_pending(&fut.t), 0);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	T_EQ(norder, 11);
	T_EQ(order[10], 1);
	T_EQ(fut.fired, 0);

	/* Re-arming into the future takes it out of the expired part. */
	T_EQ(tk_timer_arm_at(l, &x[0].t, now - 5), 0);
	T_EQ(tk_timer_arm_at(l, &x[0].t, now + FAR), 0);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 1);
	T_EQ(norder, 11);
	T_EQ(tk_timer_arm_at(l, &x[0].t, now - 5), 0);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	T_EQ(norder, 12);
	tk_loop_free(l);
}

/* A callback that re-arms itself fires once per pass, never twice. */
static int	self_n;

static void
rearm_self(struct tk_loop *l, struct tk_timer *t)
{
	T_EQ(tk_timer_pending(t), 0);
	self_n++;
	T_EQ(tk_timer_arm(l, t, 0), 0);
	T_NE(tk_timer_pending(t), 0);
	/* And again: still one entry. */
	T_EQ(tk_timer_arm_at(l, t, tk_loop_now(l) - 1), 0);
}

TEST(timer_rearm_self)
{
	struct tk_loop	*l = heaploop();
	struct tk_timer	 t;
	int		 i;

	alarm(20);		/* a pass that never ends is a failure */
	tk_timer_init(&t, rearm_self, NULL);
	T_EQ(tk_timer_arm(l, &t, 0), 0);
	for (i = 1; i <= 50; i++) {
		T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 1);
		T_EQ(self_n, i);
		T_NE(tk_timer_pending(&t), 0);
	}
	tk_timer_cancel(l, &t);
	T_EQ(tk_timer_pending(&t), 0);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	T_EQ(self_n, 50);
	tk_loop_free(l);
}

/*
 * From a callback: cancel another timer that has expired in the same
 * pass but not run yet, and free its memory (ASan would see a later
 * touch); re-arm a second expired one (it must wait for the next pass);
 * cancel a third one still in the heap; push a fourth one far out.
 */
static struct tt	*victim;
static struct tt	 x_rearm, x_heap, x_far;
static uint64_t		 base;

static void
killer(struct tk_loop *l, struct tk_timer *t)
{
	record(l, t);
	T_NE(tk_timer_pending(&victim->t), 0);	/* expired, not yet run */
	tk_timer_cancel(l, &victim->t);
	T_EQ(tk_timer_pending(&victim->t), 0);
	free(victim);
	victim = NULL;

	T_NE(tk_timer_pending(&x_rearm.t), 0);
	T_EQ(tk_timer_arm_at(l, &x_rearm.t, base - 1), 0);
	T_NE(tk_timer_pending(&x_rearm.t), 0);

	T_NE(tk_timer_pending(&x_heap.t), 0);
	tk_timer_cancel(l, &x_heap.t);
	T_EQ(tk_timer_pending(&x_heap.t), 0);

	T_EQ(tk_timer_arm_at(l, &x_far.t, base + FAR), 0);
}

TEST(timer_cancel_from_callback)
{
	struct tk_loop	*l = heaploop();
	struct tt	 k, after;

	base = tk_loop_now(l);
	tt_init(&k, 1);
	tk_timer_init(&k.t, killer, &k);
	victim = malloc(sizeof(*victim));
	T_PTR(victim);
	tt_init(victim, 2);
	tt_init(&x_rearm, 3);
	tt_init(&after, 4);
	tt_init(&x_heap, 5);
	tt_init(&x_far, 6);

	T_EQ(tk_timer_arm_at(l, &k.t, base - 100), 0);
	T_EQ(tk_timer_arm_at(l, &victim->t, base - 50), 0);
	T_EQ(tk_timer_arm_at(l, &x_rearm.t, base - 40), 0);
	T_EQ(tk_timer_arm_at(l, &after.t, base - 30), 0);
	T_EQ(tk_timer_arm_at(l, &x_far.t, base - 20), 0);
	T_EQ(tk_timer_arm_at(l, &x_heap.t, base + FAR / 2), 0);

	/* Pass 1: k, then after; victim, x_rearm and x_far do not run. */
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 2);
	T_EQ(norder, 2);
	T_EQ(order[0], 1);
	T_EQ(order[1], 4);
	T_EQ(x_rearm.fired, 0);
	T_EQ(x_far.fired, 0);
	T_EQ(x_heap.fired, 0);

	/* Pass 2: x_rearm, once. */
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 1);
	T_EQ(norder, 3);
	T_EQ(order[2], 3);
	T_EQ(x_rearm.fired, 1);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 1);
	T_EQ(norder, 3);
	T_NE(tk_timer_pending(&x_far.t), 0);
	tk_timer_cancel(l, &x_far.t);
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 0);
	tk_loop_free(l);
}

/*
 * 100,000 random operations on 512 timers against a reference model.
 * Each timer is idle, armed in the past ("expired at the next pass") or
 * armed a million seconds ahead, at base +/- v with v in 0..63 so that
 * ties are common.  Every so often a pass runs: it must fire exactly the
 * past-armed timers, sorted by (v, arming sequence).  Callbacks also
 * cancel or re-arm random timers; the model drops those from the current
 * pass (re-armed ones fire no earlier than the next).
 */
#define NT	512
#define NOPS	100000

enum { S_IDLE = 0, S_PAST, S_FUTURE };

struct ref {
	int		 state;
	unsigned int	 v;
	uint64_t	 seq;
	int		 inpass;	/* due in this pass, not run */
};

static struct tk_timer	 st[NT];
static struct ref	 rf[NT];
static uint64_t		 rseq, sbase;
static int		 expect[NT], nexpect, kexpect;
static long		 nfired, ncbops;

/* Below n, from t_rand(): seeded, so that a failure repeats. */
static unsigned int
rnd(unsigned int n)
{
	return t_rand() % n;
}

static void
check_pending(int i)
{
	int	p = tk_timer_pending(&st[i]) != 0;

	if (p != (rf[i].state != S_IDLE || rf[i].inpass))
		T_FAIL("timer %d: pending %d, model state %d inpass %d", i, p,
		    rf[i].state, rf[i].inpass);
}

/* One random operation on timer i, on the loop and on the model. */
static void
op(struct tk_loop *l, int i)
{
	unsigned int	r = rnd(10), v = rnd(64);

	/* From a callback, the timer leaves the current pass either way. */
	rf[i].inpass = 0;
	if (r < 3) {
		tk_timer_cancel(l, &st[i]);
		rf[i].state = S_IDLE;
	} else if (r < 7) {
		T_EQ(tk_timer_arm_at(l, &st[i], sbase - 64 + v), 0);
		rf[i].state = S_PAST;
		rf[i].v = v;
		rf[i].seq = rseq++;
	} else {
		T_EQ(tk_timer_arm_at(l, &st[i], sbase + FAR + v), 0);
		rf[i].state = S_FUTURE;
		rf[i].v = v;
		rf[i].seq = rseq++;
	}
	check_pending(i);
}

static void
stress_fire(struct tk_loop *l, struct tk_timer *t)
{
	int	i = (int)(t - st), j;

	T_OK(i >= 0 && i < NT && t->arg == &st[i]);
	while (kexpect < nexpect && !rf[expect[kexpect]].inpass)
		kexpect++;
	if (kexpect == nexpect)
		T_FAIL("timer %d fired; the model expects nothing more", i);
	if (expect[kexpect] != i)
		T_FAIL("timer %d fired; the model expects %d (v %u seq %ju "
		    "vs v %u seq %ju)", i, expect[kexpect], rf[i].v,
		    (uintmax_t)rf[i].seq, rf[expect[kexpect]].v,
		    (uintmax_t)rf[expect[kexpect]].seq);
	rf[i].inpass = 0;
	kexpect++;
	nfired++;
	T_EQ(tk_timer_pending(t), 0);

	/* Sometimes act on others, expired ones included. */
	if (rnd(4) == 0) {
		if (kexpect < nexpect && rnd(2) == 0)
			j = expect[kexpect + rnd(nexpect - kexpect)];
		else
			j = rnd(NT);
		if (rf[j].inpass)
			T_NE(tk_timer_pending(&st[j]), 0);
		op(l, j);
		ncbops++;
	}
}

static int
cmp_ref(const void *a, const void *b)
{
	const struct ref	*x = &rf[*(const int *)a];
	const struct ref	*y = &rf[*(const int *)b];

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void
pass(struct tk_loop *l)
{
	int	i, r, nactive = 0;

	nexpect = kexpect = 0;
	for (i = 0; i < NT; i++) {
		if (rf[i].state == S_PAST) {
			expect[nexpect++] = i;
			rf[i].state = S_IDLE;
			rf[i].inpass = 1;
		}
	}
	qsort(expect, nexpect, sizeof(expect[0]), cmp_ref);
	r = tk_loop_run(l, TK_RUN_NOWAIT);
	while (kexpect < nexpect && !rf[expect[kexpect]].inpass)
		kexpect++;
	if (kexpect != nexpect)
		T_FAIL("timer %d did not fire", expect[kexpect]);
	for (i = 0; i < NT; i++) {
		T_EQ(rf[i].inpass, 0);
		check_pending(i);
		if (rf[i].state != S_IDLE)
			nactive++;
	}
	/* The count of active timers after the pass. */
	T_EQ(r, nactive);
}

TEST(timer_stress)
{
	struct tk_loop	*l = heaploop();
	long		 n, npass = 0;
	int		 i;

	t_srand(12345);
	sbase = tk_loop_now(l);
	for (i = 0; i < NT; i++)
		tk_timer_init(&st[i], stress_fire, &st[i]);
	for (n = 0; n < NOPS; n++) {
		op(l, rnd(NT));
		if (rnd(200) == 0) {
			pass(l);
			npass++;
		}
	}
	pass(l);
	/* Bring everything in: the future ones too, to the past. */
	for (i = 0; i < NT; i++) {
		if (rf[i].state == S_FUTURE) {
			T_EQ(tk_timer_arm_at(l, &st[i], sbase - 64 +
			    rf[i].v), 0);
			rf[i].state = S_PAST;
			rf[i].seq = rseq++;
		}
	}
	pass(l);
	pass(l);
	for (i = 0; i < NT; i++)
		check_pending(i);
	printf("%ld ops, %ld passes, %ld fired, %ld ops from callbacks\n",
	    n, npass, nfired, ncbops);
	T_GT(nfired, NOPS / 10);
	T_GT(ncbops, 100);
	tk_loop_free(l);
}

/* A loop freed with armed and expired timers calls none of them. */
TEST(timer_free_armed)
{
	struct tk_loop	*l = heaploop();
	struct tt	*x;
	int		 i;

	x = calloc(100, sizeof(*x));
	T_PTR(x);
	for (i = 0; i < 100; i++) {
		tt_init(&x[i], i);
		T_EQ(tk_timer_arm_at(l, &x[i].t, i % 2 ? tk_loop_now(l) - 1 :
		    tk_loop_now(l) + FAR), 0);
	}
	T_EQ(tk_loop_run(l, TK_RUN_NOWAIT), 50);
	T_EQ(norder, 50);
	tk_loop_free(l);
	free(x);
	T_EQ(norder, 50);
}

static uint64_t	 stop_at;

static void
stopper(struct tk_loop *l, struct tk_timer *t)
{
	(void)t;
	stop_at = tk_clock_mono();
	tk_loop_stop(l);
}

static void
guard_fn(struct tk_loop *l, struct tk_timer *t)
{
	(void)l;
	(void)t;
	T_FAIL("guard timer fired");
}

/* A 50 ms timer ends a blocking run no earlier than 50 ms later. */
TEST_BE(timer_wait)
{
	struct tk_loop	*l;
	struct tk_timer	 t, guard;
	uint64_t	 t0, lnow;

	l = tk_loop_new(t_backend, 0);
	T_PTR(l);
	tk_timer_init(&t, stopper, NULL);
	tk_timer_init(&guard, guard_fn, NULL);
	T_EQ(tk_timer_arm(l, &guard, 10 * TK_SEC), 0);
	t0 = tk_clock_mono();
	lnow = tk_loop_update_now(l);
	T_EQ(tk_timer_arm(l, &t, 50 * TK_MSEC), 0);
	T_EQ(tk_loop_run(l, 0), 0);
	T_GE(stop_at - t0, 50 * TK_MSEC);
	T_LT(stop_at - t0, 2 * TK_SEC);
	T_GE(tk_loop_now(l) - lnow, 50 * TK_MSEC);
	tk_loop_free(l);
}

/*
 * TK_RUN_ONCE with only a 50 ms timer: the wait lasts until the deadline
 * (rounded up, not down), so the timer fires within a few iterations
 * instead of after a spin of zero-timeout waits.
 */
static int	once_fired;

static void
once_fn(struct tk_loop *l, struct tk_timer *t)
{
	(void)l;
	(void)t;
	once_fired++;
	stop_at = tk_clock_mono();
}

TEST_BE(timer_wait_once)
{
	struct tk_loop	*l;
	struct tk_timer	 t;
	uint64_t	 t0;
	int		 iters = 0, round;

	l = tk_loop_new(t_backend, 0);
	T_PTR(l);
	tk_timer_init(&t, once_fn, NULL);
	for (round = 1; round <= 5; round++) {
		t0 = tk_clock_mono();
		tk_loop_update_now(l);
		T_EQ(tk_timer_arm(l, &t, 50 * TK_MSEC + round * 333), 0);
		for (iters = 0; once_fired < round && iters < 1000; iters++)
			tk_loop_run(l, TK_RUN_ONCE);
		T_EQ(once_fired, round);
		T_GE(stop_at - t0, 50 * TK_MSEC);
		T_LT(stop_at - t0, 2 * TK_SEC);
		if (iters > 3)
			T_FAIL("round %d: %d iterations for one 50 ms wait",
			    round, iters);
	}
	tk_loop_free(l);
}

/* Ten timers 10..100 ms out, armed shuffled, fire in order, not early. */
static uint64_t	 w_t0, w_at[10];
static int	 w_n, w_order[10];

static void
wfire(struct tk_loop *l, struct tk_timer *t)
{
	int	i = (int)(intptr_t)t->arg;

	w_at[i] = tk_clock_mono();
	w_order[w_n++] = i;
	if (w_n == 10)
		tk_loop_stop(l);
}

TEST_BE(timer_wait_many)
{
	static const int	 shuf[10] = { 3, 9, 0, 7, 1, 8, 2, 6, 4, 5 };
	struct tk_loop		*l;
	struct tk_timer		 t[10], guard;
	int			 i, k;

	l = tk_loop_new(t_backend, 0);
	T_PTR(l);
	tk_timer_init(&guard, guard_fn, NULL);
	T_EQ(tk_timer_arm(l, &guard, 10 * TK_SEC), 0);
	w_t0 = tk_clock_mono();
	tk_loop_update_now(l);
	for (k = 0; k < 10; k++) {
		i = shuf[k];
		tk_timer_init(&t[i], wfire, (void *)(intptr_t)i);
		T_EQ(tk_timer_arm(l, &t[i], (uint64_t)(i + 1) * 10 * TK_MSEC),
		    0);
	}
	T_EQ(tk_loop_run(l, 0), 0);
	T_EQ(w_n, 10);
	for (i = 0; i < 10; i++) {
		T_EQ(w_order[i], i);
		T_GE(w_at[i] - w_t0, (uint64_t)(i + 1) * 10 * TK_MSEC);
	}
	T_LT(w_at[9] - w_t0, 2 * TK_SEC);
	tk_timer_cancel(l, &guard);
	tk_loop_free(l);
}

/*
 * A long run-queue pass must not delay the timers behind it: the wait
 * that follows is computed from the time after the pass, not from the
 * time cached before it.  A handler busy for 2 s, a timer due 2.5 s after
 * arming: it fires at about 2.5 s, whereas a loop that reuses the
 * pre-pass clock sleeps the full 2.5 s after the handler returns and
 * fires at about 4.5 s.  The bound, 4 s, leaves 1.5 s of slack.
 */
static uint64_t	 busy_t0, late_at;

static void
busy_handler(struct tk_loop *l, struct tk_io *io)
{
	char	buf[16];

	(void)l;
	while (read(io->fd, buf, sizeof(buf)) > 0)
		;
	tk_io_block(io, TK_EV_READ);
	usleep(2000000);	/* stands for 2 s of work */
}

static void
late_fn(struct tk_loop *l, struct tk_timer *t)
{
	(void)t;
	late_at = tk_clock_mono();
	tk_loop_stop(l);
}

TEST_BE_T(timer_not_late_after_busy_pass, 30)
{
	struct tk_loop	*l;
	struct tk_timer	 t, guard;
	struct tk_io	 io;
	int		 p[2];

	l = tk_loop_new(t_backend, 0);
	T_PTR(l);
	T_SYS(pipe2(p, O_NONBLOCK | O_CLOEXEC));
	tk_io_init(&io, p[0], busy_handler, NULL);
	T_EQ(tk_io_start(l, &io, TK_EV_READ), 0);
	tk_timer_init(&t, late_fn, NULL);
	tk_timer_init(&guard, guard_fn, NULL);
	T_EQ(tk_timer_arm(l, &guard, 20 * TK_SEC), 0);
	busy_t0 = tk_clock_mono();
	tk_loop_update_now(l);
	T_EQ(tk_timer_arm(l, &t, 2500 * TK_MSEC), 0);
	T_SYS(write(p[1], "x", 1));
	T_EQ(tk_loop_run(l, 0), 0);
	printf("timer due at 2500 ms fired at %ju ms\n",
	    (uintmax_t)((late_at - busy_t0) / TK_MSEC));
	T_GE(late_at - busy_t0, 2500 * TK_MSEC);
	if (late_at - busy_t0 >= 4 * TK_SEC)
		T_FAIL("timer due at 2500 ms fired at %ju ms: the wait after "
		    "the busy pass used the clock from before it",
		    (uintmax_t)((late_at - busy_t0) / TK_MSEC));
	tk_io_stop(l, &io);
	close(p[0]);
	close(p[1]);
	tk_loop_free(l);
}
