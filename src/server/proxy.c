/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The L4 proxy: each accepted client is paired with a connection to an
 * upstream (upstream.c chooses which), and bytes flow both ways until
 * both sides have finished.  This file owns the session: the connect
 * with its timeout and retries, the two directions as flows of the data
 * path and what their ends mean, the --max-conns-per-ip check (perip.c
 * keeps the counts) and its access log record.  Accepting, the idle
 * wheel and closing are conn.c's; the options main.c's; the PROXY
 * protocol header proxyproto.c's.
 *
 * A session is one allocation: the client's struct conn first (its
 * watcher is what conn.c and the run queue know), the client's address
 * and start time (for the access log, the per-IP cap and source
 * hashing), then the upstream's watcher and queue.  Both watchers run
 * proxy_step(), which serves both directions; a direction is "client to
 * upstream" (C2U) or "upstream to client" (U2C), with the queue toward
 * the receiving side.
 *
 *	state		client want		upstream want
 *	PX_CONNECT	-			W (connect completion)
 *	PX_DATA		R unless C2U ended	R unless U2C ended
 *			or its queue is full;	or its queue is full;
 *			W while U2C queued	W while C2U queued
 *
 * Each direction is a flow of the data path (dpath.c): a proxied
 * message costs one recv and one send per direction, a bulk stream
 * moves by splice(2) (--splice), and a direction holds at most
 * --buffer-limit of tenkd's memory toward the other side (a spliced
 * one, a pipe of the kernel's pages), whatever the peers do.
 *
 * Half-close: a FIN read from one side (recv 0) ends that direction;
 * once its queue is flushed, shutdown(SHUT_WR) passes the FIN on, and
 * the other direction keeps flowing.  The session ends when both FINs
 * have been passed on, or once it has been half-closed and silent for
 * --fin-timeout.
 *
 * --max-conns counts sockets: the client's unit is taken by worker.c
 * before accept, the upstream's here, and both go back through
 * worker_conn_gone().
 *
 * TLS (tlsterm.c, tlsorig.c, sniroute.c) adds phases, its state in a
 * struct pxtls that only such sessions allocate:
 *
 *	PX_HANDSHAKE	--tls-cert: the client's handshake, before any
 *			upstream is chosen; its flows then read and write
 *			the client through TLS, and the upstream gets the
 *			plaintext.
 *	PX_PEEK		--sni-route: the client's ClientHello, read and
 *			never past; its name chooses the upstream, which
 *			gets the bytes read first, untouched.
 *	PX_UPHS		an upstream marked tls: its handshake, after the
 *			connect; a failure counts as a failed connect.
 *
 * The first two run under --tls-handshake-timeout, the third under the
 * connect timeout; each on the session's timer.  TLS flows never
 * splice.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/log.h"
#include "tenkd.h"

enum proxy_state {
	PX_CONNECT = 0,		/* connecting to an upstream */
	PX_DATA,		/* connected: bytes flow */
	PX_HANDSHAKE,		/* TLS: the client's handshake, first */
	PX_PEEK,		/* --sni-route: reading the ClientHello */
	PX_UPHS,		/* TLS: the upstream's handshake */
};

/* A session's TLS, allocated only for sessions that have any. */
struct pxtls {
	struct tk_tls		*ct;	/* toward the client, or NULL */
	struct tk_tls		*ut;	/* toward the upstream, or NULL */
	struct upstream		*route;	/* --sni-route: where to */
	struct sni_peek		 peek;	/* --sni-route: the ClientHello */
};

/* Who ended a session: the first part of the termination code. */
enum px_who {
	WHO_NONE = 0,
	WHO_CLIENT,
	WHO_UPSTREAM,
	WHO_TIMEOUT,
	WHO_TENKD,
};

static const char *const who_names[] = {
	"-", "client", "upstream", "timeout", "tenkd"
};

#define C2U		0	/* client to upstream */
#define U2C		1	/* upstream to client */

/*
 * Bytes a session moves per pass of the run queue, both directions
 * together, before it lets the others run: echo.c's ECHO_BUDGET.  A
 * session has two watchers and each is queued on its own, so the
 * budget belongs to the session and to the pass (see proxy_step), not
 * to a call: otherwise a bulk session would get two turns a pass of
 * two directions each, four times what an echo connection gets.
 */
