/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --accept-proxy: a new connection first sends a PROXY protocol header
 * (v1 or v2, haproxy's proxy-protocol.txt), read here before the
 * connection exists for conn.c and the protocol.  conn_new() hands the
 * accepted fd to pin_take(); this file reads the header with plain
 * readiness (a watcher of its own, recv), on every backend, and then
 * calls conn_new() again with the address the header carries as the
 * peer, so the access log, --max-conns-per-ip, --balance source and an
 * outbound --send-proxy all see the client the load balancer saw.  v1
 * UNKNOWN and v2 LOCAL (a health check of the balancer's own) keep the
 * socket's peer.  Parsing is proxyproto.c's pp_parse().
 *
 * Never a byte past the header: each recv asks for at most what
 * pp_parse() says the shortest header that can still follow needs
 * (pi.want), so what the client sent after the header stays in the
 * socket for the protocol, whatever it looks like.  No MSG_PEEK, and
 * no byte is read twice.
 *
 * --accept-proxy-from: the header is taken only from those peers (the
 * balancers), as nginx's set_real_ip_from and an HAProxy ACL on
 * "expect-proxy" do; a connection from any other is closed before a
 * byte is read, counted as closed "proxy-untrusted" and logged at
 * debug.  Otherwise anyone who reaches the port could say which client
 * it is, and --max-conns-per-ip, --balance source and the access log
 * would believe it.
 *
 * A bad header, the header timeout (--accept-proxy-timeout), EOF or a
 * socket error closes the fd at once, counted as closed "proxy-header"
 * (stats line, /stats, /metrics) and logged at debug with the reason.
 * While its header is coming, a connection holds its --max-conns unit
 * and counts as active in its worker (so a drain waits for it, at most
 * the header timeout), and is on its worker's pins list, which
 * conn_close_all() closes on a forced shutdown.  It holds a struct pin
 * of about 400 bytes; a v2 header longer than PP_MAXLEN (TLVs) takes a
 * PP_IN_MAXLEN buffer for the time it is read.
 *
 * XXX The header also carries the address the client connected to (the
 * balancer's); it is dropped, and --send-proxy names our own.  Keeping
 * it would cost every session 28 bytes, for an upstream that wants to
 * know which of the balancer's addresses was used.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/log.h"
#include "../tenkd.h"

struct pin {
	struct tk_io		 io;		/* arg: this pin */
	struct tk_timer		 timer;		/* the header deadline */
	LIST_ENTRY(pin)		 link;		/* w->pins */
	struct worker		*w;
	struct sockaddr_in6	 peer;		/* the socket's, or _in */
	socklen_t		 peerlen;
	size_t			 len;		/* header bytes read */
	unsigned char		*buf;		/* small, or a big one */
	unsigned char		 small[PP_MAXLEN];
};

/* The options, as short as a global's. */
static const struct pinconf *const pinc = &srv.cfg.pin;

/*
 * Set while pin.c calls conn_new() with a finished header, so that
 * pin_take() lets that call through.  Per thread: each worker hands
 * over its own connections.
 */
static _Thread_local int handing;

static int	pin_trusted(int, const struct sockaddr *);
static void	pin_io(struct tk_loop *, struct tk_io *);
static void	pin_timeout(struct tk_loop *, struct tk_timer *);
static void	pin_done(struct pin *, const struct pp_info *);
static void	pin_end(struct pin *, enum conn_reason, const char *);

/*
 * Whether the peer of fd (sa, or NULL: getpeername) is in one of the
 * networks of --accept-proxy-from.  Worker thread.
 */
static int
pin_trusted(int fd, const struct sockaddr *sa)
{
	struct sockaddr_storage	 ss;
	const struct pinnet	*n;
	socklen_t		 len = sizeof(ss);
	uint8_t			 a[16];
	int			 i, b;

	if (sa == NULL) {
		if (getpeername(fd, (struct sockaddr *)&ss, &len) == -1)
			return 0;
		sa = (struct sockaddr *)&ss;
	}
	memset(a, 0, sizeof(a));
	if (sa->sa_family == AF_INET) {
		a[10] = a[11] = 0xff;
		memcpy(a + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6)
		memcpy(a, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	else
		return 0;
	for (i = 0; i < pinc->nfrom; i++) {
		n = &pinc->from[i];
		b = n->bits;
		if (memcmp(a, n->addr, b / 8) == 0 && (b % 8 == 0 ||
		    ((a[b / 8] ^ n->addr[b / 8]) & (0xff00 >> (b % 8))) == 0))
			return 1;
	}
	return 0;
}

/*
 * conn_new()'s hook, with the arguments it got from accept: take fd
 * (peer sa) into the header stage and return 1, or return 0 when
 * conn_new() goes on, that is when pin.c itself hands over a finished
 * header.  Once taken, fd is this file's: it is closed and counted
 * here on any failure.  Worker thread.
 */
int
pin_take(struct worker *w, int fd, const struct sockaddr *sa,
    socklen_t salen)
{
	struct pin		*p;
	enum conn_reason	 why;

	if (handing)
		return 0;
	w->st.accepted++;
	w->nconns++;
	if (pinc->nfrom > 0 && !pin_trusted(fd, sa)) {
		log_debug("%s: thread %d fd %d: not from --accept-proxy-from",
		    __func__, w->id, fd);
		why = CONN_PROXYFROM;
		goto fail;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		why = CONN_NOMEM;
		conn_warn_nomem(w);
		goto fail;
	}
	p->w = w;
	p->buf = p->small;
	if (sa != NULL && (size_t)salen <= sizeof(p->peer)) {
		memcpy(&p->peer, sa, salen);
		p->peerlen = salen;
	}
	tk_io_init(&p->io, fd, pin_io, p);
	tk_timer_init(&p->timer, pin_timeout, p);
	if (tk_io_start(w->l, &p->io, TK_EV_READ) == -1) {
		why = CONN_ERROR;
		conn_warn_watch(w, fd, " for its PROXY header");
		free(p);
		goto fail;
	}
	if (tk_timer_arm(w->l, &p->timer, pinc->timeout) == -1) {
		/* No deadline, no header stage: a client could stay. */
		tk_io_stop(w->l, &p->io);
		free(p);
		why = CONN_NOMEM;
		goto fail;
	}
	LIST_INSERT_HEAD(&w->pins, p, link);
	return 1;

 fail:
	close(fd);
	w->st.closed[why]++;
	w->nconns--;
	worker_conn_gone(w);
	return 1;
}

/*
 * The header's watcher: read what pp_parse() asks for, never more,
 * until the header is complete, refused, or the socket has no more.
 */
static void
pin_io(struct tk_loop *l, struct tk_io *io)
{
	struct pin	*p = io->arg;
	struct pp_info	 pi;
	ssize_t		 n;
	int		 r;

	(void)l;
	for (;;) {
		r = pp_parse(p->buf, p->len, &pi);
		if (r == PP_DONE) {
			pin_done(p, &pi);
			return;
		}
		if (r == PP_BAD) {
			pin_end(p, CONN_PROXYHDR, pi.why);
			return;
		}
		/* pp_parse() never wants past PP_IN_MAXLEN in all. */
		if (p->len + pi.want > sizeof(p->small) && p->buf == p->small) {
			if ((p->buf = malloc(PP_IN_MAXLEN)) == NULL) {
				p->buf = p->small;
				pin_end(p, CONN_NOMEM, "no memory");
				return;
			}
			memcpy(p->buf, p->small, p->len);
		}
		n = recv(io->fd, p->buf + p->len, pi.want, 0);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				tk_io_block(io, TK_EV_READ);
				return;
			}
			pin_end(p, CONN_PROXYHDR, strerror(errno));
			return;
		}
		if (n == 0) {
			pin_end(p, CONN_PROXYHDR, "EOF in the header");
			return;
		}
		p->len += (size_t)n;
	}
}

static void
pin_timeout(struct tk_loop *l, struct tk_timer *t)
{
	(void)l;
	pin_end(t->arg, CONN_PROXYHDR, "header timeout");
}

/* Forget p: off its worker's list, no deadline, no watcher, freed. */
static void
pin_free(struct pin *p)
{
	LIST_REMOVE(p, link);
	tk_timer_cancel(p->w->l, &p->timer);
	if (p->buf != p->small)
		free(p->buf);
	free(p);
}

/*
 * The header is in: the fd goes to conn_new() as if just accepted,
 * with the carried source as its peer, or the socket's own for v1
 * UNKNOWN and v2 LOCAL, UNSPEC or UNIX.  The counts taken in
 * pin_take() are given back first, as conn_new() takes them again.
 */
static void
pin_done(struct pin *p, const struct pp_info *pi)
{
	struct worker		*w = p->w;
	struct sockaddr_in6	 peer;
	socklen_t		 len;
	int			 fd = p->io.fd;

	tk_io_stop(w->l, &p->io);
	if (pi->family == AF_INET) {
		len = sizeof(struct sockaddr_in);
		memcpy(&peer, &pi->src, len);
	} else if (pi->family == AF_INET6) {
		len = sizeof(peer);
		peer = pi->src;
	} else {
		len = p->peerlen;
		peer = p->peer;
	}
	log_debug("%s: thread %d fd %d: v%d, %zu bytes", __func__, w->id,
	    fd, pi->version, pi->len);
	pin_free(p);
	w->st.accepted--;
	w->nconns--;
	handing = 1;
	(void)conn_new(w, fd, len > 0 ? (struct sockaddr *)&peer : NULL,
	    len);
	handing = 0;
}

/* Close p's connection for reason why (text: what went wrong). */
static void
pin_end(struct pin *p, enum conn_reason why, const char *text)
{
	struct worker	*w = p->w;

	log_debug("%s: thread %d fd %d: %s after %zu bytes: %s", __func__,
	    w->id, p->io.fd, conn_reasons[why], p->len, text);
	(void)tk_io_close(w->l, &p->io);
	pin_free(p);
	w->st.closed[why]++;
	w->nconns--;
	worker_conn_gone(w);
}

/*
 * Close every connection of w still sending its header, counted under
 * why; conn_close_all()'s, for the drain deadline and exit.
 */
void
pin_close_all(struct worker *w, enum conn_reason why)
{
	struct pin	*p;

	while ((p = LIST_FIRST(&w->pins)) != NULL)
		pin_end(p, why, "closing all");
}
