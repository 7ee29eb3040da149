/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Allocation wrappers that end the process on failure, for start-up code
 * where there is nothing better to do (as tmux's xmalloc.c).  Nothing on
 * a serving path may call them.
 */
#include <stdlib.h>
#include <string.h>

#include "tenk/log.h"
#include "tenk/xmalloc.h"

void *
xmalloc(size_t size)
{
	void	*p;

	if (size == 0)
		fatalx("xmalloc: zero size");
	if ((p = malloc(size)) == NULL)
		fatal("xmalloc: allocating %zu bytes", size);
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void	*p;

	if (size == 0 || nmemb == 0)
		fatalx("xcalloc: zero size");
	if ((p = calloc(nmemb, size)) == NULL)
		fatal("xcalloc: allocating %zu * %zu bytes", nmemb, size);
	return p;
}

/* reallocarray(3) checks nmemb * size for overflow (ENOMEM). */
void *
xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	void	*p;

	if (size == 0 || nmemb == 0)
		fatalx("xreallocarray: zero size");
	if ((p = reallocarray(ptr, nmemb, size)) == NULL)
		fatal("xreallocarray: allocating %zu * %zu bytes", nmemb, size);
	return p;
}

char *
xstrdup(const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		fatal("xstrdup");
	return p;
}
