/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * acceptlog.so: an LD_PRELOAD shim that writes one line for each
 * accept4(2) and accept(2) a process makes, "PID FD RESULT ERRNO", to
 * the file $ACCEPTLOG (appended, one write(2) a line, so that the lines
 * of several processes and threads do not mix), then makes the real
 * call.  The reload test counts with it the calls of draining workers.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef int accept4_fn(int, struct sockaddr *, socklen_t *, int);
typedef int accept_fn(int, struct sockaddr *, socklen_t *);

static void
note(int fd, int rv, int err)
{
	const char	*path = getenv("ACCEPTLOG");
	char		 line[80];
	int		 lfd, n;

	if (path == NULL)
		return;
	if ((lfd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0644)) == -1)
		return;
	n = snprintf(line, sizeof(line), "%d %d %d %d\n", (int)getpid(), fd,
	    rv, rv == -1 ? err : 0);
	if (write(lfd, line, (size_t)n) != n)
		(void)0;
	close(lfd);
}

int
accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags)
{
	static accept4_fn	*real;
	int			 rv, err;

	if (real == NULL)
		real = (accept4_fn *)dlsym(RTLD_NEXT, "accept4");
	rv = real(fd, sa, len, flags);
	err = errno;
	note(fd, rv, err);
	errno = err;
	return rv;
}

int
accept(int fd, struct sockaddr *sa, socklen_t *len)
{
	static accept_fn	*real;
	int			 rv, err;

	if (real == NULL)
		real = (accept_fn *)dlsym(RTLD_NEXT, "accept");
	rv = real(fd, sa, len);
	err = errno;
	note(fd, rv, err);
	errno = err;
	return rv;
}
