/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The names of the traffic modes, apart from traffic.c, so that the
 * report (and tenkbench, which links the report but not the engine)
 * can name a run's mode.
 */
#include <string.h>

#include "loadgen.h"

static const char *const mode_names[MODE_MAX] = {
	"pingpong", "rate", "stream", "idle", "connect"
};

/* The name of mode m, "?" for none. */
const char *
mode_name(enum lg_mode m)
{
	return m < MODE_MAX ? mode_names[m] : "?";
}

/* The mode named s, or -1. */
int
mode_parse(const char *s)
{
	int	i;

	for (i = 0; i < MODE_MAX; i++)
		if (strcmp(s, mode_names[i]) == 0)
			return i;
	return -1;
}
