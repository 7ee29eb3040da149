/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The data path, one for echo and proxy.  A protocol never calls recv
 * or send: it describes each direction of its stream as a flow (bytes
 * read from one socket, sent to another or the same one) and reads the
 * flow's outcome — bytes moved, the source finished and the FIN passed
 * on, or an error on one side — to decide what the session does next.
 * Echo has one flow, from its socket to itself; the proxy has two.
 *
 * Copying (every backend): recv into the thread's scratch buffer, send
 * at once, queue only what the kernel did not take (pool buffers, so a
 * flow that keeps up holds none).  The floor per message is one recv
 * and one send:
 *
 * - a recv that returns less than asked drained the socket, so READ is
 *   blocked without the recv that would only say EAGAIN (an edge
 *   backend reports the next arrival; a level one polls again).  Not
 *   when the event carried HUP: then we read on until 0, or the FIN is
 *   lost.
 * - a send that takes less than offered filled the socket buffer, so
 *   WRITE is blocked without another try.
 *
 * Backpressure: a read is sized to the room left under the limit
 * (conn_limit(): --buffer-limit, or what is held already while the
 * memory budget is tight), so what a flow holds never exceeds it, and
 * a full flow stops reading until its destination takes some.
 *
 * Splicing (proxy mode, --splice auto): a flow whose copy reads keep
 * coming back full is a bulk stream.  It takes a pipe from the thread's
 * pool and from then on moves bytes with splice(2), socket to pipe to
 * socket, so they never enter user space.  Three rules keep it exact:
 *
 * - it splices in only into an empty pipe, and does not even want to
 *   read while the pipe holds bytes.  An empty pipe has every slot
 *   free, so EAGAIN can only mean the socket is empty (a pipe out of
 *   slots says EAGAIN too), and the pipe never holds more than one
 *   splice: the pipe's size (256k by default; see pipe_size), kernel
 *   pages moved from the socket rather than tenkd's memory.
 * - READ is blocked only on EAGAIN, never on a short splice, which may
 *   be the pipe's slots running out rather than the socket draining.
 * - the bytes in the pipe count as queued: for passing the FIN on only
 *   once everything is out, and for the memory budget's choice of whom
 *   to close.
 *
 * A splice takes no more than the pass's budget has left (at least a
 * copy read's worth, as a copy read may), so that a bulk stream gets its
 * share of a pass of the run queue and no more.
 *
 * A spliced flow goes back to copying, and its pipe back to the pool,
 * when a splice brings in less than DP_SMALL bytes and the pipe is
 * empty again (the stream has turned interactive), or when it ends.  An
 * empty pool (--splice-pipes per thread) leaves the flow copying.
 * EINVAL or ENOSYS from splice(2) moves what the pipe holds into the
 * queue and turns splicing off for the flow for good.
 *
 * TLS (tls.h): a flow whose source or destination speaks TLS (f->tsrc,
 * f->tdst) reads plaintext with tk_tls_read() and sends it with
 * tk_tls_write(), which block on the watcher what they wait for (READ
 * or WRITE, whichever the library asked): so the loops here test
 * readiness for what the TLS side waits for, and a TLS read that
 * drained the socket has blocked READ itself, where a plain one is
 * short.  A TLS write takes a record (16 KiB) at most, and once it has
 * said EAGAIN must be offered the same bytes again: the queue keeps
 * them, and a queue whose first buffer holds fewer than a record's
 * bytes is gathered into the scratch buffer first.  Passing the FIN on
 * is close_notify, then the FIN (tk_tls_shutdown); should the socket
 * not take the alert, DP_F_FINWAIT waits for it to.  TLS flows never
 * splice: the bytes must pass through the library.
 */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/log.h"
#include "../tenkd.h"

#define DP_IOV		16
#define DP_BULK_READS	2		/* full reads in a row: bulk */
#define DP_BULK_MIN	(8 * 1024)	/* a read this big at least */
#define DP_SMALL	4096		/* a splice under this: copy again */
#define DP_SPARE_PIPES	8		/* kept open per thread when idle */
#define DP_PIPE_IDLE	(5 * TK_SEC)	/* a spare unused this long closes */
#define DP_PIPE_DEFAULT	(64 * 1024)	/* a fresh pipe's size (pipe(7)) */
#define DP_SPLICE_SIZE	(256 * 1024)	/* a splice's most, by measure */
#define DP_PIPE_MAX	(1024 * 1024)	/* fs.pipe-max-size's default */
#define DP_RECORD	16384		/* a TLS record's plaintext */

