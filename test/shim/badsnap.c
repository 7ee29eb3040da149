/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * badsnap.so: an LD_PRELOAD shim that spoils the figures a worker sends
 * its master (one struct msnap per datagram, the only send(2) of that
 * size), so that the master's checks are tested on the real binary.
 * BADSNAP=textlen claims a text far past its buffer, pid another pid,
 * long sends 64 bytes more, short half of it; anything else, or no
 * variable, leaves send(2) alone.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/server/tenkd.h"

typedef ssize_t send_fn(int, const void *, size_t, int);

ssize_t
send(int fd, const void *buf, size_t len, int flags)
{
	static send_fn		*real;
	static struct msnap	 m;
	static char		 big[sizeof(m) + 64];
	const char		*mode = getenv("BADSNAP");

	if (real == NULL)
		real = (send_fn *)dlsym(RTLD_NEXT, "send");
	if (mode == NULL || len != sizeof(m))
		return real(fd, buf, len, flags);
	memcpy(&m, buf, sizeof(m));
	if (strcmp(mode, "textlen") == 0)
		m.textlen = 0x7fffffff;
	else if (strcmp(mode, "pid") == 0)
		m.pid = 1;
	else if (strcmp(mode, "long") == 0) {
		memcpy(big, &m, sizeof(m));
		return real(fd, big, sizeof(big), flags) == -1 ? -1 :
		    (ssize_t)len;
	} else if (strcmp(mode, "short") == 0)
		return real(fd, &m, sizeof(m) / 2, flags) == -1 ? -1 :
		    (ssize_t)len;
	return real(fd, &m, sizeof(m), flags);
}
