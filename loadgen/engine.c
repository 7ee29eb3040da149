/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The load engine: threads, each with its own loop and its share of the
 * connections; the connection ramp at a bounded rate; connects from
 * round-robin source addresses; the byte stream of each connection,
 * written from a shared pattern and checked byte for byte as it comes
 * back, or its replies read through a framing (framing.h); connections
 * reopened on purpose (--conn-lifetime, Connection: close, --mode
 * connect); and the main thread's phases (ramp, warm-up, measurement)
 * and progress line.  When a message is due and what its latency is
 * belongs to traffic.c; printing and JSON to report.c.
 *
 * A connection sends the pattern from its own phase on, so every byte
 * echoed is known in advance: verification is one memcmp() per recv,
 * and sending is a send() straight from the pattern, no copy.  Fixed
 * requests (-m, --message-file, a URL, without placeholders) come from
 * a buffer of them all one after the other, repeated, sent from any
 * offset in the same way; each connection starts at its own request.
 * Requests with placeholders are rendered, one per push, into the
 * connection's own ring of engine_ring_size() bytes, and stay there
 * until their replies are read, so that echo compares what was sent;
 * one template of a fixed layout has a slot per request of the window,
 * each filled once at start-up, and a push writes only its
 * placeholders there.  Each kind of request has its source function
 * (req_*), chosen once.  The framing parses the replies of both; the
 * default (the pattern, echoed) keeps its own path, which has no
 * parser to call, and no request source.
 *
 * Each second, aligned on the wall clock's seconds so that processes
 * and hosts agree on them, the main thread collects the threads'
 * latencies of that second by message (each hands over its histogram
 * and starts a fresh one), for the progress line's p99 and, with
 * --plot, the report's series.  -n hands out its requests as tickets
 * from one counter that every process shares.
 *
 * Per message the floor is one send and one recv.  A recv shorter than
 * the scratch buffer means the socket was drained, so we record EAGAIN
 * without asking the kernel again, unless the peer's FIN was reported
 * too (TK_EV_HUP), when we read on to see the EOF.
 *
 * Over TLS (--tls) a connection has a handshake between its connect
 * and its traffic, timed into a histogram of its own and counted new or
 * resumed, and its bytes go through tk_tls_read() and tk_tls_write(),
 * which block on the watcher what they wait for (tls.h): a TLS read
 * that drained the socket has blocked READ, so the loop stops when READ
 * is no longer ready.  --connect-timeout covers the connect and the
 * handshake.  With --tls-resume each thread keeps the newest session
 * its servers gave and offers it on every connect.
 */
#include <sys/socket.h>

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/clock.h"
#include "tenk/hist.h"
#include "tenk/log.h"
#include "tenk/loop.h"
#include "tenk/rand.h"
#include "tenk/signal.h"
#include "tenk/sock.h"
#include "tenk/timer.h"
#include "tenk/tls.h"
#include "tenk/xmalloc.h"
#include "loadgen.h"

#define PATLEN		65521		/* prime: phases do not line up */
#define CHUNK		65536		/* bytes per send() and recv() */
#define READ_BUDGET	16		/* recv() calls per turn */
#define RAMP_BATCH	512		/* connects per timer firing */
#define RAMP_SLACK	(TK_MSEC / 4)	/* no ramp timer closer than this */
#define FD_RESERVE	64		/* loops, logs, pipes, stdio */
#define SHOW_BYTES	64		/* of a mismatch, in the log */
#define RETRY_NS	TK_MSEC		/* a unix: connect's next try */

/*
 * The length of a connection's next request, in its source, or
 * REQ_NONE when -n has none left for it.
 */
typedef uint64_t req_fn(struct lg_conn *);
#define REQ_NONE	UINT64_MAX

struct engine {
	const struct lg_conf	*conf;
	struct lg_thread	*threads;
	int			 nthreads;
	struct tk_loop		*l;
	_Atomic int		 phase;
	int			 ramps_done;
	uint64_t		 total;		/* connections, all threads */
	uint64_t		 mono0;		/* ns, start */
	uint64_t		 epoch0;	/* us, start */
	uint64_t		 t_ramp_end;
	uint64_t		 t_meas_start;
	uint64_t		 t_meas_end;
	struct tk_timer		 tick;
	struct tk_timer		 phase_t;
	struct lg_prog		*prog;
	struct lg_prog		 prev;
	uint64_t		 prev_t;
	struct report		*r;		/* main_signal marks it */
	const unsigned char	*sbuf;		/* the requests' bytes */
	size_t			 speriod;	/* sbuf[i % speriod] */
	unsigned char		*mbuf;		/* the requests repeated */
	const struct tmpl_set	*req;		/* NULL: the pattern */
	req_fn			*next;		/* NULL: the pattern, no -n */
	req_fn			*src;		/* -n: behind req_ticket() */
	tp_over_fn		*over;		/* req_slot: the placeholders */
	const struct tp_part	*over_arg;
	uint64_t		*roff;		/* fixed: where each starts */
	size_t			*rlen;
	size_t			 rsize;		/* templates: ring bytes */
	int			 pending;	/* threads yet to hand over */
	uint64_t		 next_sec;	/* epoch second of next tick */
	uint64_t		 sec_key;	/* the second being collected */
	struct tk_hist		*sec;		/* this second, all threads */
	struct tk_hist		*sec_unc;
	atomic_flag		 logged;	/* a mismatch was logged */
	atomic_flag		 tls_logged;	/* a TLS failure was */
};

/* The pattern every connection sends, PATLEN bytes then CHUNK again. */
static unsigned char	 pattern[PATLEN + CHUNK];
static pthread_once_t	 pattern_once = PTHREAD_ONCE_INIT;

static void	 lg_conn_open(struct tk_loop *, struct lg_conn *);
static void	 lg_tls_keep(struct lg_conn *);
static int	 lg_tls_ticket_due(const struct lg_conn *);
static void	 tickets_lost(struct lg_conn *);

static void
pattern_init(void)
{
	uint64_t	x = 0x74656e6b;		/* "tenk" */
	size_t		i;

	for (i = 0; i < PATLEN; i++) {
		x = tk_mix64(x);
		pattern[i] = (unsigned char)(x >> 56);
	}
	/* CHUNK > PATLEN: the tail repeats the start, overlapping itself. */
	for (; i < sizeof(pattern); i++)
		pattern[i] = pattern[i - PATLEN];
}

const struct lg_conf *
engine_conf(const struct lg_thread *th)
{
	return th->e->conf;
}

/*
 * File descriptors one process needs for the configured connections:
 * one per connection plus a reserve for the loops and stdio.
 */
uint64_t
engine_fds_needed(const struct lg_conf *conf)
{
	return conf->conns + conf->idle + FD_RESERVE +
	    4 * (uint64_t)conf->threads;
}

/*
 * Whether the requests are one template of a fixed layout, whose every
 * rendering has one length: its ring is then a window of them (slots),
 * each request starts where one did before, and req_slot() writes only
 * its placeholders there.
 */
static int
ring_slots(const struct lg_conf *conf)
{
	const struct tp_part	*arg;

	return conf->req != NULL && !conf->req->fixed && conf->req->n == 1 &&
	    tmpl_over(conf->req->t[0], &arg) != NULL;
}

/*
 * Bytes of each connection's ring of rendered requests: a window of
 * slots (ring_slots), else a power of two that holds a window of the
 * longest request; 0 when no request needs rendering.
 */
size_t
engine_ring_size(const struct lg_conf *conf)
{
	size_t	need, n = 64;

	if (conf->req == NULL || conf->req->fixed)
		return 0;
	need = conf->req->maxlen * (size_t)(conf->window > 0 ?
	    conf->window : 1);
	if (ring_slots(conf))
		return need;
	while (n < need)
		n *= 2;
	return n;
}

static enum lg_err
err_kind(int e)
{
	switch (e) {
	case ECONNRESET:
	case EPIPE:
		return ERR_RESET;
	case ECONNREFUSED:
		return ERR_REFUSED;
	case ETIMEDOUT:
		return ERR_TIMEOUT;
	case EADDRNOTAVAIL:
		return ERR_PORTS;
	case EMFILE:
	case ENFILE:
		return ERR_FDLIMIT;
	case EPROTO:
		return ERR_TLS;
	}
	return ERR_OTHER;
}

/* Tell the main loop once every connect of th has succeeded or failed. */
static void
ramp_check(struct lg_thread *th)
{
	if (th->resolved == th->nconns)
		tk_loop_post(th->e->l, &th->m_ramp);
}

/*
 * An error ends c, which the ramp counted as established already when
 * it is open or was reopened (c->reconn): such a connection is lost,
 * and unserved if it completed nothing in the window.  Any other is a
 * connect of the ramp that failed.
 */
