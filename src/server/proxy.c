/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The L4 proxy: each accepted client is paired with a connection to an
 * upstream (upstream.c chooses which), and bytes flow both ways until
 * both sides have finished.  This file owns the session: the connect
 * with its timeout and retries, the two directions with their
 * backpressure and half-close, the PROXY protocol header, the
 * --max-conns-per-ip check (perip.c keeps the counts), the proxy's
 * options and its access log line.  Accepting, the idle wheel and
 * closing are conn.c's.
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
 * The data path is echo.c's: recv into the thread's scratch buffer, send
 * straight to the other side, queue only what the kernel did not take;
 * a recv shorter than asked drained the socket (unless HUP), a send
 * shorter than offered filled it.  So a proxied message costs one recv
 * and one send per direction.  Reads are sized to the room left under
 * --buffer-limit in the queue toward the other side, and a full queue
 * stops reading from the side that fills it: memory per session is at
 * most twice the limit, whatever the peers do.
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
 */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <netinet/in.h>
#include <arpa/inet.h>

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
	const char		*why;	/* termination detail */
	uint64_t		 tried;	/* bitmask of upstreams */
	uint64_t		 in;	/* bytes from the client */
	uint64_t		 out;	/* bytes to the client */
	uint64_t		 tx;	/* bytes to the upstream */
	uint64_t		 rx;	/* bytes from the upstream */
	uint64_t		 turn;	/* the pass budget is for */
	uint64_t		 cstart; /* connect(2) began, ns (metrics) */
	uint32_t		 budget; /* bytes left to move in it */
	uint8_t			 attempts;
	uint8_t			 first_dir; /* pumped first this pass */
	uint8_t			 who;	/* enum px_who, at end */
	uint8_t			 first_fin; /* enum px_who */
	uint8_t			 eof[2]; /* FIN read from the source */
	uint8_t			 shut[2]; /* FIN passed on */
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
static int	pump(struct worker *, struct psess *, int);
static inline void spend(struct psess *, size_t);
static int	forward(struct worker *, struct psess *, int, size_t);
static int	flush(struct worker *, struct psess *, int);
static void	set_wants(struct worker *, struct psess *);
static void	end(struct worker *, struct psess *, int, const char *,
		    enum conn_reason);
static void	fail(struct worker *, struct psess *, int);
static void	discard(struct worker *, struct psess *);
static void	access_line(struct worker *, struct psess *, const char *);
static size_t	queued(const struct conn *);

const struct proto proto_proxy = {
	.name = "proxy",
	.size = sizeof(struct psess),
	.start = proxy_start,
	.step = proxy_step,
	.close = proxy_close,
	.stats = proxy_stats,
	.queued = queued,
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
	if (tk_io_want(w->l, &c->io, 0) == -1) {
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
	if (connect_next(w, s, 0) == -1)
		return;
	set_wants(w, s);
}

/* The run-queue handler of the upstream watcher. */
static void
up_io(struct tk_loop *l, struct tk_io *io)
{
	struct psess	*s = (struct psess *)((char *)io -
			    offsetof(struct psess, up));

	struct worker	*w = io->arg;

	(void)l;
	proxy_step(w, &s->c);
	/* As conn_io() does for the client's side. */
	if (w->pool.alert)
		mem_check(w);
}

/* Both of a session's queues: toward the client and the upstream. */
static size_t
queued(const struct conn *c)
{
	const struct psess	*s = (const struct psess *)c;

	return c->outq.len + s->upq.len;
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
				    "refused" : "connect-error", CONN_ERROR);
			return -1;
		}
		if ((u = upstream_pick(&s->a.peer, s->tried, now)) == NULL) {
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
	upstream_connected(s->u);
	upstream_connect_time(tk_loop_now(w->l) - s->cstart);
	(void)tk_sock_nodelay(s->up.fd);
	s->c.state = PX_DATA;
	conn_touch(&s->c, tk_loop_now(w->l));
	if (pxcf.send_proxy != 0) {
		n = pp_header(pxcf.send_proxy, &s->a.peer, s->c.io.fd, hdr,
		    sizeof(hdr));
		if (tk_bufq_append(&s->upq, &w->pool, hdr, n) == -1) {
			end(w, s, WHO_TENKD, "nomem", CONN_NOMEM);
			return -1;
		}
	}
	return 0;
}

