/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Connections: set-up after accept, the run-queue handler that hands a
 * runnable connection to its protocol's step function, the idle
 * timeouts (a per-thread timing wheel, below), closing by reason, and the
 * access log's one record writer.  Moving bytes is the data path's
 * (dpath.c), what they mean the protocol's (echo.c, proxy.c), when to
 * accept accept.c's.
 *
 * The bits of a connection's watcher (struct tk_io, see loop.c):
 *
 *	want	ready	state of the connection
 *	----	-----	------------------------------------------------
 *	R	-	idle: waiting for bytes, holds no buffer
 *	R	R	runnable: bytes (or a FIN, HUP) to read
 *	R|W	W	runnable: queued bytes can be flushed
 *	W	-	backpressure: queue at --buffer-limit, not reading
 *	W	-	FIN seen, flushing the rest before closing
 *
 * A handler clears a ready bit only on EAGAIN, or when a short read or
 * a short write proves the socket was drained or filled (tk_io_block);
 * with edge triggering a later change raises a new event.
 *
 * Idle timeouts: a per-thread timing wheel of WHEEL_SLOTS lists, each
 * covering "gran" ns, where gran is the idle timeout / 1000 (at least
 * 10 ms).  A connection sits in the slot of the deadline it had when it
 * was last filed; activity only stores the time in conn->last (one
 * 32-bit store, no list or heap work per read).  One tk_timer per thread
 * fires at the end of the next non-empty slot; the sweep closes the
 * connections whose deadline passed and files the others again under
 * their moved deadline.  So a connection costs 16 bytes of list links
 * instead of a 56-byte tk_timer, a busy one is touched once per timeout
 * period, and a timeout fires at most gran late (0.1%).  The wheel is
 * also the list of all connections, which a forced shutdown walks.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tenk/clock.h"
#include "tenk/json.h"
#include "tenk/log.h"
#include "tenk/xmalloc.h"
#include "../tenkd.h"

#define WHEEL_GRAN_MIN	(10 * TK_MSEC)

/* One access-log record: its longest text line escapes 511 bytes. */
#define ACCESS_LINEMAX	(512 * 4 + 64)
_Static_assert(ACCESS_LINEMAX <= ACCESS_BUFSIZE, "record beyond buffer");

/* A record's fields, formatted, for access_text and access_json. */
struct access_fields {
	const struct acct_rec	*r;
	const char		*proto;
	unsigned long long	 active;
	char			 client[TK_ADDRSTRLEN];
	char			 now[32];
	char			 accept[32];
	char			 dur[32];	/* seconds, 1.234 */
	char			 tc[32];
};

const char *const conn_reasons[CONN_NREASONS] = {
	"eof", "reset", "error", "timeout", "shutdown", "nomem",
	"memory", "proxy-header", "proxy-untrusted", "tls"
};

static void	conn_io(struct tk_loop *, struct tk_io *);
static void	wheel_file(struct worker *, struct conn *, uint64_t);
static void	wheel_fire(struct tk_loop *, struct tk_timer *);
static void	access_tick(struct tk_loop *, struct tk_timer *);
static int	json_fmt(char *, size_t, size_t *, const char *, ...)
		    __attribute__((format(printf, 4, 5)));
static void	access_line(struct worker *, struct conn *,
		    enum conn_reason);

/*
 * An idle connection costs this struct, its malloc header and what the
 * backend keeps per fd; keep it within 88 bytes (a 96-byte malloc
 * chunk) for the 128-byte budget per idle connection, and so that a
 * proxy session, which holds one and a second watcher, fits in 256.
 */
_Static_assert(sizeof(struct conn) <= 88, "struct conn outgrew 88 bytes");

/* Nanoseconds per wheel slot; set once at start-up (conn_wheel_init). */
static uint64_t	wheel_gran;

/*
 * Set up w's wheel.  With no idle timeout every connection goes into
 * slot 0 and the timer never runs.  Before the worker thread starts.
 */