static void
lg_conn_count(struct lg_conn *c, int was, enum lg_err kind)
{
	struct lg_thread	*th = c->th;

	th->st.errs[kind]++;
	ctr_add(&th->prog.errors, 1);
	if ((was == LG_CONN_CONNECTING || was == LG_CONN_HANDSHAKE) &&
	    !c->reconn) {
		th->st.failed++;
		th->resolved++;
		ramp_check(th);
	} else {
		th->st.lost++;
		ctr_add(&th->prog.open, (uint64_t)-1);
	}
}

/*
 * c, in state was, is going: whether it had been open (connected, or a
 * reconnect of a slot that had been), and if so and it was active, an
 * unserved one when no message of it completed in the window.
 */
static int
lg_conn_gone(struct lg_conn *c, int was)
{
	int	open;

	open = (was != LG_CONN_CONNECTING && was != LG_CONN_HANDSHAKE) ||
	    c->reconn;

	if (open && !c->idle && c->wmsgs == 0)
		c->th->st.unserved++;
	return open;
}

/*
 * Free c's TLS, if it has any; an orderly end sends close_notify and
 * the FIN first, as a browser or wrk does.
 */
static void
lg_tls_end(struct lg_conn *c, int orderly)
{
	if (c->tls == NULL)
		return;
	if (orderly && c->tls->done)
		(void)tk_tls_shutdown(c->tls);
	tk_tls_free(c->tls);
	c->tls = NULL;
}

/*
 * Close c and count why.  kind < 0 is an orderly close at the end of
 * the run.  The connection's memory stays in the thread's array, so
 * nothing that still points at it can dangle.
 */
static void
lg_conn_close(struct tk_loop *l, struct lg_conn *c, int kind)
{
	struct lg_thread	*th = c->th;
	int			 was = c->state, open;

	if (was == LG_CONN_DEAD || was == LG_CONN_NEW)
		return;
	tk_timer_cancel(l, &c->tm);
	if (c->io.fd != -1) {
		tk_io_stop(l, &c->io);
		lg_tls_end(c, kind < 0);
		close(c->io.fd);
	}
	c->state = LG_CONN_DEAD;
	tickets_lost(c);
	open = lg_conn_gone(c, was);
	if (kind < 0) {
		if (open)
			th->st.open_end++;
		return;
	}
	lg_conn_count(c, was, (enum lg_err)kind);
}

/* A connect that failed before there was a watcher. */
static void
lg_conn_fail_early(struct lg_conn *c, int e)
{
	enum lg_err	kind = err_kind(e);

	if (kind == ERR_OTHER)
		log_debug("%s: connect: %s", __func__, strerror(e));
	c->state = LG_CONN_DEAD;
	(void)lg_conn_gone(c, LG_CONN_CONNECTING);
	lg_conn_count(c, LG_CONN_CONNECTING, kind);
}

/*
 * A reply that no request explains, or that its framing refuses: close
 * c as a mismatch.  The first of the run is logged with the bytes from
 * the offending one on, escaped; the rest are only counted, since one
 * broken server would otherwise fill the log.
 */
static void
lg_conn_mismatch(struct tk_loop *l, struct lg_conn *c, const char *why,
    uint64_t at, const unsigned char *p, size_t n)
{
	char	esc[4 * SHOW_BYTES + 1];
	size_t	k;

	if (!atomic_flag_test_and_set(&c->th->e->logged)) {
		k = log_escape(esc, sizeof(esc), p,
		    n > SHOW_BYTES ? SHOW_BYTES : n);
		log_warnx("connection %llu: mismatch at reply byte %llu: %s: "
		    "\"%s\"%s (later mismatches are only counted)",
		    (unsigned long long)c->id, (unsigned long long)at, why,
		    esc, k < n ? "..." : "");
	}
	lg_conn_close(l, c, ERR_MISMATCH);
}

/*
 * c's TLS failed (EPROTO, counted as ERR_TLS by the caller): the first
 * failure of the run is logged with the library's reason, the rest
 * only counted.
 */
static void
lg_tls_fail(struct lg_conn *c)
{
	char	why[256];

	if (c->tls == NULL || c->tls->fail == TK_TLS_F_NONE ||
	    c->tls->fail == TK_TLS_F_SOCKET ||
	    atomic_flag_test_and_set(&c->th->e->tls_logged))
		return;
	log_warnx("connection %llu: TLS %s: %s (later TLS failures are only "
	    "counted)", (unsigned long long)c->id, c->tls->done ? "failed" :
	    "handshake failed", tk_tls_why(c->tls, why, sizeof(why)));
}

static uint64_t
msg_size(struct lg_conn *c, const struct lg_conf *conf)
{
	uint64_t	x;

	if (conf->size_min == conf->size_max)
		return conf->size_min;
	/* xorshift64: cheap and good enough for sizes. */
	x = c->rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	c->rng = x;
	return conf->size_min + x % (conf->size_max - conf->size_min + 1);
}

/*
 * Take one of -n's requests for c, if it needs one: an active
 * connection sends none before the measured window (thread_go() starts
 * them then), every process takes from one counter, and once it has
 * given out all, no connection sends again.  Returns 0, or -1 when c
 * may not send.
 */
static int
ticket_take(struct lg_conn *c)
{
	struct lg_thread	*th = c->th;

	if (c->idle)
		return 0;
	if (!engine_measuring(th))
		return -1;
	if (atomic_fetch_add_explicit(th->tickets, 1,
	    memory_order_relaxed) >= th->nreq)
		return -1;
	c->tin++;
	ctr_add(&th->tin, 1);
	return 0;
}

/*
 * The counted requests of th in flight went down: once every one is
 * answered (or lost) and none is left to hand out, tell the main loop.
 */
static void
tickets_check(struct lg_thread *th)
{
	if (ctr_get(&th->tin) != 0 || th->done_posted ||
	    atomic_load_explicit(th->tickets, memory_order_relaxed) <
	    th->nreq)
		return;
	th->done_posted = 1;
	tk_loop_post(th->e->l, &th->m_done);
}

/* c closes with counted requests in flight: their replies never come. */
static void
tickets_lost(struct lg_conn *c)
{
	struct lg_thread	*th = c->th;

	if (c->tin == 0)
		return;
	ctr_add(&th->tin, (uint64_t)-(int64_t)c->tin);
	c->tin = 0;
	tickets_check(th);
}

/*
 * -n: the reply to the oldest request of c in flight came in, at now:
 * 1 when it answers one of -n's requests, which the measured figures
 * count, else 0.  (Without -n, the figures count any reply in the
 * measured window.)
 */
int
engine_retired(struct lg_conn *c, uint64_t now)
{
	struct lg_thread	*th = c->th;

	/* The counted ones are the newest: c->inflight was the oldest's. */
	if (c->tin <= c->inflight)
		return 0;
	c->tin--;
	ctr_add(&th->tin, (uint64_t)-1);
	th->st.t_lastrep = now;
	tickets_check(th);
	return 1;
}

/*
 * The request sources: each returns the length of c's next request,
 * written into c's ring first when it is rendered from a template.
 * engine_run() picks one, so that a request pays for no other, and
 * none for the pattern without -n, which engine_push() sizes itself.
 *
 * -n: one of its tickets, then a request from the source behind.
 */
static uint64_t
req_ticket(struct lg_conn *c)
{
	if (ticket_take(c) == -1)
		return REQ_NONE;
	return c->th->e->src(c);
}

/* The pattern, under -n. */
static uint64_t
req_pattern(struct lg_conn *c)
{
	return msg_size(c, c->th->e->conf);
}

/* Fixed requests, in turn. */
static uint64_t
req_fixed(struct lg_conn *c)
{
	const struct engine	*e = c->th->e;
	uint32_t		 i = c->mi;

	c->mi = i + 1 < e->req->n ? i + 1 : 0;
	return e->rlen[i];
}

/*
 * One template of a fixed layout (ring_slots): its placeholders written
 * over the rendering in the request's slot, which slots_fill() put
 * there.
 */
static uint64_t
req_slot(struct lg_conn *c)
{
	const struct engine	*e = c->th->e;

	return e->over(e->over_arg, &c->rng,
	    c->obuf + (c->pat + c->queued) % e->rsize);
}

/*
 * Any other templates, in turn, each rendered whole into the ring.  The
 * ring starts over whenever nothing is in flight, so that one request
 * at a time never wraps; a request that would is rendered aside and
 * copied in two pieces.  (Starting over sets pat to minus queued,
 * modulo 2^64, which the ring's size, a power of two, divides.)
 */
