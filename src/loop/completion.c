/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The entry points of completion I/O (tenk/uring.h): checks common to
 * every backend, then the backend's own functions, which only io_uring
 * has.  They exist in every build, so that a caller links without
 * liburing and learns at run time (tk_loop_completion) what it has.
 */
#include <errno.h>

#include "tenk/loop.h"
#include "tenk/uring.h"
#include "backend.h"

int
tk_loop_completion(struct tk_loop *l)
{
	return l->ops->completion != NULL && l->ops->completion(l);
}

int
tk_loop_bufring(struct tk_loop *l, unsigned int count, size_t size)
{
	if (!tk_loop_completion(l)) {
		errno = ENOTSUP;
		return -1;
	}
	return l->ops->bufring(l, count, size);
}

/* Make io a completion watcher, if it is not one yet. */
static int
cq_take(struct tk_loop *l, struct tk_io *io)
{
	if (!tk_loop_completion(l)) {
		errno = ENOTSUP;
		return -1;
	}
	if (io->active) {
		errno = EBUSY;
		return -1;
	}
	return 0;
}

/* io's first request went in: count it as a watcher of the loop. */
static void
cq_mark(struct tk_loop *l, struct tk_io *io)
{
	if (!io->cq) {
		io->cq = 1;
		l->nio++;
	}
}

void
tk_io_wake(struct tk_loop *l, struct tk_io *io)
{
	if (!io->active)
		loop_io_ready(l, io, TK_EV_READ);
}

int
tk_io_recv_start(struct tk_loop *l, struct tk_io *io, tk_recv_fn *fn,
    size_t max)
{
	if (cq_take(l, io) == -1)
		return -1;
	if (l->ops->recv_start(l, io, fn, max) == -1)
		return -1;
	cq_mark(l, io);
	return 0;
}

void
tk_io_recv_stop(struct tk_loop *l, struct tk_io *io)
{
	if (io->cq)
		l->ops->recv_stop(l, io);
}

int
tk_io_recv_on(struct tk_loop *l, struct tk_io *io)
{
	return io->cq && l->ops->recv_on(l, io);
}

int
tk_io_accept_start(struct tk_loop *l, struct tk_io *lio, tk_accept_fn *fn)
{
	if (cq_take(l, lio) == -1)
		return -1;
	if (l->ops->accept_start(l, lio, fn) == -1)
		return -1;
	cq_mark(l, lio);
	return 0;
}

int
tk_io_accept_stop(struct tk_loop *l, struct tk_io *lio)
{
	return lio->cq ? l->ops->accept_stop(l, lio) : 0;
}

int
tk_io_send(struct tk_loop *l, struct tk_io *io, const struct iovec *iov,
    int iovcnt, tk_send_fn *done)
{
	if (cq_take(l, io) == -1)
		return -1;
	if (iovcnt < 1 || iovcnt > TK_SEND_IOVMAX) {
		errno = EINVAL;
		return -1;
	}
	if (l->ops->send(l, io, iov, iovcnt, done) == -1)
		return -1;
	cq_mark(l, io);
	return 0;
}
