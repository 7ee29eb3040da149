/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The buffer pool and byte queues: random appends and consumes across
 * buffer boundaries checked byte for byte against a flat reference, pool
 * accounting (inuse back to 0, maxfree honoured, newest spare reused
 * first), the bytes held counted across pools sharing one gauge, a
 * zeroed queue taken as empty, iovec limits, and an append that runs out
 * of memory leaving the queue (and the gauge) as it was.
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/buf.h"
#include "../t.h"

/*
 * The queue's iovecs must spell out exactly the reference bytes (up to
 * iovmax buffers), none of them empty, each within one buffer.
 * Returns the number of buffers in the queue.
 */
static size_t
check_queue(const struct tk_bufq *q, const struct tk_bufpool *p,
    const unsigned char *ref, size_t reflen, int iovmax)
{
	struct iovec	 iov[64];
	size_t		 off = 0, nbuf = 0;
	struct tk_buf	*b;
	int		 n, i;

	T_UEQ(q->len, reflen);
	/* All of it, straight from the buffers. */
	SLIST_FOREACH(b, &q->bufs, link) {
		nbuf++;
		T_LT(b->off, b->len);
		T_LE(b->len, p->bufsize);
		T_LE(off + (b->len - b->off), reflen);
		if (memcmp(b->data + b->off, ref + off, b->len - b->off) != 0)
			T_FAIL("buffer %zu at byte %zu differs", nbuf, off);
		off += b->len - b->off;
		if (SLIST_NEXT(b, link) == NULL)
			T_OK(b == q->tail);
	}
	T_UEQ(off, reflen);
	off = 0;
	if (reflen == 0) {
		T_OK(SLIST_EMPTY(&q->bufs) && q->tail == NULL);
		T_EQ(tk_bufq_iov(q, iov, iovmax), 0);
		return 0;
	}
	n = tk_bufq_iov(q, iov, iovmax);
	T_EQ(n, nbuf < (size_t)iovmax ? (int)nbuf : iovmax);
	for (i = 0; i < n; i++) {
		T_GT(iov[i].iov_len, 0);
		T_LE(iov[i].iov_len, p->bufsize);
		T_LE(off + iov[i].iov_len, reflen);
		if (memcmp(iov[i].iov_base, ref + off, iov[i].iov_len) != 0)
			T_FAIL("iov %d at byte %zu differs", i, off);
		off += iov[i].iov_len;
	}
	if (n == (int)nbuf)
		T_UEQ(off, reflen);
	return nbuf;
}

static void
queue_random(size_t bufsize, size_t maxfree, size_t small, int rounds)
{
	struct tk_bufpool	 p;
	struct tk_bufq		 q = TK_BUFQ_INITIALIZER;
	unsigned char		*ref, data[1000];
	size_t			 reflen = 0, refcap = 1 << 20, n, i, nbuf;
	int			 r, iovmax;

	tk_bufpool_init(&p, bufsize, maxfree);
	if (small > 0)
		tk_bufpool_small(&p, small, maxfree);
	T_PTR(ref = malloc(refcap));
	for (r = 0; r < rounds; r++) {
		switch (t_rand() % 8) {
		case 0:
		case 1:
		case 2:
		case 3:
			/* Short appends mostly, now and then long ones. */
			n = t_rand() % (t_rand() % 4 == 0 ? sizeof(data) : 3 *
			    bufsize + 1);
			if (n > sizeof(data))
				n = sizeof(data);
			if (reflen + n > refcap)
				break;
			for (i = 0; i < n; i++)
				data[i] = (unsigned char)t_rand();
			T_EQ(tk_bufq_append(&q, &p, data, n), 0);
			memcpy(ref + reflen, data, n);
			reflen += n;
			break;
		case 4:
		case 5:
		case 6:
			/* As after a partial send: any prefix. */
			n = reflen == 0 ? 0 : t_rand() % (reflen + 1);
			if (t_rand() % 4 == 0)
				n = reflen;
			tk_bufq_consume(&q, &p, n);
			memmove(ref, ref + n, reflen - n);
			reflen -= n;
			break;
		case 7:
			if (t_rand() % 16 == 0) {
				tk_bufq_clear(&q, &p);
				reflen = 0;
			}
			break;
		}
		iovmax = 1 + (int)(t_rand() % 64);
		nbuf = check_queue(&q, &p, ref, reflen, iovmax);
		/* Queued buffers are the ones handed out; spares capped. */
		T_UEQ(p.inuse, nbuf);
		T_LE(p.nfree, maxfree);
		T_LE(p.nsfree, maxfree);
	}
	tk_bufq_clear(&q, &p);
	T_UEQ(q.len, 0);
	T_OK(SLIST_EMPTY(&q.bufs) && q.tail == NULL);
	T_UEQ(p.inuse, 0);
	T_LE(p.nfree, maxfree);
	tk_bufpool_drain(&p);
	T_UEQ(p.nfree, 0);
	T_OK(SLIST_EMPTY(&p.free));
	T_OK(SLIST_EMPTY(&p.sfree));
	free(ref);
}