static uint64_t
req_ring(struct lg_conn *c)
{
	struct lg_thread	*th = c->th;
	const struct engine	*e = th->e;
	struct tp_ctx		 x;
	size_t			 n, pos, k;
	uint32_t		 i = c->mi;

	c->mi = i + 1 < e->req->n ? i + 1 : 0;
	x.rng = &c->rng;
	x.seq = c->seq++;
	x.conn = c->id;
	if (c->queued == c->rcvd)
		c->pat = 0 - c->queued;
	pos = (size_t)((c->pat + c->queued) % e->rsize);
	if (pos + e->req->maxlen <= e->rsize)
		return tmpl_render(e->req->t[i], &x, c->obuf + pos);
	n = tmpl_render(e->req->t[i], &x, th->rbuf);
	k = n < e->rsize - pos ? n : e->rsize - pos;
	memcpy(c->obuf + pos, th->rbuf, k);
	memcpy(c->obuf, th->rbuf + k, n - k);
	return n;
}

/*
 * Queue one more message on c, due at "due" (0: now).  The caller has
 * checked that there is room (engine_room).  Returns 0, or -1 when -n
 * has no request left for it.  Owner thread only.
 */
int
engine_push(struct tk_loop *l, struct lg_conn *c, uint64_t due)
{
	struct msgrec	*m;
	uint64_t	 len;

	assert(c->inflight < c->cap);
	m = &c->ring[(c->head + c->inflight) % c->cap];
	m->sent = tk_loop_update_now(l);
	m->due = due != 0 ? due : m->sent;
	if (c->th->e->next != NULL) {
		if ((len = c->th->e->next(c)) == REQ_NONE)
			return -1;
	} else
		len = msg_size(c, c->th->e->conf);
	c->queued += len;
	m->end = c->queued;
	c->inflight++;
	c->pushed++;
	return 0;
}

/*
 * Where c's next byte to send is, and at most how many of the n bytes
 * asked for follow it there: up to the end of its ring for a rendered
 * request (the rest from the ring's start), all n from the pattern's
 * or the fixed requests' buffer, which runs on by a CHUNK past its
 * period.
 */
static const unsigned char *
req_bytes(const struct lg_conn *c, const struct engine *e, size_t *n)
{
	size_t	pos;

	if (e->rsize == 0)
		return e->sbuf + (c->pat + c->sent) % e->speriod;
	pos = (size_t)((c->pat + c->sent) % e->rsize);
	if (*n > e->rsize - pos)
		*n = e->rsize - pos;
	return c->obuf + pos;
}

/*
 * Write what is queued until EAGAIN, then want writability only if
 * bytes are left.  A connection whose last send met EAGAIN waits for
 * the loop to report the socket writable before trying again.
 */
void
engine_flush(struct tk_loop *l, struct lg_conn *c)
{
	struct lg_thread	*th = c->th;
	const struct engine	*e = th->e;
	const unsigned char	*p;
	uint64_t		 left;
	unsigned int		 want;
	size_t			 n;
	ssize_t			 r;

	if (c->state != LG_CONN_RUN && c->state != LG_CONN_QUIET &&
	    c->state != LG_CONN_HELLO)
		return;
	while (c->sent < c->queued && !c->wblocked) {
		left = c->queued - c->sent;
		n = left > CHUNK ? CHUNK : (size_t)left;
		if (c->state == LG_CONN_HELLO)
			p = e->conf->first + c->sent;
		else
			p = req_bytes(c, e, &n);
		if (c->tls != NULL)
			r = tk_tls_write(c->tls, p, n);
		else
			r = send(c->io.fd, p, n, MSG_NOSIGNAL);
		if (r == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				c->wblocked = 1;
				if (c->tls == NULL)
					tk_io_block(&c->io, TK_EV_WRITE);
				break;
			}
			lg_tls_fail(c);
			lg_conn_close(l, c, err_kind(errno));
			return;
		}
		c->sent += (uint64_t)r;
		ctr_add(&th->prog.bytes_out, (uint64_t)r);
		if (engine_measuring(th))
			th->st.bytes_out += (uint64_t)r;
	}
	want = c->tls != NULL ? c->tls->rwant : TK_EV_READ;
	if (c->sent < c->queued)
		want |= c->tls != NULL ? c->tls->wwant : TK_EV_WRITE;
	if (want != c->io.want && tk_io_want(l, &c->io, want) == -1)
		lg_conn_close(l, c, err_kind(errno));
}

/* c has spent its --conn-lifetime: the last reply is in. */
static int
lg_conn_spent(const struct lg_conn *c)
{
	return c->pushed == c->th->life && c->inflight == 0 && !c->idle;
}

/* Make c's first connect, counted by the ramp. */
static void
lg_conn_start(struct tk_loop *l, struct lg_thread *th, struct lg_conn *c)
{
	uint64_t	now = tk_loop_now(l);

	if (th->st.attempted++ == 0)
		th->st.t_first = now;
	th->st.t_last = now;
	lg_conn_open(l, c);
}

/*
 * Close c on purpose (its --conn-lifetime is spent, the server said
 * Connection: close, --mode connect) and connect it again at once, in
 * the same slot and so from the same source address.  The ramp counted
 * it once and counts it no more: established, resolved and the open
 * count stay as they are, and a connection served before it reopened
 * stays served.
 */
static void
lg_conn_reopen(struct tk_loop *l, struct lg_conn *c)
{
	struct lg_thread	*th = c->th;

	tk_timer_cancel(l, &c->tm);
	tk_io_stop(l, &c->io);
	lg_tls_end(c, 1);
	close(c->io.fd);
	if (engine_measuring(th))
		th->st.reconnects++;
	tickets_lost(c);
	c->queued = c->sent = c->rcvd = c->pushed = 0;
	c->head = c->inflight = 0;
	c->in_reply = c->wblocked = 0;
	c->reconn = 1;
	/* Fixed requests: the stream starts at the one due next. */
	if (th->e->roff != NULL)
		c->pat = th->e->roff[c->mi];
	lg_conn_open(l, c);
}

/*
 * c is ready for traffic, after its connect or the reply to its first
 * message.  A connection with no request to make (--mode connect
 * without a message) has been served by connecting, and reopens.
 * Returns -1 when c is no longer running.
 */
static int
lg_conn_begin(struct tk_loop *l, struct lg_conn *c)
{
	if (c->th->life == 0 && !c->idle) {
		if (lg_tls_ticket_due(c)) {
			c->state = LG_CONN_TICKET;
			if (tk_timer_arm(l, &c->tm,
			    c->th->e->conf->connect_timeout) == -1)
				lg_conn_close(l, c, ERR_OTHER);
			return -1;
		}
		if (engine_measuring(c->th))
			c->wmsgs++;
		lg_conn_reopen(l, c);
		return -1;
	}
	traffic_start(l, c);
	return c->state == LG_CONN_RUN || c->state == LG_CONN_QUIET ? 0 : -1;
}

/*
 * The request at the head of c's ring is answered: retire it, and
 * after the first message's reply start the traffic.  Returns -1 when
 * c is no longer running (closed, or reopened).
 */
static int
lg_conn_answered(struct tk_loop *l, struct lg_conn *c)
{
	struct msgrec	m;

	m = c->ring[c->head];
	c->head = (c->head + 1) % c->cap;
	c->inflight--;
	if (c->state != LG_CONN_HELLO) {
		traffic_done(l, c, &m);
		return 0;
	}
	c->state = LG_CONN_RUN;
	c->queued = c->sent = c->rcvd = 0;
	c->head = 0;
	return lg_conn_begin(l, c);
}

/*
 * Check n received bytes against the pattern and retire the messages
 * they complete.  Returns -1 when c was closed for a mismatch, or
 * reopened.
 */
static int
lg_conn_check(struct tk_loop *l, struct lg_conn *c, const char *buf, size_t n)
{
	struct lg_thread	*th = c->th;
	struct msgrec		 m;

	if (c->rcvd + n > c->sent || (th->e->conf->verify &&
	    memcmp(buf, pattern + (c->pat + c->rcvd) % PATLEN, n) != 0)) {
		log_debug("%s: conn %llu: mismatch near byte %llu", __func__,
		    (unsigned long long)c->id, (unsigned long long)c->rcvd);
		lg_conn_close(l, c, ERR_MISMATCH);
		return -1;
	}
	c->rcvd += n;
	th->st.verified += n;
	ctr_add(&th->prog.bytes_in, n);
	if (engine_measuring(th))
		th->st.bytes_in += n;
	while (c->inflight > 0 && c->rcvd >= c->ring[c->head].end) {
		m = c->ring[c->head];
		c->head = (c->head + 1) % c->cap;
		c->inflight--;
		traffic_done(l, c, &m);
	}
	if (lg_conn_spent(c)) {
		lg_conn_reopen(l, c);
		return -1;
	}
	return 0;
}

