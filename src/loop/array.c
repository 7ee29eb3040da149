/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How the loop and its backends grow their arrays (the events array,
 * tables indexed by fd, queues): doubled up to a bound, the new part
 * zeroed.  A leaf: the backend registry (backend.c) refers to every
 * backend, and the backends to this, so that nothing ties them in a
 * circle.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

/*
 * The capacity for index i of an array that holds cap elements now:
 * cap (first if 0) doubled until above i.  -1 (errno ENOMEM) past max.
 */
int
array_cap(int cap, int first, int i, int max)
{
	int	n = cap > 0 ? cap : first;

	while (n <= i) {
		if (n > max / 2) {
			errno = ENOMEM;
			return -1;
		}
		n *= 2;
	}
	return n;
}

/*
 * The array at *pp, of old elements of size bytes, made n long, the
 * elements past old zeroed.  A first array (*pp NULL) comes from
 * calloc(3), untouched: its pages become resident only as they are
 * used.  Returns 0, or -1 with errno ENOMEM and *pp as it was.
 */
int
array_resize(void *pp, int old, int n, size_t size)
{
	void	**p = pp;
	char	 *a;

	if (*p == NULL) {
		if ((a = calloc((size_t)n, size)) == NULL)
			return -1;
	} else {
		if ((a = reallocarray(*p, (size_t)n, size)) == NULL)
			return -1;
		if (n > old)
			memset(a + (size_t)old * size, 0,
			    (size_t)(n - old) * size);
	}
	*p = a;
	return 0;
}

/*
 * The one array at *pp, of *cap elements of size bytes, made to hold
 * index i: array_cap() (first, max) and array_resize() in one, *cap
 * the new length.  Returns 0, or -1 with errno ENOMEM and *pp and *cap
 * as they were.
 */
int
array_grow(void *pp, int *cap, int first, int i, int max, size_t size)
{
	int	n;

	if ((n = array_cap(*cap, first, i, max)) == -1 ||
	    array_resize(pp, *cap, n, size) == -1)
		return -1;
	*cap = n;
	return 0;
}

