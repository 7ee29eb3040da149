/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * clock_gettime(2) in nanoseconds.  Both clocks are read through the
 * vDSO on Linux, so no system call is made; CLOCK_MONOTONIC_COARSE would
 * be cheaper still but ticks only every few milliseconds, too coarse for
 * latencies.  clock_gettime cannot fail for these clocks and a valid
 * pointer, so its result is not checked.
 */
#include <stdint.h>
#include <time.h>

#include "tenk/clock.h"

#define NS_PER_SEC	1000000000ULL

uint64_t
tk_clock_mono(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t
tk_clock_real(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}