/* The request whose reply c reads next, as the framing wants it. */
static void
lg_conn_req(const struct lg_conn *c, struct fr_req *q)
{
	const struct engine	*e = c->th->e;

	if (c->state == LG_CONN_HELLO) {
		q->base = e->conf->first;
		q->period = q->len = e->conf->firstlen;
		q->off = 0;
	} else if (e->rsize != 0) {
		q->base = c->obuf;
		q->period = e->rsize;
		q->off = (size_t)((c->pat + c->rcvd) % e->rsize);
		q->len = c->ring[c->head].end - c->rcvd;
	} else {
		q->base = e->sbuf;
		q->period = e->speriod;
		q->off = (size_t)((c->pat + c->rcvd) % e->speriod);
		q->len = c->ring[c->head].end - c->rcvd;
	}
	/* --no-verify: echo counts the bytes only. */
	if (!e->conf->verify)
		q->base = NULL;
}

/*
 * Feed n received bytes to the framing, reply after reply, each the
 * answer to the oldest request in flight, and retire the requests
 * answered.  Bytes with no request in flight are a mismatch.  Returns
 * -1 when c was closed, or reopened (Connection: close, a spent
 * --conn-lifetime).
 */
static int
lg_conn_frame(struct tk_loop *l, struct lg_conn *c, const unsigned char *buf,
    size_t n)
{
	struct lg_thread	*th = c->th;
	const struct framing	*fr = th->e->conf->fr;
	struct fr_req		 q;
	enum fr_res		 r;
	size_t			 used;

	ctr_add(&th->prog.bytes_in, n);
	if (engine_measuring(th))
		th->st.bytes_in += n;
	while (n > 0) {
		if (!c->in_reply) {
			if (c->inflight == 0) {
				lg_conn_mismatch(l, c, "bytes with no request "
				    "in flight", 0, buf, n);
				return -1;
			}
			lg_conn_req(c, &q);
			framing_begin(fr, c->fst, &q);
			c->in_reply = 1;
		}
		r = framing_feed(fr, c->fst, buf, n, &used);
		if (r == FR_MISMATCH) {
			lg_conn_mismatch(l, c, c->fst->why, c->fst->pos,
			    buf + used, n - used);
			return -1;
		}
		th->st.verified += used;
		if (r == FR_MORE)
			break;
		if (c->state == LG_CONN_HELLO && used < n) {
			lg_conn_mismatch(l, c, "bytes after the reply to the "
			    "first message", 0, buf + used, n - used);
			return -1;
		}
		c->in_reply = 0;
		c->rcvd = c->ring[c->head].end;
		if (lg_conn_answered(l, c) == -1)
			return -1;
		if (c->fst->close || lg_conn_spent(c)) {
			/* Anything after the last reply is not read. */
			lg_conn_reopen(l, c);
			return -1;
		}
		buf += used;
		n -= used;
	}
	return 0;
}

/*
 * The server closed c.  That ends a reply whose framing is delimited
 * by the close (an HTTP body without a length): c is then reopened as
 * after Connection: close.  Anything else is ERR_CLOSED.
 */
static void
lg_conn_eof(struct tk_loop *l, struct lg_conn *c)
{
	if (c->fst == NULL || !c->in_reply ||
	    framing_eof(c->th->e->conf->fr, c->fst) == 0) {
		lg_conn_close(l, c, ERR_CLOSED);
		return;
	}
	c->in_reply = 0;
	c->rcvd = c->ring[c->head].end;
	if (lg_conn_answered(l, c) == 0)
		lg_conn_reopen(l, c);
}

/* Read until drained or the budget ends; -1 when c was closed. */
static int
lg_conn_read(struct tk_loop *l, struct lg_conn *c)
{
	char	*buf = c->th->scratch;
	ssize_t	 r;
	int	 rounds, k;

	for (rounds = 0; rounds < READ_BUDGET; rounds++) {
		if (c->tls != NULL)
			r = tk_tls_read(c->tls, buf, CHUNK);
		else
			r = recv(c->io.fd, buf, CHUNK, 0);
		/* A ticket came before the reply: keep it ere c reopens. */
		if (r > 0 && c->tls != NULL)
			lg_tls_keep(c);
		if (r > 0) {
			if (c->fst == NULL)
				k = lg_conn_check(l, c, buf, (size_t)r);
			else
				k = lg_conn_frame(l, c, (unsigned char *)buf,
				    (size_t)r);
			if (k == -1)
				return -1;
			if (c->tls != NULL) {
				/* Drained: tk_tls_read blocked READ. */
				if ((c->io.ready & TK_EV_READ) == 0)
					return 0;
			} else if (r < CHUNK &&
			    (c->io.ready & TK_EV_HUP) == 0) {
				tk_io_block(&c->io, TK_EV_READ);
				return 0;
			}
			continue;
		}
		if (r == 0) {
			lg_conn_eof(l, c);
			return -1;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if (c->tls == NULL)
				tk_io_block(&c->io, TK_EV_READ);
			else
				lg_tls_keep(c);
			return 0;
		}
		lg_tls_fail(c);
		lg_conn_close(l, c, err_kind(errno));
		return -1;
	}
	return 0;
}

/*
 * c is up: connected, and over TLS its handshake done.  The first time
 * it counts in the ramp.  A --first-message goes out before the traffic
 * starts.  Returns -1 when c is no longer running.
 */
static int
lg_conn_up(struct tk_loop *l, struct lg_conn *c)
{
	struct lg_thread	*th = c->th;
	const struct lg_conf	*conf = th->e->conf;
	uint64_t		 now = tk_loop_now(l);

	tk_timer_cancel(l, &c->tm);
	c->state = LG_CONN_RUN;
	if (!c->reconn) {
		th->st.established++;
		ctr_add(&th->prog.established, 1);
		ctr_add(&th->prog.open, 1);
		th->resolved++;
		ramp_check(th);
	}
	if (tk_io_want(l, &c->io, c->tls != NULL ? c->tls->rwant :
	    TK_EV_READ) == -1) {
		lg_conn_close(l, c, err_kind(errno));
		return -1;
	}
	if (conf->first == NULL)
		return lg_conn_begin(l, c);
	/* One record in the ring, so that --reply-timeout applies. */
	c->state = LG_CONN_HELLO;
	c->queued = conf->firstlen;
	c->ring[c->head].end = c->queued;
	c->ring[c->head].sent = c->ring[c->head].due = now;
	c->inflight = 1;
	engine_flush(l, c);
	return c->state == LG_CONN_HELLO ? 0 : -1;
}

/* With --tls-resume, a new session of c's becomes its thread's. */
static void
lg_tls_keep(struct lg_conn *c)
{
	struct lg_thread	*th = c->th;
	struct tk_tls_sess	*s;

	if (!th->e->conf->tls_resume || (s = tk_tls_sess_take(c->tls)) ==
	    NULL)
		return;
	tk_tls_sess_free(th->sess);
	th->sess = s;
}

/*
 * Whether c, done with a full handshake in --mode connect, should wait
 * for its session ticket: TLS 1.3 sends it after the handshake, and a
 * connection closed at once would leave --tls-resume nothing to resume
 * with.  Not after a resumption: a server need not send another ticket
 * then, and OpenSSL's do not.  --connect-timeout bounds the wait.
 */
static int
lg_tls_ticket_due(const struct lg_conn *c)
{
	struct tk_tls_info	i;

	if (c->tls == NULL || !c->th->e->conf->tls_resume)
		return 0;
	tk_tls_info(c->tls, &i);
	return i.proto == TK_TLS_1_3 && !i.resumed;
}

/*
 * Advance c's handshake; once done, time and count it and bring c up.
 * Returns -1 when c is no longer running, or still handshaking.
 */
static int
lg_conn_handshake(struct tk_loop *l, struct lg_conn *c)
{
	struct lg_thread	*th = c->th;
	struct tk_tls_info	 i;
	uint64_t		 now;
	int			 r;

	if ((r = tk_tls_handshake(c->tls)) == -1) {
		lg_tls_fail(c);
		lg_conn_close(l, c, err_kind(errno));
		return -1;
	}
	if (r == 0) {
		if (tk_io_want(l, &c->io, c->tls->rwant) == -1)
			lg_conn_close(l, c, err_kind(errno));
		return -1;
	}
	/* The clock, not the loop's: a pass may start and end one. */
	now = tk_clock_mono();
	tk_hist_record(th->st.hs_lat, now > c->t_start ? now - c->t_start :
	    0);
	tk_tls_info(c->tls, &i);
	if (i.resumed)
		th->st.hs_resumed++;
	else
		th->st.hs_new++;
	if (engine_measuring(th)) {
		if (i.resumed)
			th->st.hs_resumed_w++;
		else
			th->st.hs_new_w++;
	}
	if (th->st.tls_version[0] == '\0') {
		strlcpy(th->st.tls_version, i.version,
		    sizeof(th->st.tls_version));
		strlcpy(th->st.tls_cipher, i.cipher, sizeof(th->st.tls_cipher));
		strlcpy(th->st.tls_alpn, i.alpn, sizeof(th->st.tls_alpn));
	}
	lg_tls_keep(c);
	return lg_conn_up(l, c);
}