#define PX_BUDGET	(2 * SCRATCH_SIZE)
#define PX_IOV		16
struct psess {
	struct conn		 c;	/* the client; first */
	struct conn_acct	 a;	/* peer and start, always */
	struct tk_io		 up;	/* the upstream; arg: worker */
	struct tk_bufq		 upq;	/* toward the upstream */
	struct tk_timer		 timer;	/* connect, fin timeout */
	struct upstream		*u;	/* picked, or NULL */
	struct pxtls		*tls;	/* NULL: no TLS here */
	const char		*why;	/* termination detail */
	uint64_t		 tried;	/* bitmask of upstreams */
	uint64_t		 in;	/* bytes from the client */
	uint64_t		 out;	/* bytes to the client */
	uint64_t		 tx;	/* bytes to the upstream */
	uint64_t		 rx;	/* bytes from the upstream */
	uint64_t		 turn;	/* the pass budget is for */
	uint64_t		 cstart; /* connect(2) began, ns (metrics) */
	uint64_t		 tc;	/* ns it took, once connected */
	uint32_t		 budget; /* bytes left to move in it */
	uint8_t			 attempts;
	uint8_t			 first_dir; /* pumped first this pass */
	uint8_t			 who;	/* enum px_who, at end */
	uint8_t			 first_fin; /* enum px_who */
	uint8_t			 flags[2]; /* per direction, DP_F_* */
	struct dp_splice	 sp[2];	/* per direction */
	unsigned int		 unit:1; /* upstream's --max-conns unit */
	unsigned int		 perip:1; /* counted per IP */
	unsigned int		 fin_armed:1;
};

struct pxconf	 pxcf = {
	.balance = BALANCE_RR,
	.connect_timeout = 5 * TK_SEC,
	.fin_timeout = 30 * TK_SEC,
	.retries = 2,
	.fail_max = 3,
	.fail_timeout = 10 * TK_SEC,
};

static void	proxy_start(struct worker *, struct conn *,
		    const struct sockaddr *, socklen_t);
static void	proxy_step(struct worker *, struct conn *);
static void	proxy_close(struct worker *, struct conn *,
		    enum conn_reason);
static void	proxy_stats(void);
static void	up_io(struct tk_loop *, struct tk_io *);
static void	px_timer(struct tk_loop *, struct tk_timer *);
static void	no_port(struct worker *, struct psess *, struct upstream *,
		    int);
static int	connect_next(struct worker *, struct psess *, int);
static int	connect_done(struct worker *, struct psess *);
static void	flow(struct psess *, int, struct dp_flow *);
static int	pump(struct worker *, struct psess *, struct dp_flow *, int);
static void	set_wants(struct worker *, struct psess *,
		    const struct dp_flow *);
static void	end(struct worker *, struct psess *, int, const char *,
		    enum conn_reason);
static void	fail(struct worker *, struct psess *, int);
static void	access_line(struct worker *, struct psess *, const char *);
static size_t	queued(const struct conn *);
static struct conn *proxy_flow(struct tk_io *, int, struct dp_flow *);
static int	proxy_peer(void);
static int	front(struct worker *, struct psess *);
static int	up_handshake(struct worker *, struct psess *);
static void	up_drop(struct worker *, struct psess *, int);
static int	send_first(struct worker *, struct psess *);

const struct proto proto_proxy = {
	.name = "proxy",
	.size = sizeof(struct psess),
	.start = proxy_start,
	.step = proxy_step,
	.close = proxy_close,
	.stats = proxy_stats,
	.queued = queued,
	.flow = proxy_flow,
	.peer = proxy_peer,
	.own_log = 1,
};

/*
 * A fresh client: note its address, check the per-IP cap and the unit
 * of the upstream socket, and start the first connect.  The client is
 * not read until the upstream is connected; its bytes wait in the
 * kernel.
 */
