/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One cell, from server start to server stop.  It starts "tenkd echo
 * --threads 1 --backend B" on 127.0.0.1 port 0, reads back the port from
 * tenkd's "listening on ADDR:PORT" line, opens the idle connections with
 * "tenkload --mode idle" (held for the whole cell), then runs "tenkload
 * --mode pingpong" with the active connections once per repeat and reads
 * its --json report back with report.c's reader.  With --syscalls, one
 * more short run goes under "strace -c -f -p" on the server.  Then the
 * idle holders and the server get SIGTERM and are reaped.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tenk/hist.h"
#include "tenk/log.h"
#include "loadgen.h"
#include "bench.h"

#define IDLE_BATCH	1000		/* idle connections per holder */
#define SAMPLE_MS	50		/* between CPU-time samples */
#define START_TIMEOUT	10		/* s, for "listening on" */
#define STOP_TIMEOUT	15		/* s, after SIGTERM */
#define RUN_SLACK	30		/* s, beyond a run's planned end */
#define STRACE_ATTACH	10		/* s */
#define IDLE_TIMEOUT	30		/* s, for one batch to be accepted */

/* Does the file at path contain s?  If so, copy the rest of its line. */
static int
file_has(const char *path, const char *s, char *rest, size_t len)
{
	char	 line[512];
	FILE	*f;
	char	*p;
	int	 found = 0;

	if ((f = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if ((p = strstr(line, s)) != NULL) {
			if (rest != NULL) {
				p += strlen(s);
				p[strcspn(p, " \t\r\n")] = '\0';
				strlcpy(rest, p, len);
			}
			found = 1;
			break;
		}
	fclose(f);
	return found;
}

/*
 * Wait up to secs for the log of pid to show s (see file_has).  Returns
 * 0, or -1 when pid exited or time ran out (and says which in why).
 */
static int
wait_line(pid_t pid, const char *log, const char *s, int secs, char *rest,
    size_t len, char *why, size_t wlen)
{
	uint64_t	deadline = report_epoch_us() + (uint64_t)secs * 1000000;
	int		status;

	for (;;) {
		child_quit();
		if (file_has(log, s, rest, len))
			return 0;
		if (child_done(pid, &status)) {
			snprintf(why, wlen, "exited before saying \"%s\"", s);
			return -1;
		}
		if (report_epoch_us() > deadline) {
			snprintf(why, wlen, "did not say \"%s\" within %d s",
			    s, secs);
			return -1;
		}
		sweep_progress(0);
		child_nap(TICK_MS);
	}
}

/* Outputs of one cell, as paths under OUT/logs. */
static void
cell_path(char *buf, size_t len, const struct cell *c, const char *what)
{
	snprintf(buf, len, "%s/logs/%s-%llu.%s", conf.out, c->backend,
	    (unsigned long long)c->idle, what);
}

/*
 * The log and the JSON report of one tenkload run of a cell (TAG.log,
 * TAG.json); an old report is removed so that a run that dies leaves
 * none behind to be read in its place.
 */
static void
run_paths(const struct cell *c, const char *tag, char *log, char *json)
{
	cell_path(log, PATH_MAX, c, tag);
	strlcat(log, ".log", PATH_MAX);
	cell_path(json, PATH_MAX, c, tag);
	strlcat(json, ".json", PATH_MAX);
	(void)unlink(json);
}

static void __attribute__((format(printf, 2, 3)))
cell_note(struct cell *c, const char *fmt, ...)
{
	va_list	ap;
	size_t	n = strlen(c->note);

	if (n > 0 && n + 2 < sizeof(c->note)) {
		strlcat(c->note, "; ", sizeof(c->note));
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(c->note + n, sizeof(c->note) - n, fmt, ap);
	va_end(ap);
}

/*
 * Start tenkload in mode with conns connections for dur (as tenkload
 * reads it) and threads threads against addr, with the options of its
 * mode in extra (NULL-terminated).  Its log and JSON report go to the
 * cell's TAG.log and TAG.json (see run_paths).  Returns the pid.
 */
static pid_t
load_start(const struct cell *c, const char *tag, const char *addr,
    const char *mode, uint64_t conns, const char *dur, int threads,
    const char *const extra[], char *log, char *json)
{
	const char	*argv[32];
	char		 n_c[32], n_t[32], n_r[32];
	int		 argc = 0;

	run_paths(c, tag, log, json);
	snprintf(n_c, sizeof(n_c), "%llu", (unsigned long long)conns);
	snprintf(n_t, sizeof(n_t), "%d", threads);
	snprintf(n_r, sizeof(n_r), "%llu",
	    (unsigned long long)conf.connect_rate);
	argv[argc++] = conf.tenkload;
	argv[argc++] = "--mode";
	argv[argc++] = mode;
	argv[argc++] = "--connections";
	argv[argc++] = n_c;
	argv[argc++] = "--duration";
	argv[argc++] = dur;
	for (; *extra != NULL; extra++)
		argv[argc++] = *extra;
	argv[argc++] = "--threads";
	argv[argc++] = n_t;
	argv[argc++] = "--connect-rate";
	argv[argc++] = n_r;
	argv[argc++] = "--backend";
	argv[argc++] = "epoll";
	if (conf.tls_cert != NULL)
		argv[argc++] = "--tls";
	argv[argc++] = "--json";
	argv[argc++] = json;
	argv[argc++] = addr;
	argv[argc] = NULL;
	return child_spawn(argv, NULL, log);
}

/*
 * Read the JSON report a tenkload run left at path into rep, and count
 * its errors with the connections it never established.  Returns 0, or
 * -1 when there is no readable report (rep is then freed already).
 */
static int
load_report(const char *path, struct report *rep, uint64_t *errors)
{
	if (report_init(rep) == -1)
		fatalx("out of memory");
	if (report_json_load(path, rep) == -1) {
		report_free(rep);
		return -1;
	}
	*errors = report_errors(rep);
	if (rep->established < rep->requested)
		*errors += rep->requested - rep->established;
	return 0;
}

/*
 * A tenkload run with the active connections, to its end.  Fills r from
 * its JSON report and the CPU samples; dur and warm in ns.  Returns 0,
 * or -1 when it could not finish (noted in c).  tag names the files.
 */
static int
active_run(struct cell *c, pid_t srv, const char *addr, uint64_t dur,
    uint64_t warm, const char *tag, struct run *r, struct report *rep)
{
	struct samples	 ss = { NULL, 0, 0 }, cs = { NULL, 0, 0 };
	char		 log[PATH_MAX], json[PATH_MAX], tail[200];
	char		 n_d[32], n_w[32], n_s[32];
	const char	*extra[] = { "--warmup", n_w, "--size", n_s, NULL };
	uint64_t	 start, last = 0, now, deadline, win;
	double		 ramp, t, total;
	pid_t		 pid;
	int		 status, ret = -1, sampled = 0;

	snprintf(n_d, sizeof(n_d), "%llums",
	    (unsigned long long)(dur / 1000000));
	snprintf(n_w, sizeof(n_w), "%llums",
	    (unsigned long long)(warm / 1000000));
	snprintf(n_s, sizeof(n_s), "%llu", (unsigned long long)conf.size);
	ramp = (double)conf.active / (double)conf.connect_rate;
	total = ramp + (double)(warm + dur) / 1e9;
	samples_add(&ss, srv);
	start = report_epoch_us();
	pid = load_start(c, tag, addr, "pingpong", conf.active, n_d,
	    conf.load_threads, extra, log, json);
	deadline = start + (uint64_t)((total + RUN_SLACK) * 1e6);
	for (;;) {
		child_quit();
		now = report_epoch_us();
		if (now - last >= SAMPLE_MS * 1000) {
			samples_add(&ss, srv);
			samples_add(&cs, pid);
			last = now;
		}
		if (child_done(pid, &status))
			break;
		if (now > deadline) {
			(void)child_stop(pid, SIGTERM, 5, &status);
			cell_note(c, "%s: tenkload ran past %.0f s and was "
			    "stopped", tag, total + RUN_SLACK);
			goto out;
		}
		t = (double)(now - start) / 1e6;
		if (t < ramp + (double)warm / 1e9)
			sweep_doing(-1, "%s, connecting and warming up", tag);
		else
			sweep_doing(fmin(1, (t - ramp - (double)warm / 1e9) /
			    ((double)dur / 1e9)), "%s, measuring", tag);
		sweep_progress(0);
		child_nap(TICK_MS);
	}
	samples_add(&ss, srv);
	sampled = ss.n >= 2;

	/* Exit 1 is a run with errors, which the report counts. */
	if (status == -1 || !WIFEXITED(status) ||
	    (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 1)) {
		if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
			fatalx("tenkload refused its command line: %s",
			    child_log_tail(log, tail, sizeof(tail)));
		cell_note(c, "%s: tenkload failed (%s)", tag,
		    child_log_tail(log, tail, sizeof(tail)));
		goto out;
	}
	memset(r, 0, sizeof(*r));
	if (load_report(json, rep, &r->errors) == -1) {
		cell_note(c, "%s: no readable JSON report from tenkload", tag);
		goto out;
	}
	r->msgs = rep->msgs;
	r->rate = rep->msgs_rate;
	if (tk_hist_count(rep->lat.h) > 0) {
		r->p50 = (double)tk_hist_percentile(rep->lat.h, 50) / 1e3;
		r->p99 = (double)tk_hist_percentile(rep->lat.h, 99) / 1e3;
	}
	win = rep->t_meas_end > rep->t_meas_start ?
	    rep->t_meas_end - rep->t_meas_start : 0;
	if (r->msgs > 0 && win > 0 && sampled) {
		r->cpu = samples_cpu_us(&ss, rep->t_meas_start,
		    rep->t_meas_end) / (double)r->msgs;
		if (cs.n >= 2)
			r->ccpu = samples_cpu_us(&cs, rep->t_meas_start,
			    rep->t_meas_end) / (double)r->msgs;
	}
	if (r->msgs == 0)
		cell_note(c, "%s: no messages measured", tag);
	ret = 0;
 out:
	samples_free(&ss);
	samples_free(&cs);
	return ret;
}

/*
 * One short active run with strace -c -f attached to the server; the
 * calls made over it, divided by the messages tenkload counted.
 */
static void
syscall_run(struct cell *c, pid_t srv, const char *addr,
    const char *strace)
{
	struct report	 rep;
	struct run	 r;
	char		 sum[PATH_MAX], log[PATH_MAX], n_p[32], why[128];
	const char	*argv[16];
	pid_t		 pid;
	int		 argc = 0;

	cell_path(sum, sizeof(sum), c, "strace");
	cell_path(log, sizeof(log), c, "strace.log");
	snprintf(n_p, sizeof(n_p), "%d", (int)srv);
	argv[argc++] = strace;
	argv[argc++] = "-c";
	argv[argc++] = "-f";
	argv[argc++] = "-o";
	argv[argc++] = sum;
	argv[argc++] = "-p";
	argv[argc++] = n_p;
	argv[argc] = NULL;
	sweep_doing(-1, "attaching strace");
	pid = child_spawn(argv, NULL, log);
	if (wait_line(pid, log, "attached", STRACE_ATTACH, NULL, 0, why,
	    sizeof(why)) == -1) {
		(void)child_stop(pid, SIGTERM, 5, NULL);
		cell_note(c, "strace %s", why);
		return;
	}
	if (active_run(c, srv, addr, conf.systime, 0, "syscalls", &r,
	    &rep) == -1) {
		(void)child_stop(pid, SIGINT, 10, NULL);
		return;
	}
	report_free(&rep);
	/* SIGINT makes strace detach and write its summary. */
	(void)child_stop(pid, SIGINT, 10, NULL);
	if (r.errors > 0) {
		c->errors += r.errors;
		cell_note(c, "syscalls: %llu error%s",
		    (unsigned long long)r.errors, r.errors == 1 ? "" : "s");
	}
	if (strace_parse(sum, c) == -1) {
		cell_note(c, "no strace summary in %s", sum);
		return;
	}
	c->sys_msgs = r.msgs;
}

/*
 * Wait until the server holds base + opened fds, or an idle holder
 * exits, or time runs out.  Returns 0, or -1 with a note in c.
 */
static int
idle_wait(struct cell *c, pid_t srv, long base, uint64_t opened,
    uint64_t deadline, pid_t *holders, int nholders)
{
	char	log[PATH_MAX], tag[32], tail[200];
	long	fds;
	int	i;

	for (;;) {
		child_quit();
		fds = proc_nfds(srv);
		if (fds >= base + (long)opened)
			return 0;
		for (i = 0; i < nholders; i++)
			if (child_done(holders[i], NULL)) {
				holders[i] = 0;
				snprintf(tag, sizeof(tag), "idle%d.log", i);
				cell_path(log, sizeof(log), c, tag);
				cell_note(c, "idle holder %d exited early (%s)",
				    i, child_log_tail(log, tail, sizeof(tail)));
				return -1;
			}
		if (report_epoch_us() > deadline) {
			cell_note(c, "only %ld of %llu idle connections "
			    "reached the server", fds - base,
			    (unsigned long long)opened);
			return -1;
		}
		sweep_doing((double)(fds > base ? fds - base : 0) /
		    (double)c->idle, "opening %llu idle connections",
		    (unsigned long long)c->idle);
		sweep_progress(0);
		child_nap(TICK_MS);
	}
}

/*
 * Open c->idle connections in batches of IDLE_BATCH, one idle holder
 * process per batch, each batch only once the server has accepted the
 * one before.  A level-triggered server watching thousands of fds
 * accepts slowly (one accept batch per poll over all of them), and a
 * flood of connects would overflow its listen backlog, whose dropped
 * SYNs come back only after the kernel's retransmit back-off of
 * seconds; waiting batch by batch keeps the backlog short at any speed.
 * Returns 0, or -1 with a note in c.
 */
static int
idle_start(struct cell *c, pid_t srv, const char *addr, long base,
    pid_t *holders, int *nholders)
{
	static const char *const extra[] = {
		"--connect-timeout", "30s", NULL
	};
	char		 log[PATH_MAX], json[PATH_MAX], tag[32], n_d[32];
	uint64_t	 n, opened = 0, deadline;

	/* Bounded, though we stop the holders long before. */
	snprintf(n_d, sizeof(n_d), "%.0fs", c->plan * 3 + 120);
	*nholders = 0;
	while (opened < c->idle) {
		if (*nholders == MAXHOLDERS) {
			cell_note(c, "more than %d idle holders needed",
			    MAXHOLDERS);
			return -1;
		}
		n = c->idle - opened < IDLE_BATCH ? c->idle - opened :
		    IDLE_BATCH;
		snprintf(tag, sizeof(tag), "idle%d", *nholders);
		holders[(*nholders)++] = load_start(c, tag, addr, "idle", n,
		    n_d, 1, extra, log, json);
		opened += n;
		deadline = report_epoch_us() + (uint64_t)(((double)n /
		    (double)conf.connect_rate * 3 + IDLE_TIMEOUT) * 1e6);
		if (idle_wait(c, srv, base, opened, deadline, holders,
		    *nholders) == -1)
			return -1;
	}
	return 0;
}

/* Stop the idle holders and fold their errors into c. */
static void
idle_stop(struct cell *c, pid_t *holders, int nholders)
{
	struct report	 rep;
	char		 json[PATH_MAX], tag[32];
	uint64_t	 errs;
	int		 i;

	for (i = 0; i < nholders; i++)
		if (holders[i] != 0)
			(void)kill(-holders[i], SIGTERM);
	for (i = 0; i < nholders; i++) {
		if (holders[i] == 0)
			continue;
		if (child_stop(holders[i], 0, 10, NULL) == 1)
			cell_note(c, "idle holder %d had to be killed", i);
		snprintf(tag, sizeof(tag), "idle%d.json", i);
		cell_path(json, sizeof(json), c, tag);
		if (load_report(json, &rep, &errs) == -1) {
			cell_note(c, "no JSON report from idle holder %d", i);
			c->errors++;
			continue;
		}
		if (errs > 0)
			cell_note(c, "idle holder %d: %llu error%s", i,
			    (unsigned long long)errs, errs == 1 ? "" : "s");
		c->errors += errs;
		report_free(&rep);
	}
}

/* Start tenkd for c; its address in addr, or -1 with a note in c. */
static pid_t
server_start(struct cell *c, char *log, char *addr, size_t len)
{
	char		 why[200], tail[200], n_t[32];
	const char	*argv[24];
	pid_t		 srv;
	int		 argc = 0;

	cell_path(log, PATH_MAX, c, "tenkd.log");
	snprintf(n_t, sizeof(n_t), "%d", conf.threads);
	argv[argc++] = conf.tenkd;
	argv[argc++] = "echo";
	argv[argc++] = "--threads";
	argv[argc++] = n_t;
	argv[argc++] = "--backend";
	argv[argc++] = c->backend;
	argv[argc++] = "--listen";
	argv[argc++] = "127.0.0.1:0";
	argv[argc++] = "--drain-timeout";
	argv[argc++] = "2s";
	argv[argc++] = "--idle-timeout";
	argv[argc++] = "0";
	if (conf.tls_cert != NULL) {
		argv[argc++] = "--tls-cert";
		argv[argc++] = conf.tls_cert;
		argv[argc++] = "--tls-key";
		argv[argc++] = conf.tls_key;
	}
	argv[argc] = NULL;

	sweep_doing(-1, "starting tenkd");
	sweep_progress(1);
	srv = child_spawn(argv, NULL, log);
	if (wait_line(srv, log, "listening on ", START_TIMEOUT, addr, len,
	    why, sizeof(why)) == -1) {
		cell_note(c, "tenkd %s (%s)", why,
		    child_log_tail(log, tail, sizeof(tail)));
		(void)child_stop(srv, SIGTERM, 5, NULL);
		return -1;
	}
	return srv;
}

/* A server that cannot stop cleanly is a failure of the cell. */
static void
server_stop(struct cell *c, pid_t srv, const char *log)
{
	char	tail[200];
	int	status;

	if (child_stop(srv, SIGTERM, STOP_TIMEOUT, &status) == 1) {
		cell_note(c, "tenkd ignored SIGTERM for %d s and was killed",
		    STOP_TIMEOUT);
		c->errors++;
	} else if (child_failed(status)) {
		cell_note(c, "tenkd exited with status %d (%s)",
		    status == -1 ? -1 : WIFEXITED(status) ?
		    WEXITSTATUS(status) : 128 + WTERMSIG(status),
		    child_log_tail(log, tail, sizeof(tail)));
		c->errors++;
	}
}

/* One cell from server start to server stop. */
void
cell_run(struct cell *c, const char *strace)
{
	struct report	 rep;
	pid_t		 holders[MAXHOLDERS];
	char		 log[PATH_MAX], addr[128], tag[32];
	pid_t		 srv;
	long		 base, fds;
	int		 nholders = 0, i;

	if ((srv = server_start(c, log, addr, sizeof(addr))) == -1) {
		c->status = CELL_FAILED;
		return;
	}
	base = proc_nfds(srv);

	if (c->idle > 0 && idle_start(c, srv, addr, base, holders,
	    &nholders) == -1) {
		c->status = CELL_FAILED;
		goto stop;
	}
	for (i = 0; i < conf.repeat; i++) {
		snprintf(tag, sizeof(tag), "run%d", i + 1);
		if (active_run(c, srv, addr, conf.duration, conf.warmup, tag,
		    &c->runs[c->nruns], &rep) == -1) {
			c->status = CELL_FAILED;
			goto stop;
		}
		report_free(&rep);
		c->errors += c->runs[c->nruns].errors;
		c->nruns++;
	}
	if (conf.syscalls && strace != NULL)
		syscall_run(c, srv, addr, strace);

	/* The idle connections must all have lasted the cell. */
	fds = proc_nfds(srv);
	if (c->idle > 0 && fds < base + (long)c->idle) {
		cell_note(c, "%ld idle connections were lost",
		    base + (long)c->idle - fds);
		c->errors += (uint64_t)(base + (long)c->idle - fds);
	}
	c->status = c->errors > 0 ? CELL_ERRORS : CELL_OK;
 stop:
	sweep_doing(-1, "stopping");
	idle_stop(c, holders, nholders);
	server_stop(c, srv, log);
	if (c->errors > 0 && c->status == CELL_OK)
		c->status = CELL_ERRORS;
}
