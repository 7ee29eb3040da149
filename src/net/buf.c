/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The per-thread buffer pool and the byte queues built from its buffers.
 * A queue only ever holds bytes that could not be sent at once, so it is
 * usually empty; the pool keeps a few spare buffers so that a burst of
 * partial writes does not turn into a burst of malloc calls.  A pool may
 * also hand out small buffers (tk_bufpool_small), each with its size in
 * cap: a queue that starts with a few bytes takes one of those.  Not
 * thread-safe: one pool per thread, and a queue uses its thread's pool.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/buf.h"

/* bufsize must fit the 32-bit offsets in struct tk_buf. */
void
tk_bufpool_init(struct tk_bufpool *p, size_t bufsize, size_t maxfree)
{
	assert(bufsize > 0 && bufsize <= UINT32_MAX);
	SLIST_INIT(&p->free);
	p->bufsize = bufsize;
	p->nfree = 0;
	p->maxfree = maxfree;
	p->inuse = 0;
	SLIST_INIT(&p->sfree);
	p->small = p->nsfree = p->maxsfree = p->sinuse = 0;
	p->held = NULL;
	p->unit = sizeof(struct tk_buf) + bufsize;
	p->mark = SIZE_MAX;
	p->alert = 0;
}

void
tk_bufpool_small(struct tk_bufpool *p, size_t size, size_t maxfree)
{
	assert(size < p->bufsize && p->inuse == 0);
	p->small = size;
	p->maxsfree = maxfree;
}

size_t
tk_bufpool_held(const struct tk_bufpool *p)
{
	return (p->inuse - p->sinuse) * p->unit + p->sinuse *
	    (sizeof(struct tk_buf) + p->small);
}

void
tk_bufpool_account(struct tk_bufpool *p, atomic_size_t *held, size_t mark)
{
	p->held = held;
	p->mark = mark;
}

void
tk_bufpool_drain(struct tk_bufpool *p)
{
	struct tk_buf	*b;

	while ((b = SLIST_FIRST(&p->free)) != NULL) {
		SLIST_REMOVE_HEAD(&p->free, link);
		free(b);
	}
	while ((b = SLIST_FIRST(&p->sfree)) != NULL) {
		SLIST_REMOVE_HEAD(&p->sfree, link);
		free(b);
	}
	p->nfree = p->nsfree = 0;
}

/*
 * The most recently returned spare of the size asked for (small or
 * not) if there is one (its memory is the likeliest to be in cache),
 * else a new buffer.  errno ENOMEM.
 */
