/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * holdopen.so: an LD_PRELOAD shim that holds open(2) of one file for
 * as long as a gate file exists, as a FIFO without a reader once held
 * the access log's open, so that a test can keep a reload or an upgrade
 * under way (tenkd now refuses FIFOs instead of waiting on them).  An
 * open or openat of a path whose last component is $HOLDOPEN_NAME
 * waits, polling every 10 ms, while the file $HOLDOPEN_GATE exists;
 * then the real call runs.  Without both variables it does nothing.
 */
#include <sys/types.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int open_fn(const char *, int, ...);
typedef int openat_fn(int, const char *, int, ...);

/* Wait at the gate if path is the file held; then the real fn. */
static void *
hold(const char *path, const char *fn)
{
	struct timespec	 ts = { 0, 10 * 1000 * 1000 };
	const char	*name = getenv("HOLDOPEN_NAME");
	const char	*gate = getenv("HOLDOPEN_GATE");
	const char	*last = strrchr(path, '/');

	if (name != NULL && gate != NULL &&
	    strcmp(last != NULL ? last + 1 : path, name) == 0)
		while (access(gate, F_OK) == 0)
			nanosleep(&ts, NULL);
	return dlsym(RTLD_NEXT, fn);
}

int
open(const char *path, int flags, ...)
{
	va_list	ap;
	mode_t	mode;

	va_start(ap, flags);
	mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
	va_end(ap);
	return ((open_fn *)hold(path, "open"))(path, flags, mode);
}

int
openat(int dfd, const char *path, int flags, ...)
{
	va_list	ap;
	mode_t	mode;

	va_start(ap, flags);
	mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
	va_end(ap);
	return ((openat_fn *)hold(path, "openat"))(dfd, path, flags, mode);
}