/* queue_random with small buffers too: their sizes below and above. */
static void
queue_random_small(void)
{
	queue_random(64, 4, 7, 50000);
	queue_random(4096, 16, 480, 20000);
}

TEST(buf_queue_random)
{
	/* Tiny buffers make every operation cross boundaries. */
	queue_random(7, 4, 0, 100000);
	queue_random(64, 0, 0, 50000);
	queue_random(4096, 16, 0, 20000);
	queue_random(1, 2, 0, 20000);
}

/*
 * The small class: an empty queue given few bytes takes a small buffer,
 * whose room is used before full ones follow; each kind goes back to
 * its own spares, and held counts each at its own size.  Random use
 * keeps every byte in order.
 */
TEST(buf_small)
{
	struct tk_bufpool	 p;
	struct tk_bufq		 q = TK_BUFQ_INITIALIZER;
	struct iovec		 iov[4];
	atomic_size_t		 held;
	char			 data[300];
	size_t			 i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (char)i;
	atomic_init(&held, 0);
	tk_bufpool_init(&p, 100, 4);
	tk_bufpool_small(&p, 10, 1);
	tk_bufpool_account(&p, &held, SIZE_MAX);
	T_EQ(tk_bufq_append(&q, &p, data, 8), 0);
	T_UEQ(p.inuse, 1);
	T_UEQ(p.sinuse, 1);
	T_UEQ(q.tail->cap, 10);
	T_UEQ(tk_bufpool_held(&p), sizeof(struct tk_buf) + 10);
	T_UEQ(atomic_load(&held), sizeof(struct tk_buf) + 10);
	/* Its room first, then a full buffer. */
	T_EQ(tk_bufq_append(&q, &p, data + 8, 5), 0);
	T_UEQ(p.inuse, 2);
	T_UEQ(p.sinuse, 1);
	T_EQ(tk_bufq_iov(&q, iov, 4), 2);
	T_UEQ(iov[0].iov_len, 10);
	T_UEQ(iov[1].iov_len, 3);
	T_OK(memcmp(iov[0].iov_base, data, 10) == 0);
	T_OK(memcmp(iov[1].iov_base, data + 10, 3) == 0);
	T_UEQ(tk_bufpool_held(&p), 2 * sizeof(struct tk_buf) + 110);
	tk_bufq_consume(&q, &p, 10);
	T_UEQ(p.nsfree, 1);
	T_UEQ(p.nfree, 0);
	T_UEQ(p.sinuse, 0);
	T_UEQ(atomic_load(&held), p.unit);
	/* Not empty: no small buffer, even for one byte. */
	T_EQ(tk_bufq_append(&q, &p, data, 1), 0);
	T_UEQ(p.sinuse, 0);
	tk_bufq_clear(&q, &p);
	T_UEQ(p.nfree, 1);
	/* More than the small size: full buffers only. */
	T_EQ(tk_bufq_append(&q, &p, data, 11), 0);
	T_UEQ(p.sinuse, 0);
	T_UEQ(q.tail->cap, 100);
	tk_bufq_clear(&q, &p);
	/* Two small spares returned, one kept (maxfree 1), the spare reused. */
	T_EQ(tk_bufq_append(&q, &p, data, 3), 0);
	{
		struct tk_bufq	q2 = TK_BUFQ_INITIALIZER;

		T_EQ(tk_bufq_append(&q2, &p, data, 3), 0);
		T_UEQ(p.sinuse, 2);
		T_UEQ(p.nsfree, 0);
		tk_bufq_clear(&q2, &p);
	}
	tk_bufq_clear(&q, &p);
	T_UEQ(p.nsfree, 1);
	T_UEQ(p.inuse, 0);
	T_UEQ(atomic_load(&held), 0);
	tk_bufpool_drain(&p);
	T_UEQ(p.nsfree, 0);
	T_OK(SLIST_EMPTY(&p.sfree));
	queue_random_small();
}