/*
 * --mode connect over TLS 1.3 with --tls-resume: read until the
 * session ticket comes, then count c served and reopen it.  Any byte
 * of data is a mismatch.
 */
static void
lg_conn_ticket(struct tk_loop *l, struct lg_conn *c)
{
	struct tk_tls_sess	*s;
	char			 buf[64];
	ssize_t			 r;

	r = tk_tls_read(c->tls, buf, sizeof(buf));
	if (r > 0) {
		lg_conn_mismatch(l, c, "data before any request", 0,
		    (unsigned char *)buf, (size_t)r);
		return;
	}
	if (r == 0) {
		lg_conn_close(l, c, ERR_CLOSED);
		return;
	}
	if (errno != EAGAIN) {
		lg_tls_fail(c);
		lg_conn_close(l, c, err_kind(errno));
		return;
	}
	if ((s = tk_tls_sess_take(c->tls)) == NULL) {
		if (tk_io_want(l, &c->io, c->tls->rwant) == -1)
			lg_conn_close(l, c, err_kind(errno));
		return;
	}
	tk_tls_sess_free(c->th->sess);
	c->th->sess = s;
	tk_timer_cancel(l, &c->tm);
	if (engine_measuring(c->th))
		c->wmsgs++;
	lg_conn_reopen(l, c);
}

/*
 * The connect of c completed, or failed.  Every one counts in the
 * connect latency; over TLS the handshake starts.
 */
static int
lg_conn_connected(struct tk_loop *l, struct lg_conn *c)
{
	struct lg_thread	*th = c->th;
	const struct lg_conf	*conf = th->e->conf;
	uint64_t		 now = tk_loop_now(l);
	const char		*name;
	int			 e;

	if ((e = tk_sock_error(c->io.fd)) == -1)
		e = errno;
	if (e != 0) {
		if (err_kind(e) == ERR_OTHER)
			log_debug("%s: connect: %s", __func__, strerror(e));
		lg_conn_close(l, c, err_kind(e));
		return -1;
	}
	tk_hist_record(th->st.conn_lat,
	    now > c->t_start ? now - c->t_start : 0);
	if (conf->tls == NULL)
		return lg_conn_up(l, c);
	name = conf->tls_sni != NULL ? conf->tls_sni :
	    conf->tls_hosts[c->id % conf->ntargets];
	if ((c->tls = tk_tls_new(conf->tls, &c->io, name,
	    conf->tls_resume ? th->sess : NULL)) == NULL) {
		lg_conn_close(l, c, ERR_OTHER);
		return -1;
	}
	c->state = LG_CONN_HANDSHAKE;
	c->t_start = tk_clock_mono();
	return lg_conn_handshake(l, c);
}

static void
lg_conn_io(struct tk_loop *l, struct tk_io *io)
{
	struct lg_conn	*c = io->arg;

	if (c->state == LG_CONN_CONNECTING && lg_conn_connected(l, c) == -1)
		return;
	if (c->state == LG_CONN_HANDSHAKE && lg_conn_handshake(l, c) == -1)
		return;
	if (c->state == LG_CONN_TICKET) {
		lg_conn_ticket(l, c);
		return;
	}
	if (c->state == LG_CONN_DEAD)
		return;
	if ((io->ready & (c->tls != NULL ? c->tls->wwant : TK_EV_WRITE)) !=
	    0)
		c->wblocked = 0;
	if ((io->ready & (TK_EV_READ | TK_EV_HUP | TK_EV_ERR)) != 0 &&
	    lg_conn_read(l, c) == -1)
		return;
	traffic_fill(l, c);
	engine_flush(l, c);
}

/* The connection's timer: connect timeout, then the rate schedule. */
static void
lg_conn_timer(struct tk_loop *l, struct tk_timer *t)
{
	struct lg_conn	*c = t->arg;

	if (c->state == LG_CONN_CONNECTING) {
		if (c->retry)
			lg_conn_open(l, c);
		else
			lg_conn_close(l, c, ERR_TIMEOUT);
		return;
	}
	if (c->state == LG_CONN_HANDSHAKE || c->state == LG_CONN_TICKET) {
		lg_conn_close(l, c, ERR_TIMEOUT);
		return;
	}
	traffic_fill(l, c);
	engine_flush(l, c);
}

/* Connect c to its target from its source address. */
static void
lg_conn_open(struct tk_loop *l, struct lg_conn *c)
{
	const struct lg_conf	*conf = c->th->e->conf;
	const struct tk_addr	*dst, *src = NULL;
	int			 fd, e;

	if (!c->retry)
		c->t_start = tk_loop_now(l);
	c->retry = 0;
	dst = &conf->targets[c->id % conf->ntargets];
	if (conf->nsources > 0)
		src = &conf->sources[c->id % conf->nsources];
	if ((fd = tk_sock_connect(dst, src)) == -1) {
		e = errno;
		/*
		 * A unix: listener whose backlog is full refuses a
		 * nonblocking connect with EAGAIN (unix(7)) instead of
		 * keeping it in progress: try again until the timeout.
		 */
		if (e == EAGAIN && dst->ss.ss_family == AF_UNIX) {
			e = ETIMEDOUT;
			if (tk_loop_now(l) - c->t_start <
			    conf->connect_timeout) {
				c->retry = 1;
				c->io.fd = -1;
				c->state = LG_CONN_CONNECTING;
				if (tk_timer_arm(l, &c->tm, RETRY_NS) == 0)
					return;
				e = errno;
			}
		}
		lg_conn_fail_early(c, e);
		return;
	}
	(void)tk_sock_nodelay(fd);
	tk_io_init(&c->io, fd, lg_conn_io, c);
	if (tk_io_start(l, &c->io, TK_EV_WRITE) == -1) {
		/* A backend's fd ceiling (ERANGE) is a limit, like EMFILE. */
		e = errno == ERANGE ? EMFILE : errno;
		close(fd);
		lg_conn_fail_early(c, e);
		return;
	}
	c->state = LG_CONN_CONNECTING;
	if (tk_timer_arm(l, &c->tm, conf->connect_timeout) == -1)
		lg_conn_close(l, c, ERR_OTHER);
}

/*
 * Start the connections that are due: the k-th (from 0) at ramp_t0 +
 * k / rate.  A late timer catches up in batches of RAMP_BATCH per turn.
 */
static void
ramp_fire(struct tk_loop *l, struct tk_timer *t)
{
	struct lg_thread	*th = t->arg;
	uint64_t		 now = tk_loop_now(l), next;
	size_t			 due, n = 0;

	due = (size_t)((double)(now - th->ramp_t0) * th->ramp_rate) + 1;
	if (due > th->nconns)
		due = th->nconns;
	while (th->started < due && n++ < RAMP_BATCH)
		lg_conn_start(l, th, &th->conns[th->started++]);
	if (th->started == th->nconns)
		return;
	if (th->started < due)
		next = now;
	else {
		next = th->ramp_t0 +
		    (uint64_t)((double)th->started / th->ramp_rate);
		if (next < now + RAMP_SLACK)
			next = now + RAMP_SLACK;
	}
	if (tk_timer_arm_at(l, t, next) == -1)
		fatal("%s: timer", __func__);
}

/* Once a second: fail replies overdue. */
static void
thread_tick(struct tk_loop *l, struct tk_timer *t)
{
	struct lg_thread	*th = t->arg;
	const struct lg_conf	*conf = th->e->conf;
	struct lg_conn		*c;
	uint64_t		 now = tk_loop_now(l);
	size_t			 i;

	if (conf->tls != NULL)
		tk_tls_sweep();
	if (conf->reply_timeout != 0) {
		for (i = 0; i < th->started; i++) {
			c = &th->conns[i];
			if ((c->state == LG_CONN_RUN ||
			    c->state == LG_CONN_QUIET ||
			    c->state == LG_CONN_HELLO) && c->inflight > 0 &&
			    now - c->ring[c->head].sent > conf->reply_timeout)
				lg_conn_close(l, c, ERR_TIMEOUT);
		}
	}
	(void)tk_timer_arm(l, t, TK_SEC);
}

