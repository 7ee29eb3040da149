/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The two clocks tenk reads, in nanoseconds: the monotonic one for
 * intervals and deadlines (a loop caches it, see tk_loop_now()), the
 * real-time one for time stamps that leave the process (access logs,
 * reports).  Any thread.
 */
#ifndef TENK_CLOCK_H
#define TENK_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC: from an arbitrary start, never set back. */
uint64_t	tk_clock_mono(void);

/* CLOCK_REALTIME: since the Epoch, as the clock is set. */
uint64_t	tk_clock_real(void);

#endif /* TENK_CLOCK_H */