static struct tk_buf *
buf_take(struct tk_bufpool *p, int small)
{
	struct tk_buflist	*fl = small ? &p->sfree : &p->free;
	size_t			*nf = small ? &p->nsfree : &p->nfree;
	size_t			 cap = small ? p->small : p->bufsize;
	size_t			 unit = sizeof(struct tk_buf) + cap;
	struct tk_buf		*b;

	if ((b = SLIST_FIRST(fl)) != NULL) {
		SLIST_REMOVE_HEAD(fl, link);
		(*nf)--;
	} else if ((b = malloc(unit)) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	SLIST_NEXT(b, link) = NULL;
	b->off = b->len = 0;
	b->cap = (uint32_t)cap;
	p->inuse++;
	if (small)
		p->sinuse++;
	/* Relaxed: a gauge, ordering nothing; read against a watermark. */
	if (p->held != NULL && atomic_fetch_add_explicit(p->held, unit,
	    memory_order_relaxed) + unit >= p->mark)
		p->alert = 1;
	return b;
}

struct tk_buf *
tk_buf_get(struct tk_bufpool *p)
{
	return buf_take(p, 0);
}

/* Keep b as a spare of its size up to its maxfree, free it beyond. */
void
tk_buf_put(struct tk_bufpool *p, struct tk_buf *b)
{
	int	small;

	assert(b != NULL && p->inuse > 0);
	small = b->cap != p->bufsize;
	p->inuse--;
	if (small)
		p->sinuse--;
	if (p->held != NULL)
		atomic_fetch_sub_explicit(p->held, sizeof(*b) + b->cap,
		    memory_order_relaxed);
	if (small && p->nsfree < p->maxsfree) {
		SLIST_INSERT_HEAD(&p->sfree, b, link);
		p->nsfree++;
	} else if (!small && p->nfree < p->maxfree) {
		SLIST_INSERT_HEAD(&p->free, b, link);
		p->nfree++;
	} else
		free(b);
}

/* Link b (not in any queue) at the tail of q; its bytes are not counted. */
static void
bufq_push(struct tk_bufq *q, struct tk_buf *b)
{
	if (q->tail == NULL)
		SLIST_INSERT_HEAD(&q->bufs, b, link);
	else
		SLIST_INSERT_AFTER(q->tail, b, link);
	q->tail = b;
}

/*
 * Fill the room left in the tail buffer, then fresh buffers.  All the
 * fresh buffers are taken before any byte is copied, so running out of
 * memory leaves the queue exactly as it was.  The room before a tail's
 * off is not reused: the tail is the buffer being written, and its head
 * is only consumed when it is also the head of the queue.
 */
int
tk_bufq_append(struct tk_bufq *q, struct tk_bufpool *p, const void *data,
    size_t n)
{
	const char	*src = data;
	struct tk_bufq	 fresh = TK_BUFQ_INITIALIZER;
	struct tk_buf	*b;
	size_t		 room = 0, need, k;
	int		 small;

	if (n == 0)
		return 0;
	if (q->tail != NULL)
		room = q->tail->cap - q->tail->len;
	if (n > room) {
		small = q->tail == NULL && n <= p->small;
		need = small ? 1 : (n - room + p->bufsize - 1) / p->bufsize;
		while (need-- > 0) {
			if ((b = buf_take(p, small)) == NULL) {
				tk_bufq_clear(&fresh, p);
				errno = ENOMEM;
				return -1;
			}
			bufq_push(&fresh, b);
		}
	}

	q->len += n;
	if (room > 0) {
		k = n < room ? n : room;
		memcpy(q->tail->data + q->tail->len, src, k);
		q->tail->len += k;
		src += k;
		n -= k;
	}
	while ((b = SLIST_FIRST(&fresh.bufs)) != NULL) {
		SLIST_REMOVE_HEAD(&fresh.bufs, link);
		k = n < b->cap ? n : b->cap;
		memcpy(b->data, src, k);
		b->len = k;
		src += k;
		n -= k;
		bufq_push(q, b);
	}
	assert(n == 0);
	return 0;
}

/* The queued bytes in order, one iovec per buffer, at most iovmax. */
int
tk_bufq_iov(const struct tk_bufq *q, struct iovec *iov, int iovmax)
{
	struct tk_buf	*b;
	int		 n = 0;

	SLIST_FOREACH(b, &q->bufs, link) {
		if (n == iovmax)
			break;
		iov[n].iov_base = b->data + b->off;
		iov[n].iov_len = b->len - b->off;
		n++;
	}
	return n;
}

/*
 * Drop n bytes from the head, as after a send of n.  Buffers that become
 * empty go back to the pool at once; no buffer in a queue is ever empty.
 */
void
tk_bufq_consume(struct tk_bufq *q, struct tk_bufpool *p, size_t n)
{
	struct tk_buf	*b;
	size_t		 avail;

	assert(n <= q->len);
	q->len -= n;
	while (n > 0) {
		b = SLIST_FIRST(&q->bufs);
		avail = b->len - b->off;
		if (n < avail) {
			b->off += n;
			break;
		}
		n -= avail;
		SLIST_REMOVE_HEAD(&q->bufs, link);
		tk_buf_put(p, b);
	}
	if (SLIST_EMPTY(&q->bufs))
		q->tail = NULL;
}

void
tk_bufq_clear(struct tk_bufq *q, struct tk_bufpool *p)
{
	struct tk_buf	*b;

	while ((b = SLIST_FIRST(&q->bufs)) != NULL) {
		SLIST_REMOVE_HEAD(&q->bufs, link);
		tk_buf_put(p, b);
	}
	q->tail = NULL;
	q->len = 0;
}
