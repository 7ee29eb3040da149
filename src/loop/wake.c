/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Cross-thread wake-ups: an eventfd (a pipe where eventfd is missing)
 * watched by the loop, and a mutex-guarded FIFO of posted closures.
 *
 * wakepending says a wake-up is already on its way, so a burst of posts
 * costs one write(2) and one read(2) rather than one each.  The loop clears
 * the flag before it takes the queue: a post that lands after the take
 * finds the flag clear and writes again, so no post is left waiting for a
 * wake-up that already happened.
 * XXX A lock-free MPSC list would spare the mutex; with posts coming a few
 * per connection lifetime, not per message, the mutex is not measurable.
 */
#ifdef __linux__
#include <sys/eventfd.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "tenk/log.h"
#include "backend.h"

static void
wake_drain(struct tk_loop *l)
{
	uint64_t	buf[16];
	ssize_t		n;

	for (;;) {
		n = read(l->wfd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		/* An eventfd read resets the counter: one read drains it. */
		if (n == -1 || l->wfd == l->wfd_w || (size_t)n < sizeof(buf))
			break;
	}
}

static void
wake_io(struct tk_loop *l, struct tk_io *io)
{
	struct tk_msgq	 batch = STAILQ_HEAD_INITIALIZER(batch);
	struct tk_msg	*m, *next;

	tk_io_block(io, TK_EV_READ);
	wake_drain(l);
	atomic_store(&l->wakepending, 0);

	/* Take the whole queue; a message posted meanwhile waits its turn. */
	pthread_mutex_lock(&l->mqlock);
	STAILQ_CONCAT(&batch, &l->mq);
	pthread_mutex_unlock(&l->mqlock);

	/* _SAFE: fn may free m, or post it again. */
	STAILQ_FOREACH_SAFE(m, &batch, link, next)
		m->fn(l, m);
}

int
wake_init(struct tk_loop *l)
{
	int	p[2];

#ifdef __linux__
	l->wfd = l->wfd_w = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
#endif
	if (l->wfd == -1) {
		if (pipe2(p, O_NONBLOCK | O_CLOEXEC) == -1)
			return -1;
		l->wfd = p[0];
		l->wfd_w = p[1];
	}
	tk_io_init(&l->wio, l->wfd, wake_io, NULL);
	if (loop_io_start_internal(l, &l->wio, TK_EV_READ) == -1) {
		wake_free(l, 0);
		return -1;
	}
	return 0;
}

/* Close the wake-up fds; unless forget, stop watching them first. */
void
wake_free(struct tk_loop *l, int forget)
{
	if (l->wio.active && !forget)
		loop_io_stop_internal(l, &l->wio);
	if (l->wfd_w != -1 && l->wfd_w != l->wfd)
		close(l->wfd_w);
	if (l->wfd != -1)
		close(l->wfd);
	l->wfd = l->wfd_w = -1;
	/*
	 * Messages never run are dropped untouched (tk_loop_free's
	 * contract): each lives in its poster's memory and is the poster's
	 * to free, so there is nothing here to free or to walk.
	 */
}

void
tk_loop_wake(struct tk_loop *l)
{
	uint64_t	one = 1;
	ssize_t		n;

	if (atomic_exchange(&l->wakepending, 1) != 0)
		return;
	do {
		if (l->wfd == l->wfd_w)
			n = write(l->wfd_w, &one, sizeof(one));
		else
			n = write(l->wfd_w, "", 1);
	} while (n == -1 && errno == EINTR);
	/* EAGAIN: the counter or pipe is full, hence already readable. */
}

int
tk_loop_post(struct tk_loop *l, struct tk_msg *m)
{
	pthread_mutex_lock(&l->mqlock);
	STAILQ_INSERT_TAIL(&l->mq, m, link);
	pthread_mutex_unlock(&l->mqlock);
	tk_loop_wake(l);
	return 0;
}