static int	flush(struct worker *, struct dp_flow *);
static int	splice_out(struct worker *, struct dp_flow *);
static void	read_end(struct dp_flow *, ssize_t);
static int	copy_in(struct worker *, struct dp_flow *, size_t, size_t *);
static void	bulk(struct worker *, struct dp_flow *, int);
static int	send_failed(struct worker *, struct dp_flow *, const void *,
		    size_t);
static inline int send_tail(struct worker *, struct dp_flow *, const void *,
		    size_t);
static int	send_tls(struct worker *, struct dp_flow *, const void *,
		    size_t);
static int	queue_rest(struct worker *, struct dp_flow *, const void *,
		    size_t);
static int	splice_in(struct worker *, struct dp_flow *, size_t *);
static void	splice_off(struct worker *, struct dp_flow *);
static void	dp_release(struct worker *, struct dp_flow *);
static struct dp_pipe *pipe_get(struct worker *);
static void	pipe_put(struct worker *, struct dp_pipe *);
static void	pipe_close(struct worker *, struct dp_pipe *);
static void	pipes_idle(struct tk_loop *, struct tk_timer *);
static inline void spend(size_t *, size_t);
static int	flush_tls(struct worker *, struct dp_flow *);
static void	pass_fin(struct worker *, struct dp_flow *);

/*
 * The pipes' size, which is also the most one splice moves and so what a
 * spliced direction holds: DP_SPLICE_SIZE, or --buffer-limit if more
 * (up to fs.pipe-max-size's default).  Not --buffer-limit itself: those
 * bytes are the socket buffer's pages, moved, not tenkd's memory, and
 * 16k splices cost twice the CPU per GB of 256k ones
 * (docs/BENCHMARKS.md, "One data path and splice").
 */
static size_t	pipe_size;

/*
 * The pipe of a direction that splices through none: it holds no bytes,
 * so what a flow holds is read without a test (dp_pending).
 */
struct dp_pipe	dp_nopipe = { .rfd = -1, .wfd = -1 };

void
dp_init(void)
{
	size_t	sz = srv.cfg.buffer_limit;

	if (sz < DP_SPLICE_SIZE)
		sz = DP_SPLICE_SIZE;
	if (sz > DP_PIPE_MAX)
		sz = DP_PIPE_MAX;
	pipe_size = sz;
}

/*
 * Read and drop what waits on a socket about to be closed that was
 * never read (a proxy client whose session found no upstream), so that
 * the close sends a FIN rather than the RST that unread bytes would
 * cause (close(2) on TCP, RFC 2525 2.17).  Bounded: a peer still
 * sending gets the RST.
 */
void
dp_discard(struct worker *w, struct tk_io *io)
{
	ssize_t	n;
	int	i;

	for (i = 0; i < 4; i++) {
		n = recv(io->fd, w->scratch, SCRATCH_SIZE, MSG_DONTWAIT);
		if (n <= 0 || n < SCRATCH_SIZE)
			break;
	}
}

/* The reason to close for errno after a failed recv or send. */
enum conn_reason
dp_reason(int err)
{
	return err == ECONNRESET || err == EPIPE ? CONN_RESET : CONN_ERROR;
}

static inline void
spend(size_t *budget, size_t n)
{
	*budget -= n < *budget ? n : *budget;
}

/* What reading f's source, and writing its destination, wait for. */
static inline unsigned int
src_ev(const struct dp_flow *f)
{
	return f->tsrc != NULL ? f->tsrc->rwant : TK_EV_READ;
}

static inline unsigned int
dst_ev(const struct dp_flow *f)
{
	return f->tdst != NULL ? f->tdst->wwant : TK_EV_WRITE;
}

/*
 * Note a failure of f for dp_settle to report: what is one of
 * DP_F_SRCERR, DP_F_DSTERR or DP_F_NOMEM, e its errno, which is logged
 * here at debug level.  A failed source reads no more; its flow still
 * sends what it read.  Whether the peer reset is the first failure's.
 */