static void
thread_stop(struct tk_loop *l, struct tk_msg *m)
{
	(void)m;
	tk_loop_stop(l);
}

static void *
thread_main(void *arg)
{
	struct lg_thread	*th = arg;
	struct tk_loop		*l = th->l;
	size_t			 i;

	(void)tk_signal_block_all();
	th->ramp_t0 = tk_loop_update_now(l);
	if (th->nconns > 0 && tk_timer_arm(l, &th->ramp, 0) == -1)
		fatal("%s: timer", __func__);
	if (th->nconns == 0)
		tk_loop_post(th->e->l, &th->m_ramp);
	if (tk_timer_arm(l, &th->tick, TK_SEC) == -1)
		fatal("%s: timer", __func__);
	tk_loop_run(l, 0);

	for (i = 0; i < th->started; i++)
		lg_conn_close(l, &th->conns[i], -1);
	tk_timer_cancel(l, &th->ramp);
	tk_timer_cancel(l, &th->tick);
	return NULL;
}

/*
 * From the main loop: -n's window has started, so the connections that
 * waited for it send now; a rate schedule starts afresh.
 */
static void
thread_go(struct tk_loop *l, struct tk_msg *m)
{
	struct lg_thread	*th = m->arg;
	struct lg_conn		*c;
	uint64_t		 now = tk_loop_update_now(l), iv = th->interval;
	size_t			 i;

	for (i = 0; i < th->started; i++) {
		c = &th->conns[i];
		if (c->state != LG_CONN_RUN || c->idle)
			continue;
		if (iv > 0)
			c->next_due = now + c->rng % iv;
		traffic_fill(l, c);
		engine_flush(l, c);
	}
}

/*
 * From the main loop: hand this second's latencies over (the main
 * thread empties the histogram before it asks again) and go on with a
 * fresh one, so that a stall shows at once and is forgotten as soon as
 * it ends.
 */
static void
thread_sec(struct tk_loop *l, struct tk_msg *m)
{
	struct lg_thread	*th = m->arg;
	struct tk_hist		*h;

	(void)l;
	h = th->st.all;
	th->st.all = th->pub;
	th->pub = h;
	h = th->st.all_unc;
	th->st.all_unc = th->pub_unc;
	th->pub_unc = h;
	tk_loop_post(th->e->l, &th->m_secd);
}

static uint64_t
epoch_of(const struct engine *e, uint64_t mono)
{
	if (mono < e->mono0)
		return e->epoch0;
	return e->epoch0 + (mono - e->mono0) / 1000;
}

static void
prog_collect(struct engine *e)
{
	struct lg_prog	 sum;
	int		 i;

	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < e->nthreads; i++)
		report_prog_sum(&sum, &e->threads[i].prog);
	atomic_store(&e->prog->target, e->total);
	atomic_store(&e->prog->established, ctr_get(&sum.established));
	atomic_store(&e->prog->open, ctr_get(&sum.open));
	atomic_store(&e->prog->msgs, ctr_get(&sum.msgs));
	atomic_store(&e->prog->bytes_in, ctr_get(&sum.bytes_in));
	atomic_store(&e->prog->bytes_out, ctr_get(&sum.bytes_out));
	atomic_store(&e->prog->errors, ctr_get(&sum.errors));
	atomic_store(&e->prog->p99, ctr_get(&sum.p99));
}

static void
phase_end(struct engine *e)
{
	uint64_t	now = tk_loop_update_now(e->l);
	int		i, ph;

	ph = atomic_load(&e->phase);
	if (ph == PHASE_DONE)
		return;
	if (ph != PHASE_MEASURE)
		e->t_meas_start = now;
	if (e->t_ramp_end == 0)
		e->t_ramp_end = now;
	e->t_meas_end = now;
	atomic_store(&e->phase, PHASE_DONE);
	tk_timer_cancel(e->l, &e->phase_t);
	for (i = 0; i < e->nthreads; i++)
		tk_loop_post(e->threads[i].l, &e->threads[i].m_stop);
	tk_loop_stop(e->l);
}

/* Stop before the measured window is over, saying why. */
static void
phase_stop(struct engine *e, const char *why)
{
	if (atomic_load(&e->phase) == PHASE_DONE)
		return;
	log_warnx("%s: stopping after %.3f s", why,
	    (double)(tk_loop_update_now(e->l) - e->mono0) / 1e9);
	strlcpy(e->r->stopped, why, sizeof(e->r->stopped));
	phase_end(e);
}

/*
 * Arm the main tick for the wall clock's next whole second, so that
 * every process and host of a run ticks at the same instants.
 */
static void
tick_arm(struct engine *e)
{
	uint64_t	real = tk_clock_real(), next;

	next = (real / TK_SEC + 1) * TK_SEC;
	if (next / TK_SEC <= e->next_sec)
		next = (e->next_sec + 1) * TK_SEC;
	e->next_sec = next / TK_SEC;
	if (tk_timer_arm(e->l, &e->tick, next - real) == -1)
		fatal("%s: timer", __func__);
}

/* A second's latencies of every thread are in: print and keep them. */
static void
sec_done(struct engine *e, uint64_t key)
{
	uint64_t	now = tk_loop_update_now(e->l);

	prog_collect(e);
	atomic_store(&e->prog->p99, tk_hist_percentile(e->sec, 99));
	atomic_store(&e->prog->sec, key + 1);
	if (!e->conf->quiet)
		report_progress(stderr, (now - e->mono0 + TK_SEC / 2) / TK_SEC,
		    e->prog, &e->prev, (double)(now - e->prev_t) / 1e9);
	memcpy(&e->prev, e->prog, sizeof(e->prev));
	e->prev_t = now;
	if (e->conf->series && tk_hist_count(e->sec) > 0 &&
	    report_series_add(e->r, key, e->sec, e->sec_unc) == -1)
		fatal("%s: series", __func__);
	tk_hist_reset(e->sec);
	tk_hist_reset(e->sec_unc);
}

/* Fold what thread th handed over into the main thread's second. */
static void
sec_take(struct engine *e, struct lg_thread *th)
{
	if (tk_hist_count(th->pub) > 0) {
		tk_hist_merge(e->sec, th->pub);
		tk_hist_reset(th->pub);
	}
	if (tk_hist_count(th->pub_unc) > 0) {
		tk_hist_merge(e->sec_unc, th->pub_unc);
		tk_hist_reset(th->pub_unc);
	}
}

static void
main_secd(struct tk_loop *l, struct tk_msg *m)
{
	struct lg_thread	*th = m->arg;
	struct engine		*e = th->e;

	(void)l;
	sec_take(e, th);
	if (--e->pending == 0)
		sec_done(e, e->sec_key);
}

/* -n: every request given out, and every counted one answered or lost. */
static int
requests_done(const struct engine *e)
{
	int	i;

	if (e->conf->requests == 0 ||
	    atomic_load(e->conf->tickets) < e->conf->requests)
		return 0;
	for (i = 0; i < e->nthreads; i++)
		if (ctr_get(&e->threads[i].tin) != 0)
			return 0;
	return 1;
}

static void
main_done(struct tk_loop *l, struct tk_msg *m)
{
	struct lg_thread	*th = m->arg;

	(void)l;
	if (requests_done(th->e))
		phase_end(th->e);
}

/*
 * On each of the wall clock's seconds: ask every thread for its
 * latencies of the second (unless the last round is still out: a busy
 * thread answers late, and the next line covers both), and stop when
 * nothing is left to measure.
 */
static void
main_tick(struct tk_loop *l, struct tk_timer *t)
{
	struct engine	*e = t->arg;
	int		 i;

	(void)l;
	if (e->pending == 0) {
		e->sec_key = e->next_sec - 1;
		e->pending = e->nthreads;
		for (i = 0; i < e->nthreads; i++)
			tk_loop_post(e->threads[i].l, &e->threads[i].m_sec);
	}
	tick_arm(e);
	prog_collect(e);
	if (e->conf->tls != NULL)
		tk_tls_trim();
	if (requests_done(e))
		phase_end(e);
	else if (atomic_load(&e->phase) != PHASE_RAMP &&
	    ctr_get(&e->prog->open) == 0)
		phase_stop(e, "no connection left open");
}

static void
phase_next(struct tk_loop *l, struct tk_timer *t)
{
	struct engine	*e = t->arg;
	uint64_t	 d = e->conf->duration, end, real;
	int		 i;

	if (atomic_load(&e->phase) == PHASE_WARMUP) {
		e->t_meas_start = tk_loop_update_now(l);
		atomic_store(&e->phase, PHASE_MEASURE);
		for (i = 0; e->conf->requests != 0 && i < e->nthreads; i++)
			tk_loop_post(e->threads[i].l, &e->threads[i].m_go);
		/* --start-at: every generator's window ends together. */
		if (e->conf->start_at != 0) {
			end = e->conf->start_at + d;
			real = tk_clock_real();
			d = end > real + TK_MSEC ? end - real : TK_MSEC;
		}
		if (tk_timer_arm(l, t, d) == -1)
			fatal("%s: timer", __func__);
		return;
	}
	phase_end(e);
}

