/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libtenk signals through a self-pipe.  The handler only sets a flag and
 * writes one byte into a nonblocking pipe (errno preserved); the loop that
 * owns the signals reads the pipe and calls the registered callbacks in
 * its own thread.  A burst of signals of one number may be delivered as
 * one callback, as the kernel itself coalesces standard signals.  Only
 * one loop per process may own signals.
 */
#ifndef TENK_SIGNAL_H
#define TENK_SIGNAL_H

struct tk_loop;

typedef void tk_signal_fn(struct tk_loop *, int signo, void *arg);

/*
 * Route signo to fn on loop l (the first call makes l the signal loop).
 * Installs a handler with SA_RESTART.  Returns 0, or -1 with errno set:
 * EINVAL for a bad number or SIGKILL/SIGSTOP, EBUSY when another loop
 * already owns signals, or the pipe/sigaction error.  Thread that owns l.
 */
int	tk_signal_watch(struct tk_loop *l, int signo, tk_signal_fn *fn,
	    void *arg);

/* Restore the default disposition of signo and forget its callback. */
void	tk_signal_unwatch(struct tk_loop *l, int signo);

/*
 * Block every signal in the calling thread; worker threads call this
 * first so that signals reach the main thread only.  Returns 0 or an
 * error number as pthread_sigmask does.
 */
int	tk_signal_block_all(void);

#endif /* TENK_SIGNAL_H */
