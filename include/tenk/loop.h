/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libtenk event loop: one loop per thread, fd watchers with a run queue,
 * a cached monotonic clock, and thread-safe wake-ups and posted closures.
 * Timers are in timer.h, signals in signal.h.
 *
 * Nothing in a loop is shared with another thread, except the functions
 * marked "any thread" below.
 */
#ifndef TENK_LOOP_H
#define TENK_LOOP_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

struct tk_loop;
struct tk_io;

/* Readiness and interest bits. */
#define TK_EV_READ	0x01
#define TK_EV_WRITE	0x02
#define TK_EV_HUP	0x04	/* peer closed (RDHUP/HUP): read until 0 */
#define TK_EV_ERR	0x08	/* socket error pending */

/*
 * Called from the run queue when the watcher is runnable, that is when
 * (io->ready & io->want) != 0.  The handler does I/O until EAGAIN or its
 * own budget ends.  On EAGAIN it must call tk_io_block() for that
 * direction; if it returns while still runnable it goes to the back of
 * the run queue and runs again in the next pass (fairness).  The handler
 * may stop and free its own watcher or any other one.
 */
typedef void tk_io_fn(struct tk_loop *, struct tk_io *);

/*
 * An fd watcher, embedded in the caller's structure.  Fields are read-only
 * to the caller except through the functions below; "ready" and "want"
 * may be read freely.
 */
struct tk_io {
	int			 fd;
	uint8_t			 want;	/* TK_EV_READ|TK_EV_WRITE */
	uint8_t			 ready;	/* READ|WRITE|HUP|ERR, user space */
	uint8_t			 regd;	/* interest given to a level backend */
	unsigned int		 active:1;
	unsigned int		 queued:1;
	unsigned int		 cq:1;	/* completion watcher (uring.h) */
	tk_io_fn		*fn;
	void			*arg;
	TAILQ_ENTRY(tk_io)	 rq;	/* run queue link */
};

/* A closure posted to a loop from any thread (tk_loop_post). */
struct tk_msg;
typedef void tk_msg_fn(struct tk_loop *, struct tk_msg *);
struct tk_msg {
	tk_msg_fn		*fn;
	void			*arg;
	STAILQ_ENTRY(tk_msg)	 link;	/* owned by the loop while queued */
};

/* tk_loop_run() flags. */
#define TK_RUN_ONCE	0x01	/* one iteration, may block */
#define TK_RUN_NOWAIT	0x02	/* one iteration, never blocks */

/*
 * Create a loop on the named backend ("epoll", "poll", "select",
 * "io_uring"), or on the best one whose init succeeds when name is NULL
 * (never io_uring).  maxfds is a hint for array sizes (0 for a default).
 * Returns NULL with errno set: ENOENT for an unknown or uncompiled backend
 * name, or the backend's init error (io_uring: ENOSYS, EPERM).
 * The caller's thread owns the loop from then on.
 */
struct tk_loop	*tk_loop_new(const char *name, int maxfds);

/*
 * Free the loop and its backend.  Watchers, timers and signal handlers
 * still registered are forgotten, not called; posted messages not yet run
 * are dropped.  Owner thread only.
 */
void		 tk_loop_free(struct tk_loop *l);

/*
 * In a child of fork(): free a loop the parent goes on running, without
 * touching what the two processes share.  Its memory is freed, its own
 * descriptors closed and the signals it watched given back SIG_DFL (a
 * new loop may take them), but nothing is unregistered: the epoll
 * instance or io_uring ring, and the files they watch, are the parent's
 * as much as the child's, and tk_loop_free()'s EPOLL_CTL_DEL or
 * cancellation would take them from the parent's loop.  The caller
 * closes its watchers' fds with close(2), never tk_io_stop() or
 * tk_io_close().  Call it in the child before any other use of the
 * loop, with no other thread running; the child then never runs l.
 */
void		 tk_loop_forget(struct tk_loop *l);

/*
 * Run iterations until tk_loop_stop() (flags 0), for one iteration
 * (TK_RUN_ONCE), or for one iteration that never blocks (TK_RUN_NOWAIT).
 * Returns 0 after a stop, otherwise the number of watchers and timers
 * still active.  Owner thread only.
 */
int		 tk_loop_run(struct tk_loop *l, int flags);

/* Ask a running loop to return after its current iteration. Any thread. */
void		 tk_loop_stop(struct tk_loop *l);

/* Wake the loop from a blocking wait without other effect.  Any thread. */
void		 tk_loop_wake(struct tk_loop *l);

