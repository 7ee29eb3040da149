/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report as CSV (--csv), as redis-benchmark --csv gives one: a
 * header line and one row, latencies in milliseconds.  The columns are
 * the same for every run (those of the uncorrected latency are empty
 * outside rate mode), so that the rows of many runs stack into one
 * table; the percentile columns follow --percentiles.
 *
 *	mode,targets,connections,msgs,seconds,msgs_per_s,in_mb_per_s,
 *	out_mb_per_s,errors,unserved,min_ms,mean_ms,stdev_ms,p50_ms,...,
 *	max_ms,unc_min_ms,...,unc_max_ms
 */
#include <string.h>

#include "tenk/hist.h"
#include "loadgen.h"

/*
 * A field in double quotes, a quote in it doubled (RFC 4180); tenkbench's
 * CSV files write theirs with it too.
 */
void
report_csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void
csv_head(FILE *f, const struct report *r, const char *pfx)
{
	char	name[32];
	int	i;

	fprintf(f, ",%smin_ms,%smean_ms,%sstdev_ms", pfx, pfx, pfx);
	for (i = 0; i < r->npct; i++)
		fprintf(f, ",%s%s_ms", pfx, report_pct_name(r->pct[i], name,
		    sizeof(name)));
	fprintf(f, ",%smax_ms", pfx);
}

static void
csv_hist(FILE *f, const struct report *r, const struct lg_hist *lh,
    int empty)
{
	int	i;

	if (empty || tk_hist_count(lh->h) == 0) {
		for (i = 0; i < r->npct + 4; i++)
			fputc(',', f);
		return;
	}
	fprintf(f, ",%.3f,%.3f,%.3f", (double)tk_hist_min(lh->h) / 1e6,
	    lh->mean / 1e6, report_stdev(lh) / 1e6);
	for (i = 0; i < r->npct; i++)
		fprintf(f, ",%.3f", (double)tk_hist_percentile(lh->h,
		    r->pct[i]) / 1e6);
	fprintf(f, ",%.3f", (double)tk_hist_max(lh->h) / 1e6);
}

/* Write r to f.  Returns 0, or -1 with errno set when f failed. */
int
report_csv_write(FILE *f, const struct report *r)
{
	int	rate = strcmp(r->mode, "rate") == 0;

	fprintf(f, "mode,targets,connections,msgs,seconds,msgs_per_s,"
	    "in_mb_per_s,out_mb_per_s,errors,unserved");
	csv_head(f, r, "");
	csv_head(f, r, "unc_");
	fputc('\n', f);
	report_csv_str(f, r->mode);
	fputc(',', f);
	report_csv_str(f, r->targets);
	fprintf(f, ",%llu,%llu,%.3f,%.1f,%.3f,%.3f,%llu,%llu",
	    (unsigned long long)(r->requested - r->idle),
	    (unsigned long long)r->msgs, (double)report_measured(r) / 1e6,
	    r->msgs_rate, r->in_rate / 1e6, r->out_rate / 1e6,
	    (unsigned long long)report_errors(r),
	    (unsigned long long)r->unserved);
	csv_hist(f, r, &r->lat, 0);
	csv_hist(f, r, &r->lat_unc, !rate);
	fputc('\n', f);
	fflush(f);
	return ferror(f) ? -1 : 0;
}
