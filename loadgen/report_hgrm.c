/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The latency spectrum of a report in HdrHistogram's percentile
 * distribution format (.hgrm), the one wrk2 prints with --latency and
 * HdrHistogram's plotter (plotFiles.html) reads:
 *
 *	       Value   Percentile   TotalCount 1/(1-Percentile)
 *
 *	       0.041     0.000000            1         1.00
 *	       ...
 *	       2.303     1.000000        38120          inf
 *	#[Mean    =        0.052, StdDeviation   =        0.031]
 *	#[Max     =        2.302, Total count    =        38120]
 *	#[Buckets =           27, SubBuckets     =         2048]
 *
 * Values are milliseconds, as wrk2 prints them.  Rows come at
 * percentile levels that start at 0 and step ever finer towards 100:
 * 5 steps per halving of the distance to 100 (10% apart up to 50%, then
 * 5% to 75%, 2.5% to 87.5%, ...).  Each row gives the level, the value
 * of the first bucket whose cumulative count reaches it (its highest
 * equivalent value, never above max) and that cumulative count; a last
 * row at 100% gives max.  StdDeviation is report_stdev()'s, from the
 * bucket midpoints; Buckets and SubBuckets describe tk_hist's layout.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "tenk/hist.h"
#include "loadgen.h"

#define HGRM_TICKS	5		/* rows per halving to 100% */
#define HGRM_BUCKETS	27		/* hist.c: 2^37 ns at the top */
#define HGRM_SUBBUCKETS	2048		/* hist.c: 11 bits */

struct hgrm_bucket {
	uint64_t	 hi;		/* highest value, capped at max */
	uint64_t	 count;
};

struct hgrm {
	struct hgrm_bucket	*b;
	size_t			 n;
	size_t			 cap;
	uint64_t		 max;
	int			 nomem;
};

static void
hgrm_bucket(uint64_t lo, uint64_t count, void *arg)
{
	struct hgrm		*hg = arg;
	struct hgrm_bucket	*nb;
	uint64_t		 hi = tk_hist_highest_equiv(lo);

	if (hg->nomem)
		return;
	if (hg->n == hg->cap) {
		hg->cap = hg->cap != 0 ? hg->cap * 2 : 256;
		if ((nb = reallocarray(hg->b, hg->cap, sizeof(*nb))) == NULL) {
			hg->nomem = 1;
			return;
		}
		hg->b = nb;
	}
	hg->b[hg->n].hi = hi < hg->max ? hi : hg->max;
	hg->b[hg->n].count = count;
	hg->n++;
}

static void
hgrm_row(FILE *f, uint64_t v, double level, uint64_t count)
{
	fprintf(f, "%12.3f %12f %12llu %12.2f\n", (double)v / 1e6,
	    level / 100, (unsigned long long)count, 1 / (1 - level / 100));
}

/*
 * The percentile level after level: 100 / (ticks * 2^(floor(log2(
 * distance)) + 1)) further, for the rows here and --plot's spectrum.
 */
double
report_hgrm_next(double level)
{
	double	halvings = floor(log2(100 / (100 - level)));

	return level + 100 / (HGRM_TICKS * pow(2, halvings + 1));
}

/*
 * Write the latency histogram of r (the corrected one in rate mode) to
 * f.  Returns 0, or -1 with errno set when memory or the stream failed.
 */
int
report_hgrm_write(FILE *f, const struct report *r)
{
	const struct lg_hist	*lh = &r->lat;
	struct hgrm		 hg = { NULL, 0, 0, 0, 0 };
	uint64_t		 total = tk_hist_count(lh->h), cum = 0;
	double			 level = 0;
	size_t			 i, cur = 0;

	hg.max = tk_hist_max(lh->h);
	tk_hist_walk(lh->h, hgrm_bucket, &hg);
	if (hg.nomem) {
		free(hg.b);
		errno = ENOMEM;
		return -1;
	}
	fprintf(f, "%12s %12s %12s %12s\n\n", "Value", "Percentile",
	    "TotalCount", "1/(1-Percentile)");
	for (i = 0; total > 0; ) {
		/* Every count seen: the last row, at 100%. */
		if (cum == total) {
			hgrm_row(f, hg.max, 100, total);
			break;
		}
		while (i < hg.n && (i == 0 ||
		    (double)cum * 100 / (double)total < level)) {
			cur = i++;
			cum += hg.b[cur].count;
		}
		hgrm_row(f, hg.b[cur].hi, level, cum);
		level = report_hgrm_next(level);
	}
	fprintf(f, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n",
	    lh->mean / 1e6, report_stdev(lh) / 1e6);
	fprintf(f, "#[Max     = %12.3f, Total count    = %12llu]\n",
	    (double)hg.max / 1e6, (unsigned long long)total);
	fprintf(f, "#[Buckets = %12d, SubBuckets     = %12d]\n",
	    HGRM_BUCKETS, HGRM_SUBBUCKETS);
	free(hg.b);
	fflush(f);
	return ferror(f) ? -1 : 0;
}
