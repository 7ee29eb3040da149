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
 * A session is one allocation (struct psess, 232 bytes): the client's
 * struct conn first (its watcher is what conn.c and the run queue
 * know), then the upstream's watcher and queue; conn.c's struct
 * conn_acct follows with the client's address and start time when the
 * access log, the per-IP cap, --balance hash or --send-proxy wants
 * them.  A timer is a struct pxwait of its own while one is due (the
 * connect, the fin timeout), so an idle session holds none.  Both
 * watchers run
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
 * --fin-timeout.  A side that fails (a reset) ends the direction toward
 * it at once, but what was read from it still reaches the other side
 * first, as a FIN would let it: the session ends, with the failure as
 * its reason, once that direction is done too (failed()).
 *
 * --max-conns counts sockets: the client's unit is taken by accept.c
 * before accept, the upstream's here, and both go back through
 * worker_conn_gone().
 *
 * TLS (tlsterm.c, tlsorig.c, sniroute.c) adds phases, its state a
 * struct pxtls after the session's allocation (conn.c's tail), in every
 * session of a process that speaks TLS and in no other:
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
 *
 * --fastpath sockmap: once connected, a session's sockets go into a BPF
 * map and a direction whose queue is empty is forwarded by the kernel
 * until something needs tenkd (a FIN, an RST, a full window); pxfast.c
 * keeps that state behind s->fp, which only such sessions allocate.
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
#include "tenk/uring.h"
#include "../tenkd.h"

enum proxy_state {
	PX_CONNECT = 0,		/* connecting to an upstream */
	PX_DATA,		/* connected: bytes flow */
	PX_HANDSHAKE,		/* TLS: the client's handshake, first */
	PX_PEEK,		/* --sni-route: reading the ClientHello */
	PX_UPHS,		/* TLS: the upstream's handshake */
};

/* A session's TLS: conn.c's tail, in a process that speaks TLS. */
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

/* How a session ended, for the log; WHY_CONN: conn.c's reason says. */
enum px_why {
	WHY_CONN = 0,
	WHY_EOF,
	WHY_RESET,
	WHY_ERROR,
	WHY_NOMEM,
	WHY_NOPORT,
	WHY_NOFD,
	WHY_IPLIMIT,
	WHY_NOUPSTREAM,
	WHY_CONNTIMEOUT,
	WHY_REFUSED,
	WHY_CONNERROR,
	WHY_FINTIMEOUT,
	WHY_IDLE,
	WHY_TLS,		/* a TLS handshake failed */
	WHY_TLSTIMEOUT,
	WHY_HELLO,		/* --sni-route: a bad ClientHello */
	WHY_NOROUTE,
};

