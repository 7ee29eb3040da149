/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * splicefail.so: an LD_PRELOAD shim that makes splice(2) fail with
 * EINVAL, as on sockets or a kernel that cannot splice, so that the
 * proxy's fallback to copying is tested on the real binary.
 * SPLICEFAIL=in fails splices into a pipe (socket to pipe), out those
 * from a pipe (pipe to socket, after bytes went in); anything else
 * fails none.  The real splice is called otherwise.  SPLICEMAX=FILE
 * keeps in FILE the most bytes one splice into a pipe has asked for,
 * rewritten each time it grows, so that a test sees how big a splice
 * tenkd makes.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef ssize_t splice_fn(int, loff_t *, int, loff_t *, size_t,
    unsigned int);

static int
is_pipe(int fd)
{
	struct stat	st;

	return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

ssize_t
splice(int fd_in, loff_t *off_in, int fd_out, loff_t *off_out, size_t len,
    unsigned int flags)
{
	static splice_fn	*real;
	static size_t		 most;
	const char		*mode = getenv("SPLICEFAIL");
	const char		*path = getenv("SPLICEMAX");
	FILE			*f;

	if (mode != NULL && ((strcmp(mode, "in") == 0 && is_pipe(fd_out)) ||
	    (strcmp(mode, "out") == 0 && is_pipe(fd_in)))) {
		errno = EINVAL;
		return -1;
	}
	/* Threads may race here; a test's proxy runs one. */
	if (path != NULL && len > most && is_pipe(fd_out) &&
	    (f = fopen(path, "w")) != NULL) {
		most = len;
		fprintf(f, "%zu\n", len);
		fclose(f);
	}
	if (real == NULL)
		real = (splice_fn *)dlsym(RTLD_NEXT, "splice");
	return real(fd_in, off_in, fd_out, off_out, len, flags);
}