static void
proxy_start(struct worker *w, struct conn *c, const struct sockaddr *sa,
    socklen_t salen)
{
	struct psess	*s = (struct psess *)c;

	tk_io_init(&s->up, -1, up_io, w);
	tk_timer_init(&s->timer, px_timer, s);
	c->state = PX_CONNECT;
	s->a.start = tk_loop_now(w->l);
	if (sa != NULL && (size_t)salen <= sizeof(s->a.peer))
		memcpy(&s->a.peer, sa, salen);
	else
		s->a.peer.sin6_family = AF_UNSPEC;
	if (!w->cq && tk_io_want(w->l, &c->io, 0) == -1) {
		end(w, s, WHO_TENKD, "error", CONN_ERROR);
		return;
	}
	if (pxcf.max_per_ip > 0) {
		if (perip_take(&s->a.peer, pxcf.max_per_ip) == -1) {
			end(w, s, WHO_TENKD, "ip-limit", CONN_ERROR);
			return;
		}
		s->perip = 1;
	}
	worker_reserve_more();
	s->unit = 1;
	if (tlscf.ctx != NULL || sniroute_on() || tlsorig_any()) {
		if ((s->tls = calloc(1, sizeof(*s->tls))) == NULL ||
		    (tlscf.ctx != NULL &&
		    (s->tls->ct = tlsterm_new(&c->io)) == NULL)) {
			end(w, s, WHO_TENKD, "nomem", CONN_NOMEM);
			return;
		}
	}
	if (tlscf.ctx != NULL || sniroute_on()) {
		/* The client first: its handshake, or its ClientHello. */
		c->state = tlscf.ctx != NULL ? PX_HANDSHAKE : PX_PEEK;
		if (tk_timer_arm(w->l, &s->timer, tlscf.hs_timeout) == -1) {
			end(w, s, WHO_TENKD, "nomem", CONN_NOMEM);
			return;
		}
		set_wants(w, s, NULL);
		return;
	}
	if (connect_next(w, s, 0) == -1)
		return;
	set_wants(w, s, NULL);
}

/*
 * The client's side before any upstream: its TLS handshake, or its
 * ClientHello and the route it names; then the first connect.  Returns
 * 0 (waiting, or connecting now), or -1 after ending the session.
 */
static int
front(struct worker *w, struct psess *s)
{
	struct pxtls	*t = s->tls;
	int		 r;

	if (s->c.state == PX_HANDSHAKE) {
		if ((r = tlsterm_handshake(w, t->ct)) == -1) {
			end(w, s, WHO_CLIENT, "tls", CONN_TLS);
			return -1;
		}
	} else if ((r = sniroute_read(w, &s->c.io, &t->peek)) == -1) {
		end(w, s, WHO_CLIENT, errno == ENOMEM ? "nomem" : "hello",
		    errno == ENOMEM ? CONN_NOMEM : CONN_TLS);
		return -1;
	} else if (r == 1 && ((t->route = sniroute_pick(t->peek.sni)) ==
	    NULL)) {
		end(w, s, WHO_TENKD, "no-route", CONN_ERROR);
		return -1;
	}
	if (r == 0) {
		set_wants(w, s, NULL);
		return 0;
	}
	tk_timer_cancel(w->l, &s->timer);
	conn_touch(&s->c, tk_loop_now(w->l));
	s->c.state = PX_CONNECT;
	if (connect_next(w, s, 0) == -1)
		return -1;
	set_wants(w, s, NULL);
	return 0;
}

/*
 * Whether a session needs its client's address beyond the access log:
 * for --max-conns-per-ip, --balance source and --send-proxy.
 */
static int
proxy_peer(void)
{
	return pxcf.max_per_ip > 0 || pxcf.balance == BALANCE_SOURCE ||
	    pxcf.send_proxy != 0;
}

/* The run-queue handler of the upstream watcher. */
static void
up_io(struct tk_loop *l, struct tk_io *io)
{
	struct psess	*s = (struct psess *)((char *)io -
			    offsetof(struct psess, up));

	(void)l;
	conn_step(io->arg, &s->c);
}

/* What a session holds both ways, queued or in a pipe. */
static size_t
queued(const struct conn *c)
{
	const struct psess	*s = (const struct psess *)c;

	return c->outq.len + s->upq.len + s->sp[C2U].len + s->sp[U2C].len;
}

