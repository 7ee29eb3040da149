/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The echo protocol (RFC 862): every byte read is sent back, in order,
 * byte-exact.  This file is only the protocol: one flow of the data path
 * (dpath.c) from the connection's socket back to itself, and what its
 * outcome means.  Accepting, timeouts and closing are conn.c's.
 *
 * The connection's state byte is the flow's flags: DP_F_EOF once the
 * peer's FIN is read (the queue is still flushed), DP_F_SHUT once
 * everything is echoed and our FIN sent, which ends the connection.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <string.h>

#include "tenk/log.h"
#include "tenk/uring.h"
#include "tenkd.h"

/*
 * Bytes moved per turn before the connection goes to the back of the
 * run queue: two scratch buffers' worth, so a bulk sender gets two
 * 64 KiB rounds and then lets the ping-pong connections have their turn.
 */
#define ECHO_BUDGET	(2 * SCRATCH_SIZE)

static void	echo_start(struct worker *, struct conn *,
		    const struct sockaddr *, socklen_t);
static void	echo_step(struct worker *, struct conn *);
static struct conn *echo_flow(struct tk_io *, int, struct dp_flow *);

const struct proto proto_echo = {
	.name = "echo",
	.size = sizeof(struct conn),
	.start = echo_start,
	.step = echo_step,
	.flow = echo_flow,
	.sides = 1,
	.units = 1,
	.noun = { "connection", "connections" },
};

static void
echo_start(struct worker *w, struct conn *c, const struct sockaddr *sa,
    socklen_t salen)
{
	(void)sa;
	(void)salen;
	c->state = 0;
	/*
	 * On completions nothing happens until the step starts the recv:
	 * the first runs from the run queue, as the others do.
	 */
	if (w->cq)
		tk_io_wake(w->l, &c->io);
}

/*
 * The connection's one flow, from its socket back to itself; both roles
 * are the same flow.
 */
static struct conn *
echo_flow(struct tk_io *io, int role, struct dp_flow *f)
{
	static struct dp_pipe	*nopipe = &dp_nopipe;
	static uint8_t		 off = DP_S_OFF;
	struct conn		*c = (struct conn *)io;
	struct conn_acct	*a = c->acct ? CONN_ACCT(
				    (struct worker *)io->arg, c) : NULL;

	(void)role;
	memset(f, 0, sizeof(*f));
	f->src = f->dst = &c->io;
	f->q = &c->outq;
	f->flags = &c->state;
	f->pipe = &nopipe;		/* never spliced */
	f->spl = &off;
	f->c = c;
	f->nin = a != NULL ? &a->in : NULL;
	return c;
}

/*
 * The run-queue step: the flow moves what it can, then the connection
 * closes if it is done or failed, or waits for what the flow wants.
 * Returning while still runnable puts it at the back of the run queue.
 */
static void
echo_step(struct worker *w, struct conn *c)
{
	struct dp_flow	f;
	size_t		budget = ECHO_BUDGET;
	unsigned int	want;

	(void)echo_flow(&c->io, DP_SRC, &f);
	if (dp_pump(w, &f, &budget) == -1) {
		if (f.err == DP_ERR_NOMEM) {
			conn_close(w, c, CONN_NOMEM);
			return;
		}
		log_debug("%s: fd %d: %s", __func__, c->io.fd,
		    strerror(errno));
		conn_close(w, c, dp_reason(errno));
		return;
	}
	if (c->state & DP_F_SHUT) {
		/* Everything echoed, and our FIN sent. */
		conn_close(w, c, CONN_EOF);
		return;
	}
	if (w->cq)
		return;		/* its requests are its wants */
	want = dp_want_src(&f) | dp_want_dst(&f);
	if (want != c->io.want && tk_io_want(w->l, &c->io, want) == -1) {
		log_warn("%s: fd %d", __func__, c->io.fd);
		conn_close(w, c, CONN_ERROR);
	}
}
