/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Connections: set-up after accept, the run-queue handler that hands a
 * runnable connection to its protocol's step function, the idle
 * timeouts (a per-thread timing wheel, below), closing by reason, and the
 * access log's one record writer.  Moving bytes is the data path's
 * (dpath.c), what they mean the protocol's (echo.c, proxy.c), when to
 * accept worker.c's.
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
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tenk/clock.h"
#include "tenk/log.h"
#include "tenkd.h"

#define WHEEL_GRAN_MIN	(10 * TK_MSEC)

const char *const conn_reasons[CONN_NREASONS] = {
	"eof", "reset", "error", "timeout", "shutdown", "fdlimit", "nomem",
	"memory"
};

static void	conn_io(struct tk_loop *, struct tk_io *);
static void	wheel_file(struct worker *, struct conn *, uint64_t);
static void	wheel_fire(struct tk_loop *, struct tk_timer *);
static void	conn_access_write(const char *, ...)
		    __attribute__((format(printf, 1, 2)));
static void	access_line(struct worker *, struct conn *,
		    enum conn_reason);

/*
 * An idle connection costs this struct, its malloc header and what the
 * backend keeps per fd; keep it within 104 bytes (a 112-byte malloc
 * chunk) for the 128-byte budget per idle connection.
 */
_Static_assert(sizeof(struct conn) <= 104, "struct conn outgrew 104 bytes");

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

/*
 * Take over an accepted socket fd: TCP_NODELAY, a struct conn, a watcher
 * for reading, a slot in the idle wheel, then the protocol's start.  sa
 * is the peer (NULL when the access log is off).  On failure fd is
 * closed, the close is counted under its reason and NULL is returned;
 * the caller has nothing to undo.  Worker thread.
 */
struct conn *
conn_new(struct worker *w, int fd, const struct sockaddr *sa, socklen_t salen)
{
	struct conn		*c;
	struct conn_acct	*a;
	enum conn_reason	 why;
	uint64_t		 now = tk_loop_now(w->l), skipped;
	size_t			 size = w->proto->size;
	int			 acct;

	w->st.accepted++;
	acct = srv.access_fd != -1 && !w->proto->own_log;
	/* Fails only on a socket the peer already reset; recv will tell. */
	(void)tk_sock_nodelay(fd);
	if (acct)
		size += sizeof(struct conn_acct);
	if ((c = calloc(1, size)) == NULL) {
		why = CONN_NOMEM;
		if (worker_warn_ok(w, WARN_NOMEM, &skipped))
			log_warnx("thread %d: out of memory for a connection "
			    "(%llu similar suppressed)", w->id,
			    (unsigned long long)skipped);
		goto fail;
	}
	tk_io_init(&c->io, fd, conn_io, w);
	if (tk_io_start(w->l, &c->io, TK_EV_READ) == -1) {
		if (errno == ERANGE) {
			why = CONN_FDLIMIT;
			if (worker_warn_ok(w, WARN_FDLIMIT, &skipped))
				log_warnx("thread %d: fd %d is beyond what the "
				    "%s backend can watch (FD_SETSIZE %d): "
				    "connection closed (%llu similar "
				    "suppressed)", w->id, fd,
				    tk_loop_backend(w->l), FD_SETSIZE,
				    (unsigned long long)skipped);
		} else {
			why = CONN_ERROR;
			if (worker_warn_ok(w, WARN_ACCEPT, &skipped))
				log_warn("thread %d: watching fd %d (%llu "
				    "similar suppressed)", w->id, fd,
				    (unsigned long long)skipped);
		}
		free(c);
		goto fail;
	}
	c->last = (uint32_t)(now >> CONN_TSHIFT);
	if (acct) {
		c->acct = 1;
		a = CONN_ACCT(w, c);
		a->start = now;
		if (sa != NULL && (size_t)salen <= sizeof(a->peer))
			memcpy(&a->peer, sa, salen);
	}
	wheel_file(w, c, now);
	w->nconns++;
	w->proto->start(w, c, sa, salen);
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
	struct worker	*w = io->arg;

	(void)l;
	w->proto->step(w, (struct conn *)io);
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
	tk_bufq_clear(&c->outq, &w->pool);
	if (w->proto->close != NULL)
		w->proto->close(w, c, why);
	w->st.closed[why]++;
	w->nconns--;
	if (c->acct)
		access_line(w, c, why);
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

	for (i = 0; i < WHEEL_SLOTS; i++)
		while ((c = LIST_FIRST(&w->wheel[i])) != NULL)
			conn_close(w, c, why);
}

/*
 * The access log is one descriptor shared by all threads, opened with
 * O_APPEND; each line goes out in one write(2), so lines from different
 * threads do not mix.  Reopening (SIGHUP) opens the path again and
 * dup2()s the new file onto the old descriptor number, which swaps the
 * file atomically under the workers' feet with no message to them.
 */
