/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The latency histogram: bucket bounds and relative error over the whole
 * range, percentiles against a sorted reference, merge, the walk round
 * trip, clamping above the top, and the simple statistics.  Random values
 * come from a fixed seed so that a failure can be replayed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/hist.h"
#include "../t.h"

#define NS_100S		100000000000ULL

/*
 * A value spread evenly over the magnitudes from 1 ns to 100 s, so that
 * every bucket gets its share instead of the top few.
 */
static uint64_t
rng_latency(void)
{
	uint64_t	v;
	unsigned int	bits;

	bits = 1 + t_rand() % 37;			/* 2^37 ns > 100 s */
	v = t_rand() & ((1ULL << bits) - 1);
	if (v == 0)
		v = 1;
	return v > NS_100S ? NS_100S : v;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct walk {
	uint64_t	lo[32768];
	uint64_t	count[32768];
	size_t		n;
};

static void
walk_fn(uint64_t lo, uint64_t count, void *arg)
{
	struct walk	*w = arg;

	if (w->n == sizeof(w->lo) / sizeof(w->lo[0]))
		T_FAIL("walk: more buckets than counters");
	if (w->n > 0 && lo <= w->lo[w->n - 1])
		T_FAIL("walk: %ju after %ju, not increasing", (uintmax_t)lo,
		    (uintmax_t)w->lo[w->n - 1]);
	if (count == 0)
		T_FAIL("walk: empty bucket at %ju", (uintmax_t)lo);
	w->lo[w->n] = lo;
	w->count[w->n] = count;
	w->n++;
}

static struct walk *
walk_of(const struct tk_hist *h)
{
	struct walk	*w;

	T_PTR(w = calloc(1, sizeof(*w)));
	tk_hist_walk(h, walk_fn, w);
	return w;
}

static void
walk_same(const struct walk *a, const struct walk *b)
{
	size_t	i;

	T_UEQ(a->n, b->n);
	for (i = 0; i < a->n; i++) {
		T_UEQ(a->lo[i], b->lo[i]);
		T_UEQ(a->count[i], b->count[i]);
	}
}

/*
 * Every value lies in [lowest_equiv, highest_equiv], the bucket is less
 * than 0.1% of the value wide, buckets tile the line without gaps, and
 * values below 2048 ns are exact.
 */
TEST(hist_bounds)
{
	uint64_t	v, lo, hi;
	int		i;

	for (v = 0; v < 2048; v++) {
		T_UEQ(tk_hist_lowest_equiv(v), v);
		T_UEQ(tk_hist_highest_equiv(v), v);
	}
	for (i = 0; i < 1000000; i++) {
		v = rng_latency();
		lo = tk_hist_lowest_equiv(v);
		hi = tk_hist_highest_equiv(v);
		T_OK(lo <= v && v <= hi);
		/* Any value of the bucket stands for v within 0.1%. */
		if ((hi - lo) * 1000 >= v)
			T_FAIL("v %ju in [%ju, %ju]: error above 0.1%%",
			    (uintmax_t)v, (uintmax_t)lo, (uintmax_t)hi);
		T_UEQ(tk_hist_lowest_equiv(lo), lo);
		T_UEQ(tk_hist_highest_equiv(lo), hi);
		T_UEQ(tk_hist_lowest_equiv(hi), lo);
		T_UEQ(tk_hist_lowest_equiv(hi + 1), hi + 1);
		if (lo > 0)
			T_UEQ(tk_hist_highest_equiv(lo - 1), lo - 1);
	}
	/* 100 s is inside the range, not clamped. */
	T_OK(tk_hist_highest_equiv(NS_100S) < 2 * NS_100S);
	T_OK((tk_hist_highest_equiv(NS_100S) -
	    tk_hist_lowest_equiv(NS_100S)) * 1000 < NS_100S);
}

/*
 * Percentiles against the exact order statistic of 100000 values: the
 * answer is the top of the bucket holding the ceil(p/100 * n)-th value,
 * capped at max.  The ranks are computed in integers here, so a rounding
 * slip in the histogram's floating point shows up.
 */
TEST(hist_percentile)
{
	/* Percentiles in thousandths of a percent. */
	static const uint64_t pm[] = {
		1, 1000, 10000, 25000, 50000, 75000, 90000, 99000, 99900,
		99990, 99999, 100000, 33333, 66667
	};
	static const size_t ns[] = { 100000, 100003, 1 };
	struct tk_hist	*h;
	uint64_t	*ref, rank, e, want, got;
	size_t		 i, k, n, t;

	T_PTR(h = tk_hist_new());
	T_PTR(ref = calloc(100003, sizeof(*ref)));
	for (t = 0; t < sizeof(ns) / sizeof(ns[0]); t++) {
		n = ns[t];
		tk_hist_reset(h);
		for (i = 0; i < n; i++) {
			ref[i] = rng_latency();
			tk_hist_record(h, ref[i]);
		}
		qsort(ref, n, sizeof(*ref), cmp_u64);
		T_UEQ(tk_hist_count(h), n);
		T_UEQ(tk_hist_min(h), ref[0]);
		T_UEQ(tk_hist_max(h), ref[n - 1]);
		for (k = 0; k < sizeof(pm) / sizeof(pm[0]); k++) {
			rank = (pm[k] * n + 99999) / 100000;
			if (rank == 0)
				rank = 1;
			e = ref[rank - 1];
			want = tk_hist_highest_equiv(e);
			if (want > ref[n - 1])
				want = ref[n - 1];
			got = tk_hist_percentile(h, pm[k] / 1000.0);
			if (got != want)
				T_FAIL("n %zu p %.3f: rank %ju value %ju: "
				    "got %ju, want %ju", n, pm[k] / 1000.0,
				    (uintmax_t)rank, (uintmax_t)e,
				    (uintmax_t)got, (uintmax_t)want);
			T_OK(tk_hist_lowest_equiv(e) <= got);
		}
	}

	/* Exact values: 99.9% of 1..1000 is the 999th, not the 1000th. */
	tk_hist_reset(h);
	for (i = 1; i <= 1000; i++)
		tk_hist_record(h, i);
	T_UEQ(tk_hist_percentile(h, 99.9), 999);
	T_UEQ(tk_hist_percentile(h, 50), 500);
	T_UEQ(tk_hist_percentile(h, 0.1), 1);
	T_UEQ(tk_hist_percentile(h, 100), 1000);
	T_UEQ(tk_hist_percentile(h, 10.01), 101);
	free(ref);
	tk_hist_free(h);
}

/* Merging two histograms equals recording both streams into one. */
TEST(hist_merge)
{
	struct tk_hist	*a, *b, *all;
	struct walk	*wa, *wall;
	uint64_t	 v;
	int		 i;

	T_PTR(a = tk_hist_new());
	T_PTR(b = tk_hist_new());
	T_PTR(all = tk_hist_new());
	for (i = 0; i < 50000; i++) {
		v = rng_latency();
		tk_hist_record(a, v);
		tk_hist_record(all, v);
	}
	for (i = 0; i < 70000; i++) {
		/* A different shape: a narrow mode around 200 us. */
		v = 150000 + t_rand() % 100000;
		if (i % 7 == 0)
			v = rng_latency() * 3;
		tk_hist_record_n(b, v, 1 + i % 3);
		tk_hist_record_n(all, v, 1 + i % 3);
	}
	tk_hist_merge(a, b);
	T_UEQ(tk_hist_count(a), tk_hist_count(all));
	T_UEQ(tk_hist_min(a), tk_hist_min(all));
	T_UEQ(tk_hist_max(a), tk_hist_max(all));
	T_OK(tk_hist_mean(a) == tk_hist_mean(all));
	wa = walk_of(a);
	wall = walk_of(all);
	walk_same(wa, wall);
	T_UEQ(tk_hist_percentile(a, 99.9), tk_hist_percentile(all, 99.9));

	/* Merging an empty one changes nothing, min included. */
	tk_hist_reset(b);
	tk_hist_merge(a, b);
	T_UEQ(tk_hist_count(a), tk_hist_count(all));
	T_UEQ(tk_hist_min(a), tk_hist_min(all));
	/* And merging into an empty one copies. */
	tk_hist_merge(b, all);
	free(wa);
	wa = walk_of(b);
	walk_same(wa, wall);
	T_UEQ(tk_hist_min(b), tk_hist_min(all));
	T_UEQ(tk_hist_max(b), tk_hist_max(all));
	free(wa);
	free(wall);
	tk_hist_free(a);
	tk_hist_free(b);
	tk_hist_free(all);
}

/* Recording each walked (lo, count) with record_n gives the same buckets. */
TEST(hist_walk_roundtrip)
{
	struct tk_hist	*h, *copy;
	struct walk	*w, *wc;
	uint64_t	 sum = 0;
	size_t		 i;

	T_PTR(h = tk_hist_new());
	T_PTR(copy = tk_hist_new());
	for (i = 0; i < 200000; i++)
		tk_hist_record(h, rng_latency());
	tk_hist_record(h, 0);
	tk_hist_record(h, 5 * NS_100S);
	w = walk_of(h);
	T_GT(w->n, 1000);
	for (i = 0; i < w->n; i++) {
		T_UEQ(tk_hist_lowest_equiv(w->lo[i]), w->lo[i]);
		tk_hist_record_n(copy, w->lo[i], w->count[i]);
		sum += w->count[i];
	}
	T_UEQ(sum, tk_hist_count(h));
	wc = walk_of(copy);
	walk_same(w, wc);
	T_UEQ(tk_hist_count(copy), tk_hist_count(h));
	free(w);
	free(wc);
	tk_hist_free(h);
	tk_hist_free(copy);
}

/* Values above the top share the last bucket; max stays exact. */
TEST(hist_clamp)
{
	struct tk_hist	*h;
	struct walk	*w;
	uint64_t	 top;

	T_PTR(h = tk_hist_new());
	top = tk_hist_lowest_equiv(UINT64_MAX);
	T_OK(top > NS_100S);
	T_UEQ(tk_hist_lowest_equiv(1000 * NS_100S), top);
	T_UEQ(tk_hist_highest_equiv(1000 * NS_100S), UINT64_MAX);

	tk_hist_record(h, 1000);
	tk_hist_record(h, 1000 * NS_100S);
	tk_hist_record(h, UINT64_MAX);
	T_UEQ(tk_hist_count(h), 3);
	T_UEQ(tk_hist_min(h), 1000);
	T_UEQ(tk_hist_max(h), UINT64_MAX);
	T_UEQ(tk_hist_percentile(h, 100), UINT64_MAX);
	T_UEQ(tk_hist_percentile(h, 50), UINT64_MAX);
	T_UEQ(tk_hist_percentile(h, 33), 1000);
	w = walk_of(h);
	T_UEQ(w->n, 2);
	T_UEQ(w->lo[1], top);
	T_UEQ(w->count[1], 2);

	/* Clamped alone: the answer is the true max, not the bucket top. */
	tk_hist_reset(h);
	tk_hist_record(h, 3000 * NS_100S);
	T_UEQ(tk_hist_percentile(h, 50), 3000 * NS_100S);
	T_UEQ(tk_hist_max(h), 3000 * NS_100S);
	free(w);
	tk_hist_free(h);
}

TEST(hist_stats)
{
	struct tk_hist	*h;

	T_PTR(h = tk_hist_new());
	T_UEQ(tk_hist_count(h), 0);
	T_UEQ(tk_hist_min(h), 0);
	T_UEQ(tk_hist_max(h), 0);
	T_OK(tk_hist_mean(h) == 0);
	T_UEQ(tk_hist_percentile(h, 50), 0);

	tk_hist_record(h, 3);
	tk_hist_record(h, 1);
	tk_hist_record(h, 2);
	tk_hist_record(h, 1000000);
	T_UEQ(tk_hist_count(h), 4);
	T_UEQ(tk_hist_min(h), 1);
	T_UEQ(tk_hist_max(h), 1000000);
	T_OK(tk_hist_mean(h) == 1000006 / 4.0);

	tk_hist_record_n(h, 10, 6);
	tk_hist_record_n(h, 7, 0);		/* counts nothing */
	T_UEQ(tk_hist_count(h), 10);
	T_UEQ(tk_hist_min(h), 1);
	T_OK(tk_hist_mean(h) == 1000066 / 10.0);
	T_UEQ(tk_hist_percentile(h, 90), 10);	/* 9th of 10 */
	/* The top of 1000000's bucket is above max: capped. */
	T_UEQ(tk_hist_percentile(h, 91), 1000000);

	tk_hist_record(h, 0);
	T_UEQ(tk_hist_min(h), 0);
	T_UEQ(tk_hist_count(h), 11);

	tk_hist_reset(h);
	T_UEQ(tk_hist_count(h), 0);
	T_UEQ(tk_hist_min(h), 0);
	T_UEQ(tk_hist_max(h), 0);
	T_OK(tk_hist_mean(h) == 0);
	tk_hist_record(h, 42);
	T_UEQ(tk_hist_min(h), 42);
	T_UEQ(tk_hist_percentile(h, 0.0001), 42);
	tk_hist_free(h);
}