/*
 * No local port toward u: close the client at once with its own code,
 * count it, and warn (rate-limited).  u stays up: upstream_failed() did
 * not count this against it, and retrying it or another upstream would
 * only spend more ports; the shortage is ours.
 */
static void
no_port(struct worker *w, struct psess *s, struct upstream *u, int err)
{
	uint64_t	skipped;

	w->st.noport++;
	if (worker_warn_ok(w, WARN_NOPORT, &skipped))
		log_warnx("thread %d: no local port toward upstream %s: %s; "
		    "client closed (no-port; %llu similar suppressed)", w->id,
		    upstream_name(u), strerror(err),
		    (unsigned long long)skipped);
	end(w, s, WHO_TENKD, "no-port", CONN_ERROR);
}

/*
 * Start a connect to the next upstream, after a failure with error err
 * (0 on the first attempt).  Returns 0 with a connect in progress, or
 * -1 after ending the session: no attempt left, no upstream up, or no
 * descriptor.
 */
static int
connect_next(struct worker *w, struct psess *s, int err)
{
	struct upstream	*u;
	uint64_t	 now = tk_loop_now(w->l);
	int		 fd;

	for (;;) {
		if (s->attempts > pxcf.retries) {
			if (err == ETIMEDOUT)
				end(w, s, WHO_TIMEOUT, "connect-timeout",
				    CONN_TIMEOUT);
			else
				end(w, s, WHO_UPSTREAM, err == ECONNREFUSED ?
				    "refused" : err == EPROTO ? "tls" :
				    "connect-error", CONN_ERROR);
			return -1;
		}
		/* A routed session tries its own upstream only. */
		if (s->tls != NULL && s->tls->route != NULL)
			u = upstream_pick_this(s->tls->route, now);
		else
			u = upstream_pick(&s->a.peer, s->tried, now);
		if (u == NULL) {
			end(w, s, WHO_TENKD, "no-upstream", CONN_ERROR);
			return -1;
		}
		s->attempts++;
		s->tried |= 1ULL << upstream_index(u);
		s->u = u;
		s->cstart = now;
		if ((fd = upstream_connect(u)) == -1) {
			err = errno;
			if (err == EMFILE || err == ENFILE || err == ENOBUFS ||
			    err == ENOMEM) {
				end(w, s, WHO_TENKD, "no-fd", CONN_ERROR);
				return -1;
			}
			if (upstream_port_error(err)) {
				s->u = NULL;
				upstream_failed(u, now, err);
				no_port(w, s, u, err);
				return -1;
			}
			log_debug("%s: %s: %s", __func__, upstream_name(u),
			    strerror(err));
			s->u = NULL;
			upstream_failed(u, now, err);
			continue;
		}
		tk_io_init(&s->up, fd, up_io, w);
		if (tk_io_start(w->l, &s->up, TK_EV_WRITE) == -1) {
			err = errno;
			close(fd);
			s->up.fd = -1;
			end(w, s, WHO_TENKD, err == ERANGE ? "fdlimit" :
			    "error", err == ERANGE ? CONN_FDLIMIT : CONN_ERROR);
			return -1;
		}
		if (tk_timer_arm(w->l, &s->timer, pxcf.connect_timeout) ==
		    -1) {
			end(w, s, WHO_TENKD, "nomem", CONN_NOMEM);
			return -1;
		}
		return 0;
	}
}

/*
 * The upstream socket became writable (or failed) while connecting.
 * Returns 0 when connected or retrying, -1 after ending the session.
 */
