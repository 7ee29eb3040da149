/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Allocation that cannot fail: on failure they call fatal() and the
 * process exits.  For start-up only (configuration, per-thread setup);
 * code that runs while serving must handle ENOMEM and keep going.
 * A zero size is a bug and also fatal.  Any thread.
 */
#ifndef TENK_XMALLOC_H
#define TENK_XMALLOC_H

#include <stddef.h>

void	*xmalloc(size_t size)
	    __attribute__((malloc, returns_nonnull));
void	*xcalloc(size_t nmemb, size_t size)
	    __attribute__((malloc, returns_nonnull));
void	*xreallocarray(void *ptr, size_t nmemb, size_t size)
	    __attribute__((returns_nonnull));
char	*xstrdup(const char *s)
	    __attribute__((malloc, returns_nonnull));

#endif /* TENK_XMALLOC_H */