void
conn_wheel_init(struct worker *w)
{
	uint64_t	t = srv.cfg.idle_timeout;
	int		i;

	for (i = 0; i < WHEEL_SLOTS; i++)
		LIST_INIT(&w->wheel[i]);
	wheel_gran = (t + 999) / 1000;
	if (wheel_gran < WHEEL_GRAN_MIN)
		wheel_gran = WHEEL_GRAN_MIN;
	w->wheel_done = tk_loop_now(w->l) / wheel_gran;
	tk_timer_init(&w->wheel_timer, wheel_fire, w);
}

/*
 * File c under its deadline (last activity + idle timeout) and make sure
 * the timer fires for it.  Deadlines are at most 1000 slots ahead, so a
 * slot never holds two laps of the wheel.
 */
static void
wheel_file(struct worker *w, struct conn *c, uint64_t now)
{
	uint64_t	tick;

	if (srv.cfg.idle_timeout == 0) {
		LIST_INSERT_HEAD(&w->wheel[0], c, slot);
		return;
	}
	tick = (conn_last_ns(c, now) + srv.cfg.idle_timeout) / wheel_gran;
	if (tick <= w->wheel_done)
		tick = w->wheel_done + 1;
	LIST_INSERT_HEAD(&w->wheel[tick % WHEEL_SLOTS], c, slot);
	if (!tk_timer_pending(&w->wheel_timer))
		(void)tk_timer_arm_at(w->l, &w->wheel_timer,
		    (tick + 1) * wheel_gran);
}

/*
 * Sweep every slot whose time has wholly passed, then arm the timer at
 * the end of the next non-empty slot.  A slot is emptied into a local
 * list first, so a connection filed again under the same slot index (a
 * lap later, after a long stall) is not met twice in one walk.
 */
static void
wheel_fire(struct tk_loop *l, struct tk_timer *t)
{
	struct worker	*w = t->arg;
	struct connlist	 tmp;
	struct conn	*c;
	uint64_t	 now = tk_loop_now(l), upto, tick, last;
	int		 n, i;

	upto = now / wheel_gran;
	for (tick = w->wheel_done + 1, n = 0; tick < upto && n < WHEEL_SLOTS;
	    tick++, n++) {
		LIST_INIT(&tmp);
		LIST_SWAP(&tmp, &w->wheel[tick % WHEEL_SLOTS], conn, slot);
		while ((c = LIST_FIRST(&tmp)) != NULL) {
			last = conn_last_ns(c, now);
			if (now - last >= srv.cfg.idle_timeout &&
			    w->proto->idle != NULL) {
				w->proto->idle(w, c);
				last = conn_last_ns(c, now);
			}
			if (now - last >= srv.cfg.idle_timeout) {
				/* Unlinks c from tmp. */
				conn_close(w, c, CONN_TIMEOUT);
				continue;
			}
			LIST_REMOVE(c, slot);
			LIST_INSERT_HEAD(&w->wheel[(last +
			    srv.cfg.idle_timeout) / wheel_gran % WHEEL_SLOTS],
			    c, slot);
		}
	}
	if (upto > 0 && upto - 1 > w->wheel_done)
		w->wheel_done = upto - 1;
	for (i = 1; i <= WHEEL_SLOTS; i++) {
		tick = w->wheel_done + i;
		if (!LIST_EMPTY(&w->wheel[tick % WHEEL_SLOTS])) {
			(void)tk_timer_arm_at(l, t, (tick + 1) * wheel_gran);
			break;
		}
	}
}

/* No memory for a new connection: say so, at most once a second. */
void
conn_warn_nomem(struct worker *w)
{
	uint64_t	skipped;

	if (worker_warn_ok(w, WARN_NOMEM, &skipped))
		log_warnx("thread %d: out of memory for a connection (%llu "
		    "similar suppressed)", w->id, (unsigned long long)skipped);
}

/*
 * A new connection's fd could not be watched (errno says why): say so,
 * at most once a second; what tells what it was watched for, or "".
 */
void
conn_warn_watch(struct worker *w, int fd, const char *what)
{
	uint64_t	skipped;

	if (worker_warn_ok(w, WARN_ACCEPT, &skipped))
		log_warn("thread %d: watching fd %d%s (%llu similar "
		    "suppressed)", w->id, fd, what,
		    (unsigned long long)skipped);
}

