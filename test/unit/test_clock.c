/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The clocks: the monotonic one never goes back, the real-time one is
 * the time(2) of the same moment, both in nanoseconds.
 */
#include <stdint.h>
#include <time.h>

#include "tenk/clock.h"
#include "tenk/timer.h"
#include "../t.h"

TEST(clock_mono)
{
	uint64_t	prev, now;
	int		i;

	prev = tk_clock_mono();
	T_GT(prev, 0);
	for (i = 0; i < 100000; i++) {
		now = tk_clock_mono();
		if (now < prev)
			T_FAIL("went back from %ju to %ju", (uintmax_t)prev,
			    (uintmax_t)now);
		prev = now;
	}
}

TEST(clock_real)
{
	time_t		before, after;
	uint64_t	ns;

	before = time(NULL);
	ns = tk_clock_real();
	after = time(NULL);
	/* time(2) truncates to the second; the clock may not be set back. */
	T_GE(ns / TK_SEC, (uint64_t)before);
	T_LE(ns / TK_SEC, (uint64_t)after);
}
