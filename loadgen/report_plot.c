/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --plot DIR: a report's latencies as two charts, drawn by gnuplot in
 * the manner of tenkbench's (a title that says what ran, axes labelled
 * with their units, a footer naming the machine):
 *
 *	latency.png	p50, p99 and p99.9 of each second, corrected
 *			(solid) and, in rate mode, uncorrected (dashed),
 *			against the seconds from the start of the measured
 *			window, on a log scale of milliseconds
 *	spectrum.png	the percentile spectrum of the measured window,
 *			HdrHistogram's chart: latency against percentile on
 *			a log axis of 1 / (1 - percentile)
 *
 * The data go to latency.dat and spectrum.dat, the script to plot.gp,
 * which gnuplot runs in DIR (so they can be drawn again, or elsewhere);
 * without gnuplot one line says so and the data stay.  A merged report
 * plots too: its seconds are the wall clock's, merged bucket by bucket;
 * reports written without --plot carry no seconds, and draw the
 * spectrum only.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/hist.h"
#include "loadgen.h"

#define SPECTRUM_TOP	99.9999		/* the chart's last percentile */

static const double	 sec_pct[] = { 50, 99, 99.9 };

/*
 * Percentile p of the buckets b[0..n): the highest value of the bucket
 * holding the ceil(p/100 * count)-th value, as tk_hist_percentile().
 */
static double
bkt_pct(const struct lg_bkt *b, size_t n, double p)
{
	uint64_t	total = 0, rank, cum = 0;
	size_t		i;

	for (i = 0; i < n; i++)
		total += b[i].n;
	if (total == 0)
		return -1;
	rank = (uint64_t)((p / 100) * (double)total + 0.9999999);
	if (rank == 0)
		rank = 1;
	for (i = 0; i < n; i++) {
		cum += b[i].n;
		if (cum >= rank)
			break;
	}
	return (double)tk_hist_highest_equiv(b[i < n ? i : n - 1].lo) / 1e6;
}

static FILE *
plot_open(const char *dir, const char *name, char *path, size_t len)
{
	FILE	*f;

	if ((size_t)snprintf(path, len, "%s/%s", dir, name) >= len) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	if ((f = fopen(path, "w")) == NULL)
		return NULL;
	return f;
}

static int
plot_close(FILE *f)
{
	if (ferror(f)) {
		fclose(f);
		return -1;
	}
	return fclose(f) == EOF ? -1 : 0;
}

/* latency.dat: a row a second. */
static void
latency_data(FILE *f, const struct report *r)
{
	const struct lg_sec	*s;
	double			 t0 = (double)r->t_meas_start / 1e6, v;
	uint64_t		 n;
	size_t			 i, k, j;

	fprintf(f, "# tenkload --plot: latency per second, ms; t: seconds "
	    "from the start of the measured window (its middle)\n"
	    "# t p50 p99 p99.9 unc_p50 unc_p99 unc_p99.9 msgs\n");
	for (i = 0; i < r->series.n; i++) {
		s = &r->series.s[i];
		for (n = 0, j = 0; j < s->nlat; j++)
			n += s->b[j].n;
		fprintf(f, "%.1f", (double)s->t + 0.5 - t0);
		for (k = 0; k < 3; k++)
			fprintf(f, " %.3f", bkt_pct(s->b, s->nlat, sec_pct[k]));
		for (k = 0; k < 3; k++) {
			v = bkt_pct(s->b + s->nlat, s->nunc, sec_pct[k]);
			if (v < 0)
				fprintf(f, " NaN");
			else
				fprintf(f, " %.3f", v);
		}
		fprintf(f, " %llu\n", (unsigned long long)n);
	}
}

/*
 * spectrum.dat: a row a percentile level, 5 levels a halving of the
 * distance to 100% (report_hgrm_next()), up to SPECTRUM_TOP or the level
 * at which one value is left.
 */
