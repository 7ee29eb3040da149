/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What tenkbench measures of a process besides what tenkload reports:
 * CPU time and open fds from /proc, the local port range, and the
 * syscall counts of a "strace -c" summary.
 *
 * The CPU time of a process (utime + stime in /proc/PID/stat) is sampled
 * every SAMPLE_MS (bench_cell.c) with a wall-clock stamp while a run
 * lasts; the two samples bracketing each end of tenkload's measured
 * window (its JSON carries the window in epoch microseconds) are
 * interpolated, so the CPU per message covers the same window as the
 * message count, without guessing how long tenkload's ramp took.
 */
#include <sys/types.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/log.h"
#include "loadgen.h"
#include "bench.h"

static long	clk_tck;

/* utime + stime of pid in clock ticks; -1 when it is gone. */
static int
proc_ticks(pid_t pid, uint64_t *ticks)
{
	char		 path[64], buf[1024], *p;
	unsigned long long ut, st;
	ssize_t		 n;
	int		 fd, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* The command name may hold anything; fields resume after ')'. */
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	p++;
	/* Skip state through cmajflt (fields 3 to 13). */
	for (i = 0; i < 11; i++) {
		p += strspn(p, " ");
		p += strcspn(p, " ");
	}
	if (sscanf(p, " %llu %llu", &ut, &st) != 2)
		return -1;
	*ticks = (uint64_t)ut + (uint64_t)st;
	return 0;
}

/* Open fds of pid, or -1. */
long
proc_nfds(pid_t pid)
{
	struct dirent	*de;
	char		 path[64];
	DIR		*d;
	long		 n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Local ports available for connect(2), from the kernel's range. */
uint64_t
proc_ports(void)
{
	unsigned long	lo, hi;
	FILE		*f;
	int		n;

	if ((f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re")) ==
	    NULL)
		return LG_DEFAULT_PORTS;
	n = fscanf(f, "%lu %lu", &lo, &hi);
	fclose(f);
	return n == 2 && hi >= lo ? hi - lo + 1 : LG_DEFAULT_PORTS;
}

/* One CPU-time sample of pid, unless it is gone. */
void
samples_add(struct samples *s, pid_t pid)
{
	struct sample	*nv;
	uint64_t	 ticks;

	if (proc_ticks(pid, &ticks) == -1)
		return;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		if ((nv = reallocarray(s->v, s->cap, sizeof(*nv))) == NULL)
			fatalx("out of memory");
		s->v = nv;
	}
	s->v[s->n].t = report_epoch_us();
	s->v[s->n].ticks = ticks;
	s->n++;
}

/* Ticks at wall-clock time t, interpolated between samples. */
static double
samples_at(const struct samples *s, uint64_t t)
{
	const struct sample	*a, *b;
	size_t			 i;

	if (s->n == 0)
		return 0;
	if (t <= s->v[0].t)
		return (double)s->v[0].ticks;
	for (i = 1; i < s->n; i++) {
		if (s->v[i].t < t)
			continue;
		a = &s->v[i - 1];
		b = &s->v[i];
		if (b->t == a->t)
			return (double)b->ticks;
		return (double)a->ticks + (double)(b->ticks - a->ticks) *
		    (double)(t - a->t) / (double)(b->t - a->t);
	}
	return (double)s->v[s->n - 1].ticks;
}

/* CPU microseconds between wall-clock times from and to. */
double
samples_cpu_us(const struct samples *s, uint64_t from, uint64_t to)
{
	if (clk_tck == 0 && (clk_tck = sysconf(_SC_CLK_TCK)) <= 0)
		clk_tck = 100;
	return (samples_at(s, to) - samples_at(s, from)) * 1e6 /
	    (double)clk_tck;
}

void
samples_free(struct samples *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static int
cmp_sys(const void *a, const void *b)
{
	const struct sysent	*x = a, *y = b;

	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return strcmp(x->name, y->name);
}

/*
 * Read a "strace -c" summary: the table rows are "% time, seconds,
 * usecs/call, calls, [errors,] syscall", the last one "total".  Keeps
 * the total and the MAXSYS most frequent calls in c.  Returns 0 or -1.
 */
int
strace_parse(const char *path, struct cell *c)
{
	struct sysent	 all[512];
	char		 line[256], *tok[8], *p;
	FILE		*f;
	size_t		 nall = 0;
	int		 n, got = 0;

	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		n = 0;
		for (p = strtok(line, " \t\n"); p != NULL && n < 8;
		    p = strtok(NULL, " \t\n"))
			tok[n++] = p;
		if (n < 5 || n > 6 || strchr("0123456789", tok[0][0]) == NULL)
			continue;
		if (strcmp(tok[n - 1], "total") == 0) {
			c->sys_total = strtoull(tok[3], NULL, 10);
			got = 1;
			continue;
		}
		if (nall < sizeof(all) / sizeof(all[0])) {
			strlcpy(all[nall].name, tok[n - 1],
			    sizeof(all[nall].name));
			all[nall].calls = strtoull(tok[3], NULL, 10);
			nall++;
		}
	}
	fclose(f);
	if (!got)
		return -1;
	qsort(all, nall, sizeof(all[0]), cmp_sys);
	for (c->nsys = 0; c->nsys < MAXSYS && (size_t)c->nsys < nall;
	    c->nsys++)
		c->sys[c->nsys] = all[c->nsys];
	return 0;
}