TEST(buf_pool)
{
	struct tk_bufpool	 p;
	struct tk_buf		*b[10], *again;
	int			 i;

	tk_bufpool_init(&p, 100, 4);
	for (i = 0; i < 10; i++) {
		T_PTR(b[i] = tk_buf_get(&p));
		T_UEQ(b[i]->off, 0);
		T_UEQ(b[i]->len, 0);
		T_OK(SLIST_NEXT(b[i], link) == NULL);
		memset(b[i]->data, 'a' + i, 100);	/* all 100 are ours */
	}
	T_UEQ(p.inuse, 10);
	T_UEQ(p.nfree, 0);
	for (i = 0; i < 10; i++) {
		b[i]->off = 3;
		b[i]->len = 50;
		tk_buf_put(&p, b[i]);
		T_UEQ(p.inuse, 9 - i);
		T_UEQ(p.nfree, i < 4 ? i + 1 : 4);
	}
	/* A spare comes back first, reset. */
	T_PTR(again = tk_buf_get(&p));
	T_OK(again == b[3]);
	T_UEQ(again->off, 0);
	T_UEQ(again->len, 0);
	T_OK(SLIST_NEXT(again, link) == NULL);
	T_UEQ(p.nfree, 3);
	T_UEQ(p.inuse, 1);
	tk_buf_put(&p, again);
	tk_bufpool_drain(&p);
	T_UEQ(p.nfree, 0);
	T_UEQ(p.inuse, 0);
	T_OK(SLIST_EMPTY(&p.free));
	/* A drained pool still works. */
	T_PTR(again = tk_buf_get(&p));
	tk_buf_put(&p, again);
	tk_bufpool_drain(&p);

	/* maxfree 0 keeps nothing. */
	tk_bufpool_init(&p, 8, 0);
	T_PTR(again = tk_buf_get(&p));
	tk_buf_put(&p, again);
	T_UEQ(p.nfree, 0);
	T_OK(SLIST_EMPTY(&p.free));
}

/*
 * Two pools (two threads in tenkd) sharing one gauge: it counts every
 * buffer handed out at its full cost, spares not at all, and a take that
 * reaches the mark raises that pool's alert only.
 */
TEST(buf_pool_account)
{
	struct tk_bufpool	 a, b;
	struct tk_bufq		 qa = TK_BUFQ_INITIALIZER;
	struct tk_bufq		 qb = TK_BUFQ_INITIALIZER;
	atomic_size_t		 held;
	char			 data[1000];
	size_t			 unit;

	memset(data, 'm', sizeof(data));
	atomic_init(&held, 0);
	tk_bufpool_init(&a, 100, 4);
	tk_bufpool_init(&b, 100, 4);
	unit = a.unit;
	T_UEQ(unit, sizeof(struct tk_buf) + 100);
	tk_bufpool_account(&a, &held, 12 * unit);
	tk_bufpool_account(&b, &held, 12 * unit);

	T_EQ(tk_bufq_append(&qa, &a, data, 550), 0);	/* 6 buffers */
	T_UEQ(atomic_load(&held), 6 * unit);
	T_EQ(tk_bufq_append(&qb, &b, data, 500), 0);	/* 5 more */
	T_UEQ(atomic_load(&held), 11 * unit);
	T_EQ(a.alert, 0);
	T_EQ(b.alert, 0);
	/* The tail's room first: no buffer, no change. */
	T_EQ(tk_bufq_append(&qa, &a, data, 50), 0);
	T_UEQ(atomic_load(&held), 11 * unit);
	T_EQ(tk_bufq_append(&qa, &a, data, 1), 0);	/* the 12th */
	T_UEQ(atomic_load(&held), 12 * unit);
	T_EQ(a.alert, 1);
	T_EQ(b.alert, 0);

	/* Returned buffers leave the gauge, spares or not. */
	tk_bufq_consume(&qa, &a, 300);
	T_UEQ(atomic_load(&held), 9 * unit);
	T_UEQ(a.nfree, 3);
	tk_bufq_clear(&qb, &b);
	T_UEQ(atomic_load(&held), 4 * unit);
	tk_bufq_clear(&qa, &a);
	T_UEQ(atomic_load(&held), 0);
	T_UEQ(a.inuse + b.inuse, 0);

	/* Spares handed out again are counted again. */
	a.alert = 0;
	T_EQ(tk_bufq_append(&qa, &a, data, 400), 0);
	T_UEQ(atomic_load(&held), 4 * unit);
	T_EQ(a.alert, 0);
	tk_bufq_clear(&qa, &a);
	T_UEQ(atomic_load(&held), 0);
	tk_bufpool_drain(&a);
	tk_bufpool_drain(&b);
}