static void
spectrum_data(FILE *f, const struct report *r, int rate)
{
	uint64_t	count = tk_hist_count(r->lat.h);
	double		level = 0, x;

	fprintf(f, "# tenkload --plot: the percentile spectrum of the "
	    "measured window, ms\n# percentile 1/(1-percentile) latency "
	    "uncorrected\n");
	while (count > 0 && level <= SPECTRUM_TOP &&
	    (100 - level) / 100 * (double)count >= 1) {
		x = 1 / (1 - level / 100);
		fprintf(f, "%.6f %.3f %.3f", level, x, level == 0 ?
		    (double)tk_hist_min(r->lat.h) / 1e6 :
		    (double)tk_hist_percentile(r->lat.h, level) / 1e6);
		if (rate && tk_hist_count(r->lat_unc.h) > 0)
			fprintf(f, " %.3f", level == 0 ?
			    (double)tk_hist_min(r->lat_unc.h) / 1e6 :
			    (double)tk_hist_percentile(r->lat_unc.h, level) /
			    1e6);
		else
			fprintf(f, " NaN");
		fputc('\n', f);
		level = report_hgrm_next(level);
	}
}

/* s as a gnuplot string in double quotes. */
static void
gp_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void
plot_script(FILE *f, const struct report *r, int rate)
{
	char	 foot[400], what[1100], win[700];
	double	 meas = (double)report_measured(r) / 1e6, t0, xlo, xhi;

	snprintf(foot, sizeof(foot), "%s; RLIMIT_NOFILE %llu, backend %s, "
	    "tenkload %s", r->machine[0] != '\0' ? r->machine : "?",
	    (unsigned long long)r->nofile, r->backend, r->version);
	snprintf(what, sizeof(what), "%s", r->args[0] != '\0' ? r->args :
	    "tenkload merge");
	if (strlen(what) > 110)
		memcpy(what + 107, "...", 4);
	snprintf(win, sizeof(win), "%s mode, %llu connections to %s, "
	    "%.3f s measured%s", r->mode,
	    (unsigned long long)(r->requested - r->idle), r->targets, meas,
	    r->merged > 1 ? ", reports merged" : "");

	fprintf(f, "# gnuplot script written by tenkload --plot; run from "
	    "this directory.\n");
	fprintf(f, "set encoding utf8\n");
	fprintf(f, "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) "
	    "{ set terminal pngcairo size 1000,680 noenhanced } "
	    "else { set terminal png size 1000,680 noenhanced }\n");
	fprintf(f, "set grid\nset key outside right top\nset bmargin 7\n");
	fprintf(f, "set label 1 ");
	gp_str(f, foot);
	fprintf(f, " at screen 0.01, screen 0.02 font \",9\"\n");

	if (r->series.n == 0)
		goto spectrum;
	fprintf(f, "\nset output \"latency.png\"\nset title ");
	gp_str(f, what);
	fprintf(f, " . \"\\n\" . ");
	gp_str(f, win);
	fprintf(f, " . \"\\neach second's p50, p99 and p99.9%s; dotted: "
	    "the measured window\"\n", rate ? " (solid: corrected, from the "
	    "intended send; dashed: uncorrected)" : "");
	/* The seconds of the series and the window, whole. */
	t0 = (double)r->t_meas_start / 1e6;
	xlo = (double)r->series.s[0].t - t0;
	xhi = (double)r->series.s[r->series.n - 1].t + 1 - t0;
	fprintf(f, "set xrange [%.3f:%.3f]\n", xlo < 0 ? xlo : 0,
	    xhi > meas ? xhi : meas);
	fprintf(f, "set xlabel \"seconds from the start of the measured "
	    "window\"\nset ylabel \"latency, ms (log scale)\"\n"
	    "set logscale y\n");
	fprintf(f, "set arrow 1 from 0, graph 0 to 0, graph 1 nohead "
	    "dt 3 lc rgb \"gray40\"\n");
	fprintf(f, "set arrow 2 from %.3f, graph 0 to %.3f, graph 1 nohead "
	    "dt 3 lc rgb \"gray40\"\n", meas, meas);
	fprintf(f, "plot \"latency.dat\" using 1:2 with linespoints lw 2 "
	    "lc 1 title \"p50\", \\\n"
	    "     \"\" using 1:3 with linespoints lw 2 lc 2 title \"p99\", "
	    "\\\n"
	    "     \"\" using 1:4 with linespoints lw 2 lc 3 title "
	    "\"p99.9\"");
	if (rate)
		fprintf(f, ", \\\n"
		    "     \"\" using 1:5 with lines lw 2 dt 2 lc 1 title "
		    "\"p50 uncorrected\", \\\n"
		    "     \"\" using 1:6 with lines lw 2 dt 2 lc 2 title "
		    "\"p99 uncorrected\", \\\n"
		    "     \"\" using 1:7 with lines lw 2 dt 2 lc 3 title "
		    "\"p99.9 uncorrected\"");
	fprintf(f, "\nunset arrow 1\nunset arrow 2\nunset logscale y\n"
	    "set autoscale x\n");

 spectrum:
	fprintf(f, "\nset output \"spectrum.png\"\nset title ");
	gp_str(f, what);
	fprintf(f, " . \"\\n\" . ");
	gp_str(f, win);
	fprintf(f, " . \"\\nlatency by percentile over the measured window "
	    "(HdrHistogram's spectrum)\"\n");
	fprintf(f, "set xlabel \"percentile (scale: log of 1 / (1 - "
	    "percentile))\"\nset ylabel \"latency, ms\"\n"
	    "set logscale x\nset yrange [0:*]\n"
	    "set xtics (\"0%%%%\" 1, \"90%%%%\" 10, \"99%%%%\" 100, "
	    "\"99.9%%%%\" 1000, \"99.99%%%%\" 10000, \"99.999%%%%\" 100000, "
	    "\"99.9999%%%%\" 1000000)\n");
	fprintf(f, "plot \"spectrum.dat\" using 2:3 with lines lw 2 lc 1 "
	    "title \"%s\"", rate ? "corrected" : "latency");
	if (rate)
		fprintf(f, ", \\\n     \"\" using 2:4 with lines lw 2 dt 2 "
		    "lc 2 title \"uncorrected\"");
	fprintf(f, "\n");
}

