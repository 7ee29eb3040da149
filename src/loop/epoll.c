/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The epoll backend, edge-triggered.  Every fd is registered once for
 * both directions with EPOLLET and EPOLLRDHUP; the loop keeps readiness in
 * user space, so mod() is a no-op and an echoed message costs no
 * epoll_ctl.  A direction is reported again only after it went not-ready
 * (EAGAIN) and back (epoll(7), "edge-triggered").  ERR and HUP are passed
 * up as readable and writable so that the next read or write meets them.
 */
#include <sys/epoll.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tenk/log.h"
#include "backend.h"

/*
 * epoll's event bits have poll(2)'s values (epoll_ctl(2)), so one
 * reading of them, backend.h's, serves both; epoll never sets POLLNVAL.
 */
_Static_assert(EPOLLIN == POLLIN && EPOLLOUT == POLLOUT &&
    EPOLLRDHUP == POLLRDHUP && EPOLLHUP == POLLHUP && EPOLLERR == POLLERR,
    "epoll's event bits are poll's");

struct ep_state {
	int			 epfd;
	int			 nevs;
	struct epoll_event	*evs;
};

static int
ep_init(struct tk_loop *l, int maxfds)
{
	struct ep_state	*ep;

	(void)maxfds;
	if ((ep = calloc(1, sizeof(*ep))) == NULL)
		return -1;
	ep->nevs = 1024;
	if ((ep->evs = calloc(ep->nevs, sizeof(*ep->evs))) == NULL)
		goto fail;
	if ((ep->epfd = epoll_create1(EPOLL_CLOEXEC)) == -1)
		goto fail;
	l->be = ep;
	return 0;
 fail:
	free(ep->evs);
	free(ep);
	return -1;
}

static void
ep_free(struct tk_loop *l)
{
	struct ep_state	*ep = l->be;

	close(ep->epfd);
	free(ep->evs);
	free(ep);
	l->be = NULL;
}

static int
ep_add(struct tk_loop *l, int fd, unsigned int ev, void *udata)
{
	struct ep_state		*ep = l->be;
	struct epoll_event	 e;

	(void)ev;
	e.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
	e.data.ptr = udata;
	return epoll_ctl(ep->epfd, EPOLL_CTL_ADD, fd, &e);
}

static int
ep_del(struct tk_loop *l, int fd)
{
	struct ep_state	*ep = l->be;

	/* Kernels before 2.6.9 wanted a non-NULL event here. */
	return epoll_ctl(ep->epfd, EPOLL_CTL_DEL, fd, NULL);
}

/*
 * epoll_wait(2) counts in milliseconds, which makes every timer up to a
 * millisecond late; epoll_pwait2(2) (Linux 5.11, glibc 2.35) takes a
 * timespec.  Where the kernel lacks it (ENOSYS) we fall back for good and
 * round up to whole milliseconds.
 */
static int	ep_have_pwait2 = 1;

static int
ep_epoll_wait(struct ep_state *ep, int nout, int64_t timeout)
{
	struct timespec	ts;
	int64_t		ms;
	int		n;

	if (timeout > 0 && ep_have_pwait2) {
		ts.tv_sec = timeout / 1000000000;
		ts.tv_nsec = timeout % 1000000000;
		n = epoll_pwait2(ep->epfd, ep->evs, nout, &ts, NULL);
		if (n != -1 || errno != ENOSYS)
			return n;
		ep_have_pwait2 = 0;
	}
	ms = timeout <= 0 ? timeout : (timeout + 999999) / 1000000;
	if (ms > INT_MAX)
		ms = INT_MAX;
	return epoll_wait(ep->epfd, ep->evs, nout, (int)ms);
}

static int
ep_wait(struct tk_loop *l, struct tk_event *out, int nout, int64_t timeout)
{
	struct ep_state	*ep = l->be;
	int		 n, i;

	if (nout > ep->nevs) {
		struct epoll_event *evs;

		evs = reallocarray(ep->evs, nout, sizeof(*evs));
		if (evs != NULL) {
			ep->evs = evs;
			ep->nevs = nout;
		}
	}
	if (nout > ep->nevs)
		nout = ep->nevs;
	n = ep_epoll_wait(ep, nout, timeout);
	if (n == -1) {
		if (errno == EINTR)
			return 0;
		log_warn("epoll_wait");
		abort();
	}
	for (i = 0; i < n; i++) {
		out[i].udata = ep->evs[i].data.ptr;
		out[i].ev = backend_poll_events(ep->evs[i].events);
	}
	return n;
}

const struct tk_backend tk_backend_epoll = {
	.name = "epoll",
	.flags = TK_BE_EDGE,
	.init = ep_init,
	.free = ep_free,
	.add = ep_add,
	.del = ep_del,
	.wait = ep_wait,
};