/*
 * The free list is a stack: spares come back most recently returned
 * first, whose memory is the likeliest to be in cache.  Every spare is
 * handed out once before the pool allocates again.
 */
TEST(buf_pool_reuse_order)
{
	struct tk_bufpool	 p;
	struct tk_buf		*b[5], *again[5], *fresh;
	int			 i;

	tk_bufpool_init(&p, 16, 5);
	for (i = 0; i < 5; i++)
		T_PTR(b[i] = tk_buf_get(&p));
	for (i = 0; i < 5; i++)
		tk_buf_put(&p, b[i]);
	T_UEQ(p.nfree, 5);
	for (i = 0; i < 5; i++) {
		T_PTR(again[i] = tk_buf_get(&p));
		T_OK(again[i] == b[4 - i]);
		T_OK(SLIST_NEXT(again[i], link) == NULL);
	}
	T_UEQ(p.nfree, 0);
	T_OK(SLIST_EMPTY(&p.free));
	T_PTR(fresh = tk_buf_get(&p));
	for (i = 0; i < 5; i++)
		T_OK(fresh != b[i]);
	tk_buf_put(&p, fresh);
	for (i = 0; i < 5; i++)
		tk_buf_put(&p, again[i]);
	T_UEQ(p.inuse, 0);
	tk_bufpool_drain(&p);
}

/*
 * A queue of all zeroes is an empty queue (tenkd's connections are
 * calloc'd with theirs inside), and a queue emptied by consume or clear
 * takes appends again.
 */
TEST(buf_queue_zeroed)
{
	struct tk_bufpool	 p;
	struct tk_bufq		*q;
	struct iovec		 iov[4];
	int			 round;

	tk_bufpool_init(&p, 4, 2);
	T_PTR(q = calloc(1, sizeof(*q)));
	T_EQ(tk_bufq_iov(q, iov, 4), 0);
	for (round = 0; round < 3; round++) {
		T_EQ(tk_bufq_append(q, &p, "abcdefghij", 10), 0);
		T_UEQ(q->len, 10);
		T_EQ(tk_bufq_iov(q, iov, 4), 3);
		T_OK(memcmp(iov[2].iov_base, "ij", 2) == 0);
		T_UEQ(p.inuse, 3);
		if (round == 1)
			tk_bufq_clear(q, &p);
		else
			tk_bufq_consume(q, &p, 10);
		T_UEQ(q->len, 0);
		T_OK(SLIST_EMPTY(&q->bufs) && q->tail == NULL);
		T_UEQ(p.inuse, 0);
	}
	free(q);
	tk_bufpool_drain(&p);
}