static int
connect_done(struct worker *w, struct psess *s)
{
	struct upstream	*u;
	struct dp_flow	 f;
	char		 hdr[PP_MAXLEN];
	int		 err, n;

	if ((err = tk_sock_error(s->up.fd)) == -1)
		err = errno;
	tk_timer_cancel(w->l, &s->timer);
	if (err != 0) {
		log_debug("%s: %s: %s", __func__, upstream_name(s->u),
		    strerror(err));
		(void)tk_io_close(w->l, &s->up);
		u = s->u;
		s->u = NULL;
		upstream_failed(u, tk_loop_now(w->l), err);
		if (upstream_port_error(err)) {
			no_port(w, s, u, err);
			return -1;
		}
		return connect_next(w, s, err);
	}
	/* On completions, the connect's watcher gives way to requests. */
	if (w->cq)
		tk_io_stop(w->l, &s->up);
	s->tc = tk_loop_now(w->l) - s->cstart;
	upstream_connect_time(s->tc);
	(void)tk_sock_nodelay(s->up.fd);
	conn_touch(&s->c, tk_loop_now(w->l));
	if (s->tls != NULL && tlsorig_on(s->u)) {
		/*
		 * The PROXY header goes before the TLS, in the clear, as
		 * HAProxy's send-proxy: whole into a fresh socket, or not.
		 */
		if (pxcf.send_proxy != 0) {
			n = pp_header(pxcf.send_proxy, &s->a.peer,
			    s->c.io.fd, hdr, sizeof(hdr));
			if (send(s->up.fd, hdr, n, MSG_NOSIGNAL) != n) {
				fail(w, s, WHO_UPSTREAM);
				return -1;
			}
		}
		if ((s->tls->ut = tlsorig_new(w, s->u, &s->up)) == NULL) {
			end(w, s, WHO_TENKD, "nomem", CONN_NOMEM);
			return -1;
		}
		s->c.state = PX_UPHS;
		if (tk_timer_arm(w->l, &s->timer, pxcf.connect_timeout) ==
		    -1) {
			end(w, s, WHO_TENKD, "nomem", CONN_NOMEM);
			return -1;
		}
		return 0;
	}
	upstream_connected(s->u);
	s->c.state = PX_DATA;
	if (pxcf.send_proxy != 0) {
		n = pp_header(pxcf.send_proxy, &s->a.peer, s->c.io.fd, hdr,
		    sizeof(hdr));
		flow(s, C2U, &f);
		if (dp_send(w, &f, hdr, n) == -1) {
			if (f.err == DP_ERR_NOMEM)
				end(w, s, WHO_TENKD, "nomem", CONN_NOMEM);
			else
				fail(w, s, WHO_UPSTREAM);
			return -1;
		}
	}
	return send_first(w, s);
}

/*
 * --sni-route: the ClientHello read from the client goes first to the
 * upstream, as it was; its buffer goes back.  Returns 0, or -1 after
 * ending the session.
 */
static int
send_first(struct worker *w, struct psess *s)
{
	struct sni_peek	*p;
	struct dp_flow	 f;
	int		 r;

	if (s->tls == NULL || s->tls->peek.buf == NULL)
		return 0;
	p = &s->tls->peek;
	flow(s, C2U, &f);
	r = dp_send(w, &f, p->buf, p->len);
	s->in += p->len;
	w->st.bytes_in += p->len;
	free(p->buf);
	p->buf = NULL;
	if (r == -1) {
		if (f.err == DP_ERR_NOMEM)
			end(w, s, WHO_TENKD, "nomem", CONN_NOMEM);
		else
			fail(w, s, WHO_UPSTREAM);
		return -1;
	}
	return 0;
}

/*
 * The upstream's TLS handshake: 1 once done (the session's bytes may
 * flow), 0 while it waits, -1 after ending the session; a failure
 * counts against the upstream, as a failed connect, and the next one
 * is tried.
 */
static int
up_handshake(struct worker *w, struct psess *s)
{
	int	r;

	if ((r = tlsorig_handshake(w, s->u, s->tls->ut)) == 0) {
		set_wants(w, s, NULL);
		return 0;
	}
	if (r == -1) {
		up_drop(w, s, EPROTO);
		if (connect_next(w, s, EPROTO) == -1)
			return -1;
		set_wants(w, s, NULL);
		return 0;
	}
	tk_timer_cancel(w->l, &s->timer);
	upstream_connected(s->u);
	s->c.state = PX_DATA;
	return 1;
}

/*
 * Give up the upstream connection of a session that is still setting it
 * up (connecting, or its TLS handshake), counting err against it.
 */