/*
 * Run gnuplot on plot.gp in dir, its output in gnuplot.log there.
 * Returns 0, 1 when there is no gnuplot, -1 when it failed.
 */
static int
plot_run(const char *dir)
{
	char	 log[PATH_MAX];
	pid_t	 pid;
	int	 fd, st;

	snprintf(log, sizeof(log), "%s/gnuplot.log", dir);
	fflush(NULL);
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		if (chdir(dir) == -1 || (fd = open("gnuplot.log",
		    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) == -1)
			_exit(126);
		dup2(fd, 1);
		dup2(fd, 2);
		execlp("gnuplot", "gnuplot", "plot.gp", (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		return 1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/*
 * Write the data files and the script of r's charts into dir (made if
 * missing) and draw them.  Returns 0, or -1 after one line on stderr
 * when a file could not be written or gnuplot failed.
 */
int
report_plot(const char *dir, const struct report *r, int quiet)
{
	FILE	*f;
	char	 path[PATH_MAX];
	int	 rate = strcmp(r->mode, "rate") == 0, st;

	if (mkdir(dir, 0755) == -1 && errno != EEXIST)
		goto fail_dir;
	if ((f = plot_open(dir, "latency.dat", path, sizeof(path))) == NULL)
		goto fail;
	latency_data(f, r);
	if (plot_close(f) == -1)
		goto fail;
	if ((f = plot_open(dir, "spectrum.dat", path, sizeof(path))) == NULL)
		goto fail;
	spectrum_data(f, r, rate);
	if (plot_close(f) == -1)
		goto fail;
	if ((f = plot_open(dir, "plot.gp", path, sizeof(path))) == NULL)
		goto fail;
	plot_script(f, r, rate);
	if (plot_close(f) == -1)
		goto fail;
	if (r->series.n == 0)
		fprintf(stderr, "tenkload: --plot: no second of latencies in "
		    "the report (were its runs given --plot?): spectrum.png "
		    "only\n");
	switch (plot_run(dir)) {
	case 1:
		fprintf(stderr, "tenkload: --plot: no gnuplot: the data and "
		    "plot.gp are in %s (gnuplot draws them there; Debian "
		    "package gnuplot-nox)\n", dir);
		return 0;
	case -1:
		fprintf(stderr, "tenkload: --plot: gnuplot failed, see "
		    "%s/gnuplot.log\n", dir);
		return -1;
	}
	if (!quiet && r->series.n > 0)
		fprintf(stderr, "tenkload: plots in %s/latency.png and "
		    "%s/spectrum.png\n", dir, dir);
	else if (!quiet)
		fprintf(stderr, "tenkload: plot in %s/spectrum.png\n", dir);
	return 0;

 fail_dir:
	snprintf(path, sizeof(path), "%s", dir);
 fail:
	st = errno;
	fprintf(stderr, "tenkload: --plot: %s: %s\n", path, strerror(st));
	return -1;
}
