/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom
 * number generators", OOPSLA 2014), for what needs a cheap, seeded,
 * well-spread sequence or hash of nearby integers: the load generator's
 * pattern and per-connection seeds, the test tools' payloads, the test
 * runner's reference sequences.  Not for anything an adversary sees.
 */
#ifndef TENK_RAND_H
#define TENK_RAND_H

#include <stdint.h>

#define TK_MIX64_STEP	0x9e3779b97f4a7c15ULL	/* 2^64 / the golden ratio */

/*
 * splitmix64's output for state x: x advanced by one step, then mixed.
 * A generator keeps x and adds TK_MIX64_STEP to it per number; x taken
 * from nearby ids gives numbers that share no bit pattern.  Any thread.
 */
static inline uint64_t
tk_mix64(uint64_t x)
{
	x += TK_MIX64_STEP;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

#endif /* TENK_RAND_H */