/*
 * Take over an accepted socket fd: TCP_NODELAY, a struct conn, a watcher
 * for reading, a slot in the idle wheel, then the protocol's start.  sa
 * is the peer (NULL when the access log is off).  On failure fd is
 * closed, the close is counted under its reason and NULL is returned;
 * the caller has nothing to undo.  With --accept-proxy, pin.c takes fd
 * first (NULL) and calls here again once the PROXY header is in, with
 * the address it carries as sa.  Worker thread.
 */
struct conn *
conn_new(struct worker *w, int fd, const struct sockaddr *sa, socklen_t salen)
{
	struct conn		*c;
	struct conn_acct	*a;
	enum conn_reason	 why;
	uint64_t		 now = tk_loop_now(w->l);
	size_t			 size = w->proto->size, tail = 0;
	int			 acct;

	if (srv.cfg.pin.on && pin_take(w, fd, sa, salen))
		return NULL;
	w->st.accepted++;
	acct = srv.access_fd != -1 || (w->proto->peer != NULL &&
	    w->proto->peer());
	/* Fails only on a socket the peer already reset; recv will tell. */
	(void)tk_sock_nodelay(fd);
	if (acct)
		size += sizeof(struct conn_acct);
	if (w->proto->tail != NULL && (tail = w->proto->tail()) > 0)
		size += tail;
	if ((c = calloc(1, size)) == NULL) {
		why = CONN_NOMEM;
		conn_warn_nomem(w);
		goto fail;
	}
	tk_io_init(&c->io, fd, conn_io, w);
	/* On completions the protocol's first step starts the recv. */
	if (!w->cq && tk_io_start(w->l, &c->io, TK_EV_READ) == -1) {
		why = CONN_ERROR;
		conn_warn_watch(w, fd, "");
		free(c);
		goto fail;
	}
	c->last = (uint32_t)(now >> CONN_TSHIFT);
	c->tail = tail > 0;
	if (acct) {
		c->acct = 1;
		a = CONN_ACCT(w, c);
		a->start = now;
		if (sa != NULL && (size_t)salen <= sizeof(a->peer))
			memcpy(&a->peer, sa, salen);
	}
	wheel_file(w, c, now);
	w->nconns++;
	w->proto->start(w, c);
	return c;

 fail:
	close(fd);
	w->st.closed[why]++;
	worker_conn_gone(w);
	return NULL;
}

/*
 * The run-queue handler of every connection.  A step that took a buffer
 * near the memory budget left the pool's alert up: mem.c sheds here,
 * where no connection is half-way through a step.
 */
static void
conn_io(struct tk_loop *l, struct tk_io *io)
{
	(void)l;
	conn_step(io->arg, (struct conn *)io);
}

/* c's step, then the shedding; for every handler of a connection. */
void
conn_step(struct worker *w, struct conn *c)
{
	w->proto->step(w, c);
	if (w->pool.alert)
		mem_check(w);
}

/*
 * Close c for the given reason: unwatch, drop its queue, close the fd,
 * count, log, free.  c is gone on return; this is safe from c's own
 * handler and from any other handler or timer of the same thread.
 */
void
conn_close(struct worker *w, struct conn *c, enum conn_reason why)
{
	int	fd = c->io.fd;

	/* Unwatch and close; on epoll without an EPOLL_CTL_DEL. */
	(void)tk_io_close(w->l, &c->io);
	LIST_REMOVE(c, slot);
	w->st.closed[why]++;
	/* Before the count drops: active= counts c, as for the proxy. */
	if (c->acct && !w->proto->own_log)
		access_line(w, c, why);
	/*
	 * The hook (the proxy's own record, echo's TLS state) sees what
	 * was left queued; then it goes.
	 */
	if (w->proto->close != NULL)
		w->proto->close(w, c, why);
	tk_bufq_clear(&c->outq, &w->pool);
	w->nconns--;
	log_debug("%s: thread %d fd %d: %s", __func__, w->id, fd,
	    conn_reasons[why]);
	free(c);
	worker_conn_gone(w);
}

/* Close every connection of w; for the drain deadline and exit. */
void
conn_close_all(struct worker *w, enum conn_reason why)
{
	struct conn	*c;
	int		 i;

	pin_close_all(w, why);
	for (i = 0; i < WHEEL_SLOTS; i++)
		while ((c = LIST_FIRST(&w->wheel[i])) != NULL)
			conn_close(w, c, why);
}

