/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The results of the sweep: a table on stdout, results.csv and runs.csv,
 * results.json, and with --plot gnuplot's data files, script and charts,
 * all under OUT.  Each cell shows the median of its runs with the
 * minimum and the maximum.
 */
#include <sys/select.h>
#include <sys/types.h>
#include <sys/utsname.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/json.h"
#include "tenk/log.h"
#include "tenk/parse.h"
#include "loadgen.h"
#include "bench.h"

enum field {
	F_RATE = 0,
	F_P50,
	F_P99,
	F_CPU,
	F_CCPU
};

static double
run_field(const struct run *r, enum field f)
{
	switch (f) {
	case F_RATE:
		return r->rate;
	case F_P50:
		return r->p50;
	case F_P99:
		return r->p99;
	case F_CPU:
		return r->cpu;
	case F_CCPU:
		return r->ccpu;
	}
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median, min and max of field f over c's runs; 0 without runs. */
static void
stat3(const struct cell *c, enum field f, double *med, double *lo,
    double *hi)
{
	double	v[MAXREPEAT];
	int	i, n = c->nruns;

	*med = *lo = *hi = 0;
	if (n == 0)
		return;
	for (i = 0; i < n; i++)
		v[i] = run_field(&c->runs[i], f);
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	*lo = v[0];
	*hi = v[n - 1];
	*med = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double
sys_per_msg(const struct cell *c)
{
	return c->sys_msgs > 0 ? (double)c->sys_total / (double)c->sys_msgs :
	    -1;
}

/* A cell's status as the table, CSV and JSON name it. */
const char *
out_status(enum cell_status s)
{
	switch (s) {
	case CELL_PENDING:
		return "pending";
	case CELL_OK:
		return "ok";
	case CELL_ERRORS:
		return "errors";
	case CELL_FAILED:
		return "failed";
	case CELL_SKIPPED:
		return "skipped";
	}
	return "?";
}

/* The table of the cells, one row each, with the notes below. */
void
out_table(FILE *f)
{
	const struct cell	*c;
	double			 m, lo, hi, p50, p99, x, y, cm, clo, chi;
	char			 rate[64], cpu[64], sys[16], d1[32], d2[32];
	int			 i;

	fprintf(f, "\ntenkd echo --threads %d%s; %llu active ping-pong "
	    "connections of %llu B; %s measured after %s of warm-up; "
	    "median of %d (min-max)\n", conf.threads,
	    conf.tls_cert != NULL ? " over TLS" : "",
	    (unsigned long long)conf.active, (unsigned long long)conf.size,
	    tk_fmt_duration(conf.duration, d1, sizeof(d1)),
	    tk_fmt_duration(conf.warmup, d2, sizeof(d2)), conf.repeat);
	fprintf(f, "%-8s %6s  %-26s %8s %8s  %-22s %8s\n", "backend", "idle",
	    "msgs/s", "p50 us", "p99 us", "server CPU us/msg", "sys/msg");
	for (i = 0; i < ncells; i++) {
		c = &cells[i];
		if (c->status == CELL_SKIPPED || c->nruns == 0) {
			fprintf(f, "%-8s %6llu  %s: %s\n", c->backend,
			    (unsigned long long)c->idle,
			    out_status(c->status), c->note);
			continue;
		}
		stat3(c, F_RATE, &m, &lo, &hi);
		snprintf(rate, sizeof(rate), "%.0f (%.0f-%.0f)", m, lo, hi);
		stat3(c, F_P50, &p50, &x, &y);
		stat3(c, F_P99, &p99, &x, &y);
		stat3(c, F_CPU, &cm, &clo, &chi);
		snprintf(cpu, sizeof(cpu), "%.2f (%.2f-%.2f)", cm, clo, chi);
		if (sys_per_msg(c) >= 0)
			snprintf(sys, sizeof(sys), "%.2f", sys_per_msg(c));
		else
			strlcpy(sys, "-", sizeof(sys));
		fprintf(f, "%-8s %6llu  %-26s %8.0f %8.0f  %-22s %8s\n",
		    c->backend, (unsigned long long)c->idle, rate, p50, p99,
		    cpu, sys);
		if (c->status != CELL_OK || c->note[0] != '\0')
			fprintf(f, "%17s%s: %s\n", "", out_status(c->status),
			    c->note);
	}
	fflush(f);
}

static FILE *
file_open(const char *name, char *path, size_t len)
{
	FILE	*f;

	snprintf(path, len, "%s/%s", conf.out, name);
	if ((f = fopen(path, "we")) == NULL)
		fatal("%s", path);
	return f;
}

static void
file_close(FILE *f, const char *path)
{
	if (fflush(f) == EOF || ferror(f)) {
		fclose(f);
		fatalx("%s: write failed", path);
	}
	fclose(f);
}

/* results.csv, a row per cell, and runs.csv, a row per run. */
void
out_csv(void)
{
	const struct cell	*c;
	const struct run	*r;
	enum field		 fl;
	FILE			*f;
	char			 path[PATH_MAX];
	double			 m, lo, hi;
	int			 i, k;

	f = file_open("results.csv", path, sizeof(path));
	fprintf(f, "backend,idle,active,status,runs,errors,"
	    "msgs_per_s,msgs_per_s_min,msgs_per_s_max,"
	    "p50_us,p50_us_min,p50_us_max,p99_us,p99_us_min,p99_us_max,"
	    "cpu_us_per_msg,cpu_us_per_msg_min,cpu_us_per_msg_max,"
	    "client_cpu_us_per_msg,client_cpu_us_per_msg_min,"
	    "client_cpu_us_per_msg_max,syscalls_per_msg,note\n");
	for (i = 0; i < ncells; i++) {
		c = &cells[i];
		fprintf(f, "%s,%llu,%llu,%s,%d,%llu", c->backend,
		    (unsigned long long)c->idle,
		    (unsigned long long)conf.active, out_status(c->status),
		    c->nruns, (unsigned long long)c->errors);
		for (fl = F_RATE; fl <= F_CCPU; fl++) {
			if (c->nruns == 0) {
				fprintf(f, ",,,");
				continue;
			}
			stat3(c, fl, &m, &lo, &hi);
			fprintf(f, ",%.3f,%.3f,%.3f", m, lo, hi);
		}
		if (sys_per_msg(c) >= 0)
			fprintf(f, ",%.3f,", sys_per_msg(c));
		else
			fprintf(f, ",,");
		report_csv_str(f, c->note);
		fputc('\n', f);
	}
	file_close(f, path);

	f = file_open("runs.csv", path, sizeof(path));
	fprintf(f, "backend,idle,repeat,msgs,msgs_per_s,p50_us,p99_us,"
	    "cpu_us_per_msg,client_cpu_us_per_msg,errors\n");
	for (i = 0; i < ncells; i++) {
		c = &cells[i];
		for (k = 0; k < c->nruns; k++) {
			r = &c->runs[k];
			fprintf(f, "%s,%llu,%d,%llu,%.3f,%.3f,%.3f,%.3f,%.3f,"
			    "%llu\n", c->backend, (unsigned long long)c->idle,
			    k + 1, (unsigned long long)r->msgs, r->rate,
			    r->p50, r->p99, r->cpu, r->ccpu,
			    (unsigned long long)r->errors);
		}
	}
	file_close(f, path);
}

static void
json_stat(FILE *f, const struct cell *c, const char *key, enum field fl)
{
	double	m, lo, hi;

	if (c->nruns == 0) {
		fprintf(f, "      \"%s\": null,\n", key);
		return;
	}
	stat3(c, fl, &m, &lo, &hi);
	fprintf(f, "      \"%s\": { \"median\": %.3f, \"min\": %.3f, "
	    "\"max\": %.3f },\n", key, m, lo, hi);
}

/* results.json: the machine, the configuration, the cells. */
void
out_json(void)
{
	const struct cell	*c;
	const struct run	*r;
	struct utsname		 u;
	FILE			*f;
	char			 path[PATH_MAX];
	int			 i, k;

	if (uname(&u) == -1)
		strlcpy(u.release, "?", sizeof(u.release));
	f = file_open("results.json", path, sizeof(path));
	fprintf(f, "{\n  \"tenkbench\": \"%s\",\n  \"format\": 1,\n",
	    TENK_VERSION);
	fprintf(f, "  \"args\": ");
	tk_json_str(f, conf.args);
	fprintf(f, ",\n  \"machine\": { \"kernel\": ");
	tk_json_str(f, u.release);
	fprintf(f, ", \"cpus\": %ld, \"nofile\": %llu, \"fd_setsize\": %d, "
	    "\"local_ports\": %llu },\n", sysconf(_SC_NPROCESSORS_ONLN),
	    (unsigned long long)conf.nofile, FD_SETSIZE,
	    (unsigned long long)conf.nports);
	fprintf(f, "  \"config\": { \"server_threads\": %d, "
	    "\"load_threads\": %d, \"active\": %llu, \"size\": %llu, "
	    "\"duration_s\": %.3f, \"warmup_s\": %.3f, \"repeat\": %d, "
	    "\"connect_rate\": %llu, \"syscalls\": %s, "
	    "\"syscall_time_s\": %.3f },\n", conf.threads, conf.load_threads,
	    (unsigned long long)conf.active, (unsigned long long)conf.size,
	    (double)conf.duration / 1e9, (double)conf.warmup / 1e9,
	    conf.repeat, (unsigned long long)conf.connect_rate,
	    conf.syscalls ? "true" : "false", (double)conf.systime / 1e9);
	fprintf(f, "  \"cells\": [\n");
	for (i = 0; i < ncells; i++) {
		c = &cells[i];
		fprintf(f, "    {\n      \"backend\": \"%s\",\n"
		    "      \"idle\": %llu,\n      \"active\": %llu,\n"
		    "      \"status\": \"%s\",\n      \"errors\": %llu,\n"
		    "      \"note\": ", c->backend, (unsigned long long)c->idle,
		    (unsigned long long)conf.active, out_status(c->status),
		    (unsigned long long)c->errors);
		tk_json_str(f, c->note);
		fprintf(f, ",\n");
		json_stat(f, c, "msgs_per_s", F_RATE);
		json_stat(f, c, "p50_us", F_P50);
		json_stat(f, c, "p99_us", F_P99);
		json_stat(f, c, "cpu_us_per_msg", F_CPU);
		json_stat(f, c, "client_cpu_us_per_msg", F_CCPU);
		if (sys_per_msg(c) >= 0) {
			fprintf(f, "      \"syscalls_per_msg\": %.3f,\n",
			    sys_per_msg(c));
			fprintf(f, "      \"syscalls\": { \"msgs\": %llu, "
			    "\"total\": %llu", (unsigned long long)c->sys_msgs,
			    (unsigned long long)c->sys_total);
			for (k = 0; k < c->nsys; k++)
				fprintf(f, ", \"%s\": %llu", c->sys[k].name,
				    (unsigned long long)c->sys[k].calls);
			fprintf(f, " },\n");
		} else
			fprintf(f, "      \"syscalls_per_msg\": null,\n");
		fprintf(f, "      \"runs\": [");
		for (k = 0; k < c->nruns; k++) {
			r = &c->runs[k];
			fprintf(f, "%s\n        { \"msgs\": %llu, "
			    "\"msgs_per_s\": %.3f, \"p50_us\": %.3f, "
			    "\"p99_us\": %.3f, \"cpu_us_per_msg\": %.3f, "
			    "\"client_cpu_us_per_msg\": %.3f, "
			    "\"errors\": %llu }", k > 0 ? "," : "",
			    (unsigned long long)r->msgs, r->rate, r->p50,
			    r->p99, r->cpu, r->ccpu,
			    (unsigned long long)r->errors);
		}
		fprintf(f, "%s]\n    }%s\n", c->nruns > 0 ? "\n      " : "",
		    i + 1 < ncells ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	file_close(f, path);
}

/*
 * The machine in one line: kernel, CPUs and their model, memory, the
 * open-file limit; for the charts' footer.
 */
static void
machine_line(char *buf, size_t len)
{
	char	m[256];

	report_machine(m, sizeof(m), 0);
	snprintf(buf, len, "%s, RLIMIT_NOFILE %llu", m,
	    (unsigned long long)conf.nofile);
}

/*
 * The charts.  The idle axis is linear: the cost that poll and select
 * pay grows with each watched descriptor, which a linear axis draws as
 * the straight line it is, beside epoll's flat one (a logarithmic axis
 * would bend both, and has no place for 0, the baseline of every
 * sweep).  The small counts, crowded at the left of a linear axis, are
 * enlarged in an inset beside the chart.  Each chart is told what it
 * draws: error bars only when there were several runs to spread, a
 * latency chart of p50 and p99, ticks in k and M, and ranges with room
 * so that no point sits on the frame.
 */
struct chart {
	const char	*file;
	const char	*what;		/* in the title */
	const char	*ylabel;
	enum field	 f[2];		/* the fields drawn, one line each */
	int		 nf;
	double		 scale;		/* of the values, for the axis */
	int		 logy;		/* a logarithmic value axis */
};

/*
 * Latency on a logarithmic axis, in ms: p50 and p99 lie an order of
 * magnitude apart or more, and one slow cell would flatten every other
 * line of a linear one.
 */
static const struct chart charts[] = {
	{ "msgs.png", "echoed messages per second", "messages/s",
	    { F_RATE }, 1, 1, 0 },
	{ "cpu.png", "server CPU time per message",
	    "server CPU µs per message (user + system)", { F_CPU }, 1, 1, 0 },
	{ "latency.png", "latency, p50 and p99", "latency, ms (log scale)",
	    { F_P50, F_P99 }, 2, 1e-3, 1 },
};

/* The column of field f's median in plot-*.dat (min and max follow). */
#define DAT_COL(f)	(2 + 3 * (int)(f))

/* A tick label: 0, 500, 2.5k, 15k, 1.2M. */
static void
kfmt(double v, char *buf, size_t len)
{
	if (v >= 1e6)
		snprintf(buf, len, "%gM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, len, "%gk", v / 1e3);
	else
		snprintf(buf, len, "%g", v);
}

/* A tick step, 1, 2 or 5 times a power of ten, for about n up to max. */
static double
tick_step(double max, int n)
{
	double	raw = max / n, p, m;

	if (raw <= 0)
		return 1;
	p = pow(10, floor(log10(raw)));
	m = raw / p;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/*
 * "set {x,y}range" and "set {x,y}tics" for values from 0 to max: ticks
 * in k and M, and room past the ends (x: pad of the range on each
 * side; y: 3% below 0, and the top tick at least 8% above max) so that
 * no point sits on the frame.
 */
static void
axis(FILE *f, char ax, double max, int nticks, double pad)
{
	double	step = tick_step(max, nticks), top, v;
	char	lab[32];

	if (ax == 'x')
		top = max;
	else
		top = ceil(max * 1.08 / step) * step;
	if (top <= 0)
		top = step;
	fprintf(f, "set %ctics (", ax);
	for (v = 0; v <= top + step / 2; v += step) {
		kfmt(v, lab, sizeof(lab));
		fprintf(f, "%s\"%s\" %g", v > 0 ? ", " : "", lab, v);
	}
	fprintf(f, ")\n");
	if (ax == 'x')
		fprintf(f, "set xrange [%g:%g]\n", -pad * top,
		    (1 + pad) * top);
	else
		fprintf(f, "set yrange [%g:%g]\n", -0.03 * top, top);
}

/*
 * A logarithmic y axis from lo to hi (both above 0): ticks at 1, 2 and
 * 5 times each power of ten, and a factor of 1.6 of room at both ends.
 */
static void
axis_log(FILE *f, double lo, double hi)
{
	static const double	 m[] = { 1, 2, 5 };
	double			 p, v;
	int			 k, n = 0;

	if (lo <= 0 || hi <= 0)
		lo = hi = 1;
	lo /= 1.6;
	hi *= 1.6;
	fprintf(f, "set logscale y\nset ytics (");
	for (p = pow(10, floor(log10(lo))); p <= hi; p *= 10)
		for (k = 0; k < 3; k++) {
			v = m[k] * p;
			if (v >= lo && v <= hi)
				fprintf(f, "%s\"%g\" %g", n++ > 0 ? ", " : "",
				    v, v);
		}
	fprintf(f, ")\nset yrange [%g:%g]\n", lo, hi);
}

/*
 * The smallest and the largest value drawn of chart ch (times its
 * scale) over the cells with up to xmax idle connections: the minima
 * and maxima when bars show them.
 */
static void
chart_span(const struct chart *ch, uint64_t xmax, int bars, double *min,
    double *max)
{
	const struct cell	*c;
	double			 m, lo, hi;
	int			 i, k;

	*min = *max = 0;
	for (i = 0; i < ncells; i++) {
		c = &cells[i];
		if (c->nruns == 0 || c->idle > xmax)
			continue;
		for (k = 0; k < ch->nf; k++) {
			stat3(c, ch->f[k], &m, &lo, &hi);
			if (!bars)
				lo = hi = m;
			if (hi * ch->scale > *max)
				*max = hi * ch->scale;
			if (lo > 0 && (*min == 0 || lo * ch->scale < *min))
				*min = lo * ch->scale;
		}
	}
}

/* The value axis of chart ch for the cells up to xmax idle. */
static void
chart_yaxis(FILE *f, const struct chart *ch, uint64_t xmax, int bars,
    int nticks)
{
	double	lo, hi;

	chart_span(ch, xmax, bars, &lo, &hi);
	if (ch->logy)
		axis_log(f, lo, hi);
	else {
		fprintf(f, "unset logscale y\n");
		axis(f, 'y', hi, nticks, 0);
	}
}

/* The plot command of chart ch: per backend, a line per field. */
static void
chart_plot(FILE *f, const struct chart *ch, int bars, int key)
{
	double	scale = ch->scale;
	int	b, k, col;

	fprintf(f, "plot ");
	for (b = 0; b < conf.nbackends; b++)
		for (k = 0; k < ch->nf; k++) {
			col = DAT_COL(ch->f[k]);
			fprintf(f, "%s\"plot-%s.dat\" using 1:($%d*%g)",
			    b + k > 0 ? ", \\\n     " : "", conf.backends[b],
			    col, scale);
			if (bars)
				fprintf(f, ":($%d*%g):($%d*%g) with "
				    "yerrorlines", col + 1, scale, col + 2,
				    scale);
			else
				fprintf(f, " with linespoints");
			/* p99 solid, p50 dashed, a colour per backend. */
			fprintf(f, " lt %d dt %d lw 2", b + 1,
			    ch->nf > 1 && ch->f[k] == F_P50 ? 2 : 1);
			if (!key)
				fprintf(f, " notitle");
			else if (ch->nf > 1)
				fprintf(f, " title \"%s %s\"",
				    conf.backends[b],
				    ch->f[k] == F_P50 ? "p50" : "p99");
			else
				fprintf(f, " title \"%s\"", conf.backends[b]);
		}
	fprintf(f, "\n");
}

/*
 * The gnuplot script for the charts, into f: each a multiplot of the
 * chart (left), the key and the inset of the small idle counts (right).
 */
static void
plot_script(FILE *f)
{
	const struct chart	*ch;
	char			 machine[300], lab[32];
	uint64_t		 xmax = 0, smax = 0;
	size_t			 n;
	int			 i, bars = 0, nsmall = 0;

	machine_line(machine, sizeof(machine));
	for (i = 0; i < conf.nidle; i++)
		if (conf.idle[i] > xmax)
			xmax = conf.idle[i];
	/* The inset: the counts up to a fifth of the largest, if 3 or more. */
	for (i = 0; i < conf.nidle; i++)
		if (conf.idle[i] <= xmax / 5) {
			nsmall++;
			if (conf.idle[i] > smax)
				smax = conf.idle[i];
		}
	if (nsmall < 3)
		smax = 0;
	for (i = 0; i < ncells; i++)
		if (cells[i].nruns > 1)
			bars = 1;

	fprintf(f, "# gnuplot script written by tenkbench; "
	    "run from this directory.\n");
	fprintf(f, "set encoding utf8\n");
	fprintf(f, "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) "
	    "{ set terminal pngcairo size 1100,700 noenhanced } "
	    "else { set terminal png size 1100,700 noenhanced }\n");
	fprintf(f, "set grid\nset label 1 \"%s\" at screen 0.01, "
	    "screen 0.02 font \",9\"\n", machine);
	for (n = 0; n < sizeof(charts) / sizeof(charts[0]); n++) {
		ch = &charts[n];
		fprintf(f, "set output \"%s\"\n", ch->file);
		fprintf(f, "set multiplot title \"tenkd echo --threads %d: "
		    "%s, by backend, as idle connections grow\\n"
		    "%llu active ping-pong connections of %llu-byte messages "
		    "beside the idle ones, %.0f s measured per run\\n",
		    conf.threads, ch->what, (unsigned long long)conf.active,
		    (unsigned long long)conf.size,
		    (double)conf.duration / 1e9);
		if (bars)
			fprintf(f, "points: median of %d runs; bars: the "
			    "smallest to the largest run", conf.repeat);
		else
			fprintf(f, "one run per point");
		if (ch->nf > 1)
			fprintf(f, "; p99 solid, p50 dashed");
		fprintf(f, "\"\n");

		/* The chart, with the key beside it on the right. */
		fprintf(f, "set origin 0,0\nset size 0.76,0.9\n"
		    "set lmargin 10\nset bmargin 5\nset rmargin 2\n"
		    "set key at screen 0.99, screen 0.86 right top\n");
		fprintf(f, "set xlabel \"idle connections\"\n"
		    "set ylabel \"%s\"\n", ch->ylabel);
		axis(f, 'x', (double)xmax, 6, 0.04);
		chart_yaxis(f, ch, xmax, bars, 6);
		chart_plot(f, ch, bars, 1);

		if (smax > 0) {
			kfmt((double)smax, lab, sizeof(lab));
			fprintf(f, "set origin 0.76,0.08\nset size 0.23,0.5\n"
			    "set lmargin 8\nset bmargin 3\nset rmargin 3\n"
			    "set title \"0 to %s idle, enlarged\" "
			    "font \",10\"\nunset key\nunset xlabel\n"
			    "unset ylabel\n", lab);
			axis(f, 'x', (double)smax, 3, 0.1);
			chart_yaxis(f, ch, smax, bars, 4);
			chart_plot(f, ch, bars, 0);
			fprintf(f, "unset title\n");
		}
		fprintf(f, "unset multiplot\n");
	}
}

/*
 * Data files (one per backend) and a gnuplot script for three charts
 * against idle connections: msgs/s, server CPU per message, latency.
 */
void
out_plot(const char *gnuplot)
{
	const struct cell	*c;
	FILE			*f;
	char			 path[PATH_MAX], name[64], gp[PATH_MAX];
	char			 log[PATH_MAX], tail[200];
	const char		*argv[4];
	enum field		 fl;
	double			 m, lo, hi;
	pid_t			 pid;
	int			 b, i, status;

	for (b = 0; b < conf.nbackends; b++) {
		snprintf(name, sizeof(name), "plot-%s.dat", conf.backends[b]);
		f = file_open(name, path, sizeof(path));
		fprintf(f, "# idle msgs_per_s min max p50_us min max "
		    "p99_us min max cpu_us_per_msg min max\n");
		for (i = 0; i < ncells; i++) {
			c = &cells[i];
			if (strcmp(c->backend, conf.backends[b]) != 0 ||
			    c->nruns == 0)
				continue;
			fprintf(f, "%llu", (unsigned long long)c->idle);
			for (fl = F_RATE; fl <= F_CPU; fl++) {
				stat3(c, fl, &m, &lo, &hi);
				fprintf(f, " %.3f %.3f %.3f", m, lo, hi);
			}
			fprintf(f, "\n");
		}
		file_close(f, path);
	}
	f = file_open("plot.gp", gp, sizeof(gp));
	plot_script(f);
	file_close(f, gp);

	/* gnuplot runs in OUT, so the script names files relative to it. */
	snprintf(log, sizeof(log), "%s/logs/gnuplot.log", conf.out);
	argv[0] = gnuplot;
	argv[1] = "plot.gp";
	argv[2] = NULL;
	pid = child_spawn(argv, conf.out, log);
	child_wait(pid, &status);
	if (child_failed(status))
		fprintf(stderr, "tenkbench: gnuplot failed: %s\n",
		    child_log_tail(log, tail, sizeof(tail)));
	else if (!conf.quiet)
		fprintf(stderr, "tenkbench: plots in %s/msgs.png, %s/cpu.png "
		    "and %s/latency.png\n", conf.out, conf.out, conf.out);
}