/*
 * Queue m to run on l's thread in a later iteration, in posting order from
 * each posting thread.  m must stay valid until its function has been
 * called; the function may free it.  Always returns 0: m carries its own
 * link, so queueing allocates nothing, and a wake-up write that finds the
 * counter full means the loop is already due to wake.  Any thread.
 */
int		 tk_loop_post(struct tk_loop *l, struct tk_msg *m);

/* Monotonic time in nanoseconds, cached once per iteration. */
uint64_t	 tk_loop_now(struct tk_loop *l);

/* Refresh the cached time from the clock and return it. */
uint64_t	 tk_loop_update_now(struct tk_loop *l);

/*
 * Iterations run so far: a plain counter, one increment per iteration.
 * Owner thread only (a metrics reader asks the owner for it).
 */
uint64_t	 tk_loop_iterations(struct tk_loop *l);

/* The backend's name. */
const char	*tk_loop_backend(struct tk_loop *l);

/*
 * Names of the compiled-in backends, best first, NULL-terminated.  The
 * default choice (tk_loop_new with NULL) never takes "io_uring", which
 * comes last and only by name.
 */
const char *const *tk_backend_names(void);

/*
 * Whether the named backend is compiled in and the running kernel serves
 * it: io_uring may be refused by the kernel (ENOSYS), by
 * kernel.io_uring_disabled or a seccomp filter (EPERM).  Returns 0, or
 * -1 with errno set (ENOENT: not compiled in).  Any thread.
 */
int		 tk_backend_probe(const char *name);

/*
 * Counters of the backend's kernel interface, zero where a backend has
 * none (all but io_uring).  Owner thread.
 */
struct tk_loop_stats {
	uint64_t	 cq_overflow;	/* waits that met a full CQ */
	uint64_t	 rearms;	/* multishot requests armed again */
	uint64_t	 sq_full;	/* submits forced by a full SQ */
	uint64_t	 nobufs;	/* recvs re-armed: buffer ring dry */
	uint64_t	 send_again;	/* sends that said EAGAIN (uring.h) */
	uint64_t	 accepts;	/* fds a multishot accept brought */
	uint64_t	 accept_closed;	/* ... after tk_io_stop: closed */
	uint64_t	 ring_bytes;	/* its queues and receive buffers */
};
void		 tk_loop_stats(struct tk_loop *l, struct tk_loop_stats *st);

/*
 * Prepare a watcher for fd; it is not yet registered.  Never fails.
 */
void		 tk_io_init(struct tk_io *io, int fd, tk_io_fn *fn, void *arg);

/*
 * Register the watcher with interest in want (TK_EV_READ|TK_EV_WRITE).
 * Returns 0, or -1 with errno set (EEXIST, ENOMEM, EBADF from the
 * backend; select grows its fd sets past FD_SETSIZE, refusing none).
 * The fd is assumed ready in no direction until the backend reports it.
 */
int		 tk_io_start(struct tk_loop *l, struct tk_io *io,
		    unsigned int want);

/*
 * Change interest.  Edge backends never make a system call here; level
 * backends call their mod only when the set actually changes.  A watcher
 * that becomes runnable is queued.  Returns 0 or -1 with errno set.
 */
int		 tk_io_want(struct tk_loop *l, struct tk_io *io,
		    unsigned int want);

/*
 * Record that a direction would block (EAGAIN): clears those ready bits.
 * Call it from the handler; it makes no system call.
 */
void		 tk_io_block(struct tk_io *io, unsigned int ev);

/*
 * Unregister the watcher and take it off the run queue.  Afterwards the
 * caller may close the fd and free the watcher's memory, even from inside
 * a handler of the same batch.  Stopping a stopped watcher does nothing.
 * A completion watcher (tenk/uring.h) has its requests cancelled too.
 */
void		 tk_io_stop(struct tk_loop *l, struct tk_io *io);

/*
 * Stop the watcher and close its fd.  On epoll this saves the
 * EPOLL_CTL_DEL: closing the last reference to a file removes it from
 * every epoll set (epoll(7)), so do not use it on an fd whose file
 * another descriptor holds (a dup, a forked process's copy): call
 * tk_io_stop() and close(2) instead.  Otherwise the registration
 * outlives the watcher, which the loop never calls again but whose
 * file's events still wake it.  Returns close(2)'s result.
 */
int		 tk_io_close(struct tk_loop *l, struct tk_io *io);

#endif /* TENK_LOOP_H */
