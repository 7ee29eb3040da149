/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The access log's writer: a thread of its own that write(2)s the
 * buffers of records the worker threads hand it (conn.c fills them), so
 * that a slow log path (a disk that stalls, a network file system, a
 * pipe nobody reads) never blocks a worker thread, whose write(2) it
 * was before.  A worker hands a whole buffer (ACCESS_BUFSIZE, whole
 * lines) and takes an empty one in a few instructions under a mutex; no
 * system call is made under it.  The queue holds at most
 * --access-log-buffer bytes of buffers: past that, a worker keeps its
 * buffer, drops its records and counts them (log-dropped), as HAProxy
 * counts the log lines its rings drop, rather than wait as nginx's
 * workers do.  Buffers go out in the order they were handed, so one
 * thread's lines stay in order, and each write(2) is whole lines on an
 * O_APPEND descriptor, so threads' lines do not mix.
 *
 * At exit the queue is written out within ALOG_EXIT_WAIT; what a stuck
 * path still holds then is dropped with a warning, and the thread,
 * blocked in write(2), ends with the process.  Reopening (reopen.c)
 * dup()s a new file onto the same descriptor number, so the writer
 * needs no word of it.
 */
#include <sys/types.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tenk/clock.h"
#include "tenk/log.h"
#include "tenk/signal.h"
#include "../tenkd.h"

#define ALOG_EXIT_WAIT	(5 * TK_SEC)

struct alog_ent {
	char		*buf;
	size_t		 len;
};

/* The queue and its thread; the lock guards all but the thread id. */
static struct {
	pthread_mutex_t	 lock;
	pthread_cond_t	 work;		/* a buffer queued, or stop */
	pthread_cond_t	 idle;		/* the queue ran empty */
	pthread_t	 thread;
	struct alog_ent	*q;		/* a ring of cap */
	unsigned int	 head;
	unsigned int	 n;
	unsigned int	 cap;
	char		**spare;	/* empty buffers, cap of them */
	unsigned int	 nspare;
	char		*cur;		/* being written, out of the ring */
	int		 running;
	int		 stop;
} aw = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.idle = PTHREAD_COND_INITIALIZER,
};

static void	*alog_main(void *);

/*
 * Start the writer when the access log is on, before the worker threads
 * (after the fork of a worker process: a thread does not survive one).
 * Dies on failure (start-up).  Main thread.
 */
void
alog_start(void)
{
	int	error;

	if (srv.access_fd == -1)
		return;
	aw.cap = (unsigned int)(srv.cfg.access_buffer / ACCESS_BUFSIZE);
	if (aw.cap < 1)
		aw.cap = 1;
	if ((aw.q = calloc(aw.cap, sizeof(*aw.q))) == NULL ||
	    (aw.spare = calloc(aw.cap, sizeof(*aw.spare))) == NULL)
		fatal("access log: its queue");
	/* Signals are the main thread's, as in the workers. */
	if ((error = pthread_create(&aw.thread, NULL, alog_main, NULL)) !=
	    0) {
		errno = error;
		fatal("access log: pthread_create");
	}
	aw.running = 1;
}

/* Write len bytes of buf whole, or lose them on an error. */
static void
alog_write(const char *buf, size_t len)
{
	size_t	off = 0;
	ssize_t	r;

	while (off < len) {
		r = write(srv.access_fd, buf + off, len - off);
		if (r == -1 && errno == EINTR)
			continue;
		/*
		 * A failed write loses the buffer (there is nowhere to
		 * report each record); a short one (a full disk) writes on
		 * from where it stopped.  XXX That tail may land after
		 * another thread's lines; a disk that full loses lines
		 * anyway.
		 */
		if (r <= 0)
			break;
		off += (size_t)r;
	}
}

static void *
alog_main(void *arg)
{
	struct alog_ent	e;

	(void)arg;
	tk_signal_block_all();
	pthread_mutex_lock(&aw.lock);
	for (;;) {
		while (aw.n == 0 && !aw.stop)
			pthread_cond_wait(&aw.work, &aw.lock);
		if (aw.n == 0)
			break;
		e = aw.q[aw.head];
		aw.head = (aw.head + 1) % aw.cap;
		aw.n--;
		aw.cur = e.buf;
		pthread_mutex_unlock(&aw.lock);
		alog_write(e.buf, e.len);
		pthread_mutex_lock(&aw.lock);
		aw.cur = NULL;
		if (aw.nspare < aw.cap)
			aw.spare[aw.nspare++] = e.buf;
		else
			free(e.buf);
		if (aw.n == 0)
			pthread_cond_broadcast(&aw.idle);
	}
	pthread_mutex_unlock(&aw.lock);
	return NULL;
}

/*
 * Hand the len bytes of records at *buf (ACCESS_BUFSIZE bytes, whole
 * lines) to the writer; *buf is then an empty buffer to fill.  Returns
 * 0, or -1 when the queue is full (or no empty buffer could be had): the
 * caller keeps *buf and drops what it holds.  Without the writer (not
 * started, or stopped) the records are written here.  Any thread.
 */
int
alog_put(char **buf, size_t len)
{
	char	*nb;

	pthread_mutex_lock(&aw.lock);
	if (!aw.running || aw.stop) {
		pthread_mutex_unlock(&aw.lock);
		alog_write(*buf, len);
		return 0;
	}
	if (aw.n == aw.cap) {
		pthread_mutex_unlock(&aw.lock);
		return -1;
	}
	/* At most cap + threads buffers, so malloc is rare. */
	if (aw.nspare > 0)
		nb = aw.spare[--aw.nspare];
	else if ((nb = malloc(ACCESS_BUFSIZE)) == NULL) {
		pthread_mutex_unlock(&aw.lock);
		return -1;
	}
	aw.q[(aw.head + aw.n++) % aw.cap] = (struct alog_ent){ *buf, len };
	*buf = nb;
	pthread_cond_signal(&aw.work);
	pthread_mutex_unlock(&aw.lock);
	return 0;
}

/*
 * At exit, once every worker handed its last records: let the writer
 * write the queue out and end, waiting ALOG_EXIT_WAIT at most.  Main
 * thread.
 */
void
alog_stop(void)
{
	struct timespec	 ts;
	unsigned int	 left, i;
	int		 done;

	if (!aw.running)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ALOG_EXIT_WAIT / TK_SEC;
	pthread_mutex_lock(&aw.lock);
	aw.stop = 1;
	pthread_cond_signal(&aw.work);
	while (aw.n > 0 || aw.cur != NULL)
		if (pthread_cond_timedwait(&aw.idle, &aw.lock, &ts) ==
		    ETIMEDOUT)
			break;
	done = aw.n == 0 && aw.cur == NULL;
	left = aw.n + (aw.cur != NULL);
	pthread_mutex_unlock(&aw.lock);
	if (!done) {
		/* Blocked in write(2): it ends with the process. */
		log_warnx("access log: %u buffer%s of records not written in "
		    "%d s: dropped", left, left == 1 ? "" : "s",
		    (int)(ALOG_EXIT_WAIT / TK_SEC));
		return;
	}
	pthread_join(aw.thread, NULL);
	aw.running = 0;
	for (i = 0; i < aw.nspare; i++)
		free(aw.spare[i]);
	free(aw.spare);
	free(aw.q);
	aw.spare = NULL;
	aw.q = NULL;
	aw.nspare = 0;
}
