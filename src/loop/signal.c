/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Signals through a self-pipe.  The handler does two async-signal-safe
 * things: it sets the signal's pending flag and writes one byte into a
 * nonblocking pipe, keeping errno as it found it.  The loop that owns
 * signals watches the read end; its handler drains the pipe, then runs the
 * callback of every signal whose flag it clears.  A full pipe drops the
 * byte, but then the pipe is readable already, so no wake-up is lost; a
 * burst of one signal may run its callback once, as the kernel coalesces
 * standard signals anyway.
 *
 * Flags are C11 atomics: lock-free atomics are safe in a handler, and the
 * handler may run on any thread that does not block the signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "tenk/signal.h"
#include "backend.h"

#define NSIGS	65

static atomic_int	 sig_pending[NSIGS];
static int		 sig_pipe[2] = { -1, -1 };
static struct tk_loop	*sig_loop;
static struct {
	tk_signal_fn	*fn;
	void		*arg;
} sig_cb[NSIGS];

static void
sig_handler(int signo)
{
	int	saved = errno;
	ssize_t	n;

	if (signo > 0 && signo < NSIGS)
		atomic_store(&sig_pending[signo], 1);
	n = write(sig_pipe[1], "", 1);
	(void)n;
	errno = saved;
}

static void
sig_io(struct tk_loop *l, struct tk_io *io)
{
	char	buf[256];
	ssize_t	n;
	int	s;

	for (;;) {
		n = read(io->fd, buf, sizeof(buf));
		if (n > 0)
			continue;
		if (n == -1 && errno == EINTR)
			continue;
		break;
	}
	tk_io_block(io, TK_EV_READ);
	for (s = 1; s < NSIGS; s++) {
		if (atomic_load(&sig_pending[s]) == 0)
			continue;
		if (atomic_exchange(&sig_pending[s], 0) == 0)
			continue;
		if (sig_cb[s].fn != NULL)
			sig_cb[s].fn(l, s, sig_cb[s].arg);
	}
}

int
tk_signal_watch(struct tk_loop *l, int signo, tk_signal_fn *fn, void *arg)
{
	struct sigaction	sa;

	if (signo <= 0 || signo >= NSIGS || signo == SIGKILL ||
	    signo == SIGSTOP || fn == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (sig_loop != NULL && sig_loop != l) {
		errno = EBUSY;
		return -1;
	}
	if (sig_loop == NULL) {
		if (pipe2(sig_pipe, O_NONBLOCK | O_CLOEXEC) == -1)
			return -1;
		tk_io_init(&l->sio, sig_pipe[0], sig_io, NULL);
		if (loop_io_start_internal(l, &l->sio, TK_EV_READ) == -1) {
			close(sig_pipe[0]);
			close(sig_pipe[1]);
			sig_pipe[0] = sig_pipe[1] = -1;
			return -1;
		}
		sig_loop = l;
	}
	sig_cb[signo].fn = fn;
	sig_cb[signo].arg = arg;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sig_handler;
	sa.sa_flags = SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (sigaction(signo, &sa, NULL) == -1) {
		sig_cb[signo].fn = NULL;
		return -1;
	}
	return 0;
}

void
tk_signal_unwatch(struct tk_loop *l, int signo)
{
	if (l != sig_loop || signo <= 0 || signo >= NSIGS)
		return;
	if (sig_cb[signo].fn == NULL)
		return;
	signal(signo, SIG_DFL);
	sig_cb[signo].fn = NULL;
	sig_cb[signo].arg = NULL;
	atomic_store(&sig_pending[signo], 0);
}

int
tk_signal_block_all(void)
{
	sigset_t	set;

	sigfillset(&set);
	return pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/*
 * The signals of l back to SIG_DFL and its self-pipe closed, so that
 * another loop may take signals; unless forget, the pipe's watcher is
 * stopped first (after a fork, the pipe and the loop's kernel object
 * are the parent's too: tk_loop_forget).
 */
void
signal_loop_free(struct tk_loop *l, int forget)
{
	int	s;

	if (l != sig_loop)
		return;
	for (s = 1; s < NSIGS; s++)
		tk_signal_unwatch(l, s);
	if (!forget)
		loop_io_stop_internal(l, &l->sio);
	close(sig_pipe[0]);
	close(sig_pipe[1]);
	sig_pipe[0] = sig_pipe[1] = -1;
	sig_loop = NULL;
}