void
dp_fail(struct dp_flow *f, unsigned int what, int e)
{
	log_debug("%s: fd %d: %s: %s", __func__, what == DP_F_DSTERR ?
	    f->dst->fd : f->src->fd, what == DP_F_SRCERR ? "recv" :
	    what == DP_F_DSTERR ? "send" : "queue", strerror(e));
	if ((*f->flags & DP_F_ERR) == 0 && (e == ECONNRESET || e == EPIPE))
		*f->flags |= DP_F_RESET;
	*f->flags |= (uint8_t)what;
}

/*
 * The end of a pump of f: report a noted failure, a source's only once
 * everything read from it is out (as readiness sends at once what it
 * reads, so that a peer that sends and then resets loses nothing it
 * sent first); else, once the source has finished and nothing is
 * left, pass the FIN on (pass_fin) and set DP_F_SHUT.  Returns
 * 0, or -1 with f->err set and errno ECONNRESET (a reset) or EIO.
 */
int
dp_settle(struct worker *w, struct dp_flow *f)
{
	uint8_t	fl = *f->flags;

	if (fl & (DP_F_DSTERR | DP_F_NOMEM) || ((fl & DP_F_SRCERR) &&
	    dp_pending(f) == 0 && !(fl & DP_F_SENDING))) {
		f->err = fl & DP_F_NOMEM ? DP_ERR_NOMEM : fl & DP_F_DSTERR ?
		    DP_ERR_DST : DP_ERR_SRC;
		errno = fl & DP_F_RESET ? ECONNRESET : EIO;
		return -1;
	}
	if ((fl & (DP_F_END | DP_F_SHUT | DP_F_SENDING)) == DP_F_EOF &&
	    dp_pending(f) == 0)
		pass_fin(w, f);
	return 0;
}

/*
 * Move f's bytes: flush what waits for the destination if it takes
 * bytes, then read from the source and forward, until the source is
 * drained, the flow is full or *budget is spent; then dp_settle.
 * Bytes flushed and bytes read both spend the budget.  Returns 0, or
 * -1 with f->err and errno set: the caller ends the session, or the
 * direction (a failed source's flow has sent what it read first).
 */
int
dp_pump(struct worker *w, struct dp_flow *f, size_t *budget)
{
	size_t	n;

	if (w->cq)
		return dp_cq_pump(w, f);

	if ((n = dp_pending(f)) > 0 && (f->dst->ready & dst_ev(f)) &&
	    *budget > 0) {
		if ((f->tdst != NULL ? flush_tls(w, f) : flush(w, f)) == -1)
			return -1;
		spend(budget, n - dp_pending(f));
	}
	while (!(*f->flags & DP_F_END) && (f->src->ready & src_ev(f)) &&
	    *budget > 0) {
		n = dp_pending(f);
		if (n >= conn_limit(n))
			break;
		if (*f->pipe != &dp_nopipe) {
			/* Only into an empty pipe: see the top. */
			if ((*f->pipe)->len > 0)
				break;
			if (splice_in(w, f, budget) == -1)
				return -1;
		} else if (copy_in(w, f, n, budget) == -1)
			return -1;
		if (f->stop) {
			f->stop = 0;
			break;
		}
	}
	if ((*f->flags & (DP_F_END | DP_F_ERR)) == 0)
		return 0;
	return dp_settle(w, f);
}

/*
 * f's source finished and everything is out: pass the FIN on, after a
 * close_notify on TLS, and set DP_F_SHUT; or, when the socket does not
 * take the close_notify now, DP_F_FINWAIT until it does.  ENOTCONN if
 * the peer already reset: the next send will tell.
 */
static void
pass_fin(struct worker *w, struct dp_flow *f)
{
	if (f->tdst != NULL) {
		if ((*f->flags & DP_F_FINWAIT) &&
		    (f->dst->ready & f->tdst->wwant) == 0)
			return;
		if (tk_tls_shutdown(f->tdst) == -1 && errno == EAGAIN) {
			*f->flags |= DP_F_FINWAIT;
			return;
		}
		*f->flags &= ~DP_F_FINWAIT;
	} else
		(void)shutdown(f->dst->fd, SHUT_WR);
	*f->flags |= DP_F_SHUT;
	dp_release(w, f);
}