/* Connect timeout (one attempt) or fin timeout. */
static void
px_timer(struct tk_loop *l, struct tk_timer *t)
{
	struct psess	*s = t->arg;
	struct worker	*w = s->c.io.arg;
	uint64_t	 last;

	if (s->c.state == PX_CONNECT) {
		log_debug("%s: %s: connect timeout", __func__,
		    upstream_name(s->u));
		(void)tk_io_close(l, &s->up);
		upstream_failed(s->u, tk_loop_now(l), ETIMEDOUT);
		s->u = NULL;
		if (connect_next(w, s, ETIMEDOUT) == -1)
			return;
		set_wants(w, s);
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
	uint64_t	 now;

	if (c->state == PX_CONNECT) {
		if (s->up.fd == -1 || (s->up.ready & (TK_EV_WRITE |
		    TK_EV_ERR | TK_EV_HUP)) == 0) {
			set_wants(w, s);
			return;
		}
		if (connect_done(w, s) == -1)
			return;
		if (c->state == PX_CONNECT) {
			set_wants(w, s);
			return;
		}
	}
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
	if (pump(w, s, s->first_dir) == -1 ||
	    pump(w, s, s->first_dir ^ 1) == -1)
		return;
	if (s->shut[C2U] && s->shut[U2C]) {
		end(w, s, s->first_fin, "eof", CONN_EOF);
		return;
	}
	if (s->first_fin != WHO_NONE && !s->fin_armed &&
	    pxcf.fin_timeout != 0) {
		s->fin_armed = 1;
		(void)tk_timer_arm(w->l, &s->timer, pxcf.fin_timeout);
	}
	set_wants(w, s);
}

static void
set_wants(struct worker *w, struct psess *s)
{
	unsigned int	cw = 0, uw = 0;

	if (s->c.state == PX_CONNECT)
		uw = TK_EV_WRITE;
	else {
		if (!s->eof[C2U] && s->upq.len < conn_limit(s->upq.len))
			cw |= TK_EV_READ;
		if (s->c.outq.len > 0)
			cw |= TK_EV_WRITE;
		if (!s->eof[U2C] &&
		    s->c.outq.len < conn_limit(s->c.outq.len))
			uw |= TK_EV_READ;
		if (s->upq.len > 0)
			uw |= TK_EV_WRITE;
	}
	if (tk_io_want(w->l, &s->c.io, cw) == -1 || (s->up.fd != -1 &&
	    tk_io_want(w->l, &s->up, uw) == -1)) {
		log_warn("%s: fd %d", __func__, s->c.io.fd);
		end(w, s, WHO_TENKD, "error", CONN_ERROR);
	}
}

/*
 * Direction d: flush its queue if the receiving side takes bytes, then
 * read from the sending side and forward, until it is drained, the
 * queue is full or the session's budget is spent; pass a FIN on once
 * the queue is empty.  Bytes flushed and bytes read both count against
 * the budget (a byte read is sent at once or queued, so it is counted
 * once).  Returns 0, or -1 after ending the session.
 */
static int
pump(struct worker *w, struct psess *s, int d)
{
	struct tk_io	*src = d == C2U ? &s->c.io : &s->up;
	struct tk_io	*dst = d == C2U ? &s->up : &s->c.io;
	struct tk_bufq	*q = d == C2U ? &s->upq : &s->c.outq;
	size_t		 room, qlen;
	ssize_t		 n;

	if (q->len > 0 && (dst->ready & TK_EV_WRITE) && s->budget > 0) {
		qlen = q->len;
		if (flush(w, s, d) == -1)
			return -1;
		spend(s, qlen - q->len);
	}
	/* conn_limit(): --buffer-limit, or no more while memory is tight. */
	while (!s->eof[d] && q->len < conn_limit(q->len) &&
	    (src->ready & TK_EV_READ) && s->budget > 0) {
		room = conn_limit(q->len) - q->len;
		if (room > SCRATCH_SIZE)
			room = SCRATCH_SIZE;
		n = recv(src->fd, w->scratch, room, 0);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				tk_io_block(src, TK_EV_READ);
				break;
			}
			fail(w, s, d == C2U ? WHO_CLIENT : WHO_UPSTREAM);
			return -1;
		}
		if (n == 0) {
			s->eof[d] = 1;
			if (s->first_fin == WHO_NONE)
				s->first_fin = d == C2U ? WHO_CLIENT :
				    WHO_UPSTREAM;
			break;
		}
		w->st.bytes_in += n;
		if (d == C2U)
			s->in += n;
		else
			s->rx += n;
		conn_touch(&s->c, tk_loop_now(w->l));
		if (forward(w, s, d, n) == -1)
			return -1;
		spend(s, n);
		if ((size_t)n < room && (src->ready & TK_EV_HUP) == 0) {
			tk_io_block(src, TK_EV_READ);
			break;
		}
	}
	if (s->eof[d] && q->len == 0 && !s->shut[d]) {
		/* ENOTCONN if the peer already reset: the send will tell. */
		(void)shutdown(dst->fd, SHUT_WR);
		s->shut[d] = 1;
	}
	return 0;
}

