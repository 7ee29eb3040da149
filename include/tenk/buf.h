/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Buffers from a per-thread pool, and byte queues built from them.  A
 * connection holds a queue only while it has bytes it could not send;
 * an idle connection holds none.  Not thread-safe: one pool per thread.
 */
#ifndef TENK_BUF_H
#define TENK_BUF_H

#include <sys/queue.h>
#include <sys/uio.h>

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* A buffer is on its pool's free list or in one queue, never both. */
struct tk_buf {
	SLIST_ENTRY(tk_buf)	 link;
	uint32_t		 off;	/* first unread byte */
	uint32_t		 len;	/* end of written bytes */
	uint32_t		 cap;	/* bufsize, or the small size */
	char			 data[]; /* cap bytes */
};

SLIST_HEAD(tk_buflist, tk_buf);

struct tk_bufpool {
	struct tk_buflist	 free;
	size_t			 bufsize; /* bytes of data per buffer */
	size_t			 nfree;	/* buffers on the free list */
	size_t			 maxfree; /* beyond this, put() frees */
	size_t			 inuse;	/* buffers handed out */
	/* Optional small buffers: see tk_bufpool_small. */
	struct tk_buflist	 sfree;
	size_t			 small;	/* bytes of data, 0: none */
	size_t			 nsfree;
	size_t			 maxsfree;
	size_t			 sinuse; /* small ones of inuse */
	/* Optional accounting shared by pools: see tk_bufpool_account. */
	atomic_size_t		*held;	/* bytes of buffers handed out */
	size_t			 unit;	/* bytes a buffer costs */
	size_t			 mark;	/* a get to here sets alert */
	int			 alert;	/* for the owner to clear */
};

/*
 * A FIFO of bytes in pool buffers.  All zeroes is the empty queue, so a
 * queue inside a calloc'd structure needs no set-up: hence an SLIST and
 * a tail pointer rather than an STAILQ, whose empty head points into
 * itself.
 */
struct tk_bufq {
	struct tk_buflist	 bufs;
	struct tk_buf		*tail;	/* last of bufs, or NULL */
	size_t			 len;	/* bytes queued */
};

/* Set up an empty pool; never fails. bufsize must be > 0. */
void	tk_bufpool_init(struct tk_bufpool *p, size_t bufsize, size_t maxfree);

/*
 * Give p a second, small size class: a queue that is empty when bytes
 * arrive and gets no more than size of them takes a buffer of size
 * bytes instead of bufsize, of which up to maxfree are kept as spares.
 * A queue of small messages waiting to be sent (each of io_uring's
 * sends, every message) then holds a few hundred bytes, not bufsize.
 * Only on a pool with no buffer handed out; size below bufsize.
 */
void	tk_bufpool_small(struct tk_bufpool *p, size_t size, size_t maxfree);

/* Bytes of the buffers p has handed out, headers included. */
size_t	tk_bufpool_held(const struct tk_bufpool *p);

/*
 * Count the memory of the buffers p hands out (header included) in
 * *held, which pools of several threads may share: one relaxed atomic
 * add per buffer taken or returned, none per byte.  A take that leaves
 * *held at or above mark sets p->alert, for p's owner to act on (and
 * clear) when it is safe to.  Spare buffers are not counted: at most
 * maxfree per pool.
 */
void	tk_bufpool_account(struct tk_bufpool *p, atomic_size_t *held,
	    size_t mark);

/* Free every buffer on the free list (those in use stay theirs). */
void	tk_bufpool_drain(struct tk_bufpool *p);

/* A buffer with off = len = 0, or NULL with errno ENOMEM. */
struct tk_buf	*tk_buf_get(struct tk_bufpool *p);
void		 tk_buf_put(struct tk_bufpool *p, struct tk_buf *b);

#define TK_BUFQ_INITIALIZER	{ SLIST_HEAD_INITIALIZER(bufs), NULL, 0 }

/*
 * Copy n bytes to the tail of q, taking buffers from p.  Returns 0, or -1
 * with errno ENOMEM, in which case nothing was appended.
 */
int	tk_bufq_append(struct tk_bufq *q, struct tk_bufpool *p,
	    const void *data, size_t n);

/* Fill up to iovmax iovecs with the queued bytes; returns how many. */
int	tk_bufq_iov(const struct tk_bufq *q, struct iovec *iov, int iovmax);

/* Drop n (<= q->len) bytes from the head, returning emptied buffers. */
void	tk_bufq_consume(struct tk_bufq *q, struct tk_bufpool *p, size_t n);

/* Drop everything. */
void	tk_bufq_clear(struct tk_bufq *q, struct tk_bufpool *p);

#endif /* TENK_BUF_H */
