/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The master and each worker process talk over one SOCK_SEQPACKET
 * socket pair (master.c makes it at the fork): the master sends a byte
 * to ask for figures, the worker a byte once its threads run and then
 * its figures, a struct msnap a datagram (metrics.c).  Both ends read
 * their side the same way, here.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>

#include "tenk/loop.h"
#include "../tenkd.h"

/*
 * The next datagram on io's socket into buf (len bytes; with MSG_TRUNC
 * in flags, its whole length is returned even if longer).  Returns its
 * length, 0 when none waits (READ blocked until one does), or -1 when
 * the other end is gone or the socket failed.
 */
ssize_t
chan_recv(struct tk_io *io, void *buf, size_t len, int flags)
{
	ssize_t	n;

	for (;;) {
		if ((n = recv(io->fd, buf, len, flags)) > 0)
			return n;
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN) {
			tk_io_block(io, TK_EV_READ);
			return 0;
		}
		return -1;
	}
}