static inline void
spend(struct psess *s, size_t n)
{
	s->budget -= n < s->budget ? (uint32_t)n : s->budget;
}

static inline void
sent(struct worker *w, struct psess *s, int d, size_t n)
{
	w->st.bytes_out += n;
	if (d == C2U)
		s->tx += n;
	else
		s->out += n;
}

/*
 * Send the n bytes just read into the scratch buffer on to the other
 * side, queueing what the kernel does not take.  Returns 0, or -1 after
 * ending the session.
 */
static int
forward(struct worker *w, struct psess *s, int d, size_t n)
{
	struct tk_io	*dst = d == C2U ? &s->up : &s->c.io;
	struct tk_bufq	*q = d == C2U ? &s->upq : &s->c.outq;
	ssize_t		 k = 0;

	if (q->len == 0) {
		do {
			k = send(dst->fd, w->scratch, n, MSG_NOSIGNAL);
		} while (k == -1 && errno == EINTR);
		if (k == -1) {
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				fail(w, s, d == C2U ? WHO_UPSTREAM :
				    WHO_CLIENT);
				return -1;
			}
			k = 0;
		}
		sent(w, s, d, k);
		if ((size_t)k == n)
			return 0;
		tk_io_block(dst, TK_EV_WRITE);
	}
	if (tk_bufq_append(q, &w->pool, w->scratch + k, n - k) == -1) {
		end(w, s, WHO_TENKD, "nomem", CONN_NOMEM);
		return -1;
	}
	return 0;
}

/* Send direction d's queue until it is empty or the socket is full. */
static int
flush(struct worker *w, struct psess *s, int d)
{
	struct tk_io	*dst = d == C2U ? &s->up : &s->c.io;
	struct tk_bufq	*q = d == C2U ? &s->upq : &s->c.outq;
	struct iovec	 iov[PX_IOV];
	struct msghdr	 msg;
	ssize_t		 n;
	size_t		 len;
	int		 i, niov;

	while (q->len > 0) {
		niov = tk_bufq_iov(q, iov, PX_IOV);
		for (len = 0, i = 0; i < niov; i++)
			len += iov[i].iov_len;
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = iov;
		msg.msg_iovlen = niov;
		n = sendmsg(dst->fd, &msg, MSG_NOSIGNAL);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				tk_io_block(dst, TK_EV_WRITE);
				return 0;
			}
			fail(w, s, d == C2U ? WHO_UPSTREAM : WHO_CLIENT);
			return -1;
		}
		tk_bufq_consume(q, &w->pool, n);
		sent(w, s, d, n);
		conn_touch(&s->c, tk_loop_now(w->l));
		if ((size_t)n < len) {
			tk_io_block(dst, TK_EV_WRITE);
			return 0;
		}
	}
	return 0;
}