static void
up_drop(struct worker *w, struct psess *s, int err)
{
	struct upstream	*u = s->u;

	(void)tk_io_close(w->l, &s->up);
	if (s->tls != NULL && s->tls->ut != NULL) {
		tk_tls_free(s->tls->ut);
		s->tls->ut = NULL;
	}
	s->u = NULL;
	s->c.state = PX_CONNECT;
	upstream_failed(u, tk_loop_now(w->l), err);
}

/* Connect timeout (one attempt) or fin timeout. */
static void
px_timer(struct tk_loop *l, struct tk_timer *t)
{
	struct psess	*s = t->arg;
	struct worker	*w = s->c.io.arg;
	uint64_t	 last;

	if (s->c.state == PX_HANDSHAKE || s->c.state == PX_PEEK) {
		if (s->tls->ct != NULL)
			tlsterm_timeout(w, s->tls->ct);
		else {
			s->tls->peek.fail = TK_TLS_F_TIMEOUT;
			w->st.tls_fail[TK_TLS_F_TIMEOUT]++;
		}
		end(w, s, WHO_TIMEOUT, "tls-timeout", CONN_TLS);
		return;
	}
	if (s->c.state == PX_CONNECT || s->c.state == PX_UPHS) {
		log_debug("%s: %s: connect timeout", __func__,
		    upstream_name(s->u));
		up_drop(w, s, ETIMEDOUT);
		if (connect_next(w, s, ETIMEDOUT) == -1)
			return;
		set_wants(w, s, NULL);
		return;
	}
	/*
	 * The fin timeout counts from the last byte either way, as the
	 * idle wheel does: a half-closed session still moving bytes (a
	 * request sent with its FIN, a long reply) is not cut.  Activity
	 * only moved c->last; here the deadline catches up.
	 */
	last = conn_last_ns(&s->c, tk_loop_now(l));
	if (tk_loop_now(l) - last < pxcf.fin_timeout &&
	    tk_timer_arm_at(l, t, last + pxcf.fin_timeout) == 0)
		return;
	end(w, s, WHO_TIMEOUT, "fin-timeout", CONN_TIMEOUT);
}

/*
 * The step of both watchers: finish a connect, then move bytes both
 * ways, pass FINs on, end the session when both directions are done,
 * and set what each socket waits for.
 */
static void
proxy_step(struct worker *w, struct conn *c)
{
	struct psess	*s = (struct psess *)c;
	struct dp_flow	 fl[2];
	uint64_t	 now;

	if ((c->state == PX_HANDSHAKE || c->state == PX_PEEK) &&
	    front(w, s) == -1)
		return;
	if (c->state == PX_HANDSHAKE || c->state == PX_PEEK)
		return;
	if (c->state == PX_CONNECT) {
		if (s->up.fd == -1 || (s->up.ready & (TK_EV_WRITE |
		    TK_EV_ERR | TK_EV_HUP)) == 0) {
			set_wants(w, s, NULL);
			return;
		}
		if (connect_done(w, s) == -1)
			return;
		if (c->state == PX_CONNECT) {
			set_wants(w, s, NULL);
			return;
		}
	}
	if (c->state == PX_UPHS && up_handshake(w, s) <= 0)
		return;
	/*
	 * One budget per session and pass of the run queue.  The pass is
	 * told by the loop's time, which the loop reads once per
	 * iteration, before the pass; a new time is a new pass.  The
	 * direction that goes first alternates, so that one direction
	 * cannot spend every budget while the other waits.
	 */
	now = tk_loop_now(w->l);
	if (s->turn != now) {
		s->turn = now;
		s->budget = PX_BUDGET;
		s->first_dir ^= 1;
	}
	/* Described once a step, for the pumps and then the wants. */
	flow(s, C2U, &fl[C2U]);
	flow(s, U2C, &fl[U2C]);
	if (pump(w, s, fl, s->first_dir) == -1 ||
	    pump(w, s, fl, s->first_dir ^ 1) == -1)
		return;
	if ((s->flags[C2U] & s->flags[U2C]) & DP_F_SHUT) {
		end(w, s, s->first_fin, "eof", CONN_EOF);
		return;
	}
	if (s->first_fin != WHO_NONE && !s->fin_armed &&
	    pxcf.fin_timeout != 0) {
		s->fin_armed = 1;
		(void)tk_timer_arm(w->l, &s->timer, pxcf.fin_timeout);
	}
	set_wants(w, s, fl);
}

