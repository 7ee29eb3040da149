/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Private to src/loop: the loop structure and the backend interface.
 * A backend translates kernel readiness into tk_event records and never
 * calls connection code; the loop turns events into ready bits and a run
 * queue.
 */
#ifndef TENK_LOOP_BACKEND_H
#define TENK_LOOP_BACKEND_H

#include <sys/queue.h>

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "tenk/loop.h"
#include "tenk/timer.h"
#include "tenk/uring.h"

struct tk_event {
	void		*udata;		/* pointer given to add() */
	unsigned int	 ev;		/* TK_EV_READ|WRITE|HUP|ERR */
};

struct tk_backend {
	const char	*name;		/* "epoll", "poll", "select" */
	unsigned int	 flags;
#define TK_BE_EDGE	0x01		/* reports each change once */
#define TK_BE_DELCLOSE	0x02		/* del() before close(): the kernel
					   holds the file while it watches */
#define TK_BE_EXPLICIT	0x04		/* only by name, never by default */
	/* Whether the kernel serves it, or NULL for always; -1, errno. */
	int		(*probe)(void);
	int		(*init)(struct tk_loop *, int maxfds);
	void		(*free)(struct tk_loop *);
	int		(*add)(struct tk_loop *, int, unsigned int, void *);
	/* Level backends only: an edge one's is NULL, never called. */
	int		(*mod)(struct tk_loop *, int, unsigned int, void *);
	int		(*del)(struct tk_loop *, int);
	/* Timeout in ns: -1 waits for ever, 0 polls. */
	int		(*wait)(struct tk_loop *, struct tk_event *, int,
			    int64_t);
	/* Counters of the kernel interface, or NULL for none. */
	void		(*stats)(struct tk_loop *, struct tk_loop_stats *);

	/*
	 * Completion I/O (tenk/uring.h), all NULL where the backend has
	 * none.  dispatch() runs the completions the last wait() took, from
	 * the loop, after the readiness events: it hands each recv's or
	 * send's to its callback, then queues the watcher with
	 * loop_io_ready(), which runs no handler; cq_stop() ends a
	 * completion watcher (tk_io_stop, tk_io_close) before its fd is
	 * closed.
	 */
	int		(*completion)(struct tk_loop *);
	int		(*bufring)(struct tk_loop *, unsigned int, size_t);
	int		(*recv_start)(struct tk_loop *, struct tk_io *,
			    tk_recv_fn *, size_t);
	void		(*recv_stop)(struct tk_loop *, struct tk_io *);
	int		(*recv_on)(struct tk_loop *, struct tk_io *);
	int		(*send)(struct tk_loop *, struct tk_io *,
			    const struct iovec *, int, tk_send_fn *);
	int		(*accept_start)(struct tk_loop *, struct tk_io *,
			    tk_accept_fn *);
	int		(*accept_stop)(struct tk_loop *, struct tk_io *);
	void		(*cq_stop)(struct tk_loop *, struct tk_io *);
	void		(*dispatch)(struct tk_loop *);
};

struct tk_loop {
	const struct tk_backend	*ops;
	void			*be;		/* backend state */
	uint64_t		 now;		/* cached monotonic ns */
	uint64_t		 iterations;	/* loop_once() calls */

	TAILQ_HEAD(tk_ioq, tk_io) runq;
	int			 nrunq;		/* watchers queued */
	struct tk_io		*cur;		/* handler running, or NULL */
	int			 nio;		/* user watchers started */

	struct tk_event		*events;
	int			 nevents;
	int			 maxfds;

	/* Timers: min-heap on (when, seq), then the expired list. */
	struct tk_timer	       **heap;
	size_t			 nheap;
	size_t			 heapcap;
	uint64_t		 tseq;
	TAILQ_HEAD(tk_timerq, tk_timer) expired;

	/* Cross-thread wake-ups and posted closures. */
	int			 wfd;		/* eventfd, or pipe read end */
	int			 wfd_w;		/* write end (wfd if eventfd) */
	struct tk_io		 wio;
	pthread_mutex_t		 mqlock;	/* guards mq */
	STAILQ_HEAD(tk_msgq, tk_msg) mq;
	atomic_int		 wakepending;
	atomic_int		 stopping;

	/* The self-pipe, on the loop that owns signals. */
	struct tk_io		 sio;
};

extern const struct tk_backend	 tk_backend_epoll;
extern const struct tk_backend	 tk_backend_poll;
extern const struct tk_backend	 tk_backend_select;
#ifdef TENK_HAVE_URING
extern const struct tk_backend	 tk_backend_io_uring;
#endif

/* backend.c */
const struct tk_backend	*backend_find(const char *);
const struct tk_backend	*const *backend_all(void);

/* array.c */
int		 array_cap(int, int, int, int);
int		 array_resize(void *, int, int, size_t);
int		 array_grow(void *, int *, int, int, int, size_t);

/* timer.c */
void		 timer_run_expired(struct tk_loop *);
int64_t		 timer_next_timeout(struct tk_loop *);
void		 timer_free_all(struct tk_loop *);

/* wake.c */
int		 wake_init(struct tk_loop *);
void		 wake_free(struct tk_loop *, int);

/* signal.c */
void		 signal_loop_free(struct tk_loop *, int);

/* loop.c */
int		 loop_io_start_internal(struct tk_loop *, struct tk_io *,
		    unsigned int);
void		 loop_io_stop_internal(struct tk_loop *, struct tk_io *);
void		 loop_io_ready(struct tk_loop *, struct tk_io *, unsigned int);

/*
 * poll(2)'s revents (or an io_uring poll request's result, or epoll's
 * events, which have the same bits) as events:
 * a hang-up reads (until 0), an error both reads and writes, so that
 * the next call meets it.  Inline: once per event.
 */
static inline unsigned int
backend_poll_events(unsigned int r)
{
	unsigned int	ev = 0;

	if (r & POLLIN)
		ev |= TK_EV_READ;
	if (r & POLLOUT)
		ev |= TK_EV_WRITE;
	if (r & POLLRDHUP)
		ev |= TK_EV_READ | TK_EV_HUP;
	if (r & POLLHUP)
		ev |= TK_EV_READ | TK_EV_WRITE | TK_EV_HUP;
	if (r & (POLLERR | POLLNVAL))
		ev |= TK_EV_READ | TK_EV_WRITE | TK_EV_ERR;
	return ev;
}

#endif /* TENK_LOOP_BACKEND_H */