/*
 * A read from f's source (recv or splice) that brought no bytes: 0 the
 * peer finished (unless f->more says bytes the kernel passed on for it
 * are still to come: then READ waits for them), -1 with errno: EAGAIN
 * blocks READ, anything else is the source's failure, noted for
 * dp_settle.  Ends dp_pump's loop (f->stop).
 */
static void
read_end(struct dp_flow *f, ssize_t n)
{
	f->stop = 1;
	if (n == 0 && f->more != NULL && f->more(f))
		tk_io_block(f->src, TK_EV_READ);
	else if (n == 0)
		*f->flags |= DP_F_EOF;
	else if (errno == EAGAIN || errno == EWOULDBLOCK) {
		/* TLS blocked what it waits for itself. */
		if (f->tsrc == NULL)
			tk_io_block(f->src, TK_EV_READ);
	} else
		dp_fail(f, DP_F_SRCERR, errno);
}

/*
 * One recv into the scratch buffer and its forwarding, for dp_pump,
 * with pending bytes held.  Sets f->stop when the loop should end: the
 * socket was drained or finished.  Returns 0, or -1 with f->err set.
 */
static int
copy_in(struct worker *w, struct dp_flow *f, size_t pending, size_t *budget)
{
	struct tk_io	*src = f->src;
	size_t		 room;
	ssize_t		 n;

	room = conn_limit(pending) - pending;
	if (room > SCRATCH_SIZE)
		room = SCRATCH_SIZE;
	if (f->tsrc != NULL)
		n = tk_tls_read(f->tsrc, w->scratch, room);
	else
		do {
			n = recv(src->fd, w->scratch, room, 0);
		} while (n == -1 && errno == EINTR);
	if (n <= 0) {
		read_end(f, n);
		return 0;
	}
	dp_count_in(w, f, n);
	if (send_tail(w, f, w->scratch, n) == -1)
		return -1;
	spend(budget, n);
	if (f->tsrc != NULL) {
		/* A TLS read that drained the socket blocked READ. */
		if ((src->ready & TK_EV_READ) == 0)
			f->stop = 1;
	} else if ((size_t)n < room && (src->ready & TK_EV_HUP) == 0) {
		tk_io_block(src, TK_EV_READ);
		f->stop = 1;
	}
	if (!(*f->spl & DP_S_OFF))
		bulk(w, f, (size_t)n == room && room >= DP_BULK_MIN);
	return 0;
}

/*
 * After a copy read that was full (or not): a bulk stream, its reads
 * full DP_BULK_READS times in a row, moves to a pipe while its queue is
 * empty.
 */
static void
bulk(struct worker *w, struct dp_flow *f, int full)
{
	struct dp_pipe	*p;
	uint8_t		 streak = *f->spl & DP_S_STREAK;

	if (!full) {
		*f->spl &= ~DP_S_STREAK;
		return;
	}
	if (streak < DP_BULK_READS)
		*f->spl = (*f->spl & ~DP_S_STREAK) | ++streak;
	if (streak < DP_BULK_READS || f->q->len > 0)
		return;
	if ((p = pipe_get(w)) != NULL) {
		*f->pipe = p;
		*f->spl &= ~DP_S_STREAK;
	}
	else if (!(*f->spl & DP_S_DENIED)) {
		/* Counted once a flow; retried for free. */
		*f->spl |= DP_S_DENIED;
		w->st.nopipe++;
	}
}

/*
 * Send n bytes at p to f's destination, queueing what the kernel does
 * not take; with bytes already waiting, queue them all, behind.  On a
 * completion loop, queue them: the step's dp_pump sends.  This is the
 * "send this" of a protocol.  Returns 0, or -1 with f->err set.
 */
int
dp_send(struct worker *w, struct dp_flow *f, const void *p, size_t n)
{
	if (w->cq)
		return queue_rest(w, f, p, n);
	return send_tail(w, f, p, n);
}

/*
 * A send of n bytes at p failed for good: they stay queued, unsent, as
 * a failed flush leaves its queue and a failed completion its own, so
 * that what a session counts as sent (read less queued, at its close:
 * the access log's out=, an upstream's tx) is what the kernel took.
 * The queue goes with the connection.  Returns -1 with f->err set;
 * errno is the send's.
 */
static int
send_failed(struct worker *w, struct dp_flow *f, const void *p, size_t n)
{
	int	e = errno;

	(void)tk_bufq_append(f->q, &w->pool, p, n);
	f->err = DP_ERR_DST;
	errno = e;
	return -1;
}

