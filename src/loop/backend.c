/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The backend registry: every backend compiled in, best first.  One
 * binary holds them all, so tenkbench compares them without rebuilding.
 */
#include <string.h>

#include "tenk/loop.h"
#include "backend.h"

static const struct tk_backend *const backends[] = {
#ifdef __linux__
	&tk_backend_epoll,
#endif
	&tk_backend_poll,
	&tk_backend_select,
	NULL
};

static const char *const names[] = {
#ifdef __linux__
	"epoll",
#endif
	"poll",
	"select",
	NULL
};

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

const char *const *
tk_backend_names(void)
{
	return names;
}
