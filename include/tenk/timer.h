/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libtenk timers: one-shot deadlines in a per-loop min-heap.  Each timer
 * knows its heap index, so arm, cancel and re-arm are O(log n).  Timers
 * with equal deadlines fire in arming order.  All expired timers are
 * collected before any callback runs, so a callback may cancel or re-arm
 * any timer, itself included; a timer armed from a callback never fires
 * in the same pass.  Owner thread only.
 */
#ifndef TENK_TIMER_H
#define TENK_TIMER_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

struct tk_loop;
struct tk_timer;

typedef void tk_timer_fn(struct tk_loop *, struct tk_timer *);

/* Embedded in the caller's structure; fields are private to the loop. */
struct tk_timer {
	uint64_t		 when;	/* monotonic ns */
	uint64_t		 seq;	/* arming order, breaks ties */
	size_t			 idx;	/* heap slot, or TK_TIMER_IDLE */
	tk_timer_fn		*fn;
	void			*arg;
	TAILQ_ENTRY(tk_timer)	 expq;	/* while idx is TK_TIMER_EXPIRED */
};

#define TK_TIMER_IDLE		((size_t)-1)	/* not in the heap */
#define TK_TIMER_EXPIRED	((size_t)-2)	/* collected, not yet run */

#define TK_MSEC		1000000ULL	/* ns per ms */
#define TK_SEC		1000000000ULL	/* ns per s */

/* Prepare a timer; it is not armed.  Never fails. */
void	tk_timer_init(struct tk_timer *t, tk_timer_fn *fn, void *arg);

/*
 * Arm (or re-arm) t to fire delay_ns after the loop's cached now.
 * Returns 0, or -1 with errno ENOMEM when the heap cannot grow.
 */
int	tk_timer_arm(struct tk_loop *l, struct tk_timer *t, uint64_t delay_ns);

/* Arm (or re-arm) t at an absolute monotonic time in ns.  As above. */
int	tk_timer_arm_at(struct tk_loop *l, struct tk_timer *t, uint64_t when);

/* Disarm t; it will not fire.  Cancelling an idle timer does nothing. */
void	tk_timer_cancel(struct tk_loop *l, struct tk_timer *t);

/* Non-zero while t is armed or expired but not yet run. */
int	tk_timer_pending(const struct tk_timer *t);

#endif /* TENK_TIMER_H */
