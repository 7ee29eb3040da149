/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Latency histogram with log-linear buckets, after HdrHistogram.  This
 * file owns the bucket layout, recording, merging and the queries;
 * printing and JSON belong to the load generator's report.
 *
 * Layout.  Values are split by their magnitude into buckets of 2048
 * sub-buckets each.  Bucket 0 covers 0..2047 at 1 ns resolution.  Bucket
 * b >= 1 covers [1024 << b, 2048 << b) with sub-buckets 2^b ns wide; its
 * lower half would repeat bucket b-1, so only the upper 1024 sub-buckets
 * get storage.  A sub-bucket is at most 1/1024 of the values it holds,
 * so any value is known within 0.098%: three significant digits.
 *
 * Flat index of a value v in bucket b, sub-bucket s = v >> b:
 *	b == 0:	s			(0..2047)
 *	b >= 1:	b * 1024 + s		(s in 1024..2047)
 * which is one formula, (b << 10) + s, once s counts from 0 in bucket 0.
 *
 * The top is 2^37 - 1 ns, about 137 s: 27 buckets, 28672 counters,
 * 224 KiB per histogram.  Larger values are clamped into the last
 * counter; min, max and the sum still see the true value.
 */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/hist.h"

#define SUB_BITS	11			/* 2048 sub-buckets */
#define SUB_COUNT	(1u << SUB_BITS)
#define HALF_BITS	(SUB_BITS - 1)
#define SUB_MASK	((uint64_t)SUB_COUNT - 1)
#define TOP_BITS	37
#define HIST_TOP	(((uint64_t)1 << TOP_BITS) - 1)
#define NBUCKETS	(TOP_BITS - SUB_BITS + 1)
#define NCOUNTS		(((size_t)NBUCKETS + 1) << HALF_BITS)

struct tk_hist {
	uint64_t	count;
	uint64_t	min;
	uint64_t	max;
	/*
	 * XXX The sum wraps after 2^64 ns (584 years of summed latency);
	 * only the mean would suffer, and no run gets near it.
	 */
	uint64_t	sum;
	uint64_t	counts[NCOUNTS];
};

/*
 * The bucket of v: how far v's highest bit sits above the 11 bits of a
 * sub-bucket.  Or-ing in the mask puts every v < 2048 (0 included, for
 * which clz is undefined) in bucket 0.
 */
static inline unsigned int
bucket_of(uint64_t v)
{
	return (64 - __builtin_clzll(v | SUB_MASK)) - SUB_BITS;
}

static inline size_t
index_of(uint64_t v)
{
	unsigned int	b;

	if (v > HIST_TOP)
		v = HIST_TOP;
	b = bucket_of(v);
	return ((size_t)b << HALF_BITS) + (size_t)(v >> b);
}

/* Lowest value of counter i: the inverse of index_of(). */
static inline uint64_t
index_lo(size_t i)
{
	unsigned int	b;
	uint64_t	s;

	if (i < SUB_COUNT)
		return i;
	b = (unsigned int)(i >> HALF_BITS) - 1;
	s = (i & (SUB_COUNT / 2 - 1)) + SUB_COUNT / 2;
	return s << b;
}

/* Highest value of counter i; the last counter also holds the clamped. */
static inline uint64_t
index_hi(size_t i)
{
	if (i == NCOUNTS - 1)
		return UINT64_MAX;
	return index_lo(i + 1) - 1;
}

struct tk_hist *
tk_hist_new(void)
{
	struct tk_hist	*h;

	if ((h = malloc(sizeof(*h))) == NULL)
		return NULL;
	tk_hist_reset(h);
	return h;
}

void
tk_hist_free(struct tk_hist *h)
{
	free(h);
}

void
tk_hist_reset(struct tk_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

/*
 * The hot path: a clz, a shift and an add.  The min/max compares are
 * well predicted once a run has warmed up.
 */
void
tk_hist_record(struct tk_hist *h, uint64_t v)
{
	h->counts[index_of(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void
tk_hist_record_n(struct tk_hist *h, uint64_t v, uint64_t n)
{
	if (n == 0)
		return;
	h->counts[index_of(v)] += n;
	h->count += n;
	h->sum += v * n;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

/* Counters add exactly, so merging in any order gives the same result. */
void
tk_hist_merge(struct tk_hist *dst, const struct tk_hist *src)
{
	size_t	i;

	if (src->count == 0)
		return;
	for (i = 0; i < NCOUNTS; i++)
		dst->counts[i] += src->counts[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t
tk_hist_count(const struct tk_hist *h)
{
	return h->count;
}

uint64_t
tk_hist_min(const struct tk_hist *h)
{
	return h->count == 0 ? 0 : h->min;
}

uint64_t
tk_hist_max(const struct tk_hist *h)
{
	return h->max;
}

double
tk_hist_mean(const struct tk_hist *h)
{
	if (h->count == 0)
		return 0;
	return (double)h->sum / (double)h->count;
}

/*
 * The rank is ceil(p/100 * count).  p/100 is rarely exact in binary, so
 * the product can land a few ulps above a whole number (99.9% of 1000
 * must be rank 999, not 1000); we take off a few ulps before the ceil.
 * A true fraction that small cannot be told from rounding error anyway.
 * p outside (0, 100] is clamped.
 */
uint64_t
tk_hist_percentile(const struct tk_hist *h, double p)
{
	double		x;
	uint64_t	rank, seen = 0;
	size_t		i;

	if (h->count == 0)
		return 0;
	x = p / 100.0 * (double)h->count;
	x = ceil(x - x * 8 * DBL_EPSILON);
	if (!(x >= 1))			/* also catches NaN */
		rank = 1;
	else if (x >= (double)h->count)
		rank = h->count;
	else
		rank = (uint64_t)x;

	for (i = 0; i < NCOUNTS; i++) {
		seen += h->counts[i];
		if (seen >= rank)
			break;
	}
	/*
	 * max caps the bucket's upper end, so 100% is the true maximum.  The
	 * last counter's bucket has no upper end (it holds the clamped
	 * values), so there the answer is always max.
	 */
	assert(i < NCOUNTS);
	if (index_hi(i) > h->max)
		return h->max;
	return index_hi(i);
}

void
tk_hist_walk(const struct tk_hist *h, tk_hist_walk_fn *fn, void *arg)
{
	size_t	i;

	for (i = 0; i < NCOUNTS; i++)
		if (h->counts[i] != 0)
			fn(index_lo(i), h->counts[i], arg);
}

uint64_t
tk_hist_lowest_equiv(uint64_t v)
{
	return index_lo(index_of(v));
}

/* UINT64_MAX for the last bucket: everything above the top lands there. */
uint64_t
tk_hist_highest_equiv(uint64_t v)
{
	return index_hi(index_of(v));
}