/*
 * What each socket waits for, from the session's state and its flows
 * fl[C2U] and fl[U2C] (NULL while connecting: no flow runs yet).
 */
static void
set_wants(struct worker *w, struct psess *s, const struct dp_flow *fl)
{
	unsigned int	cw = 0, uw = 0;

	if (s->c.state == PX_CONNECT)
		uw = TK_EV_WRITE;
	else if (s->c.state == PX_HANDSHAKE)
		cw = s->tls->ct->rwant;
	else if (s->c.state == PX_PEEK)
		cw = TK_EV_READ;
	else if (s->c.state == PX_UPHS)
		uw = s->tls->ut->rwant;
	else if (w->cq)
		return;		/* the data path's requests are the wants */
	else {
		cw = dp_want_src(&fl[C2U]) | dp_want_dst(&fl[U2C]);
		uw = dp_want_src(&fl[U2C]) | dp_want_dst(&fl[C2U]);
	}
	if ((!w->cq && tk_io_want(w->l, &s->c.io, cw) == -1) ||
	    (s->up.fd != -1 &&
	    tk_io_want(w->l, &s->up, uw) == -1)) {
		log_warn("%s: fd %d", __func__, s->c.io.fd);
		end(w, s, WHO_TENKD, "error", CONN_ERROR);
	}
}

/* Direction d of s as a flow of the data path, for the time of a step. */
static void
flow(struct psess *s, int d, struct dp_flow *f)
{
	memset(f, 0, sizeof(*f));
	f->src = d == C2U ? &s->c.io : &s->up;
	f->dst = d == C2U ? &s->up : &s->c.io;
	f->q = d == C2U ? &s->upq : &s->c.outq;
	f->flags = &s->flags[d];
	f->sp = srv.cfg.splice ? &s->sp[d] : NULL;
	if (s->tls != NULL) {
		f->tsrc = d == C2U ? s->tls->ct : s->tls->ut;
		f->tdst = d == C2U ? s->tls->ut : s->tls->ct;
		if (f->tsrc != NULL || f->tdst != NULL)
			f->sp = NULL;
	}
	f->nin = d == C2U ? &s->in : &s->rx;
	f->nout = d == C2U ? &s->tx : &s->out;
	f->c = &s->c;
}

/*
 * proto->flow: the session of io (either side) and the direction whose
 * source or destination it is.
 */
static struct conn *
proxy_flow(struct tk_io *io, int role, struct dp_flow *f)
{
	struct psess	*s;
	int		 client = io->fn != up_io;

	s = client ? (struct psess *)io : (struct psess *)((char *)io -
	    offsetof(struct psess, up));
	flow(s, (client == (role == DP_SRC)) ? C2U : U2C, f);
	return &s->c;
}

/*
 * Move direction d's bytes (its flow fl[d]) within the session's
 * budget; note who finished first.  Returns 0, or -1 after ending the
 * session: a failure is the source's side or the destination's.
 */
static int
pump(struct worker *w, struct psess *s, struct dp_flow *fl, int d)
{
	struct dp_flow	*f = &fl[d];
	size_t		 budget = s->budget;
	int		 src = d == C2U ? WHO_CLIENT : WHO_UPSTREAM;
	int		 dst = d == C2U ? WHO_UPSTREAM : WHO_CLIENT;

	if (dp_pump(w, f, &budget) == -1) {
		if (f->err == DP_ERR_NOMEM)
			end(w, s, WHO_TENKD, "nomem", CONN_NOMEM);
		else
			fail(w, s, f->err == DP_ERR_SRC ? src : dst);
		return -1;
	}
	s->budget = (uint32_t)budget;
	if ((s->flags[d] & DP_F_EOF) && s->first_fin == WHO_NONE)
		s->first_fin = src;
	return 0;
}