/*
 * dp_send(), inlined into the read path (forced: with two callers the
 * compiler kept it a call, 26 instructions a message more on echo,
 * callgrind); TLS apart, in send_tls().
 */
static inline __attribute__((always_inline)) int
send_tail(struct worker *w, struct dp_flow *f, const void *p, size_t n)
{
	ssize_t	k;

	if (dp_pending(f) > 0)
		return queue_rest(w, f, p, n);	/* behind what waits */
	if (f->tdst != NULL)
		return send_tls(w, f, p, n);
	do {
		k = send(f->dst->fd, p, n, MSG_NOSIGNAL);
	} while (k == -1 && errno == EINTR);
	if (k == -1) {
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return send_failed(w, f, p, n);
		k = 0;
	}
	dp_count_out(w, f, k);
	if ((size_t)k == n)
		return 0;
	tk_io_block(f->dst, TK_EV_WRITE);
	return queue_rest(w, f, (const char *)p + k, n - k);
}

/* What a send left (or all, dp_send), queued; -1 with f->err set. */
static int
queue_rest(struct worker *w, struct dp_flow *f, const void *p, size_t n)
{
	if (tk_bufq_append(f->q, &w->pool, p, n) == -1) {
		f->err = DP_ERR_NOMEM;
		return -1;
	}
	return 0;
}

/* send_tail() to a TLS destination: a record a call, nothing queued. */
static int
send_tls(struct worker *w, struct dp_flow *f, const void *p, size_t n)
{
	ssize_t	k = 0, r;

	/* EAGAIN blocked what the library wants. */
	while ((size_t)k < n) {
		if ((r = tk_tls_write(f->tdst, (const char *)p + k,
		    n - k)) == -1) {
			if (errno != EAGAIN)
				return send_failed(w, f, (const char *)p + k,
				    n - k);
			break;
		}
		dp_count_out(w, f, r);
		k += r;
	}
	if ((size_t)k == n)
		return 0;
	return queue_rest(w, f, (const char *)p + k, n - k);
}

/* n bytes of f's queue went out: dropped from it, counted, a touch. */
static void
sent(struct worker *w, struct dp_flow *f, size_t n)
{
	tk_bufq_consume(f->q, &w->pool, n);
	dp_count_out(w, f, n);
	conn_touch(f->c, tk_loop_now(w->l));
}

/*
 * Send from f's queue, then from its pipe, until both are empty or the
 * socket is full.  Returns 0, or -1 with f->err set.
 */
static int
flush(struct worker *w, struct dp_flow *f)
{
	struct iovec	 iov[DP_IOV];
	struct msghdr	 msg;
	ssize_t		 n;
	size_t		 len;
	int		 i, niov;

	while (f->q->len > 0) {
		niov = tk_bufq_iov(f->q, iov, DP_IOV);
		for (len = 0, i = 0; i < niov; i++)
			len += iov[i].iov_len;
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = iov;
		msg.msg_iovlen = niov;
		n = sendmsg(f->dst->fd, &msg, MSG_NOSIGNAL);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				tk_io_block(f->dst, TK_EV_WRITE);
				return 0;
			}
			f->err = DP_ERR_DST;
			return -1;
		}
		sent(w, f, (size_t)n);
		if ((size_t)n < len) {
			tk_io_block(f->dst, TK_EV_WRITE);
			return 0;
		}
	}
	if ((*f->pipe)->len > 0)
		return splice_out(w, f);
	return 0;
}

/*
 * flush() to a TLS destination: a record a call, from the queue's
 * first buffer, or, when that holds less than a record and more
 * follows, from up to a record's bytes gathered into the scratch
 * buffer (a retry after EAGAIN must be offered at least tdst->wpend).
 * Returns 0, or -1 with f->err set.
 */
