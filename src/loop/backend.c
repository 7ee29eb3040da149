/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The backend registry: every backend compiled in, best first.  One
 * binary holds them all, so tenkbench compares them without rebuilding.
 * io_uring comes last and only by name (TK_BE_EXPLICIT): in poll mode it
 * has not beaten epoll in our measurements (docs/BENCHMARKS.md).  The
 * backends' arrays grow in array.c; poll(2)'s bits read as events (poll,
 * epoll and io_uring's poll requests) are backend.h's, inline, once per
 * event.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "tenk/loop.h"
#include "backend.h"

static const struct tk_backend *const backends[] = {
#ifdef __linux__
	&tk_backend_epoll,
#endif
	&tk_backend_poll,
	&tk_backend_select,
#ifdef TENK_HAVE_URING
	&tk_backend_io_uring,
#endif
	NULL
};

#define NBACKENDS	(sizeof(backends) / sizeof(backends[0]))

/* The backends' names, filled from the table on first use. */
static const char	*names[NBACKENDS];
static pthread_once_t	 names_once = PTHREAD_ONCE_INIT;

static void
names_fill(void)
{
	size_t	i;

	for (i = 0; backends[i] != NULL; i++)
		names[i] = backends[i]->name;
	names[i] = NULL;
}

const struct tk_backend *const *
backend_all(void)
{
	return backends;
}

const struct tk_backend *
backend_find(const char *name)
{
	const struct tk_backend *const	*bp;

	for (bp = backends; *bp != NULL; bp++)
		if (strcmp((*bp)->name, name) == 0)
			return *bp;
	return NULL;
}

/*
 * The names of the table above, in its order, NULL-terminated; the
 * table's name fields are not constant expressions, so the array is
 * filled once at run time.  Any thread.
 */
const char *const *
tk_backend_names(void)
{
	pthread_once(&names_once, names_fill);
	return names;
}

/*
 * Whether the named backend is compiled in and the kernel serves it.
 * Returns 0, or -1 with errno ENOENT (not compiled in) or the kernel's
 * refusal (ENOSYS, EPERM).  Any thread.
 */
int
tk_backend_probe(const char *name)
{
	const struct tk_backend	*be;

	if ((be = backend_find(name)) == NULL) {
		errno = ENOENT;
		return -1;
	}
	return be->probe != NULL ? be->probe() : 0;
}