/* A recv or send on side who failed; errno tells why. */
static void
fail(struct worker *w, struct psess *s, int who)
{
	if (errno == ECONNRESET || errno == EPIPE)
		end(w, s, who, "reset", CONN_RESET);
	else {
		log_debug("%s: fd %d: %s: %s", __func__, s->c.io.fd,
		    who_names[who], strerror(errno));
		end(w, s, who, "error", CONN_ERROR);
	}
}

/* End the session: who ended it and why, for the log; s is freed. */
static void
end(struct worker *w, struct psess *s, int who, const char *why,
    enum conn_reason reason)
{
	s->who = who;
	s->why = why;
	if (s->c.state == PX_CONNECT)
		discard(w, s);
	conn_close(w, &s->c, reason);
}

/*
 * A session that never reached an upstream did not read its client:
 * read and drop what is waiting, so that the close sends a FIN rather
 * than the RST that unread bytes would cause (close(2) on TCP, RFC 2525
 * 2.17).  Bounded: a client still sending gets the RST.
 */
static void
discard(struct worker *w, struct psess *s)
{
	ssize_t	n;
	int	i;

	for (i = 0; i < 4; i++) {
		n = recv(s->c.io.fd, w->scratch, SCRATCH_SIZE, MSG_DONTWAIT);
		if (n <= 0 || n < SCRATCH_SIZE)
			break;
	}
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
	if (c->state == PX_CONNECT)
		phase = "connect";
	else if (s->shut[C2U] && s->shut[U2C])
		phase = "eof";
	else if (s->first_fin != WHO_NONE)
		phase = "fin";
	else
		phase = "data";
	tk_timer_cancel(w->l, &s->timer);
	if (s->up.fd != -1)
		(void)tk_io_close(w->l, &s->up);
	tk_bufq_clear(&s->upq, &w->pool);
	if (s->u != NULL)
		upstream_release(s->u, s->tx, s->rx);
	if (s->unit)
		worker_conn_gone(w);
	if (s->perip)
		perip_put(&s->a.peer);
	if (srv.access_fd != -1)
		access_line(w, s, phase);
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

/*
 * One line per session at close:
 *	2026-11-22T13:29:42.123Z 127.0.0.1:51234 proxy 127.0.0.1:7000
 *	1.234s in=10 out=10 tries=1 client/eof eof
 * (one line): the client, the upstream ("-" if none was connected), the
 * duration, bytes from and to the client, connect attempts, who ended
 * the session in which phase, and why.
 */
static void
access_line(struct worker *w, struct psess *s, const char *phase)
{
	struct tk_addr	 peer;
	char		 cl[TK_ADDRSTRLEN];
	uint64_t	 ns = tk_loop_now(w->l) - s->a.start;

	pp_addr(&s->a.peer, &peer);
	if (s->a.peer.sin6_family != AF_INET &&
	    s->a.peer.sin6_family != AF_INET6)
		strlcpy(cl, "?", sizeof(cl));
	else
		tk_addr_fmt(&peer, cl, sizeof(cl));
	conn_access_write("%s proxy %s %llu.%03llus in=%llu out=%llu "
	    "tries=%d %s/%s %s\n", cl,
	    s->u != NULL && s->c.state == PX_DATA ? upstream_name(s->u) : "-",
	    (unsigned long long)(ns / TK_SEC),
	    (unsigned long long)(ns % TK_SEC / TK_MSEC),
	    (unsigned long long)s->in, (unsigned long long)s->out,
	    s->attempts, who_names[s->who], phase, s->why);
}
