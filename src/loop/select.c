/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The select backend, level-triggered, for completeness and for the
 * benchmark.  An fd_set is a bitmap of FD_SETSIZE (1024 on glibc) bits
 * and FD_SET beyond it writes out of bounds (select(2), BUGS; with
 * _FORTIFY_SOURCE it aborts), but the kernel itself takes a bitmap of any
 * length: select(2) reads nfds bits, clipping nfds to the size of the
 * process's fd table (fs/select.c core_sys_select), so no open fd is ever
 * refused.  The sets here are therefore arrays of fd_mask sized at run
 * time and grown to the highest fd registered, with the bits set by hand,
 * as libevent's select.c does.  The kernel scans 0..maxfd on every call
 * and so do we afterwards, a word at a time.  select reports no hang-up:
 * a read that returns 0 finds it.
 */
#include <sys/select.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/log.h"
#include "backend.h"

#define SL_WORDS(n)	(((n) + NFDBITS - 1) / NFDBITS)
/* Unsigned: 1 << 63 in a signed long is undefined. */
#define SL_BIT(fd)	((fd_mask)(1UL << ((fd) % NFDBITS)))

/* The four fd sets, cap bits each, grown and freed together. */
enum {
	SL_RD = 0,			/* interest */
	SL_WR,
	SL_RDOUT,			/* what select(2) returned */
	SL_WROUT,
	SL_NSET
};

struct sl_state {
	fd_mask		*set[SL_NSET];
	void		**udata;	/* fd -> pointer given to add() */
	unsigned char	*regd;		/* fd -> registered */
	int		 cap;		/* fds the arrays hold, NFDBITS * k */
	int		 maxfd;		/* highest registered fd, or -1 */
	int		 start;		/* word the next scan begins at */
};

/*
 * Make room for fd in every array, doubling, never below FD_SETSIZE;
 * new bits and slots are zero.  Returns 0, or -1 with errno ENOMEM and
 * the old arrays intact (each one grown so far stays valid and bigger).
 */
static int
sl_grow(struct sl_state *sl, int fd)
{
	int	cap, i;

	if ((cap = array_cap(sl->cap, FD_SETSIZE, fd, 1 << 30)) == -1)
		return -1;
	for (i = 0; i < SL_NSET; i++)
		if (array_resize(&sl->set[i], SL_WORDS(sl->cap),
		    SL_WORDS(cap), sizeof(fd_mask)) == -1)
			return -1;
	if (array_resize(&sl->udata, sl->cap, cap, sizeof(*sl->udata)) ==
	    -1 || array_resize(&sl->regd, sl->cap, cap, 1) == -1)
		return -1;
	sl->cap = cap;
	return 0;
}

static void	sl_free(struct tk_loop *);

static int
sl_init(struct tk_loop *l, int maxfds)
{
	struct sl_state	*sl;

	if ((sl = calloc(1, sizeof(*sl))) == NULL)
		return -1;
	(void)maxfds;
	sl->maxfd = -1;
	/* FD_SETSIZE bits to begin with, grown by add() as fds come. */
	l->be = sl;
	if (sl_grow(sl, 0) == -1) {
		sl_free(l);
		return -1;
	}
	return 0;
}

static void
sl_free(struct tk_loop *l)
{
	struct sl_state	*sl = l->be;
	int		 i;

	for (i = 0; i < SL_NSET; i++)
		free(sl->set[i]);
	free(sl->udata);
	free(sl->regd);
	free(sl);
	l->be = NULL;
}

static void
sl_set(struct sl_state *sl, int fd, unsigned int ev)
{
	int	w = fd / NFDBITS;

	if (ev & TK_EV_READ)
		sl->set[SL_RD][w] |= SL_BIT(fd);
	else
		sl->set[SL_RD][w] &= ~SL_BIT(fd);
	if (ev & TK_EV_WRITE)
		sl->set[SL_WR][w] |= SL_BIT(fd);
	else
		sl->set[SL_WR][w] &= ~SL_BIT(fd);
}