void
conn_access_open(void)
{
	int	fd;

	srv.access_fd = -1;
	if (srv.cfg.access_log == NULL)
		return;
	fd = open(srv.cfg.access_log, O_WRONLY | O_APPEND | O_CREAT |
	    O_CLOEXEC, 0644);
	if (fd == -1)
		fatal("access log %s", srv.cfg.access_log);
	srv.access_fd = fd;
}

/* Main thread, on SIGHUP.  Failure keeps the old file and warns. */
void
conn_access_reopen(void)
{
	int	fd;

	if (srv.access_fd == -1)
		return;
	fd = open(srv.cfg.access_log, O_WRONLY | O_APPEND | O_CREAT |
	    O_CLOEXEC, 0644);
	if (fd == -1) {
		log_warn("reopening access log %s", srv.cfg.access_log);
		return;
	}
	if (dup2(fd, srv.access_fd) == -1)
		log_warn("reopening access log %s: dup2", srv.cfg.access_log);
	close(fd);
}

/*
 * One access-log line: the real-time clock in UTC to the millisecond and
 * a space, then fmt, which ends in a newline.  Echo and proxy share it.
 * What fmt makes is escaped (log_escape) but for that newline, so a
 * string from outside (none yet but formatted addresses; PROXY TLVs
 * later) can neither forge a line nor reach a terminal raw.  A line
 * too long for raw is dropped rather than cut; line has room for raw
 * fully escaped.  The one write(2) keeps lines from several workers
 * whole (O_APPEND).
 */
static void
conn_access_write(const char *fmt, ...)
{
	va_list		 ap;
	struct tm	 tm;
	char		 raw[512], line[sizeof(raw) * 4 + 64];
	uint64_t	 now = tk_clock_real();
	time_t		 sec = (time_t)(now / TK_SEC);
	size_t		 n, m;
	int		 r;
	ssize_t		 w;

	va_start(ap, fmt);
	r = vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	if (r < 0 || (size_t)r >= sizeof(raw))
		return;
	m = (size_t)r;
	if (m > 0 && raw[m - 1] == '\n')
		m--;
	gmtime_r(&sec, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
	n += snprintf(line + n, sizeof(line) - n, ".%03lluZ ",
	    (unsigned long long)(now % TK_SEC / TK_MSEC));
	/* Leaves room for the newline: m <= 511 escapes to at most 2044. */
	(void)log_escape(line + n, sizeof(line) - n - 1, raw, m);
	n += strlen(line + n);
	line[n++] = '\n';
	do {
		w = write(srv.access_fd, line, n);
	} while (w == -1 && errno == EINTR);
}

/*
 * The access log's one record writer, for every protocol.  One line per
 * connection or session at its close:
 *	2026-11-22T13:29:42.123Z 127.0.0.1:51234 echo 1.234s in=10 out=10
 *	eof
 *	2026-11-22T13:29:42.123Z 127.0.0.1:51234 proxy 127.0.0.1:7000
 *	1.234s in=10 out=10 tries=1 client/eof eof
 * (each one line): the client, the protocol, the upstream ("-" if none
 * was connected; echo has none), the duration, bytes from and to the
 * client, then the proxy's connect attempts and who ended the session
 * in which phase, and why it closed.
 */
void
conn_access_record(struct worker *w, const struct acct_rec *r)
{
	struct tk_addr	 peer;
	char		 cl[TK_ADDRSTRLEN], up[TK_ADDRSTRLEN + 16];
	char		 tries[32];
	uint64_t	 ns = tk_loop_now(w->l) - r->start;

	if (r->peer->sin6_family != AF_INET &&
	    r->peer->sin6_family != AF_INET6)
		strlcpy(cl, "?", sizeof(cl));
	else {
		tk_addr_from(&peer, (const struct sockaddr *)r->peer);
		tk_addr_fmt(&peer, cl, sizeof(cl));
	}
	up[0] = tries[0] = '\0';
	if (r->upstream != NULL)
		snprintf(up, sizeof(up), " %s", r->upstream);
	if (r->term != NULL)
		snprintf(tries, sizeof(tries), " tries=%d", r->tries);
	conn_access_write("%s %s%s %llu.%03llus in=%llu out=%llu%s%s%s %s\n",
	    cl, w->proto->name, up, (unsigned long long)(ns / TK_SEC),
	    (unsigned long long)(ns % TK_SEC / TK_MSEC),
	    (unsigned long long)r->in, (unsigned long long)r->out, tries,
	    r->term != NULL ? " " : "", r->term != NULL ? r->term : "",
	    r->why);
}

/* Echo's record: conn.c keeps its figures (struct conn_acct). */
static void
access_line(struct worker *w, struct conn *c, enum conn_reason why)
{
	struct conn_acct	*a = CONN_ACCT(w, c);
	struct acct_rec		 r = {
		.peer = &a->peer, .start = a->start, .in = a->in,
		.out = a->out, .why = conn_reasons[why],
	};

	conn_access_record(w, &r);
}
