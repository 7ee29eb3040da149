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

const struct proto proto_echo = {
	.name = "echo",
	.size = sizeof(struct conn),
	.start = echo_start,
	.step = echo_step,
};

static void
echo_start(struct worker *w, struct conn *c, const struct sockaddr *sa,
    socklen_t salen)
{
	(void)w;
	(void)sa;
	(void)salen;
	c->state = 0;
}

/*
 * The run-queue step: the flow moves what it can, then the connection
 * closes if it is done or failed, or waits for what the flow wants.
 * Returning while still runnable puts it at the back of the run queue.
 */
static void
echo_step(struct worker *w, struct conn *c)
{
	struct conn_acct	*a = c->acct ? CONN_ACCT(w, c) : NULL;
	struct dp_flow		 f = {
		.src = &c->io, .dst = &c->io, .q = &c->outq,
		.flags = &c->state, .c = c,
		.nin = a != NULL ? &a->in : NULL,
		.nout = a != NULL ? &a->out : NULL,
	};
	size_t			 budget = ECHO_BUDGET;
	unsigned int		 want;

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
	want = dp_want_src(&f) | dp_want_dst(&f);
	if (want != c->io.want && tk_io_want(w->l, &c->io, want) == -1) {
		log_warn("%s: fd %d", __func__, c->io.fd);
		conn_close(w, c, CONN_ERROR);
	}
}