/*
 * The access log is one descriptor shared by all threads, opened with
 * O_APPEND.  Each worker keeps its records in a buffer of its own
 * (ACCESS_BUFSIZE) and hands it, whole lines, to the log's writer
 * thread (alog.c), when the next record would not fit, a second after
 * the first record went in (alog_timer), when it has drained and when
 * it stops; so a record costs a memcpy, not a system call, and a slow
 * log never blocks the data path (past --access-log-buffer, records are
 * dropped and counted).  Opening it at start and reopening it
 * (SIGHUP, SIGUSR1) are reopen.c's, which opens the path again and
 * dup3()s the new file onto the old descriptor number: that swaps the
 * file atomically under the workers' feet with no message to them.
 */

/*
 * w's record buffer and its flush timer; the buffer only when the
 * access log is on.  Start-up (worker_init), dies on failure.
 */
void
conn_access_init(struct worker *w)
{
	tk_timer_init(&w->alog_timer, access_tick, w);
	if (srv.access_fd != -1)
		w->alog = xmalloc(ACCESS_BUFSIZE);
}

/*
 * Hand w's buffered records (whole lines) to the writer and start an
 * empty buffer.  With the writer's queue full, they are dropped and
 * counted, and said at most once a second.  w's thread, or main after
 * w's thread was joined.
 */
void
conn_access_flush(struct worker *w)
{
	uint64_t	n = 0, skipped;
	size_t		i;

	tk_timer_cancel(w->l, &w->alog_timer);
	if (w->alog_len > 0 && alog_put(&w->alog, w->alog_len) == -1) {
		for (i = 0; i < w->alog_len; i++)
			n += w->alog[i] == '\n';
		w->st.log_dropped += n;
		if (worker_warn_ok(w, WARN_ALOG, &skipped))
			log_warnx("thread %d: access log behind by "
			    "--access-log-buffer %zu: %llu records dropped "
			    "(%llu similar suppressed)", w->id,
			    srv.cfg.access_buffer, (unsigned long long)n,
			    (unsigned long long)skipped);
	}
	w->alog_len = 0;
}

/* Flush and free w's buffer; worker_free, after the last record. */
void
conn_access_free(struct worker *w)
{
	if (w->alog != NULL)
		conn_access_flush(w);
	tk_timer_cancel(w->l, &w->alog_timer);
	free(w->alog);
	w->alog = NULL;
}

/* A second after the first record went into an empty buffer. */
static void
access_tick(struct tk_loop *l, struct tk_timer *t)
{
	(void)l;
	conn_access_flush(t->arg);
}

/*
 * Add one line of n bytes (newline included) to w's buffer, flushing
 * first when it would not fit; the first line into an empty buffer
 * arms the one-second flush (or, if the timer cannot be armed, is
 * written at once).
 */
static void
access_put(struct worker *w, const char *line, size_t n)
{
	if (w->alog == NULL || n > ACCESS_BUFSIZE)
		return;
	if (w->alog_len + n > ACCESS_BUFSIZE)
		conn_access_flush(w);
	memcpy(w->alog + w->alog_len, line, n);
	w->alog_len += n;
	if (!tk_timer_pending(&w->alog_timer) &&
	    tk_timer_arm(w->l, &w->alog_timer, TK_SEC) == -1)
		conn_access_flush(w);
}

/* A real-time clock reading in ns as 2026-11-22T13:29:42.123Z. */
static void
access_time(char *buf, size_t size, uint64_t real)
{
	struct tm	tm;
	time_t		sec = (time_t)(real / TK_SEC);
	size_t		n;

	gmtime_r(&sec, &tm);
	n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, size - n, ".%03lluZ",
	    (unsigned long long)(real % TK_SEC / TK_MSEC));
}

/* Printf to buf + *n; -1 when it did not fit in size bytes. */
static int
json_fmt(char *buf, size_t size, size_t *n, const char *fmt, ...)
{
	va_list	ap;
	int	r;

	va_start(ap, fmt);
	r = vsnprintf(buf + *n, size - *n, fmt, ap);
	va_end(ap);
	if (r < 0 || (size_t)r >= size - *n)
		return -1;
	*n += (size_t)r;
	return 0;
}

