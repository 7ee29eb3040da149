/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The poll backend, level-triggered.  A dense pollfd array is what the
 * kernel scans on every call; slot[fd] finds an entry in O(1), and removal
 * moves the last entry into the hole, so add, mod and del are O(1) and
 * only the poll(2) call itself is O(n) in watched fds.  That linear cost
 * is what tenkbench shows against epoll.
 *
 * An fd that wants nothing stays in the array with a negated fd, which
 * poll(2) skips entirely, POLLHUP and POLLERR included: otherwise a hung
 * up peer that nobody is reading would make every poll return at once.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tenk/log.h"
#include "backend.h"

struct pl_state {
	struct pollfd	*pfd;
	void		**udata;
	int		 n;
	int		 cap;
	int		*slot;		/* fd -> index in pfd, or -1 */
	int		 nslot;
	int		 start;		/* where the next scan begins */
};

static short
pl_events(unsigned int ev)
{
	short	e = 0;

	if (ev & TK_EV_READ)
		e |= POLLIN | POLLRDHUP;
	if (ev & TK_EV_WRITE)
		e |= POLLOUT;
	return e;
}

/* Room in slot[] for fd, the new slots -1 (none). */
static int
pl_grow_slots(struct pl_state *pl, int fd)
{
	int	old = pl->nslot, i;

	if (array_grow(&pl->slot, &pl->nslot, 256, fd, INT_MAX,
	    sizeof(*pl->slot)) == -1)
		return -1;
	for (i = old; i < pl->nslot; i++)
		pl->slot[i] = -1;
	return 0;
}

/* Room for one more entry in the dense arrays. */
static int
pl_grow(struct pl_state *pl)
{
	int	n;

	if ((n = array_cap(pl->cap, 64, pl->n, INT_MAX)) == -1 ||
	    array_resize(&pl->pfd, pl->cap, n, sizeof(*pl->pfd)) == -1 ||
	    array_resize(&pl->udata, pl->cap, n, sizeof(*pl->udata)) == -1)
		return -1;
	pl->cap = n;
	return 0;
}

static int
pl_init(struct tk_loop *l, int maxfds)
{
	struct pl_state	*pl;

	(void)maxfds;
	if ((pl = calloc(1, sizeof(*pl))) == NULL)
		return -1;
	if (pl_grow(pl) == -1 || pl_grow_slots(pl, 0) == -1) {
		free(pl->pfd);
		free(pl->udata);
		free(pl->slot);
		free(pl);
		errno = ENOMEM;
		return -1;
	}
	l->be = pl;
	return 0;
}

static void
pl_free(struct tk_loop *l)
{
	struct pl_state	*pl = l->be;

	free(pl->pfd);
	free(pl->udata);
	free(pl->slot);
	free(pl);
	l->be = NULL;
}

static int
pl_add(struct tk_loop *l, int fd, unsigned int ev, void *udata)
{
	struct pl_state	*pl = l->be;
	short		 e = pl_events(ev);

	if (fd < 0) {
		errno = EBADF;
		return -1;
	}
	if (fd >= pl->nslot && pl_grow_slots(pl, fd) == -1)
		return -1;
	if (pl->slot[fd] != -1) {
		errno = EEXIST;
		return -1;
	}
	if (pl->n == pl->cap && pl_grow(pl) == -1)
		return -1;
	pl->pfd[pl->n].fd = e ? fd : ~fd;
	pl->pfd[pl->n].events = e;
	pl->pfd[pl->n].revents = 0;
	pl->udata[pl->n] = udata;
	pl->slot[fd] = pl->n++;
	return 0;
}

static int
pl_mod(struct tk_loop *l, int fd, unsigned int ev, void *udata)
{
	struct pl_state	*pl = l->be;
	short		 e = pl_events(ev);
	int		 i;

	if (fd < 0 || fd >= pl->nslot || (i = pl->slot[fd]) == -1) {
		errno = ENOENT;
		return -1;
	}
	pl->pfd[i].fd = e ? fd : ~fd;
	pl->pfd[i].events = e;
	pl->udata[i] = udata;
	return 0;
}

static int
pl_del(struct tk_loop *l, int fd)
{
	struct pl_state	*pl = l->be;
	int		 i, last, lfd;

	if (fd < 0 || fd >= pl->nslot || (i = pl->slot[fd]) == -1) {
		errno = ENOENT;
		return -1;
	}
	last = --pl->n;
	if (i != last) {
		pl->pfd[i] = pl->pfd[last];
		pl->udata[i] = pl->udata[last];
		lfd = pl->pfd[i].fd;
		if (lfd < 0)
			lfd = ~lfd;
		pl->slot[lfd] = i;
	}
	pl->slot[fd] = -1;
	return 0;
}

static int
pl_wait(struct tk_loop *l, struct tk_event *out, int nout, int64_t timeout)
{
	struct pl_state	*pl = l->be;
	struct timespec	 ts;
	short		 r;
	int		 n, i, j, k = 0;

	/* ppoll(2) takes a timespec: no rounding to milliseconds. */
	if (timeout >= 0) {
		ts.tv_sec = timeout / 1000000000;
		ts.tv_nsec = timeout % 1000000000;
	}
	n = ppoll(pl->pfd, pl->n, timeout >= 0 ? &ts : NULL, NULL);
	if (n == -1) {
		if (errno == EINTR)
			return 0;
		log_warn("poll");
		abort();
	}
	/*
	 * Scan until every ready entry is found.  When more are ready than
	 * fit in out[], the rest wait for the next call (level triggering
	 * reports them again), and that call starts where this one stopped,
	 * so entries late in the array cannot be starved.
	 */
	/* Removals since the last call may have shrunk the array. */
	if (pl->start >= pl->n)
		pl->start = 0;
	for (j = 0; j < pl->n && n > 0 && k < nout; j++) {
		i = pl->start + j;
		if (i >= pl->n)
			i -= pl->n;
		if ((r = pl->pfd[i].revents) == 0)
			continue;
		n--;
		out[k].udata = pl->udata[i];
		out[k].ev = backend_poll_events((unsigned short)r);
		k++;
	}
	pl->start = k == nout && pl->n > 0 ? (pl->start + j) % pl->n : 0;
	return k;
}

const struct tk_backend tk_backend_poll = {
	.name = "poll",
	.flags = 0,
	.init = pl_init,
	.free = pl_free,
	.add = pl_add,
	.mod = pl_mod,
	.del = pl_del,
	.wait = pl_wait,
};