TEST(buf_iov_limits)
{
	struct tk_bufpool	 p;
	struct tk_bufq		 q = TK_BUFQ_INITIALIZER;
	struct iovec		 iov[4];
	char			 data[100];

	memset(data, 'x', sizeof(data));
	tk_bufpool_init(&p, 10, 8);
	T_EQ(tk_bufq_iov(&q, iov, 4), 0);
	T_EQ(tk_bufq_append(&q, &p, data, 0), 0);
	T_OK(SLIST_EMPTY(&q.bufs));
	T_UEQ(p.inuse, 0);

	/* 95 bytes: nine full buffers and one of 5. */
	T_EQ(tk_bufq_append(&q, &p, data, 95), 0);
	T_UEQ(p.inuse, 10);
	T_EQ(tk_bufq_iov(&q, iov, 4), 4);
	T_EQ(tk_bufq_iov(&q, iov, 1), 1);
	T_UEQ(iov[0].iov_len, 10);
	T_EQ(tk_bufq_iov(&q, iov, 0), 0);
	/* The tail's free room is used before a new buffer is taken. */
	T_EQ(tk_bufq_append(&q, &p, data, 5), 0);
	T_UEQ(p.inuse, 10);
	T_EQ(tk_bufq_append(&q, &p, data, 1), 0);
	T_UEQ(p.inuse, 11);
	/* Consuming into the middle of a buffer keeps it; the rest return. */
	tk_bufq_consume(&q, &p, 25);
	T_UEQ(p.inuse, 9);
	T_UEQ(q.len, 76);
	T_EQ(tk_bufq_iov(&q, iov, 1), 1);
	T_UEQ(iov[0].iov_len, 5);
	tk_bufq_consume(&q, &p, 0);
	T_UEQ(q.len, 76);
	tk_bufq_consume(&q, &p, 76);
	T_UEQ(p.inuse, 0);
	T_OK(SLIST_EMPTY(&q.bufs) && q.tail == NULL);
	T_UEQ(p.nfree, 8);
	tk_bufq_clear(&q, &p);
	tk_bufpool_drain(&p);
}

/*
 * Out of memory half way through an append: cap the address space just
 * above what the first of three big buffers needs.  The queue and the
 * pool must be as before.  Sanitizers and valgrind manage memory their
 * own way, so the test is skipped under them.
 */
TEST(buf_append_enomem)
{
	struct tk_bufpool	 p;
	struct tk_bufq		 q = TK_BUFQ_INITIALIZER;
	struct rlimit		 rl;
	atomic_size_t		 held;
	const size_t		 big = 64 << 20;
	unsigned char		*src;
	struct iovec		 iov[4];
	FILE			*f;
	unsigned long		 pages;
	long			 pagesz;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	T_SKIP("address space limits do not mix with sanitizers");
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
	T_SKIP("address space limits do not mix with sanitizers");
#endif
#endif
	if (getenv("TK_VALGRIND") != NULL)
		T_SKIP("address space limits do not mix with valgrind");

	tk_bufpool_init(&p, big, 0);
	atomic_init(&held, 0);
	tk_bufpool_account(&p, &held, SIZE_MAX);
	/* Read-only zero pages: the source costs address space only. */
	src = mmap(NULL, 3 * big, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
	    MAP_NORESERVE, -1, 0);
	T_OK(src != MAP_FAILED);
	T_EQ(tk_bufq_append(&q, &p, "hello", 5), 0);
	T_UEQ(p.inuse, 1);

	T_PTR(f = fopen("/proc/self/statm", "r"));
	T_EQ(fscanf(f, "%lu", &pages), 1);
	fclose(f);
	pagesz = sysconf(_SC_PAGESIZE);
	rl.rlim_cur = rl.rlim_max = pages * pagesz + big + (big / 2);
	T_SYS(setrlimit(RLIMIT_AS, &rl));

	/* Needs three more buffers (the tail has room for big - 5). */
	errno = 0;
	T_EQ(tk_bufq_append(&q, &p, src, 3 * big), -1);
	T_EQ(errno, ENOMEM);
	T_UEQ(q.len, 5);
	T_UEQ(p.inuse, 1);
	T_UEQ(atomic_load(&held), p.unit);
	T_OK(SLIST_FIRST(&q.bufs) == q.tail && q.tail != NULL);
	T_EQ(tk_bufq_iov(&q, iov, 4), 1);
	T_UEQ(iov[0].iov_len, 5);
	T_OK(memcmp(iov[0].iov_base, "hello", 5) == 0);
	/* Small appends still work. */
	T_EQ(tk_bufq_append(&q, &p, " world", 6), 0);
	T_UEQ(q.len, 11);
	tk_bufq_clear(&q, &p);
	T_UEQ(p.inuse, 0);
	T_UEQ(atomic_load(&held), 0);
	munmap(src, 3 * big);
}