/*
 * "key": "string", with the key as is (ours, plain ASCII) and the
 * string as tenk/json.h writes one: invalid UTF-8 from outside cannot
 * make the line unparsable.
 */
static int
json_kv(char *buf, size_t size, size_t *n, const char *key, const char *s)
{
	if (json_fmt(buf, size, n, ", \"%s\": ", key) == -1)
		return -1;
	return tk_json_strbuf(buf, size, n, s);
}

/*
 * A record as one JSON object and a newline into line (size bytes);
 * returns its length, or 0 if it does not fit.
 */
static size_t
access_json(char *line, size_t size, const struct access_fields *f)
{
	size_t	n = 0;

	if (json_fmt(line, size, &n, "{\"time\": \"%s\"", f->now) == -1 ||
	    json_kv(line, size, &n, "client", f->client) == -1 ||
	    json_kv(line, size, &n, "proto", f->proto) == -1)
		return 0;
	if (f->r->term != NULL &&
	    json_kv(line, size, &n, "upstream", f->r->upstream) == -1)
		return 0;
	if (json_fmt(line, size, &n, ", \"duration\": %s, \"accept\": \"%s\"",
	    f->dur, f->accept) == -1)
		return 0;
	if (f->r->connected) {
		if (json_fmt(line, size, &n, ", \"tc\": %s", f->tc) == -1)
			return 0;
	} else if (json_fmt(line, size, &n, ", \"tc\": null") == -1)
		return 0;
	if (json_fmt(line, size, &n, ", \"active\": %llu, \"in\": %llu, "
	    "\"out\": %llu", f->active, (unsigned long long)f->r->in,
	    (unsigned long long)f->r->out) == -1)
		return 0;
	if (f->r->term != NULL && (json_fmt(line, size, &n,
	    ", \"tries\": %d", f->r->tries) == -1 ||
	    json_kv(line, size, &n, "term", f->r->term) == -1))
		return 0;
	if ((f->r->sni != NULL &&
	    json_kv(line, size, &n, "sni", f->r->sni) == -1) ||
	    (f->r->tls_version != NULL &&
	    (json_kv(line, size, &n, "tls_version", f->r->tls_version) == -1 ||
	    json_kv(line, size, &n, "tls_cipher", f->r->tls_cipher) == -1)) ||
	    (f->r->tls_fail != NULL &&
	    json_kv(line, size, &n, "tls_fail", f->r->tls_fail) == -1))
		return 0;
	if (json_kv(line, size, &n, "why", f->r->why) == -1 ||
	    json_fmt(line, size, &n, "}\n") == -1)
		return 0;
	return n;
}

/*
 * The same as a text line into line (size bytes): the fields after the
 * time go through log_escape, so a string from outside (none yet but
 * formatted addresses; PROXY TLVs later) can neither forge a line nor
 * reach a terminal raw.  Returns the length, or 0 if it does not fit
 * (a record is dropped rather than cut).
 */
static size_t
access_text(char *line, size_t size, const struct access_fields *f)
{
	const struct acct_rec	*r = f->r;
	char			 raw[512], up[TK_ADDRSTRLEN + 16];
	char			 tries[32], tls[384];
	size_t			 n;
	int			 m;

	up[0] = tries[0] = tls[0] = '\0';
	if (r->upstream != NULL)
		snprintf(up, sizeof(up), " %s", r->upstream);
	if (r->term != NULL)
		snprintf(tries, sizeof(tries), " tries=%d", r->tries);
	/* " sni=a.test tls=TLSv1.3/TLS_AES_256_GCM_SHA384", " tls=fail/eof" */
	if (r->tls_version != NULL || r->tls_fail != NULL)
		snprintf(tls, sizeof(tls), " tls=%s/%s", r->tls_version !=
		    NULL ? r->tls_version : "fail", r->tls_version != NULL ?
		    r->tls_cipher : r->tls_fail);
	if (r->sni != NULL) {
		snprintf(raw, sizeof(raw), " sni=%s%s", r->sni, tls);
		strlcpy(tls, raw, sizeof(tls));
	}
	m = snprintf(raw, sizeof(raw), "%s %s%s %ss accept=%s tc=%s%s "
	    "active=%llu in=%llu out=%llu%s%s%s%s %s", f->client, f->proto,
	    up, f->dur, f->accept, r->connected ? f->tc : "-",
	    r->connected ? "s" : "", f->active, (unsigned long long)r->in,
	    (unsigned long long)r->out, tries, r->term != NULL ? " " : "",
	    r->term != NULL ? r->term : "", tls, r->why);
	if (m < 0 || (size_t)m >= sizeof(raw))
		return 0;
	n = strlcpy(line, f->now, size);
	if (n + 2 + (size_t)m * 4 >= size)
		return 0;
	line[n++] = ' ';
	(void)log_escape(line + n, size - n - 1, raw, (size_t)m);
	n += strlen(line + n);
	line[n++] = '\n';
	return n;
}

