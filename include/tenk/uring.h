/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libtenk completion I/O: on a loop running on io_uring, a watcher's
 * socket receives through one multishot recv into a buffer ring that the
 * loop (so the thread) shares among all its sockets, and sends through
 * submissions, instead of readiness plus recv(2) and send(2).  An idle
 * socket holds no buffer: one is taken from the ring only when data
 * arrives, and goes back as soon as the callback returns.  A listening
 * socket accepts through one multishot accept instead of readiness plus
 * accept4(2).
 *
 * A watcher is either a readiness watcher (tk_io_start) or a completion
 * watcher (the calls below), not both at once: tk_io_stop() ends either
 * kind, and a stopped watcher may be used the other way (a proxy's
 * upstream waits for its connect with TK_EV_WRITE, stops, then receives
 * here).  tk_io_init() prepares both kinds; a completion watcher's fn
 * may be NULL, and is then never called.
 *
 * The callbacks below only take what a completion brings; the watcher's
 * handler (its fn, when not NULL) is what acts on it.  Each recv or send
 * completion marks the watcher ready (TK_EV_READ for a recv, TK_EV_WRITE
 * for a send) and queues it on the loop's run queue, as a readiness
 * event does, so that the handler runs in the pass that follows: once
 * however many completions came, within the pass, never from inside a
 * callback.  The handler finds its ready bits cleared (there is no
 * EAGAIN to wait for); the next completion queues it again.
 *
 * Stopping or closing (tk_io_stop, tk_io_close) a completion watcher
 * with requests in flight is safe at any time, from any callback: no
 * callback runs for it afterwards, its memory may be freed at once, and
 * so may the data of a send in flight (tk_io_close cancels such a send
 * synchronously, so the kernel no longer reads it when it returns).
 *
 * Owner thread only, like the rest of the loop.
 */
#ifndef TENK_URING_H
#define TENK_URING_H

#include <sys/types.h>
#include <sys/uio.h>

#include <stddef.h>

struct tk_loop;
struct tk_io;

/*
 * Data arrived on io: n > 0 bytes at data, valid only until the callback
 * returns (the buffer then goes back to the ring; copy what must stay).
 * n == 0: the peer sent FIN (EOF); the recv has ended.  n < 0: -errno,
 * the recv failed and has ended (-ECONNRESET and the like).  The
 * callback may call anything here, including tk_io_close(l, io), but
 * what the data means is for io's handler, which runs next.
 */
typedef void tk_recv_fn(struct tk_loop *l, struct tk_io *io,
		    const void *data, ssize_t n);

/*
 * A send of io completed: n >= 0 bytes were sent (the whole request,
 * MSG_WAITALL, unless the connection failed part way), or n == -errno
 * (-EPIPE, -ECONNRESET).  n == -EAGAIN means nothing was sent and the
 * caller should send again: that next send waits for room first.  The
 * send's data may be reused from here on, and the next tk_io_send may
 * be issued from inside the callback.
 */
typedef void tk_send_fn(struct tk_loop *l, struct tk_io *io, ssize_t n);

/*
 * A connection accepted on lio (tk_io_accept_start): fd >= 0 is the new
 * socket, nonblocking and close-on-exec, from now on the callback's to
 * keep or close.  No peer address comes with it (a multishot accept
 * cannot return one a connection): getpeername(2) gives it.  fd < 0 is
 * -errno, and the accept is over: -ECANCELED after tk_io_accept_stop
 * (no fd follows); -EMFILE, -ENFILE, -ENOBUFS or -ENOMEM (out of
 * descriptors or memory: start it again after a pause); -EINVAL (the
 * kernel refuses multishot accept, before Linux 5.19, or lio->fd does
 * not listen); another error of accept(2).  The callback may call
 * anything here, including tk_io_close(l, lio).
 */
typedef void tk_accept_fn(struct tk_loop *l, struct tk_io *lio, int fd);

/*
 * Queue io's handler to run in the next pass of the run queue, as a
 * completion would (TK_EV_READ), for a watcher that is not a readiness
 * watcher (tk_io_start; nothing happens on one): its first step, which
 * makes its first requests, say.  Owner thread.
 */
void		 tk_io_wake(struct tk_loop *l, struct tk_io *io);

/* The most iovecs one tk_io_send takes. */
#define TK_SEND_IOVMAX	8

/*
 * 1 when l runs on a backend with completion I/O (io_uring, on Linux 6.1
 * or later), so that the calls below work; 0 otherwise (they fail with
 * ENOTSUP there).
 */
int		 tk_loop_completion(struct tk_loop *l);

