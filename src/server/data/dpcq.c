/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The data path on completions (io_uring; tenk/uring.h), under the same
 * dp_pump and dp_send the protocols call on readiness backends: a
 * protocol's step runs unchanged, and reads its flows' flags as it
 * does there.  What differs is who moves the bytes:
 *
 * - a flow's source has one multishot recv on while the flow has room,
 *   capped at that room.  Each chunk lands in a buffer of the thread's
 *   ring; dp_recvd appends it to the flow's queue (the ring buffer goes
 *   back when the callback returns, so an idle connection holds none)
 *   and counts it.  That is all a callback does: the completion queues
 *   the watcher on the run queue (tenk/uring.h), and the connection's
 *   step runs from there, once a pass whatever came, as on readiness.
 * - the step's dp_pump sends what the queue holds as one submission of
 *   up to TK_SEND_IOVMAX pool buffers, one in flight per destination so
 *   bytes stay in order; the bytes stay queued until dp_sent hears the
 *   send completed and consumes them, and the step runs again.
 * - backpressure: the recv's cap is the room left under the buffer
 *   limit, so it ends when the flow is full (its last chunk may pass the
 *   limit by less than a ring buffer, 16k), and the step starts it
 *   again once the queue is back under the limit.  A recv cannot be
 *   stopped in time instead: what the kernel received before it saw the
 *   stop still arrives, up to the socket buffer's worth.
 * - the FIN is passed on (shutdown SHUT_WR) once the source finished,
 *   the queue is empty and no send is in flight.
 *
 * The step reads a failure at its next dp_pump: the callbacks note it
 * in the flow's flags (dp_fail) and dp_settle reports it, a source's
 * only once what was read from it has been sent, as readiness sends at
 * once what it reads.  So a peer that sends and then resets loses none
 * of what tenkd read: the send of it completes before the session ends
 * (a proxy runs on the direction out of the failed side until then).
 *
 * The protocol names a callback's flow through proto->flow: an io is
 * the source of exactly one flow and the destination of exactly one.
 * No splicing here: the ring's buffers and the queue's are all user
 * memory, and a splice is a system call of its own per step.
 */
#include <sys/types.h>
#include <sys/uio.h>

#include <errno.h>

#include "tenk/log.h"
#include "tenk/uring.h"
#include "../tenkd.h"

static void	dp_recvd(struct tk_loop *, struct tk_io *, const void *,
		    ssize_t);
static void	dp_sent(struct tk_loop *, struct tk_io *, ssize_t);

/*
 * dp_pump on a completion loop: submit the queue's send, start the recv
 * while there is room, then dp_settle: a failure is reported, or the
 * FIN passed on, once everything is out.  Returns 0, or -1 with f->err
 * and errno set.
 */
int
dp_cq_pump(struct worker *w, struct dp_flow *f)
{
	struct iovec	iov[TK_SEND_IOVMAX];
	uint8_t		fl = *f->flags;
	size_t		n = f->q->len;
	int		niov;

	/*
	 * What came for the flow is seen now: a proxy's other watcher,
	 * queued by the same completions, has nothing left to step for.
	 */
	tk_io_block(f->src, TK_EV_READ);
	tk_io_block(f->dst, TK_EV_WRITE);
	if (fl & (DP_F_DSTERR | DP_F_NOMEM))
		return dp_settle(w, f);
	if (n > 0 && !(fl & DP_F_SENDING)) {
		niov = tk_bufq_iov(f->q, iov, TK_SEND_IOVMAX);
		if (tk_io_send(w->l, f->dst, iov, niov, dp_sent) == -1) {
			log_warn("%s: fd %d: send", __func__, f->dst->fd);
			f->err = DP_ERR_DST;
			return -1;
		}
		*f->flags |= DP_F_SENDING;
	}
	/* Capped at the room left, which its last chunk may pass a little. */
	if (!(fl & DP_F_END) && n < conn_limit(n) &&
	    !tk_io_recv_on(w->l, f->src) &&
	    tk_io_recv_start(w->l, f->src, dp_recvd, conn_limit(n) - n) ==
	    -1) {
		log_warn("%s: fd %d: recv", __func__, f->src->fd);
		f->err = DP_ERR_SRC;
		return -1;
	}
	if ((*f->flags & (DP_F_END | DP_F_ERR)) == 0)
		return 0;
	return dp_settle(w, f);
}

/*
 * A chunk, the end or a failure from the source of a flow: taken, for
 * the step to act on (from the run queue).
 */
static void
dp_recvd(struct tk_loop *l, struct tk_io *io, const void *data, ssize_t n)
{
	struct worker	*w = io->arg;
	struct dp_flow	 f;

	(void)l;
	(void)w->proto->flow(io, DP_SRC, &f);
	if (n > 0) {
		dp_count_in(w, &f, (size_t)n);
		if (tk_bufq_append(f.q, &w->pool, data, (size_t)n) == -1)
			dp_fail(&f, DP_F_NOMEM, ENOMEM);
		/*
		 * Near the budget, look now, not after the whole batch: one
		 * dispatch may bring a ring's worth (mem.c), and shedding,
		 * which only closes, is safe from a callback.
		 */
		if (w->pool.alert)
			mem_check(w);
	} else if (n == 0)
		*f.flags |= DP_F_EOF;
	else
		dp_fail(&f, DP_F_SRCERR, (int)-n);
}

/* The send of a flow's queue to its destination completed: taken. */
static void
dp_sent(struct tk_loop *l, struct tk_io *io, ssize_t n)
{
	struct worker	*w = io->arg;
	struct dp_flow	 f;
	struct conn	*c;

	(void)l;
	c = w->proto->flow(io, DP_DST, &f);
	*f.flags &= ~DP_F_SENDING;
	if (n == -EAGAIN)
		;	/* nothing sent: the step sends again, after a poll */
	else if (n < 0)
		dp_fail(&f, DP_F_DSTERR, (int)-n);
	else {
		tk_bufq_consume(f.q, &w->pool, (size_t)n);
		dp_count_out(w, &f, (size_t)n);
		conn_touch(c, tk_loop_now(w->l));
	}
}
