/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * slowwrite.so: an LD_PRELOAD shim that stalls write(2) to one file, as
 * a disk or a network file system that stops answering would: a write
 * to a descriptor open on the path $SLOWWRITE_PATH waits while the file
 * $SLOWWRITE_STALL exists (looking every 10 ms), then is made.  Every
 * other write is made at once.
 */
#include <sys/types.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef ssize_t write_fn(int, const void *, size_t);

static int
is_slow(int fd)
{
	const char	*want = getenv("SLOWWRITE_PATH");
	char		 link[64], path[PATH_MAX];
	ssize_t		 n;

	if (want == NULL)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, path, sizeof(path) - 1)) <= 0)
		return 0;
	path[n] = '\0';
	return strcmp(path, want) == 0;
}

ssize_t
write(int fd, const void *buf, size_t len)
{
	static write_fn		*real;
	const char		*stall = getenv("SLOWWRITE_STALL");
	struct timespec		 ts = { 0, 10 * 1000 * 1000 };

	if (real == NULL)
		real = (write_fn *)dlsym(RTLD_NEXT, "write");
	if (stall != NULL && is_slow(fd))
		while (access(stall, F_OK) == 0)
			nanosleep(&ts, NULL);
	return real(fd, buf, len);
}
