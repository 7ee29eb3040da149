/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Timers: a binary min-heap of pointers ordered by (when, seq), each timer
 * holding its own slot index so that cancel and re-arm are O(log n)
 * without a search.  seq is the arming order, which makes equal deadlines
 * fire first-armed first.
 *
 * Firing is two-phase: every timer due at the cached now is popped onto
 * the expired list (a TAILQ, so that a cancel unlinks in O(1)) first, then
 * the list is run.  A callback may thus cancel or re-arm any timer,
 * including one already collected: cancel unlinks it from the list, and a
 * timer armed during the run goes into the heap and waits for the next
 * iteration even when it is already due.
 *
 * The heap holds the rarer timers (connect, half-close, drain) and the
 * one timer per thread that sweeps tenkd's idle timing wheel
 * (src/server/data/conn.c); idle timeouts themselves never enter it, so
 * a read costs no heap work.
 * XXX A 4-ary heap halves the depth; at 10k timers the binary heap is
 * 14 levels and costs nothing we can measure next to a system call.
 */
#include <errno.h>
#include <stdlib.h>

#include "tenk/loop.h"
#include "tenk/timer.h"
#include "backend.h"

static inline int
before(const struct tk_timer *a, const struct tk_timer *b)
{
	if (a->when != b->when)
		return a->when < b->when;
	return a->seq < b->seq;
}

/* Put t in slot i of the heap; t learns its slot, for cancel and re-arm. */
static inline void
heap_set(struct tk_timer **h, size_t i, struct tk_timer *t)
{
	h[i] = t;
	t->idx = i;
}

static void
sift_up(struct tk_timer **h, size_t i)
{
	struct tk_timer	*t = h[i];
	size_t		 parent;

	while (i > 0) {
		parent = (i - 1) / 2;
		if (!before(t, h[parent]))
			break;
		heap_set(h, i, h[parent]);
		i = parent;
	}
	heap_set(h, i, t);
}

static void
sift_down(struct tk_timer **h, size_t n, size_t i)
{
	struct tk_timer	*t = h[i];
	size_t		 child;

	for (;;) {
		child = 2 * i + 1;
		if (child >= n)
			break;
		if (child + 1 < n && before(h[child + 1], h[child]))
			child++;
		if (!before(h[child], t))
			break;
		heap_set(h, i, h[child]);
		i = child;
	}
	heap_set(h, i, t);
}

static void
heap_remove(struct tk_loop *l, struct tk_timer *t)
{
	struct tk_timer	*last;
	size_t		 i = t->idx;

	last = l->heap[--l->nheap];
	if (i != l->nheap) {
		heap_set(l->heap, i, last);
		if (i > 0 && before(last, l->heap[(i - 1) / 2]))
			sift_up(l->heap, i);
		else
			sift_down(l->heap, l->nheap, i);
	}
	t->idx = TK_TIMER_IDLE;
}

static void
expired_unlink(struct tk_loop *l, struct tk_timer *t)
{
	TAILQ_REMOVE(&l->expired, t, expq);
	t->idx = TK_TIMER_IDLE;
}

void
tk_timer_init(struct tk_timer *t, tk_timer_fn *fn, void *arg)
{
	t->when = 0;
	t->seq = 0;
	t->idx = TK_TIMER_IDLE;
	t->fn = fn;
	t->arg = arg;
}

int
tk_timer_pending(const struct tk_timer *t)
{
	return t->idx != TK_TIMER_IDLE;
}

void
tk_timer_cancel(struct tk_loop *l, struct tk_timer *t)
{
	if (t->idx == TK_TIMER_IDLE)
		return;
	if (t->idx == TK_TIMER_EXPIRED)
		expired_unlink(l, t);
	else
		heap_remove(l, t);
}

int
tk_timer_arm_at(struct tk_loop *l, struct tk_timer *t, uint64_t when)
{
	struct tk_timer	**h;
	size_t		  cap;
	int		  up;

	if (t->idx == TK_TIMER_EXPIRED)
		expired_unlink(l, t);
	if (t->idx != TK_TIMER_IDLE) {
		/* Re-arm in place: one sift instead of remove and insert. */
		up = when < t->when;
		t->when = when;
		t->seq = l->tseq++;
		if (up)
			sift_up(l->heap, t->idx);
		else
			sift_down(l->heap, l->nheap, t->idx);
		return 0;
	}
	if (l->nheap == l->heapcap) {
		cap = l->heapcap ? l->heapcap * 2 : 64;
		if ((h = reallocarray(l->heap, cap, sizeof(*h))) == NULL)
			return -1;
		l->heap = h;
		l->heapcap = cap;
	}
	t->when = when;
	t->seq = l->tseq++;
	l->heap[l->nheap] = t;
	sift_up(l->heap, l->nheap++);
	return 0;
}

int
tk_timer_arm(struct tk_loop *l, struct tk_timer *t, uint64_t delay_ns)
{
	uint64_t	when = l->now + delay_ns;

	if (when < l->now)
		when = UINT64_MAX;	/* saturate: "never" */
	return tk_timer_arm_at(l, t, when);
}

/*
 * Nanoseconds until the earliest deadline, -1 when no timer is armed.
 * Backends that count in coarser units round up, so that a wait never
 * returns just before the deadline and spins.
 */
int64_t
timer_next_timeout(struct tk_loop *l)
{
	uint64_t	when, d;

	if (l->nheap == 0)
		return -1;
	when = l->heap[0]->when;
	if (when <= l->now)
		return 0;
	d = when - l->now;
	return d > INT64_MAX ? INT64_MAX : (int64_t)d;
}

void
timer_run_expired(struct tk_loop *l)
{
	struct tk_timer	*t;

	/* Collect, in (when, seq) order, before calling anything. */
	while (l->nheap > 0 && l->heap[0]->when <= l->now) {
		t = l->heap[0];
		heap_remove(l, t);
		t->idx = TK_TIMER_EXPIRED;
		TAILQ_INSERT_TAIL(&l->expired, t, expq);
	}
	while ((t = TAILQ_FIRST(&l->expired)) != NULL) {
		expired_unlink(l, t);
		t->fn(l, t);
	}
}

void
timer_free_all(struct tk_loop *l)
{
	struct tk_timer	*t;
	size_t		 i;

	for (i = 0; i < l->nheap; i++)
		l->heap[i]->idx = TK_TIMER_IDLE;
	while ((t = TAILQ_FIRST(&l->expired)) != NULL)
		expired_unlink(l, t);
	free(l->heap);
	l->heap = NULL;
	l->nheap = l->heapcap = 0;
}