static const char *const why_names[] = {
	NULL, "eof", "reset", "error", "nomem", "no-port", "no-fd", "ip-limit",
	"no-upstream", "connect-timeout", "refused", "connect-error",
	"fin-timeout", "idle", "tls", "tls-timeout", "hello", "no-route"
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

struct psess {
	struct conn		 c;	/* the client; first */
	struct tk_io		 up;	/* the upstream; arg: worker */
	struct tk_bufq		 upq;	/* toward the upstream */
	struct pxwait		*wait;	/* while a timer is due, or NULL */
	struct dp_pipe		*pipe[2]; /* per direction, or &dp_nopipe */
	struct pxfast		*fp;	/* in the kernel's map, or NULL */
	uint64_t		 in;	/* bytes from the client */
	uint64_t		 rx;	/* bytes from the upstream */
	uint32_t		 turn;	/* the pass budget is for */
	uint32_t		 budget; /* bytes left to move in it */
	uint8_t			 ups;	/* picked: its index + 1, 0: none */
	uint8_t			 attempts;
	uint8_t			 first_dir; /* pumped first this pass */
	uint8_t			 who;	/* enum px_who, at end */
	uint8_t			 why;	/* enum px_why, at end */
	uint8_t			 first_fin; /* enum px_who */
	uint8_t			 flags[2]; /* per direction, DP_F_* */
	uint8_t			 spl[2]; /* per direction, DP_S_* */
	uint8_t			 failed; /* enum conn_reason, once dead */
	uint8_t			 fail_who; /* enum px_who, once dead */
	uint8_t			 hdr;	/* PROXY header bytes queued */
	uint8_t			 dead;	/* directions over after a failure */
	unsigned int		 unit:1; /* upstream's --max-conns unit */
	unsigned int		 perip:1; /* counted per IP */
	unsigned int		 fin_armed:1;
	unsigned int		 fp_tried:1; /* --fastpath tried once */
};

/*
 * An idle session holds only its struct psess, at most 224 bytes
 * (issue 22: 256 an idle client in all): what only some sessions use is
 * elsewhere, and the upstream is an index.  The timer and what
 * connecting needs are a struct pxwait while a connect or the fin
 * timeout runs; the client's address and
 * start time are conn.c's struct conn_acct, after the session, when
 * the access log or the options want them (proxy_peer); the bytes sent
 * each way are what was read less what is still queued at the end.
 */
_Static_assert(sizeof(struct psess) <= 224, "struct psess outgrew 224 bytes");

/* A session's timer, and what its connect needs, while one is due. */
struct pxwait {
	struct tk_timer		 t;	/* connect, fin timeout; arg: psess */
	uint64_t		 tried;	/* bitmask of upstreams */
	uint64_t		 cstart; /* connect(2) began, ns (metrics) */
};


static void	proxy_start(struct worker *, struct conn *);
static void	proxy_step(struct worker *, struct conn *);
static void	proxy_close(struct worker *, struct conn *,
		    enum conn_reason);
static void	proxy_stats(FILE *);
static void	proxy_stats_line(FILE *, const struct stats *);
static void	up_io(struct tk_loop *, struct tk_io *);
static void	px_timer(struct tk_loop *, struct tk_timer *);
static void	no_port(struct worker *, struct psess *, struct upstream *,
		    int);
static int	connect_next(struct worker *, struct psess *, int);
static int	connect_done(struct worker *, struct psess *);
static inline int done(const struct psess *, int);
static void	fast_start(struct worker *, struct psess *, struct dp_flow *);
static inline void flow(struct psess *, int, struct dp_flow *);
static int	more_c2u(struct dp_flow *);
static int	more_u2c(struct dp_flow *);
static int	pump(struct worker *, struct psess *, struct dp_flow *, int);
static int	failed(struct worker *, struct psess *, struct dp_flow *,
		    int);
static void	failing(struct worker *, struct psess *, struct dp_flow *);
static void	fin_arm(struct worker *, struct psess *);
static void	set_wants(struct worker *, struct psess *,
		    const struct dp_flow *);
static void	end(struct worker *, struct psess *, int, enum px_why,
		    enum conn_reason);
static void	end_failed(struct worker *, struct psess *);
static void	access_line(struct worker *, struct psess *, const char *,
		    const char *, uint64_t);
static inline struct upstream *up_of(const struct psess *);
static size_t	queued(const struct conn *);
static struct conn *proxy_flow(struct tk_io *, int, struct dp_flow *);
static int	proxy_peer(void);
static uint32_t	hash_slot(struct worker *, struct psess *);
static const struct sockaddr_in6 *peer(struct worker *, struct psess *);
static int	wait_new(struct psess *);
static int	wait_arm(struct worker *, struct psess *, uint64_t);
static void	wait_free(struct worker *, struct psess *);
static inline struct pxtls *tls_of(const struct psess *);
static size_t	proxy_tail(void);
static int	front(struct worker *, struct psess *);
static int	up_tls(struct worker *, struct psess *);
static int	up_handshake(struct worker *, struct psess *);
static void	up_drop(struct worker *, struct psess *, int);
static int	send_first(struct worker *, struct psess *);
static void	send_ended(struct worker *, struct psess *,
		    const struct dp_flow *);
static void	proxy_idle(struct worker *, struct conn *);
static void	proxy_init(void);

/* The proxy's options, as short as a global's. */
static const struct pxconf *const pxc = &srv.cfg.px;

const struct proto proto_proxy = {
	.name = "proxy",
	.size = sizeof(struct psess),
	.init = proxy_init,
	.start = proxy_start,
	.step = proxy_step,
	.close = proxy_close,
	.stats = proxy_stats,
	.stats_line = proxy_stats_line,
	.queued = queued,
	.flow = proxy_flow,
	.peer = proxy_peer,
	.idle = proxy_idle,
	.own_log = 1,
	.sides = SIDE_N,
	.units = 2,
	.noun = { "session", "sessions" },
	.tail = proxy_tail,
};

/* The upstreams' schedule and the splice pipes' size, from srv.cfg. */
static void
proxy_init(void)
{
	upstream_init();
	dp_init();
}

/*
 * A fresh client: note its address, check the per-IP cap and the unit
 * of the upstream socket, and start the first connect.  The client is
 * not read until the upstream is connected; its bytes wait in the
 * kernel.
 */
static void
proxy_start(struct worker *w, struct conn *c)
{
	struct psess	*s = (struct psess *)c;

	s->pipe[C2U] = s->pipe[U2C] = &dp_nopipe;
	if (!srv.splice)
		s->spl[C2U] = s->spl[U2C] = DP_S_OFF;
	tk_io_init(&s->up, -1, up_io, w);
	c->state = PX_CONNECT;
	s->turn = (uint32_t)tk_loop_iterations(w->l) - 1;
	if (!w->cq && tk_io_want(w->l, &c->io, 0) == -1) {
		end(w, s, WHO_TENKD, WHY_ERROR, CONN_ERROR);
		return;
	}
	if (pxc->max_per_ip > 0) {
		if (perip_take(peer(w, s), pxc->max_per_ip) == -1) {
			end(w, s, WHO_TENKD, WHY_IPLIMIT, CONN_ERROR);
			return;
		}
		s->perip = 1;
	}
	if (wait_new(s) == -1) {
		end(w, s, WHO_TENKD, WHY_NOMEM, CONN_NOMEM);
		return;
	}
	worker_reserve_more();
	s->unit = 1;
	if (srv.cfg.tls.ctx != NULL) {
		/* TLS flows never splice: the bytes pass through OpenSSL. */
		s->spl[C2U] = s->spl[U2C] = DP_S_OFF;
		if ((tls_of(s)->ct = tlsterm_new(&c->io)) == NULL) {
			end(w, s, WHO_TENKD, WHY_NOMEM, CONN_NOMEM);
			return;
		}
	}
	if (srv.cfg.tls.ctx != NULL || sniroute_on()) {
		/* The client first: its handshake, or its ClientHello. */
		c->state = srv.cfg.tls.ctx != NULL ? PX_HANDSHAKE : PX_PEEK;
		if (wait_arm(w, s, srv.cfg.tls.hs_timeout) == -1)
			return;
		set_wants(w, s, NULL);
		return;
	}
	if (connect_next(w, s, 0) == -1)
		return;
	set_wants(w, s, NULL);
}

/*
 * conn.c's tail: a struct pxtls in every session of a process that
 * speaks TLS, none otherwise.  Set once at start, as a reload is a new
 * process.
 */
static size_t
proxy_tail(void)
{
	return tlsterm_any() ? sizeof(struct pxtls) : 0;
}

/* s's TLS state, or NULL in a process without TLS. */
static inline struct pxtls *
tls_of(const struct psess *s)
{
	if (!s->c.tail)
		return NULL;
	return (struct pxtls *)((char *)s + sizeof(*s) + (s->c.acct ?
	    sizeof(struct conn_acct) : 0));
}

/*
 * The client's side before any upstream: its TLS handshake, or its
 * ClientHello and the route it names; then the first connect.  Returns
 * 0 (waiting, or connecting now), or -1 after ending the session.
 */
static int
front(struct worker *w, struct psess *s)
{
	struct pxtls	*t = tls_of(s);
	int		 r;

	if (s->c.state == PX_HANDSHAKE) {
		if ((r = tlsterm_handshake(w, t->ct)) == -1) {
			end(w, s, WHO_CLIENT, WHY_TLS, CONN_TLS);
			return -1;
		}
	} else if ((r = sniroute_read(w, &s->c.io, &t->peek)) == -1) {
		if (errno == ENOMEM)
			end(w, s, WHO_TENKD, WHY_NOMEM, CONN_NOMEM);
		else
			end(w, s, WHO_CLIENT, WHY_HELLO, CONN_TLS);
		return -1;
	} else if (r == 1 && ((t->route = sniroute_pick(t->peek.sni)) ==
	    NULL)) {
		end(w, s, WHO_TENKD, WHY_NOROUTE, CONN_ERROR);
		return -1;
	}
	if (r == 0) {
		set_wants(w, s, NULL);
		return 0;
	}
	tk_timer_cancel(w->l, &s->wait->t);
	conn_touch(&s->c, tk_loop_now(w->l));
	s->c.state = PX_CONNECT;
	if (connect_next(w, s, 0) == -1)
		return -1;
	set_wants(w, s, NULL);
	return 0;
}

/*
 * Whether a session needs its client's address beyond the access log:
 * for --max-conns-per-ip, --balance hash and --send-proxy.
 */
static int
proxy_peer(void)
{
	return pxc->max_per_ip > 0 || pxc->balance == BALANCE_HASH ||
	    pxc->send_proxy != 0;
}

/*
 * For --balance hash, the slot of the session's key: its client's
 * address (the PROXY header's with --accept-proxy), with the port for
 * --hash-key source-port.  --hash-key sni is to hash here the server
 * name that TLS routing reads from the ClientHello.
 */
static uint32_t
hash_slot(struct worker *w, struct psess *s)
{
	return chash_addr(peer(w, s), pxc->hash_key == HKEY_SOURCE_PORT);
}

/* The client's address, or an AF_UNSPEC one where none was kept. */
static const struct sockaddr_in6 *
peer(struct worker *w, struct psess *s)
{
	static const struct sockaddr_in6	none;

	return s->c.acct ? &CONN_ACCT(w, &s->c)->peer : &none;
}

/* s's timer and connect state (s->wait); -1 without memory. */
static int
wait_new(struct psess *s)
{
	if ((s->wait = calloc(1, sizeof(*s->wait))) == NULL)
		return -1;
	tk_timer_init(&s->wait->t, px_timer, s);
	return 0;
}

/*
 * Arm s's timer for the handshake or the connect now under way, due in
 * ns: 0, or -1 after ending the session (the timer heap could not
 * grow).
 */
static int
wait_arm(struct worker *w, struct psess *s, uint64_t ns)
{
	if (tk_timer_arm(w->l, &s->wait->t, ns) == -1) {
		end(w, s, WHO_TENKD, WHY_NOMEM, CONN_NOMEM);
		return -1;
	}
	return 0;
}

/* The timer is no longer due: cancel it and free s->wait, if any. */
static void
wait_free(struct worker *w, struct psess *s)
{
	if (s->wait == NULL)
		return;
	tk_timer_cancel(w->l, &s->wait->t);
	free(s->wait);
	s->wait = NULL;
}

/*
 * proto->idle: before the idle wheel or the fin timeout judges s, the
 * kernel's activity on it (--fastpath).
 */
static void
proxy_idle(struct worker *w, struct conn *c)
{
	struct psess	*s = (struct psess *)c;

	if (s->fp != NULL)
		pxfast_touch(w, s->fp, c);
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

/* The upstream s picked, or NULL. */
static inline struct upstream *
up_of(const struct psess *s)
{
	return s->ups != 0 ? upstream_at(s->ups - 1) : NULL;
}

/* The bytes in direction d's pipe. */
static inline size_t
piped(const struct psess *s, int d)
{
	return s->pipe[d]->len;
}

/* What a session holds both ways, queued or in a pipe. */
static size_t
queued(const struct conn *c)
{
	const struct psess	*s = (const struct psess *)c;

	return c->outq.len + s->upq.len + piped(s, C2U) + piped(s, U2C);
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
	end(w, s, WHO_TENKD, WHY_NOPORT, CONN_ERROR);
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
		if (s->attempts > pxc->retries) {
			if (err == ETIMEDOUT)
				end(w, s, WHO_TIMEOUT, WHY_CONNTIMEOUT,
				    CONN_TIMEOUT);
			else
				end(w, s, WHO_UPSTREAM, err == ECONNREFUSED ?
				    WHY_REFUSED : err == EPROTO ? WHY_TLS :
				    WHY_CONNERROR, CONN_ERROR);
			return -1;
		}
		/* A routed session tries its own upstream only. */
		if (tls_of(s) != NULL && tls_of(s)->route != NULL)
			u = upstream_pick_this(tls_of(s)->route, now);
		else
			u = upstream_pick(pxc->balance == BALANCE_HASH ?
			    hash_slot(w, s) : 0, s->wait->tried, now);
		if (u == NULL) {
			end(w, s, WHO_TENKD, WHY_NOUPSTREAM, CONN_ERROR);
			return -1;
		}
		s->attempts++;
		s->wait->tried |= 1ULL << upstream_index(u);
		s->ups = (uint8_t)(upstream_index(u) + 1);
		s->wait->cstart = now;
		if ((fd = upstream_connect(u)) == -1) {
			err = errno;
			if (err == EMFILE || err == ENFILE || err == ENOBUFS ||
			    err == ENOMEM) {
				end(w, s, WHO_TENKD, WHY_NOFD, CONN_ERROR);
				return -1;
			}
			if (upstream_port_error(err)) {
				s->ups = 0;
				upstream_failed(u, now, err);
				no_port(w, s, u, err);
				return -1;
			}
			log_debug("%s: %s: %s", __func__, upstream_name(u),
			    strerror(err));
			s->ups = 0;
			upstream_failed(u, now, err);
			continue;
		}
		tk_io_init(&s->up, fd, up_io, w);
		if (tk_io_start(w->l, &s->up, TK_EV_WRITE) == -1) {
			close(fd);
			s->up.fd = -1;
			end(w, s, WHO_TENKD, WHY_ERROR, CONN_ERROR);
			return -1;
		}
		return wait_arm(w, s, pxc->connect_timeout);
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
	uint64_t	 tc;
	int		 err, n;

	if ((err = tk_sock_error(s->up.fd)) == -1)
		err = errno;
	tk_timer_cancel(w->l, &s->wait->t);
	if (err != 0) {
		u = up_of(s);
		log_debug("%s: %s: %s", __func__, upstream_name(u),
		    strerror(err));
		(void)tk_io_close(w->l, &s->up);
		s->ups = 0;
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
	tc = tk_loop_now(w->l) - s->wait->cstart;
	upstream_connect_time(tc);
	if (s->c.acct)
		CONN_ACCT(w, &s->c)->tc = tc / 1000 < UINT32_MAX ?
		    (uint32_t)(tc / 1000) : UINT32_MAX;
	(void)tk_sock_nodelay(s->up.fd);
	conn_touch(&s->c, tk_loop_now(w->l));
	if (tls_of(s) != NULL && tlsorig_on(up_of(s)))
		return up_tls(w, s);
	upstream_connected(up_of(s));
	wait_free(w, s);
	s->c.state = PX_DATA;
	if (pxc->send_proxy != 0) {
		n = pp_header(pxc->send_proxy, peer(w, s), s->c.io.fd, hdr,
		    sizeof(hdr));
		flow(s, C2U, &f);
		/* Sent, or queued still: a failed send's bytes stay. */
		s->hdr = (uint8_t)n;
		if (dp_send(w, &f, hdr, n) == -1) {
			if (f.err == DP_ERR_NOMEM)
				s->hdr = 0;
			send_ended(w, s, &f);
			return -1;
		}
	}
	return send_first(w, s);
}

/*
 * Connected to an upstream marked tls: its handshake starts, under the
 * connect timeout still.  The PROXY header goes before the TLS, in the
 * clear, as HAProxy's send-proxy does: whole into a fresh socket, or
 * not.  Returns 0, or -1 after ending the session.
 */
static int
up_tls(struct worker *w, struct psess *s)
{
	struct pxtls	*t = tls_of(s);
	char		 hdr[PP_MAXLEN];
	int		 n;

	if (pxc->send_proxy != 0) {
		n = pp_header(pxc->send_proxy, peer(w, s), s->c.io.fd, hdr,
		    sizeof(hdr));
		if (send(s->up.fd, hdr, n, MSG_NOSIGNAL) != n) {
			end(w, s, WHO_UPSTREAM, WHY_ERROR, CONN_ERROR);
			return -1;
		}
		s->hdr = (uint8_t)n;
	}
	if ((t->ut = tlsorig_new(w, up_of(s), &s->up)) == NULL) {
		end(w, s, WHO_TENKD, WHY_NOMEM, CONN_NOMEM);
		return -1;
	}
	s->spl[C2U] = s->spl[U2C] = DP_S_OFF;
	s->c.state = PX_UPHS;
	return wait_arm(w, s, pxc->connect_timeout);
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

	if (tls_of(s) == NULL || tls_of(s)->peek.buf == NULL)
		return 0;
	p = &tls_of(s)->peek;
	flow(s, C2U, &f);
	r = dp_send(w, &f, p->buf, p->len);
	s->in += p->len;
	w->st.bytes_in[SIDE_CLIENT] += p->len;
	free(p->buf);
	p->buf = NULL;
	if (r == -1) {
		send_ended(w, s, &f);
		return -1;
	}
	return 0;
}

/*
 * End s after dp_send() of f failed: tenkd's lack of memory, or the
 * upstream's error (errno).
 */
static void
send_ended(struct worker *w, struct psess *s, const struct dp_flow *f)
{
	if (f->err == DP_ERR_NOMEM)
		end(w, s, WHO_TENKD, WHY_NOMEM, CONN_NOMEM);
	else
		end(w, s, WHO_UPSTREAM, dp_reason(errno) == CONN_RESET ?
		    WHY_RESET : WHY_ERROR, dp_reason(errno));
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

	if ((r = tlsorig_handshake(w, up_of(s), tls_of(s)->ut)) == 0) {
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
	upstream_connected(up_of(s));
	wait_free(w, s);
	s->c.state = PX_DATA;
	return send_first(w, s) == -1 ? -1 : 1;
}

/*
 * Give up the upstream connection of a session that is still setting it
 * up (connecting, or its TLS handshake), counting err against it.
 */
static void
up_drop(struct worker *w, struct psess *s, int err)
{
	struct upstream	*u = up_of(s);
	struct pxtls	*t = tls_of(s);

	(void)tk_io_close(w->l, &s->up);
	if (t != NULL && t->ut != NULL) {
		tk_tls_free(t->ut);
		t->ut = NULL;
	}
	s->ups = 0;
	s->hdr = 0;
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
		if (tls_of(s)->ct != NULL)
			tlsterm_timeout(w, tls_of(s)->ct);
		else {
			tls_of(s)->peek.fail = TK_TLS_F_TIMEOUT;
			w->st.tls_fail[TK_TLS_F_TIMEOUT]++;
		}
		end(w, s, WHO_TIMEOUT, WHY_TLSTIMEOUT, CONN_TLS);
		return;
	}
	if (s->c.state == PX_CONNECT || s->c.state == PX_UPHS) {
		log_debug("%s: %s: connect timeout", __func__,
		    upstream_name(up_of(s)));
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
	proxy_idle(w, &s->c);
	last = conn_last_ns(&s->c, tk_loop_now(l));
	if (tk_loop_now(l) - last < pxc->fin_timeout &&
	    tk_timer_arm_at(l, t, last + pxc->fin_timeout) == 0)
		return;
	end(w, s, WHO_TIMEOUT, WHY_FINTIMEOUT, CONN_TIMEOUT);
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
	uint32_t	 it;
	int		 r;

	if (c->state == PX_HANDSHAKE || c->state == PX_PEEK) {
		(void)front(w, s);
		return;
	}
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
	 * One budget per session and pass of the run queue: a pass is one
	 * iteration of the loop (its low 32 bits: two passes 2^32 apart
	 * that look alike only share a budget).  The direction that goes
	 * first alternates, so that one direction cannot spend every
	 * budget while the other waits.
	 */
	it = (uint32_t)tk_loop_iterations(w->l);
	if (s->turn != it) {
		s->turn = it;
		s->budget = PX_BUDGET;
		s->first_dir ^= 1;
	}
	/* Described once a step, for the pumps and then the wants. */
	flow(s, C2U, &fl[C2U]);
	flow(s, U2C, &fl[U2C]);
	if (s->dead) {
		failing(w, s, fl);
		return;
	}
	if ((r = pump(w, s, fl, s->first_dir)) != 0 ||
	    (r = pump(w, s, fl, s->first_dir ^ 1)) != 0) {
		if (r == 1)
			failing(w, s, fl);
		return;
	}
	if (s->fp == NULL && !s->fp_tried && srv.fastpath && !w->cq &&
	    s->pipe[C2U] == &dp_nopipe && s->pipe[U2C] == &dp_nopipe &&
	    fl[C2U].tsrc == NULL && fl[C2U].tdst == NULL)
		fast_start(w, s, fl);
	if (s->flags[C2U] & s->flags[U2C] & DP_F_SHUT) {
		end(w, s, s->first_fin, WHY_EOF, CONN_EOF);
		return;
	}
	if (s->first_fin != WHO_NONE)
		fin_arm(w, s);
	set_wants(w, s, fl);
}

/*
 * The step of a session with a failed side (failed()): the direction
 * out of it, if still live, moves on; once it is done too, the session
 * ends with the failure.  The fin timeout bounds the wait.
 */
static void
failing(struct worker *w, struct psess *s, struct dp_flow *fl)
{
	int	d = s->dead & 1 << C2U ? U2C : C2U;

	if (!done(s, d) && pump(w, s, fl, d) == -1)
		return;
	if (done(s, d)) {
		end_failed(w, s);
		return;
	}
	fin_arm(w, s);
	if (!w->cq && (tk_io_want(w->l, &s->c.io, d == C2U ?
	    dp_want_src(&fl[d]) : dp_want_dst(&fl[d])) == -1 ||
	    tk_io_want(w->l, &s->up, d == C2U ? dp_want_dst(&fl[d]) :
	    dp_want_src(&fl[d])) == -1)) {
		log_warn("%s: fd %d", __func__, s->c.io.fd);
		end(w, s, WHO_TENKD, WHY_ERROR, CONN_ERROR);
	}
}

/*
 * Half-closed or failed: arm the fin timeout, once.  Without memory
 * for its timer, the idle timeout is the bound.
 */
static void
fin_arm(struct worker *w, struct psess *s)
{
	if (s->fin_armed || pxc->fin_timeout == 0)
		return;
	s->fin_armed = 1;
	if (wait_new(s) == 0)
		(void)tk_timer_arm(w->l, &s->wait->t, pxc->fin_timeout);
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
		cw = tls_of(s)->ct->rwant;
	else if (s->c.state == PX_PEEK)
		cw = TK_EV_READ;
	else if (s->c.state == PX_UPHS)
		uw = tls_of(s)->ut->rwant;
	else if (w->cq)
		return;		/* the data path's requests are the wants */
	else {
		cw = dp_want_src(&fl[C2U]) | dp_want_dst(&fl[U2C]);
		uw = dp_want_src(&fl[U2C]) | dp_want_dst(&fl[C2U]);
		if (s->fp != NULL) {
			cw &= pxfast_want(s->fp, C2U);
			uw &= pxfast_want(s->fp, U2C);
		}
	}
	if ((!w->cq && tk_io_want(w->l, &s->c.io, cw) == -1) ||
	    (s->up.fd != -1 &&
	    tk_io_want(w->l, &s->up, uw) == -1)) {
		log_warn("%s: fd %d", __func__, s->c.io.fd);
		end(w, s, WHO_TENKD, WHY_ERROR, CONN_ERROR);
	}
}

/*
 * Connected, read, splicing neither way and no side in TLS (OpenSSL
 * holds those records; a session routed by SNI passes them untouched):
 * the kernel may forward s from here (--fastpath).  splice(2) reads
 * past a socket in the map and sees no byte the program passed, so s
 * never splices again.
 */
static void
fast_start(struct worker *w, struct psess *s, struct dp_flow *fl)
{
	/* Once both sources are read: see fastpath_pair. */
	if ((fl[C2U].src->ready | fl[U2C].src->ready) & TK_EV_READ)
		return;
	if ((s->fp = pxfast_new(w, &s->c, fl)) == NULL) {
		s->fp_tried = errno != EAGAIN;
		return;
	}
	s->fp_tried = 1;
	s->spl[C2U] |= DP_S_OFF;
	s->spl[U2C] |= DP_S_OFF;
	pxfast_grant(w, s->fp, C2U, &fl[C2U]);
	pxfast_grant(w, s->fp, U2C, &fl[U2C]);
}

/* Whether direction d of s is over: its FIN passed on, or failed. */
static inline int
done(const struct psess *s, int d)
{
	return (s->dead & 1 << d) || (s->flags[d] & DP_F_SHUT);
}

/*
 * Direction d of s as a flow of the data path, for the time of a step.
 * Inlined where d is known, so that its choices go: as a call it cost
 * the proxy 52 instructions a message (callgrind).
 */
static inline __attribute__((always_inline)) void
flow(struct psess *s, int d, struct dp_flow *f)
{
	memset(f, 0, sizeof(*f));
	f->src = d == C2U ? &s->c.io : &s->up;
	f->dst = d == C2U ? &s->up : &s->c.io;
	f->q = d == C2U ? &s->upq : &s->c.outq;
	f->flags = &s->flags[d];
	f->pipe = &s->pipe[d];
	f->spl = &s->spl[d];
	f->nin = d == C2U ? &s->in : &s->rx;
	f->c = &s->c;
	if (s->c.tail) {
		f->tsrc = d == C2U ? tls_of(s)->ct : tls_of(s)->ut;
		f->tdst = d == C2U ? tls_of(s)->ut : tls_of(s)->ct;
	}
	if (s->fp != NULL)
		f->more = d == C2U ? more_c2u : more_u2c;
}

/* A flow's more (dpath.c): the fast path's bytes behind a FIN. */
static int
more_c2u(struct dp_flow *f)
{
	struct psess	*s = (struct psess *)f->c;

	return pxfast_more(s->c.io.arg, s->fp, C2U, f);
}

static int
more_u2c(struct dp_flow *f)
{
	struct psess	*s = (struct psess *)f->c;

	return pxfast_more(s->c.io.arg, s->fp, U2C, f);
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
 * budget; note who finished first.  Returns 0; 1 when a failure ended
 * the direction and the other runs on (failed()); or -1 after ending
 * the session.
 */
static int
pump(struct worker *w, struct psess *s, struct dp_flow *fl, int d)
{
	struct dp_flow	*f = &fl[d];
	size_t		 budget = s->budget;

	if (s->fp != NULL && pxfast_pump(w, s->fp, d, f))
		return 0;
	if (dp_pump(w, f, &budget) == -1) {
		if (f->err == DP_ERR_NOMEM) {
			end(w, s, WHO_TENKD, WHY_NOMEM, CONN_NOMEM);
			return -1;
		}
		return failed(w, s, fl, d);
	}
	s->budget = (uint32_t)budget;
	if ((s->flags[d] & DP_F_EOF) && s->first_fin == WHO_NONE)
		s->first_fin = d == C2U ? WHO_CLIENT : WHO_UPSTREAM;
	if (s->fp != NULL)
		pxfast_grant(w, s->fp, d, f);
	return 0;
}

/*
 * Direction d failed on the side f->err names (errno says why).  That
 * side takes no more bytes, so the direction toward it is over; but
 * what was read from it still goes to the other side (the data path
 * reports a source's failure only once its flow has sent what it
 * read), so the direction out of the failed side runs on until it ends
 * too, as a half-closed session would, within --fin-timeout.  The
 * first failure is what the session ends with.  Returns 1 while that
 * direction runs on, -1 after ending the session.
 */
static int
failed(struct worker *w, struct psess *s, struct dp_flow *fl, int d)
{
	enum conn_reason	 r = dp_reason(errno);
	int			 side, out;

	side = (fl[d].err == DP_ERR_SRC) == (d == C2U) ? WHO_CLIENT :
	    WHO_UPSTREAM;
	out = side == WHO_CLIENT ? C2U : U2C;
	if (!s->dead) {
		if (r != CONN_RESET)
			log_debug("%s: fd %d: %s: %s", __func__, s->c.io.fd,
			    who_names[side], strerror(errno));
		s->fail_who = side;
		s->failed = r;
	}
	s->dead |= 1 << d;
	if (done(s, out)) {
		end_failed(w, s);
		return -1;
	}
	/* Nothing more that d's source sends can go anywhere. */
	if (w->cq)
		tk_io_recv_stop(w->l, fl[d].src);
	return 1;
}

/* End the session with its first failure (failed()). */
static void
end_failed(struct worker *w, struct psess *s)
{
	end(w, s, s->fail_who, s->failed == CONN_RESET ? WHY_RESET : WHY_ERROR,
	    s->failed);
}

/* End the session: who ended it and why, for the log; s is freed. */
static void
end(struct worker *w, struct psess *s, int who, enum px_why why,
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
	uint64_t	 tx, out, moved[2];

	if (s->who == WHO_NONE) {
		s->who = reason == CONN_TIMEOUT ? WHO_TIMEOUT : WHO_TENKD;
		s->why = reason == CONN_TIMEOUT ? WHY_IDLE : WHY_CONN;
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
	/* Sent: what was read (and the PROXY header) less what is left. */
	tx = s->in + s->hdr - s->upq.len - piped(s, C2U);
	out = s->rx - c->outq.len - piped(s, U2C);
	wait_free(w, s);
	if (s->up.fd != -1)
		(void)tk_io_close(w->l, &s->up);
	if (s->fp != NULL) {
		/* What the kernel moved counts as tenkd's own did. */
		pxfast_end(w, s->fp, moved);
		s->fp = NULL;
		s->in += moved[C2U];
		tx += moved[C2U];
		s->rx += moved[U2C];
		out += moved[U2C];
	}
	tk_bufq_clear(&s->upq, &w->pool);
	dp_splice_end(w, &s->pipe[C2U], &s->spl[C2U]);
	dp_splice_end(w, &s->pipe[U2C], &s->spl[U2C]);
	if (s->ups != 0)
		upstream_release(up_of(s), tx, s->rx);
	if (s->unit)
		worker_conn_gone(w);
	if (s->perip)
		perip_put(peer(w, s));
	if (srv.access_fd != -1)
		access_line(w, s, phase, s->why != WHY_CONN ?
		    why_names[s->why] : conn_reasons[reason], out);
	if (tls_of(s) != NULL) {
		if (tls_of(s)->ut != NULL && s->ups != 0)
			tlsorig_end(w, up_of(s), tls_of(s)->ut);
		tk_tls_free(tls_of(s)->ct);
		tk_tls_free(tls_of(s)->ut);
		free(tls_of(s)->peek.buf);
	}
}

/* /stats, after the thread totals: the upstreams and the sockets. */
static void
proxy_stats(FILE *f)
{
	upstream_stats(f);
	fprintf(f, "stats sockets: open %llu max-conns %llu\n",
	    (unsigned long long)atomic_load(&srv.nconns),
	    (unsigned long long)srv.max_conns);
}

/*
 * The proxy's own in a thread's /stats line: bytes from and to the
 * upstreams, clients closed for want of a local port, bytes sent by
 * splice(2), bulk flows that found no pipe, pipes in use and the bytes
 * in them, sessions and bytes the kernel forwarded (--fastpath).
 */
static void
proxy_stats_line(FILE *f, const struct stats *s)
{
	fprintf(f, " up-in %llu up-out %llu no-port %llu spliced %llu "
	    "nopipe %llu pipes %llu piped %llu fastpath %llu "
	    "fastpath-bytes %llu",
	    (unsigned long long)s->bytes_in[SIDE_UPSTREAM],
	    (unsigned long long)s->bytes_out[SIDE_UPSTREAM],
	    (unsigned long long)s->noport, (unsigned long long)s->spliced,
	    (unsigned long long)s->nopipe, (unsigned long long)s->pipes,
	    (unsigned long long)s->piped, (unsigned long long)s->fpsess,
	    (unsigned long long)s->fpbytes);
}

/* The session's access-log record (conn_access_record). */
static void
access_line(struct worker *w, struct psess *s, const char *phase,
    const char *why, uint64_t out)
{
	struct conn_acct	*a = CONN_ACCT(w, &s->c);
	struct pxtls		*t = tls_of(s);
	char			 term[64];
	struct acct_rec		 r = {
		.peer = &a->peer, .start = a->start, .in = s->in,
		.out = out, .tries = s->attempts, .term = term,
		.why = why, .tc = (uint64_t)a->tc * 1000,
		.connected = s->ups != 0 && s->c.state == PX_DATA,
		.upstream = s->ups != 0 && s->c.state == PX_DATA ?
		    upstream_name(up_of(s)) : "-",
	};

	snprintf(term, sizeof(term), "%s/%s", who_names[s->who], phase);
	if (t != NULL && t->ct != NULL)
		tlsterm_acct(t->ct, &r);
	else if (t != NULL && sniroute_on()) {
		if (t->peek.fail != TK_TLS_F_NONE)
			r.tls_fail = tk_tls_fail_names[t->peek.fail];
		else if (s->c.state != PX_PEEK)
			r.sni = t->peek.sni;
	}
	conn_access_record(w, &r);
}