/*
 * How long the warm-up lasts, the ramp just over: --warmup, or until
 * --start-at, which a late ramp misses (then measuring starts now, and
 * a line says how late).
 */
static uint64_t
warmup_left(const struct engine *e)
{
	uint64_t	w = e->conf->warmup, at = e->conf->start_at, real;

	if (at == 0)
		return w;
	real = tk_clock_real();
	if (at > real + w)
		return at - real;
	if (real + w > at + TK_MSEC)
		log_warnx("--start-at: the ramp%s ended %.3f s after the "
		    "start time; measuring from then", w > 0 ?
		    " and the warm-up" : "", (double)(real + w - at) / 1e9);
	return w;
}

/* A thread has resolved all its connects. */
static void
ramp_done(struct tk_loop *l, struct tk_msg *m)
{
	struct engine	*e = m->arg;
	uint64_t	 est = 0;
	int		 i;

	if (++e->ramps_done < e->nthreads ||
	    atomic_load(&e->phase) != PHASE_RAMP)
		return;
	e->t_ramp_end = tk_loop_update_now(l);
	for (i = 0; i < e->nthreads; i++)
		est += ctr_get(&e->threads[i].prog.established);
	if (est == 0) {
		phase_end(e);
		return;
	}
	atomic_store(&e->phase, PHASE_WARMUP);
	if (tk_timer_arm(l, &e->phase_t, warmup_left(e)) == -1)
		fatal("%s: timer", __func__);
}

/* SIGINT, SIGTERM: end the run early, and say so in its report. */
static void
main_signal(struct tk_loop *l, int signo, void *arg)
{
	struct engine	*e = arg;

	(void)l;
	log_info("signal %d: stopping early", signo);
	if (e->r->interrupted == 0) {
		e->r->interrupted = signo;
		e->r->interrupted_at_us = report_epoch_us();
	}
	phase_end(e);
}

/*
 * Every slot of th's rings holds a rendering of the one template, so
 * that req_slot() has only its placeholders to write: one rendering
 * (from a state of its own, which the connections' do not see) copied
 * into each.
 */
static void
slots_fill(const struct engine *e, struct lg_thread *th)
{
	uint64_t	rng = 0;
	struct tp_ctx	x = { &rng, 0, 0 };
	size_t		len, i, n = th->nconns * e->rsize;

	len = tmpl_render(e->req->t[0], &x, th->obufs);
	for (i = len; i < n; i += len)
		memcpy(th->obufs + i, th->obufs, len);
}

static void
thread_setup(struct engine *e, struct lg_thread *th, int id)
{
	const struct lg_conf	*conf = e->conf;
	struct lg_conn		*c;
	uint64_t		 k, active;
	size_t			 i;

	th->e = e;
	th->phase = &e->phase;
	th->rate = conf->mode == MODE_RATE;
	th->nconns = (size_t)(e->total / (uint64_t)e->nthreads +
	    ((uint64_t)id < e->total % (uint64_t)e->nthreads ? 1 : 0));
	th->conns = th->nconns > 0 ? xcalloc(th->nconns, sizeof(*c)) : NULL;
	if (conf->fr != NULL && th->nconns > 0)
		th->fst = xcalloc(th->nconns, sizeof(*th->fst));
	/*
	 * --mode connect makes one request a connection when there is a
	 * message to send, none otherwise.
	 */
	th->life = conf->conn_life != 0 ? conf->conn_life : UINT64_MAX;
	if (conf->mode == MODE_CONNECT)
		th->life = conf->req != NULL ? 1 : 0;
	if (e->rsize != 0 && th->nconns > 0) {
		th->obufs = xcalloc(th->nconns, e->rsize);
		th->rbuf = xmalloc(conf->req->maxlen);
		if (e->over != NULL)
			slots_fill(e, th);
	}
	th->nreq = conf->requests;
	th->tickets = conf->tickets;
	for (i = 0; i < th->nconns; i++) {
		c = &th->conns[i];
		k = (uint64_t)id + (uint64_t)i * (uint64_t)e->nthreads;
		c->th = th;
		c->id = conf->id_base + k;
		c->rng = tk_mix64(c->id ^ conf->seed) | 1;
		/*
		 * Requests: each connection starts at its own, a fixed one
		 * at its own first byte.  The pattern: at its own phase.
		 */
		if (conf->req != NULL) {
			c->mi = (uint32_t)(c->id % conf->req->n);
			c->pat = e->roff != NULL ? e->roff[c->mi] : 0;
			if (th->obufs != NULL)
				c->obuf = th->obufs + i * e->rsize;
		} else
			c->pat = tk_mix64(c->id) % PATLEN;
		c->idle = k < conf->idle || conf->mode == MODE_IDLE;
		c->cap = 1;
		c->ring = &c->one;
		if (conf->window > 1 && !c->idle) {
			c->cap = (uint32_t)conf->window;
			c->ring = xcalloc(c->cap, sizeof(*c->ring));
		}
		if (th->fst != NULL)
			c->fst = &th->fst[i];
		c->io.fd = -1;
		tk_timer_init(&c->tm, lg_conn_timer, c);
	}
	th->ramp_rate = (double)conf->connect_rate / 1e9 *
	    (double)th->nconns / (double)(e->total > 0 ? e->total : 1);
	active = conf->mode == MODE_IDLE ? 0 : conf->conns;
	if (conf->mode == MODE_RATE && conf->conn_rate > 0)
		th->interval = (uint64_t)(1e9 / conf->conn_rate);
	else if (conf->mode == MODE_RATE && active > 0)
		th->interval = active * TK_SEC / conf->rate;
	tk_timer_init(&th->ramp, ramp_fire, th);
	tk_timer_init(&th->tick, thread_tick, th);
	th->m_ramp = (struct tk_msg){ .fn = ramp_done, .arg = e };
	th->m_stop = (struct tk_msg){ .fn = thread_stop, .arg = th };
	th->m_sec = (struct tk_msg){ .fn = thread_sec, .arg = th };
	th->m_secd = (struct tk_msg){ .fn = main_secd, .arg = th };
	th->m_done = (struct tk_msg){ .fn = main_done, .arg = th };
	th->m_go = (struct tk_msg){ .fn = thread_go, .arg = th };
	th->scratch = xmalloc(CHUNK);
	if ((th->st.lat = tk_hist_new()) == NULL ||
	    (th->st.lat_unc = tk_hist_new()) == NULL ||
	    (th->st.conn_lat = tk_hist_new()) == NULL ||
	    (th->st.hs_lat = tk_hist_new()) == NULL ||
	    (th->st.all = tk_hist_new()) == NULL ||
	    (th->st.all_unc = tk_hist_new()) == NULL ||
	    (th->pub = tk_hist_new()) == NULL ||
	    (th->pub_unc = tk_hist_new()) == NULL)
		fatal("%s: histogram", __func__);
	if ((th->l = tk_loop_new(conf->backend, (int)th->nconns + 16)) == NULL)
		fatal("loop on backend %s", conf->backend != NULL ?
		    conf->backend : "(default)");
}

static void
thread_free(struct lg_thread *th)
{
	size_t	i;

	for (i = 0; i < th->nconns; i++)
		if (th->conns[i].ring != &th->conns[i].one)
			free(th->conns[i].ring);
	free(th->conns);
	free(th->fst);
	free(th->scratch);
	free(th->obufs);
	free(th->rbuf);
	tk_hist_free(th->st.lat);
	tk_hist_free(th->st.lat_unc);
	tk_hist_free(th->st.conn_lat);
	tk_hist_free(th->st.hs_lat);
	tk_hist_free(th->st.all);
	tk_tls_sess_free(th->sess);
	tk_hist_free(th->st.all_unc);
	tk_hist_free(th->pub);
	tk_hist_free(th->pub_unc);
	if (th->l != NULL)
		tk_loop_free(th->l);
}

