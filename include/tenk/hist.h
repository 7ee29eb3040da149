/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Latency histogram, HdrHistogram-style: log-linear buckets with three
 * significant decimal digits (relative error below 0.1%), values in
 * nanoseconds from 1 µs up to at least 100 s, fixed memory, and an exact
 * merge (adding counts bucket by bucket).  Values below 1 µs are kept in
 * the first buckets at 1 ns resolution; values above the top are clamped
 * into the last bucket and still counted (max stays exact).
 * Not thread-safe: one per thread, merged at the end.
 */
#ifndef TENK_HIST_H
#define TENK_HIST_H

#include <stddef.h>
#include <stdint.h>

struct tk_hist;

/*
 * Allocate an empty histogram (about 224 KiB); NULL with errno ENOMEM.
 * Free it, or empty it for reuse without freeing.
 */
struct tk_hist	*tk_hist_new(void);
void		 tk_hist_free(struct tk_hist *h);
void		 tk_hist_reset(struct tk_hist *h);

/* Record one value, or n equal values, in ns. Never fails. */
void		 tk_hist_record(struct tk_hist *h, uint64_t v);
void		 tk_hist_record_n(struct tk_hist *h, uint64_t v, uint64_t n);

/* Add every count of src into dst; dst then equals one histogram that
 * recorded both streams. */
void		 tk_hist_merge(struct tk_hist *dst, const struct tk_hist *src);

/* Values recorded; their exact min and max; their mean. */
uint64_t	 tk_hist_count(const struct tk_hist *h);
uint64_t	 tk_hist_min(const struct tk_hist *h);	/* 0 if empty */
uint64_t	 tk_hist_max(const struct tk_hist *h);	/* 0 if empty */
double		 tk_hist_mean(const struct tk_hist *h);	/* 0 if empty */

/*
 * The value at percentile p (0 < p <= 100): the highest value equivalent
 * to the bucket holding the ceil(p/100 * count)-th smallest recorded
 * value, never above max.  0 if empty.
 */
uint64_t	 tk_hist_percentile(const struct tk_hist *h, double p);

/*
 * Walk the non-empty buckets in increasing order; fn gets the lowest value
 * of the bucket (recording it lands in the same bucket) and its count.
 * Used to serialise a histogram to JSON and back with tk_hist_record_n().
 */
typedef void tk_hist_walk_fn(uint64_t lo, uint64_t count, void *arg);
void		 tk_hist_walk(const struct tk_hist *h, tk_hist_walk_fn *fn,
		    void *arg);

/* Lowest and highest values that share v's bucket. */
uint64_t	 tk_hist_lowest_equiv(uint64_t v);
uint64_t	 tk_hist_highest_equiv(uint64_t v);

#endif /* TENK_HIST_H */
