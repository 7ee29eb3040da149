/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The select backend, level-triggered, for completeness and for the
 * benchmark.  An fd_set is a bitmap of FD_SETSIZE (1024 on glibc) bits and
 * FD_SET beyond it writes out of bounds (select(2), BUGS), so add()
 * refuses such fds with ERANGE instead.  The kernel scans 0..maxfd on every
 * call and so do we afterwards.  select reports no hang-up: a read that
 * returns 0 finds it.
 */
#include <sys/select.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/log.h"
#include "backend.h"

struct sl_state {
	fd_set		 rd;
	fd_set		 wr;
	fd_set		 rdout;
	fd_set		 wrout;
	int		 maxfd;		/* highest registered fd, or -1 */
	void		*udata[FD_SETSIZE];
	unsigned char	 regd[FD_SETSIZE];
};

static int
sl_init(struct tk_loop *l, int maxfds)
{
	struct sl_state	*sl;

	(void)maxfds;
	if ((sl = calloc(1, sizeof(*sl))) == NULL)
		return -1;
	FD_ZERO(&sl->rd);
	FD_ZERO(&sl->wr);
	sl->maxfd = -1;
	l->be = sl;
	return 0;
}

static void
sl_free(struct tk_loop *l)
{
	free(l->be);
	l->be = NULL;
}

static void
sl_set(struct sl_state *sl, int fd, unsigned int ev)
{
	if (ev & TK_EV_READ)
		FD_SET(fd, &sl->rd);
	else
		FD_CLR(fd, &sl->rd);
	if (ev & TK_EV_WRITE)
		FD_SET(fd, &sl->wr);
	else
		FD_CLR(fd, &sl->wr);
}

static int
sl_add(struct tk_loop *l, int fd, unsigned int ev, void *udata)
{
	struct sl_state	*sl = l->be;

	if (fd < 0) {
		errno = EBADF;
		return -1;
	}
	if (fd >= FD_SETSIZE) {
		errno = ERANGE;
		return -1;
	}
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

	if (fd < 0 || fd >= FD_SETSIZE || !sl->regd[fd]) {
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

	if (fd < 0 || fd >= FD_SETSIZE || !sl->regd[fd]) {
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

static int
sl_wait(struct tk_loop *l, struct tk_event *out, int nout, int64_t timeout)
{
	struct sl_state	*sl = l->be;
	struct timeval	 tv, *tvp = NULL;
	unsigned int	 ev;
	int		 n, fd, k = 0;

	if (timeout >= 0) {
		/* Microseconds, rounded up so as not to wake early. */
		timeout = (timeout + 999) / 1000;
		tv.tv_sec = timeout / 1000000;
		tv.tv_usec = timeout % 1000000;
		tvp = &tv;
	}
	memcpy(&sl->rdout, &sl->rd, sizeof(fd_set));
	memcpy(&sl->wrout, &sl->wr, sizeof(fd_set));
	n = select(sl->maxfd + 1, &sl->rdout, &sl->wrout, NULL, tvp);
	if (n == -1) {
		if (errno == EINTR)
			return 0;
		log_warn("select");
		abort();
	}
	for (fd = 0; fd <= sl->maxfd && n > 0 && k < nout; fd++) {
		ev = 0;
		if (FD_ISSET(fd, &sl->rdout)) {
			ev |= TK_EV_READ;
			n--;
		}
		if (FD_ISSET(fd, &sl->wrout)) {
			ev |= TK_EV_WRITE;
			n--;
		}
		if (ev == 0)
			continue;
		out[k].udata = sl->udata[fd];
		out[k].ev = ev;
		k++;
	}
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