static void
collect(struct engine *e, struct report *r)
{
	struct lg_thread	*th;
	uint64_t		 first = 0, last = 0, win, lastrep = 0;
	int			 i, k, any = 0;

	for (i = 0; i < e->nthreads; i++) {
		th = &e->threads[i];
		if (th->st.t_lastrep > lastrep)
			lastrep = th->st.t_lastrep;
		r->attempted += th->st.attempted;
		r->established += th->st.established;
		r->failed += th->st.failed;
		r->lost += th->st.lost;
		r->open_end += th->st.open_end;
		r->unserved += th->st.unserved;
		r->reconnects += th->st.reconnects;
		r->hs_new += th->st.hs_new;
		r->hs_resumed += th->st.hs_resumed;
		r->hs_new_w += th->st.hs_new_w;
		r->hs_resumed_w += th->st.hs_resumed_w;
		if (r->tls_version[0] == '\0' &&
		    th->st.tls_version[0] != '\0') {
			strlcpy(r->tls_version, th->st.tls_version,
			    sizeof(r->tls_version));
			strlcpy(r->tls_cipher, th->st.tls_cipher,
			    sizeof(r->tls_cipher));
			strlcpy(r->tls_alpn, th->st.tls_alpn,
			    sizeof(r->tls_alpn));
		}
		r->msgs += th->st.msgs;
		r->bytes_in += th->st.bytes_in;
		r->bytes_out += th->st.bytes_out;
		r->verified += th->st.verified;
		for (k = 0; k < ERR_MAX; k++)
			r->errs[k] += th->st.errs[k];
		tk_hist_merge(r->lat.h, th->st.lat);
		tk_hist_merge(r->lat_unc.h, th->st.lat_unc);
		tk_hist_merge(r->conn_lat.h, th->st.conn_lat);
		tk_hist_merge(r->hs_lat.h, th->st.hs_lat);
		if (th->st.attempted > 0) {
			if (!any || th->st.t_first < first)
				first = th->st.t_first;
			if (!any || th->st.t_last > last)
				last = th->st.t_last;
			any = 1;
		}
	}
	r->lat.mean = tk_hist_mean(r->lat.h);
	r->lat_unc.mean = tk_hist_mean(r->lat_unc.h);
	r->conn_lat.mean = tk_hist_mean(r->conn_lat.h);
	r->hs_lat.mean = tk_hist_mean(r->hs_lat.h);
	/* -n: the window ends with the last reply it counted. */
	if (e->conf->requests != 0 && lastrep > e->t_meas_start &&
	    lastrep < e->t_meas_end)
		e->t_meas_end = lastrep;
	r->t_start = e->epoch0;
	r->t_ramp_first = any ? epoch_of(e, first) : e->epoch0;
	r->t_ramp_last = any ? epoch_of(e, last) : e->epoch0;
	r->t_ramp_end = epoch_of(e, e->t_ramp_end);
	r->t_meas_start = epoch_of(e, e->t_meas_start);
	r->t_meas_end = epoch_of(e, e->t_meas_end);
	r->t_end = report_epoch_us();
	win = e->t_meas_end - e->t_meas_start;
	if (win > 0) {
		r->msgs_rate = (double)r->msgs * 1e9 / (double)win;
		r->in_rate = (double)r->bytes_in * 1e9 / (double)win;
		r->out_rate = (double)r->bytes_out * 1e9 / (double)win;
	}
}

/*
 * The fixed requests one after the other, then again for a CHUNK, so
 * that a send from any offset reads on without wrapping; where each
 * starts, and how long it is.
 */
static void
fixed_setup(struct engine *e)
{
	const struct tmpl_set	*ts = e->req;
	const unsigned char	*p;
	size_t			 i, n, total = 0;

	e->roff = xcalloc(ts->n, sizeof(*e->roff));
	e->rlen = xcalloc(ts->n, sizeof(*e->rlen));
	for (i = 0; i < ts->n; i++) {
		(void)tmpl_fixed(ts->t[i], &e->rlen[i]);
		e->roff[i] = total;
		total += e->rlen[i];
	}
	e->mbuf = xmalloc(total + CHUNK);
	for (i = 0; i < ts->n; i++) {
		p = tmpl_fixed(ts->t[i], &n);
		memcpy(e->mbuf + e->roff[i], p, n);
	}
	for (i = total; i < total + CHUNK; i++)
		e->mbuf[i] = e->mbuf[i - total];
	e->sbuf = e->mbuf;
	e->speriod = total;
}

/*
 * Run the configured load to the end in this process and fill r, whose
 * histograms the caller has allocated (report_init) and whose header it
 * has written.  prog receives the progress counters once a second.
 * Once the threads run, nothing ends the run but its phases, a signal
 * or every connection gone, each of which leaves a report to print; a
 * set-up failure (a loop, a histogram, a thread) dies through fatal(),
 * as a command-line program does at start-up, and a tenkload child
 * that dies so is counted by its parent.  Call from the thread that
 * should own signals.
 */
void
engine_run(const struct lg_conf *conf, struct report *r, struct lg_prog *prog)
{
	struct engine	*e;
	int		 i;

	pthread_once(&pattern_once, pattern_init);
	e = xcalloc(1, sizeof(*e));
	e->conf = conf;
	e->prog = prog;
	e->r = r;
	atomic_flag_clear(&e->logged);
	atomic_flag_clear(&e->tls_logged);
	e->sbuf = pattern;
	e->speriod = PATLEN;
	e->req = conf->req;
	if (conf->req != NULL && conf->req->fixed) {
		fixed_setup(e);
		e->next = req_fixed;
	} else if (conf->req != NULL && ring_slots(conf)) {
		e->over = tmpl_over(conf->req->t[0], &e->over_arg);
		e->next = req_slot;
	} else if (conf->req != NULL)
		e->next = req_ring;
	if (conf->requests != 0) {
		e->src = e->next != NULL ? e->next : req_pattern;
		e->next = req_ticket;
	}
	e->rsize = engine_ring_size(conf);
	if ((e->sec = tk_hist_new()) == NULL ||
	    (e->sec_unc = tk_hist_new()) == NULL)
		fatal("%s: histogram", __func__);
	e->total = conf->conns + conf->idle;
	e->nthreads = conf->threads > 0 ? conf->threads : 1;
	if (e->total > 0 && (uint64_t)e->nthreads > e->total)
		e->nthreads = (int)e->total;
	atomic_store(&e->phase, PHASE_RAMP);
	if ((e->l = tk_loop_new(conf->backend, 16)) == NULL)
		fatal("loop on backend %s", conf->backend != NULL ?
		    conf->backend : "(default)");
	if (conf->signals) {
		signal(SIGPIPE, SIG_IGN);
		if (tk_signal_watch(e->l, SIGINT, main_signal, e) == -1 ||
		    tk_signal_watch(e->l, SIGTERM, main_signal, e) == -1)
			fatal("signals");
	}
	e->threads = xcalloc((size_t)e->nthreads, sizeof(*e->threads));
	for (i = 0; i < e->nthreads; i++)
		thread_setup(e, &e->threads[i], i);
	atomic_store(&prog->target, e->total);

	e->mono0 = e->prev_t = tk_loop_update_now(e->l);
	e->epoch0 = report_epoch_us();
	tk_timer_init(&e->tick, main_tick, e);
	tk_timer_init(&e->phase_t, phase_next, e);
	tick_arm(e);
	/*
	 * Each loop was made here and is handed to its thread; from
	 * pthread_create() on only that thread touches it.
	 */
	for (i = 0; i < e->nthreads; i++)
		if (pthread_create(&e->threads[i].tid, NULL, thread_main,
		    &e->threads[i]) != 0)
			fatalx("pthread_create failed");
	tk_loop_run(e->l, 0);
	for (i = 0; i < e->nthreads; i++)
		pthread_join(e->threads[i].tid, NULL);

	/* The last, partial second, and any round still out. */
	for (i = 0; i < e->nthreads; i++) {
		sec_take(e, &e->threads[i]);
		tk_hist_merge(e->sec, e->threads[i].st.all);
		tk_hist_merge(e->sec_unc, e->threads[i].st.all_unc);
	}
	if (conf->series && tk_hist_count(e->sec) > 0 &&
	    report_series_add(r, e->pending > 0 ? e->sec_key :
	    e->next_sec - 1, e->sec, e->sec_unc) == -1)
		fatal("%s: series", __func__);
	prog_collect(e);
	atomic_store(&prog->done, 1);
	collect(e, r);
	if (conf->signals) {
		tk_signal_unwatch(e->l, SIGINT);
		tk_signal_unwatch(e->l, SIGTERM);
	}
	tk_timer_cancel(e->l, &e->tick);
	tk_timer_cancel(e->l, &e->phase_t);
	for (i = 0; i < e->nthreads; i++)
		thread_free(&e->threads[i]);
	free(e->threads);
	tk_loop_free(e->l);
	tk_hist_free(e->sec);
	tk_hist_free(e->sec_unc);
	free(e->mbuf);
	free(e->roff);
	free(e->rlen);
	free(e);
}