static int
flush_tls(struct worker *w, struct dp_flow *f)
{
	struct iovec	 iov[DP_IOV];
	const char	*p;
	size_t		 len, want;
	ssize_t		 n;
	int		 i, niov;

	while (f->q->len > 0) {
		niov = tk_bufq_iov(f->q, iov, DP_IOV);
		want = f->q->len < DP_RECORD ? f->q->len : DP_RECORD;
		p = iov[0].iov_base;
		len = iov[0].iov_len;
		if (len < want) {
			for (len = 0, i = 0; i < niov && len < want; i++) {
				n = (ssize_t)(want - len < iov[i].iov_len ?
				    want - len : iov[i].iov_len);
				memcpy(w->scratch + len, iov[i].iov_base,
				    (size_t)n);
				len += (size_t)n;
			}
			p = w->scratch;
		}
		if ((n = tk_tls_write(f->tdst, p, len)) == -1) {
			if (errno == EAGAIN)
				return 0;
			f->err = DP_ERR_DST;
			return -1;
		}
		sent(w, f, (size_t)n);
	}
	return 0;
}

/*
 * Splice what f's pipe holds to the destination until the pipe is
 * empty or the socket full.  Returns 0, or -1 with f->err set.
 */
static int
splice_out(struct worker *w, struct dp_flow *f)
{
	struct dp_pipe	*p = *f->pipe;
	ssize_t		 n;

	while (p->len > 0) {
		n = splice(p->rfd, NULL, f->dst->fd, NULL, p->len,
		    SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				tk_io_block(f->dst, TK_EV_WRITE);
				return 0;
			}
			if (errno == EINVAL || errno == ENOSYS) {
				splice_off(w, f);
				return f->q->len > 0 ? flush(w, f) : 0;
			}
			f->err = DP_ERR_DST;
			return -1;
		}
		p->len -= n;
		w->piped -= n;
		dp_count_out(w, f, n);
		w->st.spliced += n;
		conn_touch(f->c, tk_loop_now(w->l));
	}
	return 0;
}

/*
 * One splice from f's source into its (empty) pipe, then on to the
 * destination, for dp_pump.  Sets f->stop when the loop should end.
 * Returns 0, or -1 with f->err set.
 */
static int
splice_in(struct worker *w, struct dp_flow *f, size_t *budget)
{
	struct dp_pipe	*p = *f->pipe;
	size_t		 room;
	ssize_t		 n;

	/*
	 * The queue is empty while splicing: the pipe may fill, but no
	 * further than the pass's budget has left, or a copy read's worth
	 * (SCRATCH_SIZE, what a copy read may take past it): one splice of
	 * a whole pipe made the other sessions wait for it (issue 22).
	 */
	room = *budget < pipe_size ? *budget : pipe_size;
	if (room < SCRATCH_SIZE)
		room = SCRATCH_SIZE;
	do {
		n = splice(f->src->fd, NULL, p->wfd, NULL, room,
		    SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
	} while (n == -1 && errno == EINTR);
	if (n == -1 && (errno == EINVAL || errno == ENOSYS)) {
		splice_off(w, f);
		return 0;
	}
	/* EAGAIN: the pipe is empty, so the socket is. */
	if (n <= 0) {
		read_end(f, n);
		return 0;
	}
	p->len = (uint32_t)n;
	w->piped += n;
	dp_count_in(w, f, n);
	spend(budget, n);
	if ((f->dst->ready & TK_EV_WRITE) && splice_out(w, f) == -1)
		return -1;
	if (*f->pipe != &dp_nopipe && p->len == 0 && (size_t)n < DP_SMALL) {
		/* Interactive again (room is more): copying costs less. */
		dp_release(w, f);
	}
	return 0;
}

/*
 * splice(2) refused f's sockets (EINVAL, ENOSYS): copy for good.  What
 * the pipe holds goes into the queue first, in order.
 */
static void
splice_off(struct worker *w, struct dp_flow *f)
{
	struct dp_pipe	*p = *f->pipe;
	ssize_t		 n;

	log_debug("%s: fd %d to fd %d: %s: copying", __func__, f->src->fd,
	    f->dst->fd, strerror(errno));
	*f->spl |= DP_S_OFF;
	while (p->len > 0) {
		n = read(p->rfd, w->scratch, p->len < SCRATCH_SIZE ?
		    p->len : SCRATCH_SIZE);
		if (n <= 0) {
			if (n == -1 && errno == EINTR)
				continue;
			break;
		}
		/* The queue takes it whole, or the pipe's close drops it. */
		if (tk_bufq_append(f->q, &w->pool, w->scratch, n) == -1)
			break;
		p->len -= n;
		w->piped -= n;
	}
	dp_release(w, f);
}

/* Give f's pipe back to the pool, if it has one: at the end or quiet. */
static void
dp_release(struct worker *w, struct dp_flow *f)
{
	dp_splice_end(w, f->pipe, f->spl);
}

/*
 * Give a direction's pipe (*pp, its DP_S_* bits *spl) back, if it has
 * one: at a flow's quiet or its end.
 */
void
dp_splice_end(struct worker *w, struct dp_pipe **pp, uint8_t *spl)
{
	if (*pp == &dp_nopipe)
		return;
	pipe_put(w, *pp);
	*pp = &dp_nopipe;
	*spl &= ~DP_S_STREAK;
}

/*
 * A pipe from w's pool: a spare one, else a new one while the thread
 * holds fewer than --splice-pipes; NULL when neither.
 */
static struct dp_pipe *
pipe_get(struct worker *w)
{
	struct dp_pipe	*p;
	int		 fds[2];

	if ((p = SLIST_FIRST(&w->pipes)) != NULL) {
		SLIST_REMOVE_HEAD(&w->pipes, link);
		w->npipes_free--;
		return p;
	}
	if (w->npipes >= srv.splice_pipes)
		return NULL;
	if ((p = malloc(sizeof(*p))) == NULL)
		return NULL;
	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) == -1) {
		free(p);
		return NULL;
	}
	/* Best effort: a smaller pipe only splits the splices. */
	if (pipe_size > DP_PIPE_DEFAULT)
		(void)fcntl(fds[1], F_SETPIPE_SZ, (int)pipe_size);
	p->rfd = fds[0];
	p->wfd = fds[1];
	p->len = 0;
	w->npipes++;
	if (w->pipe_timer.fn == NULL)
		tk_timer_init(&w->pipe_timer, pipes_idle, w);
	return p;
}

