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
 *
 * Over TLS (--tls-cert; tlsterm.c) the connection is a struct tconn,
 * its TLS beside it: the handshake runs first, under its deadline
 * (--tls-handshake-timeout), then the same flow, whose source and
 * destination speak TLS; the peer's close_notify (or its FIN) is its
 * end, and ours is close_notify and the FIN.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <string.h>

#include "tenk/log.h"
#include "tenk/uring.h"
#include "../tenkd.h"

/*
 * Bytes moved per turn before the connection goes to the back of the
 * run queue: two scratch buffers' worth, so a bulk sender gets two
 * 64 KiB rounds and then lets the ping-pong connections have their turn.
 */
#define ECHO_BUDGET	(2 * SCRATCH_SIZE)

/* An echo connection over TLS. */
struct tconn {
	struct conn		 c;	/* first */
	struct tk_tls		*t;
	struct tk_timer		 hs;	/* the handshake's deadline */
};

static void	echo_start(struct worker *, struct conn *);
static void	echo_step(struct worker *, struct conn *);
static inline void echo_pump(struct worker *, struct conn *,
		    struct tk_tls *);
static inline struct conn *echo_flow(struct tk_io *, int,
		    struct dp_flow *);
static void	tls_start(struct worker *, struct conn *);
static void	tls_step(struct worker *, struct conn *);
static void	tls_close(struct worker *, struct conn *, enum conn_reason);
static void	tls_acct(const struct conn *, struct acct_rec *);
static void	tls_timeout(struct tk_loop *, struct tk_timer *);

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

/* Never on io_uring's completions, so no .flow (tlsterm.c). */
const struct proto proto_echo_tls = {
	.name = "echo",
	.size = sizeof(struct tconn),
	.start = tls_start,
	.step = tls_step,
	.close = tls_close,
	.sides = 1,
	.units = 1,
	.noun = { "connection", "connections" },
	.acct_tls = tls_acct,
};

static void
echo_start(struct worker *w, struct conn *c)
{
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
static inline struct conn *
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

/* The run-queue step of a plain connection. */
static void
echo_step(struct worker *w, struct conn *c)
{
	echo_pump(w, c, NULL);
}

/*
 * A step, over TLS t or plain (NULL, where the compiler drops the
 * tests of t): the flow moves what it can, then the connection closes
 * if it is done or failed, or waits for what the flow wants.  Returning
 * while still runnable puts it at the back of the run queue.
 */
static inline __attribute__((always_inline)) void
echo_pump(struct worker *w, struct conn *c, struct tk_tls *t)
{
	struct dp_flow	f;
	size_t		budget = ECHO_BUDGET;
	unsigned int	want;

	(void)echo_flow(&c->io, DP_SRC, &f);
	f.tsrc = f.tdst = t;
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

/* A TLS client: its TLS, and the handshake's deadline. */
static void
tls_start(struct worker *w, struct conn *c)
{
	struct tconn	*tc = (struct tconn *)c;

	c->state = 0;
	tk_timer_init(&tc->hs, tls_timeout, tc);
	if ((tc->t = tlsterm_new(&c->io)) == NULL) {
		conn_close(w, c, CONN_NOMEM);
		return;
	}
	if (tk_timer_arm(w->l, &tc->hs, srv.cfg.tls.hs_timeout) == -1)
		conn_close(w, c, CONN_NOMEM);
}

/* The handshake, then the echo's step. */
static void
tls_step(struct worker *w, struct conn *c)
{
	struct tconn	*tc = (struct tconn *)c;
	int		 r;

	if (!tc->t->done) {
		if ((r = tlsterm_handshake(w, tc->t)) == -1) {
			conn_close(w, c, CONN_TLS);
			return;
		}
		if (r == 0) {
			if (tk_io_want(w->l, &c->io, tc->t->rwant) == -1)
				conn_close(w, c, CONN_ERROR);
			return;
		}
		tk_timer_cancel(w->l, &tc->hs);
		conn_touch(c, tk_loop_now(w->l));
	}
	echo_pump(w, c, tc->t);
}

static void
tls_timeout(struct tk_loop *l, struct tk_timer *t)
{
	struct tconn	*tc = t->arg;
	struct worker	*w = tc->c.io.arg;

	(void)l;
	tlsterm_timeout(w, tc->t);
	conn_close(w, &tc->c, CONN_TLS);
}

/* conn_close's hook, after the access log's record. */
static void
tls_close(struct worker *w, struct conn *c, enum conn_reason why)
{
	struct tconn	*tc = (struct tconn *)c;

	(void)why;
	tk_timer_cancel(w->l, &tc->hs);
	tk_tls_free(tc->t);
}

/* The access log's TLS fields. */
static void
tls_acct(const struct conn *c, struct acct_rec *r)
{
	tlsterm_acct(((const struct tconn *)c)->t, r);
}