/*
 * The access log's one record writer, for every protocol.  One line per
 * connection or session at its close, in the manner of HAProxy's
 * tcplog:
 *	2026-11-22T13:29:42.123Z 127.0.0.1:51234 echo 1.234s
 *	accept=2026-11-22T13:29:40.889Z tc=- active=3 in=10 out=10 eof
 *	2026-11-22T13:29:42.123Z 127.0.0.1:51234 proxy 127.0.0.1:7000
 *	1.234s accept=2026-11-22T13:29:40.889Z tc=0.001s active=3 in=10
 *	out=10 tries=1 client/eof eof
 * (each one line): the time of the close, the client, the protocol, the
 * upstream ("-" if none was connected; echo has none), the total time,
 * the time of the accept, the time the upstream took to connect ("-"
 * without one), the worker's open connections counting this one, bytes
 * from and to the client, then the proxy's connect attempts and who
 * ended the session in which phase, and why it closed.  With
 * --access-log-format json, the same fields as one JSON object.  The
 * line goes into w's buffer (access_put).  w's thread, or main after
 * it was joined (worker_free).
 */
void
conn_access_record(struct worker *w, const struct acct_rec *r)
{
	struct access_fields	 f;
	struct tk_addr		 peer;
	char			 line[ACCESS_LINEMAX];
	uint64_t		 now = tk_loop_now(w->l), real, ns;
	size_t			 n;

	real = tk_clock_real();
	ns = now - r->start;
	f.r = r;
	f.proto = w->proto->name;
	f.active = (unsigned long long)w->nconns;
	if (r->peer->sin6_family != AF_INET &&
	    r->peer->sin6_family != AF_INET6)
		strlcpy(f.client, "?", sizeof(f.client));
	else {
		tk_addr_from(&peer, (const struct sockaddr *)r->peer);
		tk_addr_fmt(&peer, f.client, sizeof(f.client));
	}
	access_time(f.now, sizeof(f.now), real);
	access_time(f.accept, sizeof(f.accept), real > ns ? real - ns : 0);
	snprintf(f.dur, sizeof(f.dur), "%llu.%03llu",
	    (unsigned long long)(ns / TK_SEC),
	    (unsigned long long)(ns % TK_SEC / TK_MSEC));
	snprintf(f.tc, sizeof(f.tc), "%llu.%03llu",
	    (unsigned long long)(r->tc / TK_SEC),
	    (unsigned long long)(r->tc % TK_SEC / TK_MSEC));
	if (srv.cfg.access_json)
		n = access_json(line, sizeof(line), &f);
	else
		n = access_text(line, sizeof(line), &f);
	if (n > 0)
		access_put(w, line, n);
}

/*
 * Echo's record: conn.c keeps its figures (struct conn_acct); what it
 * sent is what it read less what is still queued.
 */
static void
access_line(struct worker *w, struct conn *c, enum conn_reason why)
{
	struct conn_acct	*a = CONN_ACCT(w, c);
	struct acct_rec		 r = {
		.peer = &a->peer, .start = a->start, .in = a->in,
		.out = a->in - c->outq.len, .why = conn_reasons[why],
	};

	if (w->proto->acct_tls != NULL)
		w->proto->acct_tls(c, &r);
	conn_access_record(w, &r);
}
