/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sweep: one cell for every idle-connection count and every backend,
 * laid out idle count by idle count, those this machine cannot hold
 * skipped; each cell run in turn (bench_cell.c) with a progress line on
 * stderr that says how long the rest should take.
 */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/log.h"
#include "tenk/loop.h"
#include "tenk/parse.h"
#include "loadgen.h"
#include "bench.h"

#define FD_SPARE	32		/* tenkd's own: stdio, loops, pipes */
#define PORT_SPARE	1000		/* local ports left for others */

struct cell		*cells;
int			 ncells;

static uint64_t		 t0_us;

/* Progress: the cell running, what it does, how far (0..1, or -1). */
static struct {
	int		 cell;
	char		 what[160];
	double		 frac;
	uint64_t	 last;		/* us, the last line */
	uint64_t	 cell_t0;	/* us */
} prog;

/* Seconds as "1m05s" or "12s". */
static const char *
fmt_secs(double s, char *buf, size_t len)
{
	long	n = s > 0 ? lround(s) : 0;

	if (n >= 60)
		snprintf(buf, len, "%ldm%02lds", n / 60, n % 60);
	else
		snprintf(buf, len, "%lds", n);
	return buf;
}

static double
plan_cell(const struct cell *c)
{
	double	run, t;

	if (c->status == CELL_SKIPPED)
		return 0;
	/* Measured here: 0.15 s around a run, 0.4 ms to close an idle. */
	run = (double)(conf.warmup + conf.duration) / 1e9 + 0.15 +
	    (double)conf.active / (double)conf.connect_rate;
	t = 0.5 + (double)c->idle / (double)conf.connect_rate * 1.3 +
	    (double)c->idle * 0.0004 + conf.repeat * run;
	if (conf.syscalls)
		t += (double)conf.systime / 1e9 + 0.7;
	return t;
}

/* Why this machine cannot hold cell c, in its note; 0 when it can. */
static int
skip_cell(struct cell *c)
{
	uint64_t	fds = c->idle + conf.active + FD_SPARE;

	if (tk_backend_probe(c->backend) == -1)
		snprintf(c->note, sizeof(c->note), "the kernel refuses %s: %s",
		    c->backend, strerror(errno));
	else if (fds > conf.nofile)
		snprintf(c->note, sizeof(c->note), "%llu fds exceed "
		    "RLIMIT_NOFILE %llu of one tenkd",
		    (unsigned long long)fds, (unsigned long long)conf.nofile);
	else if (c->idle + conf.active + PORT_SPARE > conf.nports)
		snprintf(c->note, sizeof(c->note), "%llu connections exceed "
		    "the %llu local ports",
		    (unsigned long long)(c->idle + conf.active),
		    (unsigned long long)conf.nports);
	else
		return 0;
	return 1;
}

/* Lay out the cells, idle count by idle count, and mark the skipped. */
void
sweep_plan(void)
{
	struct cell	*c;
	int		 i, b;

	ncells = conf.nidle * conf.nbackends;
	if ((cells = calloc((size_t)ncells, sizeof(*cells))) == NULL)
		fatalx("out of memory");
	for (i = 0; i < conf.nidle; i++)
		for (b = 0; b < conf.nbackends; b++) {
			c = &cells[i * conf.nbackends + b];
			c->backend = conf.backends[b];
			c->idle = conf.idle[i];
			if (skip_cell(c))
				c->status = CELL_SKIPPED;
			c->plan = plan_cell(c);
		}
}

/* Seconds still to go, scaled by how the plan has held so far. */
static double
left_secs(void)
{
	double	done_plan = 0, done_took = 0, left = 0, in, f = 1;
	int	i;

	for (i = 0; i < ncells; i++) {
		if (i < prog.cell && cells[i].status != CELL_SKIPPED) {
			done_plan += cells[i].plan;
			done_took += cells[i].took;
		} else if (i > prog.cell)
			left += cells[i].plan;
	}
	if (done_plan > 0)
		f = done_took / done_plan;
	if (prog.cell < ncells) {
		in = (double)(report_epoch_us() - prog.cell_t0) / 1e6;
		if (cells[prog.cell].plan * f > in)
			left += cells[prog.cell].plan - in / f;
	}
	return left * f;
}

/* One progress line on stderr, at most once a second unless forced. */
void
sweep_progress(int force)
{
	const struct cell	*c = &cells[prog.cell];
	uint64_t		 now = report_epoch_us();
	char			 e[32], l[32], pct[16] = "";

	if (conf.quiet || (!force && now - prog.last < 1000000))
		return;
	prog.last = now;
	if (prog.frac >= 0)
		snprintf(pct, sizeof(pct), " %3.0f%%", prog.frac * 100);
	fprintf(stderr, "tenkbench: [%d/%d] %s idle %llu: %s%s; %s elapsed, "
	    "about %s left\n", prog.cell + 1, ncells, c->backend,
	    (unsigned long long)c->idle, prog.what, pct,
	    fmt_secs((double)(now - t0_us) / 1e6, e, sizeof(e)),
	    fmt_secs(left_secs(), l, sizeof(l)));
}

/* What the cell running does now, and how far (0..1, or -1). */
void
sweep_doing(double frac, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(prog.what, sizeof(prog.what), fmt, ap);
	va_end(ap);
	prog.frac = frac;
}

/* Every cell not skipped, in order; strace is NULL without --syscalls. */
void
sweep_run(const char *strace)
{
	struct cell	*c;
	char		 d1[32], d2[32];
	double		 plan = 0;
	int		 k;

	t0_us = report_epoch_us();
	if (!conf.quiet) {
		for (k = 0; k < ncells; k++)
			plan += cells[k].plan;
		fprintf(stderr, "tenkbench: %d cell%s, %d repeat%s of %s, "
		    "about %s; logs in %s/logs\n", ncells,
		    ncells == 1 ? "" : "s", conf.repeat,
		    conf.repeat == 1 ? "" : "s",
		    tk_fmt_duration(conf.duration, d1, sizeof(d1)),
		    fmt_secs(plan, d2, sizeof(d2)), conf.out);
	}
	for (k = 0; k < ncells; k++) {
		c = &cells[k];
		prog.cell = k;
		prog.cell_t0 = report_epoch_us();
		if (c->status == CELL_SKIPPED)
			continue;
		cell_run(c, strace);
		c->took = (double)(report_epoch_us() - prog.cell_t0) / 1e6;
		if (!conf.quiet)
			fprintf(stderr, "tenkbench: [%d/%d] %s idle %llu: %s "
			    "in %.1f s%s%s\n", k + 1, ncells, c->backend,
			    (unsigned long long)c->idle,
			    out_status(c->status), c->took,
			    c->note[0] != '\0' ? ": " : "", c->note);
		child_quit();
	}
	prog.cell = ncells;
}

/* Did any cell that ran not end "ok"? */
int
sweep_failed(void)
{
	int	k;

	for (k = 0; k < ncells; k++)
		if (cells[k].status != CELL_OK &&
		    cells[k].status != CELL_SKIPPED)
			return 1;
	return 0;
}