/*
 * Back to the pool: kept when empty and spares are few, else closed (a
 * pipe that still holds bytes cannot serve another flow).  A spare is
 * closed once it has gone DP_PIPE_IDLE unused (pipes_idle), so that a
 * burst of bulk streams does not hold its descriptors for ever.
 */
static void
pipe_put(struct worker *w, struct dp_pipe *p)
{
	if (p->len == 0 && w->npipes_free < DP_SPARE_PIPES) {
		p->since = tk_loop_now(w->l);
		SLIST_INSERT_HEAD(&w->pipes, p, link);
		w->npipes_free++;
		if (!tk_timer_pending(&w->pipe_timer))
			(void)tk_timer_arm(w->l, &w->pipe_timer, DP_PIPE_IDLE);
		return;
	}
	w->piped -= p->len;
	pipe_close(w, p);
}

static void
pipe_close(struct worker *w, struct dp_pipe *p)
{
	close(p->rfd);
	close(p->wfd);
	free(p);
	w->npipes--;
}

/*
 * Close the spares unused for DP_PIPE_IDLE, and look again when the
 * next one will have been.  The list is newest first, so those are its
 * tail.  Should the timer not arm, the next pipe_put arms it.
 */
static void
pipes_idle(struct tk_loop *l, struct tk_timer *t)
{
	struct worker	*w = t->arg;
	struct dp_pipe	*p, *old, *last = NULL;
	uint64_t	 now = tk_loop_now(l);

	SLIST_FOREACH(p, &w->pipes, link) {
		if (now - p->since >= DP_PIPE_IDLE)
			break;
		last = p;
	}
	if (last == NULL)
		SLIST_INIT(&w->pipes);
	else
		SLIST_NEXT(last, link) = NULL;
	for (; p != NULL; p = old) {
		old = SLIST_NEXT(p, link);
		w->npipes_free--;
		pipe_close(w, p);
	}
	if (last != NULL)
		(void)tk_timer_arm_at(l, t, last->since + DP_PIPE_IDLE);
}

/* Close w's spare pipes; for the worker's end. */
void
dp_pipes_free(struct worker *w)
{
	struct dp_pipe	*p;

	if (w->pipe_timer.fn != NULL)
		tk_timer_cancel(w->l, &w->pipe_timer);
	while ((p = SLIST_FIRST(&w->pipes)) != NULL) {
		SLIST_REMOVE_HEAD(&w->pipes, link);
		w->npipes_free--;
		pipe_close(w, p);
	}
}