/* A recv or send on side who failed; errno tells why. */
static void
fail(struct worker *w, struct psess *s, int who)
{
	enum conn_reason	r = dp_reason(errno);

	if (r != CONN_RESET)
		log_debug("%s: fd %d: %s: %s", __func__, s->c.io.fd,
		    who_names[who], strerror(errno));
	end(w, s, who, r == CONN_RESET ? "reset" : "error", r);
}

/* End the session: who ended it and why, for the log; s is freed. */
static void
end(struct worker *w, struct psess *s, int who, const char *why,
    enum conn_reason reason)
{
	s->who = who;
	s->why = why;
	if (s->c.state != PX_DATA)
		/* Never read: a FIN, not the RST of unread bytes. */
		dp_discard(w, &s->c.io);
	conn_close(w, &s->c, reason);
}

/*
 * conn_close()'s hook, for every end of a session, ours or conn.c's
 * (idle timeout, forced shutdown): close the upstream side, give back
 * its unit and the per-IP count, add to the upstream's counters and
 * write the access log line.
 */
static void
proxy_close(struct worker *w, struct conn *c, enum conn_reason reason)
{
	struct psess	*s = (struct psess *)c;
	const char	*phase;

	if (s->who == WHO_NONE) {
		s->who = reason == CONN_TIMEOUT ? WHO_TIMEOUT : WHO_TENKD;
		s->why = reason == CONN_TIMEOUT ? "idle" :
		    conn_reasons[reason];
	}
	if (c->state == PX_HANDSHAKE || c->state == PX_PEEK)
		phase = "tls";
	else if (c->state == PX_CONNECT || c->state == PX_UPHS)
		phase = "connect";
	else if ((s->flags[C2U] & s->flags[U2C]) & DP_F_SHUT)
		phase = "eof";
	else if (s->first_fin != WHO_NONE)
		phase = "fin";
	else
		phase = "data";
	tk_timer_cancel(w->l, &s->timer);
	if (s->up.fd != -1)
		(void)tk_io_close(w->l, &s->up);
	tk_bufq_clear(&s->upq, &w->pool);
	dp_splice_end(w, &s->sp[C2U]);
	dp_splice_end(w, &s->sp[U2C]);
	if (s->u != NULL)
		upstream_release(s->u, s->tx, s->rx);
	if (s->unit)
		worker_conn_gone(w);
	if (s->perip)
		perip_put(&s->a.peer);
	if (srv.access_fd != -1)
		access_line(w, s, phase);
	if (s->tls != NULL) {
		if (s->tls->ut != NULL && s->u != NULL)
			tlsorig_end(w, s->u, s->tls->ut);
		tk_tls_free(s->tls->ct);
		tk_tls_free(s->tls->ut);
		free(s->tls->peek.buf);
		free(s->tls);
	}
}

/* SIGUSR1, after the thread totals: the upstreams and the sockets. */
static void
proxy_stats(void)
{
	upstream_stats();
	log_info("stats sockets: open %llu max-conns %llu",
	    (unsigned long long)atomic_load(&srv.nconns),
	    (unsigned long long)srv.max_conns);
}

/* The session's access-log record (conn_access_record). */
static void
access_line(struct worker *w, struct psess *s, const char *phase)
{
	char		term[64];
	struct acct_rec	r = {
		.peer = &s->a.peer, .start = s->a.start, .in = s->in,
		.out = s->out, .tries = s->attempts, .term = term,
		.why = s->why, .tc = s->tc,
		.connected = s->u != NULL && s->c.state == PX_DATA,
		.upstream = s->u != NULL && s->c.state == PX_DATA ?
		    upstream_name(s->u) : "-",
	};

	snprintf(term, sizeof(term), "%s/%s", who_names[s->who], phase);
	if (s->tls != NULL && s->tls->ct != NULL)
		tlsterm_acct(s->tls->ct, &r);
	else if (s->tls != NULL && sniroute_on()) {
		if (s->tls->peek.fail != TK_TLS_F_NONE)
			r.tls_fail = tk_tls_fail_names[s->tls->peek.fail];
		else if (s->c.state != PX_PEEK)
			r.sni = s->tls->peek.sni;
	}
	conn_access_record(w, &r);
}