/*
 * Size the loop's receive buffer ring: count buffers (a power of two,
 * 1 to 32768) of size bytes each.  Only before the first
 * tk_io_recv_start; the default is 256 buffers of 16 KiB.  A loop given
 * sizes here makes its ring when it first runs, so that the ring's
 * memory is taken from the start, not at the first recv.  Returns 0,
 * or -1 with errno EINVAL (bad sizes), EBUSY (ring already made) or
 * ENOTSUP (not a completion loop).
 */
int		 tk_loop_bufring(struct tk_loop *l, unsigned int count,
		    size_t size);

/*
 * Receive on io->fd (a connected stream socket) until EOF, an error,
 * tk_io_recv_stop, or max bytes (0: no limit): fn is called for each
 * chunk as it lands in a ring buffer.  A recv that took its max bytes
 * ends quietly (tk_io_recv_on says so); its last chunk may go past max
 * by less than one ring buffer (a multishot recv fills whole buffers;
 * exactly max on kernels before 6.17).  This is how a caller bounds
 * what it must hold (backpressure), as tk_io_recv_stop cannot: chunks
 * received before the stop still arrive, up to a socket buffer's worth.
 * When the
 * ring runs dry (ENOBUFS) the recv is re-armed by itself and counted
 * (tk_loop_stats nobufs), never reported.  Calling it while a recv is
 * already on does nothing but change fn.  Returns 0, or -1 with errno
 * ENOTSUP (not a completion loop), EBUSY (io is a started readiness
 * watcher), ENOMEM (the buffer ring could not be made).
 */
int		 tk_io_recv_start(struct tk_loop *l, struct tk_io *io,
		    tk_recv_fn *fn, size_t max);

/* 1 while io's recv is on: started, and not ended or stopped since. */
int		 tk_io_recv_on(struct tk_loop *l, struct tk_io *io);

/*
 * Stop receiving (backpressure).  The recv is cancelled, but data the
 * kernel had already placed in buffers is still delivered to fn, up to
 * the request's end: a caller that stops must still take those few
 * chunks.  tk_io_recv_start afterwards resumes (after that end).
 */
void		 tk_io_recv_stop(struct tk_loop *l, struct tk_io *io);

/*
 * Send iovcnt (1 to TK_SEND_IOVMAX) buffers on io->fd; done is called
 * when the send completed.  At most one send per watcher is in flight,
 * so bytes stay in order: a second one before done fails with EBUSY.
 * The iovec array may be reused when tk_io_send returns, the data it
 * points to only after done (or after tk_io_stop/tk_io_close).  Sends
 * use MSG_NOSIGNAL.  Returns 0, or -1 with errno ENOTSUP, EBUSY, EINVAL
 * (iovcnt out of range), EAGAIN (the submission queue is full and the
 * loop has not run yet on its thread).
 */
int		 tk_io_send(struct tk_loop *l, struct tk_io *io,
		    const struct iovec *iov, int iovcnt, tk_send_fn *done);

/*
 * Accept on lio->fd, a listening stream socket, with one multishot
 * accept (IORING_ACCEPT_MULTISHOT, Linux 5.19): fn gets each connection
 * as the kernel accepts it, at no system call of ours.  The kernel takes
 * all the backlog holds whenever it runs the request, so the caller
 * cannot bound how many arrive at once; it can only stop.  A request the
 * kernel ends on its own (a full completion queue; a client gone before
 * it was accepted: ECONNABORTED, EPROTO, EPERM) is armed again, not
 * reported.  Calling it while on only changes fn; after a stop, even
 * before its end, it starts again.  A watcher that accepts neither
 * receives nor sends.  Returns 0, or -1 with errno ENOTSUP (not a
 * completion loop), EBUSY (lio is a started readiness watcher, or
 * receives or sends).
 */
int		 tk_io_accept_start(struct tk_loop *l, struct tk_io *lio,
		    tk_accept_fn *fn);

/*
 * Stop accepting (a pause, or before closing lio).  The request is
 * cancelled, but the connections the kernel accepted before it saw the
 * cancel still reach fn, which then gets -ECANCELED once: nothing more
 * comes.  Returns 1 when that end is still to come, 0 when no request
 * was in flight and nothing more reaches fn.  tk_io_stop and
 * tk_io_close end an accept at once instead: no callback afterwards,
 * and the loop closes any descriptor still on its way (counted,
 * tk_loop_stats accept_closed).
 */
int		 tk_io_accept_stop(struct tk_loop *l, struct tk_io *lio);

#endif /* TENK_URING_H */
