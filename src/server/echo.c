/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The echo protocol (RFC 862): every byte read is sent back, in order,
 * byte-exact.  This file is only the step function and its two states;
 * accepting, timeouts and closing are conn.c's.
 *
 * Bytes are read into the thread's scratch buffer and sent at once; only
 * what the kernel did not take is copied into the connection's queue
 * (pool buffers), so a connection that keeps up never holds a buffer.
 * The floor per echoed message is one recv and one send:
 *
 * - a recv that returns less than asked drained the socket, so we block
 *   READ without the recv that would only say EAGAIN (an edge backend
 *   reports the next arrival; a level one polls again).  Not when the
 *   event carried HUP: then we read on until 0, or the FIN is lost.
 * - a send that takes less than offered filled the socket buffer, so we
 *   block WRITE without another try; the kernel sets SOCK_NOSPACE and
 *   reports writability when ACKs make room.
 *
 * Backpressure: reads are sized to the room left under --buffer-limit,
 * so the queue never exceeds it; a full queue stops the reading (want
 * WRITE only) until the peer takes some of it.  Near the memory budget
 * any queue counts as full (conn_limit(), mem.c).
 */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <errno.h>
#include <string.h>

#include "tenk/log.h"
#include "tenkd.h"

enum echo_state {
	ECHO_RUN = 0,		/* echoing both ways */
	ECHO_FLUSH,		/* peer sent FIN: flush the queue, then close */
};

/*
 * Bytes read per turn before the connection goes to the back of the run
 * queue: two scratch buffers' worth, so a bulk sender gets two 64 KiB
 * rounds and then lets the ping-pong connections have their turn.
 */
#define ECHO_BUDGET	(2 * SCRATCH_SIZE)
#define ECHO_IOV	16

static void	echo_start(struct worker *, struct conn *,
		    const struct sockaddr *, socklen_t);
static void	echo_step(struct worker *, struct conn *);
static int	echo_send(struct worker *, struct conn *, size_t);
static int	echo_flush(struct worker *, struct conn *);
static void	echo_fail(struct worker *, struct conn *);

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
	c->state = ECHO_RUN;
}

/* Close c after a failed recv or send; errno tells why. */
static void
echo_fail(struct worker *w, struct conn *c)
{
	if (errno == ECONNRESET || errno == EPIPE)
		conn_close(w, c, CONN_RESET);
	else {
		log_debug("%s: fd %d: %s", __func__, c->io.fd,
		    strerror(errno));
		conn_close(w, c, CONN_ERROR);
	}
}

/*
 * Send the n bytes just read into the scratch buffer, queueing what the
 * kernel does not take.  Returns 0, or -1 after closing c.
 */
static int
echo_send(struct worker *w, struct conn *c, size_t n)
{
	ssize_t	s = 0;

	if (c->outq.len == 0) {
		do {
			s = send(c->io.fd, w->scratch, n, MSG_NOSIGNAL);
		} while (s == -1 && errno == EINTR);
		if (s == -1) {
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				echo_fail(w, c);
				return -1;
			}
			s = 0;
		}
		w->st.bytes_out += s;
		if (c->acct)
			CONN_ACCT(w, c)->out += s;
		if ((size_t)s == n)
			return 0;
		tk_io_block(&c->io, TK_EV_WRITE);
	}
	if (tk_bufq_append(&c->outq, &w->pool, w->scratch + s, n - s) == -1) {
		conn_close(w, c, CONN_NOMEM);
		return -1;
	}
	return 0;
}

/* Send from the queue until it is empty or the socket is full. */
static int
echo_flush(struct worker *w, struct conn *c)
{
	struct iovec	 iov[ECHO_IOV];
	struct msghdr	 msg;
	ssize_t		 n;
	size_t		 len;
	int		 i, niov;

	while (c->outq.len > 0) {
		niov = tk_bufq_iov(&c->outq, iov, ECHO_IOV);
		for (len = 0, i = 0; i < niov; i++)
			len += iov[i].iov_len;
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = iov;
		msg.msg_iovlen = niov;
		n = sendmsg(c->io.fd, &msg, MSG_NOSIGNAL);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				tk_io_block(&c->io, TK_EV_WRITE);
				return 0;
			}
			echo_fail(w, c);
			return -1;
		}
		tk_bufq_consume(&c->outq, &w->pool, n);
		w->st.bytes_out += n;
		if (c->acct)
			CONN_ACCT(w, c)->out += n;
		conn_touch(c, tk_loop_now(w->l));
		if ((size_t)n < len) {
			tk_io_block(&c->io, TK_EV_WRITE);
			return 0;
		}
	}
	return 0;
}

/*
 * The run-queue step: flush what is queued if the socket takes it, read
 * and echo until drained, the queue is full or the budget is spent, then
 * set what the connection waits for.  Returning while still runnable
 * puts it at the back of the run queue.
 */
static void
echo_step(struct worker *w, struct conn *c)
{
	struct tk_io	*io = &c->io;
	size_t		 limit = srv.cfg.buffer_limit, room, budget;
	ssize_t		 n;
	unsigned int	 want;

	if (c->outq.len > 0 && (io->ready & TK_EV_WRITE) &&
	    echo_flush(w, c) == -1)
		return;

	budget = ECHO_BUDGET;
	while (c->state == ECHO_RUN && c->outq.len < conn_limit(c->outq.len) &&
	    (io->ready & TK_EV_READ) && budget > 0) {
		room = limit - c->outq.len;
		if (room > SCRATCH_SIZE)
			room = SCRATCH_SIZE;
		n = recv(io->fd, w->scratch, room, 0);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				tk_io_block(io, TK_EV_READ);
				break;
			}
			echo_fail(w, c);
			return;
		}
		if (n == 0) {
			c->state = ECHO_FLUSH;
			break;
		}
		w->st.bytes_in += n;
		if (c->acct)
			CONN_ACCT(w, c)->in += n;
		conn_touch(c, tk_loop_now(w->l));
		if (echo_send(w, c, n) == -1)
			return;
		budget -= (size_t)n < budget ? (size_t)n : budget;
		if ((size_t)n < room && (io->ready & TK_EV_HUP) == 0) {
			tk_io_block(io, TK_EV_READ);
			break;
		}
	}

	if (c->state == ECHO_FLUSH && c->outq.len == 0) {
		/* Everything echoed: our FIN, then the close. */
		(void)shutdown(io->fd, SHUT_WR);
		conn_close(w, c, CONN_EOF);
		return;
	}
	want = 0;
	if (c->state == ECHO_RUN && c->outq.len < conn_limit(c->outq.len))
		want |= TK_EV_READ;
	if (c->outq.len > 0)
		want |= TK_EV_WRITE;
	if (want != io->want && tk_io_want(w->l, io, want) == -1) {
		log_warn("%s: fd %d", __func__, io->fd);
		conn_close(w, c, CONN_ERROR);
	}
}