static int
sl_add(struct tk_loop *l, int fd, unsigned int ev, void *udata)
{
	struct sl_state	*sl = l->be;

	if (fd < 0) {
		errno = EBADF;
		return -1;
	}
	if (fd >= sl->cap && sl_grow(sl, fd) == -1)
		return -1;
	if (sl->regd[fd]) {
		errno = EEXIST;
		return -1;
	}
	sl->regd[fd] = 1;
	sl->udata[fd] = udata;
	sl_set(sl, fd, ev);
	if (fd > sl->maxfd)
		sl->maxfd = fd;
	return 0;
}

static int
sl_mod(struct tk_loop *l, int fd, unsigned int ev, void *udata)
{
	struct sl_state	*sl = l->be;

	if (fd < 0 || fd >= sl->cap || !sl->regd[fd]) {
		errno = ENOENT;
		return -1;
	}
	sl->udata[fd] = udata;
	sl_set(sl, fd, ev);
	return 0;
}

static int
sl_del(struct tk_loop *l, int fd)
{
	struct sl_state	*sl = l->be;

	if (fd < 0 || fd >= sl->cap || !sl->regd[fd]) {
		errno = ENOENT;
		return -1;
	}
	sl->regd[fd] = 0;
	sl->udata[fd] = NULL;
	sl_set(sl, fd, 0);
	while (sl->maxfd >= 0 && !sl->regd[sl->maxfd])
		sl->maxfd--;
	return 0;
}

/*
 * Report the ready fds of one word of the output sets; returns the new
 * count of events in out.
 */
static int
sl_word(struct sl_state *sl, int w, struct tk_event *out, int k, int nout)
{
	unsigned long	 r = (unsigned long)sl->set[SL_RDOUT][w];
	unsigned long	 x = (unsigned long)sl->set[SL_WROUT][w], b;
	unsigned int	 ev;
	int		 i, fd;

	for (i = 0; i < NFDBITS && (r | x) != 0 && k < nout; i++) {
		b = 1UL << i;
		if (((r | x) & b) == 0)
			continue;
		fd = w * NFDBITS + i;
		ev = 0;
		if (r & b)
			ev |= TK_EV_READ;
		if (x & b)
			ev |= TK_EV_WRITE;
		r &= ~b;
		x &= ~b;
		out[k].udata = sl->udata[fd];
		out[k].ev = ev;
		k++;
	}
	return k;
}

static int
sl_wait(struct tk_loop *l, struct tk_event *out, int nout, int64_t timeout)
{
	struct sl_state	*sl = l->be;
	struct timeval	 tv, *tvp = NULL;
	size_t		 len;
	int		 n, i, w, nw, k = 0;

	if (timeout >= 0) {
		/* Microseconds, rounded up so as not to wake early. */
		timeout = (timeout + 999) / 1000;
		tv.tv_sec = timeout / 1000000;
		tv.tv_usec = timeout % 1000000;
		tvp = &tv;
	}
	nw = SL_WORDS(sl->maxfd + 1);
	len = (size_t)nw * sizeof(fd_mask);
	if (nw > 0) {
		memcpy(sl->set[SL_RDOUT], sl->set[SL_RD], len);
		memcpy(sl->set[SL_WROUT], sl->set[SL_WR], len);
	}
	/* The kernel reads and writes only the nfds bits of each set. */
	n = select(sl->maxfd + 1, (fd_set *)(void *)sl->set[SL_RDOUT],
	    (fd_set *)(void *)sl->set[SL_WROUT], NULL, tvp);
	if (n == -1) {
		if (errno == EINTR)
			return 0;
		log_warn("select");
		abort();
	}
	if (n == 0 || nw == 0)
		return 0;
	/*
	 * With more ready fds than room in out, the next scan starts where
	 * this one stopped, so high fds are not starved by low ones.
	 */
	if (sl->start >= nw)
		sl->start = 0;
	for (i = 0; i < nw && k < nout; i++) {
		w = (sl->start + i) % nw;
		k = sl_word(sl, w, out, k, nout);
	}
	if (k == nout)
		sl->start = (sl->start + i - 1) % nw;
	return k;
}

const struct tk_backend tk_backend_select = {
	.name = "select",
	.flags = 0,
	.init = sl_init,
	.free = sl_free,
	.add = sl_add,
	.mod = sl_mod,
	.del = sl_del,
	.wait = sl_wait,
};
