/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tenkbench: event backends measured against each other through real
 * TCP, on loopback.  For every idle-connection count and every backend
 * (a cell) it starts "tenkd echo --threads 1 --backend B" on 127.0.0.1
 * port 0, reads back the port from tenkd's "listening on ADDR:PORT"
 * line, opens the idle connections with "tenkload --mode idle" (held
 * for the whole cell), then runs "tenkload --mode pingpong" with the
 * active connections once per repeat and reads its --json report back
 * with report.c's reader.  With --syscalls, one more short run goes
 * under "strace -c -f -p" on the server.  Then the idle holders and the
 * server get SIGTERM and are reaped.
 *
 * The server's CPU time (utime + stime in /proc/PID/stat) is sampled
 * every SAMPLE_MS with a wall-clock stamp while a run lasts; the two
 * samples bracketing each end of tenkload's measured window (its JSON
 * carries the window in epoch microseconds) are interpolated, so the CPU
 * per message covers the same window as the message count, without
 * guessing how long tenkload's ramp took.
 *
 * Every child runs in a process group of its own, with stdout and
 * stderr in a log file under OUT/logs.  Each one is tracked until
 * reaped; on exit, on a fatal error and on SIGINT/SIGTERM/SIGHUP every
 * group still alive gets SIGTERM, then SIGKILL, and is reaped.
 *
 * This file owns the sweep, the process handling and the outputs
 * (table, CSV, JSON, gnuplot).  Generating load and the JSON report
 * format belong to tenkload (engine.c, report.c).
 */
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tenk/cli.h"
#include "tenk/hist.h"
#include "tenk/loop.h"
#include "tenk/parse.h"
#include "loadgen.h"

#define MAXBACKENDS	8
#define MAXIDLE		32		/* idle counts in the sweep */
#define MAXIDLECONNS	1000000		/* idle connections, a cell */
#define MAXACTIVE	100000
#define MAXTHREADS	256		/* tenkd --threads */
#define MAXLOADTHREADS	64		/* tenkload --threads */
#define MAXREPEAT	50
#define MAXHOLDERS	64		/* idle holder processes */
#define MAXKIDS		(MAXHOLDERS + 8)
#define IDLE_BATCH	1000		/* idle connections per holder */
#define MAXSYS		8		/* syscalls kept per cell */
#define FD_SPARE	32		/* tenkd's own: stdio, loops, pipes */
#define PORT_SPARE	1000		/* local ports left for others */
#define SAMPLE_MS	50
#define TICK_MS		20
#define START_TIMEOUT	10		/* s, for "listening on" */
#define STOP_TIMEOUT	15		/* s, after SIGTERM */
#define RUN_SLACK	30		/* s, beyond a run's planned end */
#define STRACE_ATTACH	10		/* s */
#define IDLE_TIMEOUT	30		/* s, for one batch to be accepted */

/* The sweep, as the command line gave it. */
struct bconf {
	const char	*backends[MAXBACKENDS];
	int		 nbackends;
	uint64_t	 idle[MAXIDLE];
	int		 nidle;
	uint64_t	 active;
	uint64_t	 duration;	/* ns */
	uint64_t	 warmup;	/* ns */
	uint64_t	 systime;	/* ns, the strace run */
	uint64_t	 size;
	uint64_t	 connect_rate;
	int		 repeat;
	int		 threads;	/* tenkd --threads */
	int		 load_threads;	/* tenkload --threads */
	int		 syscalls;
	int		 plot;
	int		 quiet;
	const char	*out;
	char		 tenkd[PATH_MAX];
	char		 tenkload[PATH_MAX];
	char		 args[1024];	/* our command line */
};

/* One active run of a cell. */
struct run {
	double		 rate;		/* msgs/s */
	double		 p50;		/* us */
	double		 p99;		/* us */
	double		 cpu;		/* server CPU us per msg */
	double		 ccpu;		/* client CPU us per msg */
	uint64_t	 msgs;
	uint64_t	 errors;
};

enum cell_status {
	CELL_PENDING = 0,
	CELL_OK,
	CELL_ERRORS,		/* finished, with errors */
	CELL_FAILED,		/* could not finish */
	CELL_SKIPPED
};

struct sysent {
	char		 name[32];
	uint64_t	 calls;
};

struct cell {
	const char	*backend;
	uint64_t	 idle;
	enum cell_status status;
	char		 note[256];
	struct run	 runs[MAXREPEAT];
	int		 nruns;
	uint64_t	 errors;	/* active runs and idle holders */
	double		 plan;		/* s, estimated length */
	double		 took;		/* s */
	uint64_t	 sys_msgs;	/* --syscalls: messages counted */
	uint64_t	 sys_total;	/* calls in the strace window */
	struct sysent	 sys[MAXSYS];	/* the most frequent calls */
	int		 nsys;
};

/* A CPU-time sample: wall-clock us, clock ticks of utime + stime. */
struct sample {
	uint64_t	 t;
	uint64_t	 ticks;
};

struct samples {
	struct sample	*v;
	size_t		 n;
	size_t		 cap;
};

static struct bconf	 conf;
static struct cell	*cells;
static int		 ncells;
static pid_t		 kids[MAXKIDS];
static volatile sig_atomic_t quit;
static long		 clk_tck;
static uint64_t		 nofile;
static uint64_t		 nports;
static uint64_t		 t0_us;

/* Progress: the cell running, what it does, how far (0..1, or -1). */
static struct {
	int		 cell;
	char		 what[160];
	double		 frac;
	uint64_t	 last;		/* us, the last line */
	uint64_t	 cell_t0;	/* us */
} prog;

static const uint64_t default_idle[] = {
	0, 500, 1000, 2000, 5000, 10000, 15000
};

static noreturn void __attribute__((format(printf, 1, 2)))
		 die(const char *, ...);
static void	 cleanup(void);

static noreturn void
usage(FILE *f, int status)
{
	fprintf(f,
	    "usage: tenkbench [-hpqV] [-a active] [-b backends] [-d duration]\n"
	    "\t\t [-i idle] [-o dir] [-r repeat] [-s size] [-t threads]\n"
	    "\t\t [-w warmup] [--connect-rate rate] [--load-threads n]\n"
	    "\t\t [--syscalls] [--syscall-time duration] [--tenkd path]\n"
	    "\t\t [--tenkload path]\n");
	if (f == stdout)
		fprintf(f, "\n"
		    "  -a, --active N          active ping-pong connections "
		    "(default 100)\n"
		    "  -b, --backends LIST     backends to compare (default "
		    "epoll,poll,select);\n"
		    "                          \"list\" prints them\n"
		    "      --connect-rate N/s  connects per second (default "
		    "10000)\n"
		    "  -d, --duration DUR      measured time of each run "
		    "(default 3s)\n"
		    "  -h, --help              this help\n"
		    "  -i, --idle LIST         idle connection counts (default "
		    "0,500,1000,2000,5000,10000,15000)\n"
		    "      --load-threads N    tenkload threads (default 1)\n"
		    "  -o, --out DIR           CSV, JSON, plots and logs "
		    "(default bench-out)\n"
		    "  -p, --plot              draw PNG charts with gnuplot\n"
		    "  -q, --quiet             no progress lines\n"
		    "  -r, --repeat N          runs per cell (default 3)\n"
		    "  -s, --size BYTES        message size (default 64)\n"
		    "      --syscalls          count syscalls per message with "
		    "strace\n"
		    "      --syscall-time DUR  length of the strace run "
		    "(default 2s)\n"
		    "  -t, --threads N         tenkd threads (default 1)\n"
		    "      --tenkd PATH        the server (default: next to "
		    "tenkbench)\n"
		    "      --tenkload PATH     the load generator (default: "
		    "next to tenkbench)\n"
		    "  -V, --version           print the version\n"
		    "  -w, --warmup DUR        unmeasured time before each run "
		    "(default 1s)\n");
	exit(status);
}

/* A failure that ends the sweep: children are stopped first. */
static noreturn void __attribute__((format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "tenkbench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	cleanup();
	exit(1);
}

static void
on_signal(int signo)
{
	quit = signo;
}

static void
nap(int ms)
{
	struct timespec	ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	(void)nanosleep(&ts, NULL);
}

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

/* Children. */

static void
kid_track(pid_t pid)
{
	int	i;

	for (i = 0; i < MAXKIDS; i++)
		if (kids[i] == 0) {
			kids[i] = pid;
			return;
		}
	/* The caller never has more than a few at a time. */
	kill(-pid, SIGKILL);
	die("too many child processes");
}

static void
kid_untrack(pid_t pid)
{
	int	i;

	for (i = 0; i < MAXKIDS; i++)
		if (kids[i] == pid)
			kids[i] = 0;
}

/*
 * Has pid (a child we started, leader of its own group) exited?  If so,
 * kill what is left of its group while the zombie still holds the group
 * id, reap it, store its wait status and return 1; else return 0.
 */
static int
kid_done(pid_t pid, int *status)
{
	siginfo_t	si;
	int		st;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == -1) {
		if (errno == EINTR)
			return 0;
		kid_untrack(pid);
		if (status != NULL)
			*status = -1;
		return 1;
	}
	if (si.si_pid != pid)
		return 0;
	(void)kill(-pid, SIGKILL);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	kid_untrack(pid);
	if (status != NULL)
		*status = st;
	return 1;
}

/*
 * Send sig (unless 0) to pid's group and wait up to secs for pid to
 * exit; then SIGKILL.  Returns 0 when it exited by itself, 1 when it
 * had to be killed.  Safe to call when pid has exited already.  A
 * second SIGTERM would cut short a child that is still writing its
 * report, so who has signalled already passes 0.
 */
static int
kid_stop(pid_t pid, int sig, int secs, int *status)
{
	uint64_t	deadline = report_epoch_us() + (uint64_t)secs * 1000000;

	if (kid_done(pid, status))
		return 0;
	if (sig != 0)
		(void)kill(-pid, sig);
	while (report_epoch_us() < deadline) {
		if (kid_done(pid, status))
			return 0;
		nap(TICK_MS);
	}
	(void)kill(-pid, SIGKILL);
	while (!kid_done(pid, status))
		nap(TICK_MS);
	return 1;
}

/* Stop every child still tracked; from exit paths and after signals. */
static void
cleanup(void)
{
	int	i, any = 0;

	for (i = 0; i < MAXKIDS; i++)
		if (kids[i] != 0) {
			(void)kill(-kids[i], SIGTERM);
			any = 1;
		}
	if (!any)
		return;
	for (i = 0; i < MAXKIDS; i++)
		if (kids[i] != 0)
			(void)kid_stop(kids[i], 0, 3, NULL);
}

/* After a signal: stop everything and leave as the signal would. */
static void
check_quit(void)
{
	int	sig = quit;

	if (sig == 0)
		return;
	fprintf(stderr, "\ntenkbench: %s, stopping the children\n",
	    strsignal(sig));
	cleanup();
	exit(128 + sig);
}

/*
 * Start argv[0] with stdin from /dev/null and stdout and stderr to
 * logpath, in a process group of its own, with default signal handling,
 * in directory dir unless it is NULL.  Returns the pid; dies when the
 * log cannot be opened or fork fails.
 */
static pid_t
spawn(const char *const argv[], const char *dir, const char *logpath)
{
	sigset_t	 none;
	pid_t		 pid, parent = getpid();
	int		 fd, logfd;

	/*
	 * The log is truncated here, before the fork, so that nobody
	 * reading it afterwards can see what an earlier run left there.
	 */
	logfd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (logfd == -1)
		die("%s: %s", logpath, strerror(errno));
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == -1)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		/*
		 * Our own group keeps a terminal's ^C away until we stop the
		 * child in order; the death signal covers our SIGKILL (a
		 * test runner's timeout), which no cleanup code survives.
		 */
		(void)setpgid(0, 0);
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if ((fd = open("/dev/null", O_RDONLY)) != -1) {
			dup2(fd, 0);
			close(fd);
		}
		dup2(logfd, 1);
		dup2(logfd, 2);
		if (dir != NULL && chdir(dir) == -1) {
			fprintf(stderr, "tenkbench: %s: %s\n", dir,
			    strerror(errno));
			_exit(127);
		}
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "tenkbench: %s: %s\n", argv[0],
		    strerror(errno));
		_exit(127);
	}
	close(logfd);
	/* Both sides set the group, so neither can race the other. */
	(void)setpgid(pid, pid);
	kid_track(pid);
	return pid;
}

/* /proc. */

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
static long
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

static void
samples_add(struct samples *s, pid_t pid)
{
	struct sample	*nv;
	uint64_t	 ticks;

	if (proc_ticks(pid, &ticks) == -1)
		return;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		if ((nv = reallocarray(s->v, s->cap, sizeof(*nv))) == NULL)
			die("out of memory");
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
static double
samples_cpu_us(const struct samples *s, uint64_t from, uint64_t to)
{
	return (samples_at(s, to) - samples_at(s, from)) * 1e6 /
	    (double)clk_tck;
}

/* Progress. */

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
static void
progress(int force)
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

static void __attribute__((format(printf, 2, 3)))
progress_set(double frac, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(prog.what, sizeof(prog.what), fmt, ap);
	va_end(ap);
	prog.frac = frac;
}

/* Waiting. */

/* The tail of a log file, squeezed into one line, for error messages. */
static const char *
log_tail(const char *path, char *buf, size_t len)
{
	char	 tmp[512];
	ssize_t	 n;
	off_t	 end;
	int	 fd;
	size_t	 i, j = 0;

	buf[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return buf;
	end = lseek(fd, 0, SEEK_END);
	if (end > (off_t)sizeof(tmp) - 1)
		(void)lseek(fd, end - (off_t)sizeof(tmp) + 1, SEEK_SET);
	else
		(void)lseek(fd, 0, SEEK_SET);
	n = read(fd, tmp, sizeof(tmp) - 1);
	close(fd);
	if (n <= 0)
		return buf;
	tmp[n] = '\0';
	while (n > 0 && (tmp[n - 1] == '\n' || tmp[n - 1] == ' '))
		tmp[--n] = '\0';
	for (i = 0; i < (size_t)n && j + 1 < len; i++)
		buf[j++] = tmp[i] == '\n' ? '|' : tmp[i];
	buf[j] = '\0';
	return buf;
}

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
		check_quit();
		if (file_has(log, s, rest, len))
			return 0;
		if (kid_done(pid, &status)) {
			snprintf(why, wlen, "exited before saying \"%s\"", s);
			return -1;
		}
		if (report_epoch_us() > deadline) {
			snprintf(why, wlen, "did not say \"%s\" within %d s",
			    s, secs);
			return -1;
		}
		progress(0);
		nap(TICK_MS);
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
	char		 n_c[32], n_d[32], n_w[32], n_s[32], n_t[32];
	char		 n_r[32];
	const char	*argv[32];
	uint64_t	 start, last = 0, now, deadline, win;
	double		 ramp, t, total;
	pid_t		 pid;
	int		 argc = 0, status, ret = -1, sampled = 0;

	run_paths(c, tag, log, json);
	snprintf(n_c, sizeof(n_c), "%llu", (unsigned long long)conf.active);
	snprintf(n_d, sizeof(n_d), "%llums",
	    (unsigned long long)(dur / 1000000));
	snprintf(n_w, sizeof(n_w), "%llums",
	    (unsigned long long)(warm / 1000000));
	snprintf(n_s, sizeof(n_s), "%llu", (unsigned long long)conf.size);
	snprintf(n_t, sizeof(n_t), "%d", conf.load_threads);
	snprintf(n_r, sizeof(n_r), "%llu",
	    (unsigned long long)conf.connect_rate);
	argv[argc++] = conf.tenkload;
	argv[argc++] = "--mode";
	argv[argc++] = "pingpong";
	argv[argc++] = "--connections";
	argv[argc++] = n_c;
	argv[argc++] = "--duration";
	argv[argc++] = n_d;
	argv[argc++] = "--warmup";
	argv[argc++] = n_w;
	argv[argc++] = "--size";
	argv[argc++] = n_s;
	argv[argc++] = "--threads";
	argv[argc++] = n_t;
	argv[argc++] = "--connect-rate";
	argv[argc++] = n_r;
	argv[argc++] = "--backend";
	argv[argc++] = "epoll";
	argv[argc++] = "--json";
	argv[argc++] = json;
	argv[argc++] = addr;
	argv[argc] = NULL;

	ramp = (double)conf.active / (double)conf.connect_rate;
	total = ramp + (double)(warm + dur) / 1e9;
	samples_add(&ss, srv);
	start = report_epoch_us();
	pid = spawn(argv, NULL, log);
	deadline = start + (uint64_t)((total + RUN_SLACK) * 1e6);
	for (;;) {
		check_quit();
		now = report_epoch_us();
		if (now - last >= SAMPLE_MS * 1000) {
			samples_add(&ss, srv);
			samples_add(&cs, pid);
			last = now;
		}
		if (kid_done(pid, &status))
			break;
		if (now > deadline) {
			(void)kid_stop(pid, SIGTERM, 5, &status);
			cell_note(c, "%s: tenkload ran past %.0f s and was "
			    "stopped", tag, total + RUN_SLACK);
			goto out;
		}
		t = (double)(now - start) / 1e6;
		if (t < ramp + (double)warm / 1e9)
			progress_set(-1, "%s, connecting and warming up", tag);
		else
			progress_set(fmin(1, (t - ramp - (double)warm / 1e9) /
			    ((double)dur / 1e9)), "%s, measuring", tag);
		progress(0);
		nap(TICK_MS);
	}
	samples_add(&ss, srv);
	sampled = ss.n >= 2;

	if (status == -1 || !WIFEXITED(status) ||
	    (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 1)) {
		if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
			die("tenkload refused its command line: %s",
			    log_tail(log, tail, sizeof(tail)));
		cell_note(c, "%s: tenkload failed (%s)", tag,
		    log_tail(log, tail, sizeof(tail)));
		goto out;
	}
	if (report_init(rep) == -1)
		die("out of memory");
	if (report_json_load(json, rep) == -1) {
		report_free(rep);
		cell_note(c, "%s: no readable JSON report from tenkload", tag);
		goto out;
	}
	memset(r, 0, sizeof(*r));
	r->msgs = rep->msgs;
	r->rate = rep->msgs_rate;
	r->errors = report_errors(rep);
	if (rep->established < rep->requested)
		r->errors += rep->requested - rep->established;
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
	free(ss.v);
	free(cs.v);
	return ret;
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
static int
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

/* Is there an executable called name in $PATH?  Fills path. */
static int
find_prog(const char *name, char *path, size_t len)
{
	const char	*env = getenv("PATH");
	char		 copy[4096], *p, *dir;

	strlcpy(copy, env != NULL ? env : "/usr/bin:/bin", sizeof(copy));
	for (p = copy; (dir = strsep(&p, ":")) != NULL; ) {
		snprintf(path, len, "%s/%s", *dir != '\0' ? dir : ".", name);
		if (access(path, X_OK) == 0)
			return 1;
	}
	return 0;
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
	progress_set(-1, "attaching strace");
	pid = spawn(argv, NULL, log);
	if (wait_line(pid, log, "attached", STRACE_ATTACH, NULL, 0, why,
	    sizeof(why)) == -1) {
		(void)kid_stop(pid, SIGTERM, 5, NULL);
		cell_note(c, "strace %s", why);
		return;
	}
	if (active_run(c, srv, addr, conf.systime, 0, "syscalls", &r,
	    &rep) == -1) {
		(void)kid_stop(pid, SIGINT, 10, NULL);
		return;
	}
	report_free(&rep);
	/* SIGINT makes strace detach and write its summary. */
	(void)kid_stop(pid, SIGINT, 10, NULL);
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
	char		 log[PATH_MAX], json[PATH_MAX], tag[32], n_c[32];
	char		 n_r[32], n_d[32], tail[200];
	const char	*argv[24];
	uint64_t	 n, opened = 0, deadline;
	long		 fds;
	int		 argc, i;

	snprintf(n_r, sizeof(n_r), "%llu",
	    (unsigned long long)conf.connect_rate);
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
		run_paths(c, tag, log, json);
		snprintf(n_c, sizeof(n_c), "%llu", (unsigned long long)n);
		argc = 0;
		argv[argc++] = conf.tenkload;
		argv[argc++] = "--mode";
		argv[argc++] = "idle";
		argv[argc++] = "--connections";
		argv[argc++] = n_c;
		argv[argc++] = "--duration";
		argv[argc++] = n_d;
		argv[argc++] = "--connect-rate";
		argv[argc++] = n_r;
		argv[argc++] = "--connect-timeout";
		argv[argc++] = "30s";
		argv[argc++] = "--threads";
		argv[argc++] = "1";
		argv[argc++] = "--backend";
		argv[argc++] = "epoll";
		argv[argc++] = "--json";
		argv[argc++] = json;
		argv[argc++] = addr;
		argv[argc] = NULL;
		holders[(*nholders)++] = spawn(argv, NULL, log);
		opened += n;
		deadline = report_epoch_us() + (uint64_t)(((double)n /
		    (double)conf.connect_rate * 3 + IDLE_TIMEOUT) * 1e6);
		for (;;) {
			check_quit();
			fds = proc_nfds(srv);
			if (fds >= base + (long)opened)
				break;
			for (i = 0; i < *nholders; i++)
				if (kid_done(holders[i], NULL)) {
					holders[i] = 0;
					snprintf(tag, sizeof(tag), "idle%d.log",
					    i);
					cell_path(log, sizeof(log), c, tag);
					cell_note(c, "idle holder %d exited "
					    "early (%s)", i, log_tail(log,
					    tail, sizeof(tail)));
					return -1;
				}
			if (report_epoch_us() > deadline) {
				cell_note(c, "only %ld of %llu idle "
				    "connections reached the server",
				    fds - base, (unsigned long long)opened);
				return -1;
			}
			progress_set((double)(fds > base ? fds - base : 0) /
			    (double)c->idle, "opening %llu idle connections",
			    (unsigned long long)c->idle);
			progress(0);
			nap(TICK_MS);
		}
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
		if (kid_stop(holders[i], 0, 10, NULL) == 1)
			cell_note(c, "idle holder %d had to be killed", i);
		snprintf(tag, sizeof(tag), "idle%d.json", i);
		cell_path(json, sizeof(json), c, tag);
		if (report_init(&rep) == -1)
			die("out of memory");
		if (report_json_load(json, &rep) == -1) {
			cell_note(c, "no JSON report from idle holder %d", i);
			c->errors++;
		} else {
			errs = report_errors(&rep);
			if (rep.established < rep.requested)
				errs += rep.requested - rep.established;
			if (errs > 0)
				cell_note(c, "idle holder %d: %llu error%s",
				    i, (unsigned long long)errs,
				    errs == 1 ? "" : "s");
			c->errors += errs;
		}
		report_free(&rep);
	}
}

/* One cell from server start to server stop. */
static void
cell_run(struct cell *c, const char *strace)
{
	struct report	 rep;
	pid_t		 holders[MAXHOLDERS];
	char		 log[PATH_MAX], addr[128], why[200], tail[200];
	char		 tag[32], n_t[32];
	const char	*argv[24];
	pid_t		 srv;
	long		 base, fds;
	int		 argc = 0, nholders = 0, i, status;

	cell_path(log, sizeof(log), c, "tenkd.log");
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
	argv[argc] = NULL;

	progress_set(-1, "starting tenkd");
	progress(1);
	srv = spawn(argv, NULL, log);
	if (wait_line(srv, log, "listening on ", START_TIMEOUT, addr,
	    sizeof(addr), why, sizeof(why)) == -1) {
		cell_note(c, "tenkd %s (%s)", why,
		    log_tail(log, tail, sizeof(tail)));
		c->status = CELL_FAILED;
		(void)kid_stop(srv, SIGTERM, 5, NULL);
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
	progress_set(-1, "stopping");
	idle_stop(c, holders, nholders);
	/* A server that cannot stop cleanly is a failure of the cell. */
	if (kid_stop(srv, SIGTERM, STOP_TIMEOUT, &status) == 1) {
		cell_note(c, "tenkd ignored SIGTERM for %d s and was killed",
		    STOP_TIMEOUT);
		c->errors++;
	} else if (status == -1 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		cell_note(c, "tenkd exited with status %d (%s)",
		    status == -1 ? -1 : WIFEXITED(status) ?
		    WEXITSTATUS(status) : 128 + WTERMSIG(status),
		    log_tail(log, tail, sizeof(tail)));
		c->errors++;
	}
	if (c->errors > 0 && c->status == CELL_OK)
		c->status = CELL_ERRORS;
}

/* Statistics of the runs. */

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

static const char *
status_name(enum cell_status s)
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

/* Outputs. */

static void
print_table(FILE *f)
{
	const struct cell	*c;
	double			 m, lo, hi, p50, p99, x, y, cm, clo, chi;
	char			 rate[64], cpu[64], sys[16], d1[32], d2[32];
	int			 i;

	fprintf(f, "\ntenkd echo --threads %d; %llu active ping-pong "
	    "connections of %llu B; %s measured after %s of warm-up; "
	    "median of %d (min-max)\n", conf.threads,
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
			    status_name(c->status), c->note);
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
			fprintf(f, "%17s%s: %s\n", "", status_name(c->status),
			    c->note);
	}
	fflush(f);
}

static FILE *
out_open(const char *name, char *path, size_t len)
{
	FILE	*f;

	snprintf(path, len, "%s/%s", conf.out, name);
	if ((f = fopen(path, "we")) == NULL)
		die("%s: %s", path, strerror(errno));
	return f;
}

static void
out_close(FILE *f, const char *path)
{
	if (fflush(f) == EOF || ferror(f)) {
		fclose(f);
		die("%s: write failed", path);
	}
	fclose(f);
}

/* A CSV field: quoted, with inner quotes doubled. */
static void
csv_str(FILE *f, const char *s)
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
write_csv(void)
{
	const struct cell	*c;
	const struct run	*r;
	enum field		 fl;
	FILE			*f;
	char			 path[PATH_MAX];
	double			 m, lo, hi;
	int			 i, k;

	f = out_open("results.csv", path, sizeof(path));
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
		    (unsigned long long)conf.active, status_name(c->status),
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
		csv_str(f, c->note);
		fputc('\n', f);
	}
	out_close(f, path);

	f = out_open("runs.csv", path, sizeof(path));
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
	out_close(f, path);
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

static void
write_json(void)
{
	const struct cell	*c;
	const struct run	*r;
	struct utsname		 u;
	FILE			*f;
	char			 path[PATH_MAX];
	int			 i, k;

	if (uname(&u) == -1)
		strlcpy(u.release, "?", sizeof(u.release));
	f = out_open("results.json", path, sizeof(path));
	fprintf(f, "{\n  \"tenkbench\": \"%s\",\n  \"format\": 1,\n",
	    TENK_VERSION);
	fprintf(f, "  \"args\": ");
	json_str(f, conf.args);
	fprintf(f, ",\n  \"machine\": { \"kernel\": ");
	json_str(f, u.release);
	fprintf(f, ", \"cpus\": %ld, \"nofile\": %llu, \"fd_setsize\": %d, "
	    "\"local_ports\": %llu },\n", sysconf(_SC_NPROCESSORS_ONLN),
	    (unsigned long long)nofile, FD_SETSIZE,
	    (unsigned long long)nports);
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
		    (unsigned long long)conf.active, status_name(c->status),
		    (unsigned long long)c->errors);
		json_str(f, c->note);
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
	out_close(f, path);
}

/*
 * Data files (one per backend) and a gnuplot script for two charts:
 * msgs/s and server CPU per message against idle connections.
 */
static void
write_plot(const char *gnuplot)
{
	const struct cell	*c;
	FILE			*f;
	char			 path[PATH_MAX], name[64], gp[PATH_MAX];
	char			 log[PATH_MAX], tail[200];
	const char		*argv[4];
	double			 m, lo, hi, cm, clo, chi;
	pid_t			 pid;
	int			 b, i, n, status;

	for (b = 0; b < conf.nbackends; b++) {
		snprintf(name, sizeof(name), "plot-%s.dat", conf.backends[b]);
		f = out_open(name, path, sizeof(path));
		fprintf(f, "# idle msgs_per_s min max cpu_us_per_msg "
		    "min max\n");
		for (i = 0; i < ncells; i++) {
			c = &cells[i];
			if (strcmp(c->backend, conf.backends[b]) != 0 ||
			    c->nruns == 0)
				continue;
			stat3(c, F_RATE, &m, &lo, &hi);
			stat3(c, F_CPU, &cm, &clo, &chi);
			fprintf(f, "%llu %.3f %.3f %.3f %.3f %.3f %.3f\n",
			    (unsigned long long)c->idle, m, lo, hi, cm, clo,
			    chi);
		}
		out_close(f, path);
	}
	f = out_open("plot.gp", gp, sizeof(gp));
	fprintf(f, "# gnuplot script written by tenkbench; "
	    "run from this directory.\n");
	fprintf(f, "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) "
	    "{ set terminal pngcairo size 900,560 noenhanced } "
	    "else { set terminal png size 900,560 noenhanced }\n");
	fprintf(f, "set grid\nset key outside right top\nset xlabel \"idle "
	    "connections\"\nset yrange [0:*]\n");
	for (n = 0; n < 2; n++) {
		fprintf(f, "set output \"%s\"\n", n == 0 ? "msgs.png" :
		    "cpu.png");
		fprintf(f, "set title \"tenkd echo --threads %d, %llu active "
		    "ping-pong connections: %s\"\n", conf.threads,
		    (unsigned long long)conf.active, n == 0 ?
		    "throughput" : "server CPU per message");
		fprintf(f, "set ylabel \"%s\"\n", n == 0 ? "messages/s" :
		    "server CPU us/message");
		fprintf(f, "plot ");
		for (b = 0; b < conf.nbackends; b++)
			fprintf(f, "%s\"plot-%s.dat\" using 1:%d:%d:%d "
			    "with yerrorlines lw 2 title \"%s\"",
			    b > 0 ? ", \\\n     " : "", conf.backends[b],
			    n == 0 ? 2 : 5, n == 0 ? 3 : 6, n == 0 ? 4 : 7,
			    conf.backends[b]);
		fprintf(f, "\n");
	}
	out_close(f, gp);

	/* gnuplot runs in OUT, so the script names files relative to it. */
	snprintf(log, sizeof(log), "%s/logs/gnuplot.log", conf.out);
	argv[0] = gnuplot;
	argv[1] = "plot.gp";
	argv[2] = NULL;
	pid = spawn(argv, conf.out, log);
	while (!kid_done(pid, &status)) {
		check_quit();
		nap(TICK_MS);
	}
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fprintf(stderr, "tenkbench: gnuplot failed: %s\n",
		    log_tail(log, tail, sizeof(tail)));
	else if (!conf.quiet)
		fprintf(stderr, "tenkbench: plots in %s/msgs.png and "
		    "%s/cpu.png\n", conf.out, conf.out);
}

/* Command line. */

/* NAME[,NAME...] given to opt; "list" prints the backends. */
static void
parse_backends(const char *opt, char *s)
{
	const char	*be;
	char		*p, *tok;
	int		 i;

	conf.nbackends = 0;
	for (p = s; (tok = strsep(&p, ",")) != NULL; ) {
		if ((be = tk_cli_backend(opt, tok)) == NULL)
			tk_cli_backend_list();
		for (i = 0; i < conf.nbackends; i++)
			if (conf.backends[i] == be)
				tk_cli_bad(opt, tok, "given twice");
		if (conf.nbackends == MAXBACKENDS)
			tk_cli_bad(opt, NULL, "more than %d backends",
			    MAXBACKENDS);
		conf.backends[conf.nbackends++] = be;
	}
}

/* N[,N...] given to opt. */
static void
parse_idle(const char *opt, char *s)
{
	char		*p, *tok;
	uint64_t	 v;
	int		 i;

	conf.nidle = 0;
	for (p = s; (tok = strsep(&p, ",")) != NULL; ) {
		v = (uint64_t)tk_cli_num(opt, tok, 0, MAXIDLECONNS);
		for (i = 0; i < conf.nidle; i++)
			if (conf.idle[i] == v)
				tk_cli_bad(opt, tok, "given twice");
		if (conf.nidle == MAXIDLE)
			tk_cli_bad(opt, NULL, "more than %d counts", MAXIDLE);
		conf.idle[conf.nidle++] = v;
	}
}

/* tenkd and tenkload sit next to our own binary unless told otherwise. */
static void
find_peers(int have_d, int have_l)
{
	char	self[PATH_MAX], *slash;
	ssize_t	n;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) == -1)
		die("/proc/self/exe: %s", strerror(errno));
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	if (!have_d && snprintf(conf.tenkd, sizeof(conf.tenkd), "%s/tenkd",
	    self) >= (int)sizeof(conf.tenkd))
		tk_cli_bad(self, NULL, "path too long");
	if (!have_l && snprintf(conf.tenkload, sizeof(conf.tenkload),
	    "%s/tenkload", self) >= (int)sizeof(conf.tenkload))
		tk_cli_bad(self, NULL, "path too long");
	if (access(conf.tenkd, X_OK) == -1)
		tk_cli_bad(have_d ? "--tenkd" : NULL, conf.tenkd, "%s (build "
		    "it with make, or give --tenkd)", strerror(errno));
	if (access(conf.tenkload, X_OK) == -1)
		tk_cli_bad(have_l ? "--tenkload" : NULL, conf.tenkload, "%s "
		    "(build it with make, or give --tenkload)",
		    strerror(errno));
}

static void
mkdirs(const char *path)
{
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		die("mkdir %s: %s", path, strerror(errno));
}

/* Local ports available for connect(2), from the kernel's range. */
static uint64_t
local_ports(void)
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

/* Lay out the cells, idle count by idle count, and mark the skipped. */
static void
plan_cells(void)
{
	struct cell	*c;
	uint64_t	 fds;
	int		 i, b;

	ncells = conf.nidle * conf.nbackends;
	if ((cells = calloc((size_t)ncells, sizeof(*cells))) == NULL)
		die("out of memory");
	for (i = 0; i < conf.nidle; i++)
		for (b = 0; b < conf.nbackends; b++) {
			c = &cells[i * conf.nbackends + b];
			c->backend = conf.backends[b];
			c->idle = conf.idle[i];
			fds = c->idle + conf.active + FD_SPARE;
			if (strcmp(c->backend, "select") == 0 &&
			    fds >= FD_SETSIZE) {
				c->status = CELL_SKIPPED;
				snprintf(c->note, sizeof(c->note),
				    "%llu idle + %llu active + %d spare fds "
				    "reach FD_SETSIZE %d",
				    (unsigned long long)c->idle,
				    (unsigned long long)conf.active, FD_SPARE,
				    FD_SETSIZE);
			} else if (fds > nofile) {
				c->status = CELL_SKIPPED;
				snprintf(c->note, sizeof(c->note), "%llu fds "
				    "exceed RLIMIT_NOFILE %llu of one tenkd",
				    (unsigned long long)fds,
				    (unsigned long long)nofile);
			} else if (c->idle + conf.active + PORT_SPARE >
			    nports) {
				c->status = CELL_SKIPPED;
				snprintf(c->note, sizeof(c->note), "%llu "
				    "connections exceed the %llu local ports",
				    (unsigned long long)(c->idle +
				    conf.active), (unsigned long long)nports);
			}
			c->plan = plan_cell(c);
		}
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "active", required_argument, NULL, 'a' },
		{ "backends", required_argument, NULL, 'b' },
		{ "connect-rate", required_argument, NULL, 'C' },
		{ "duration", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "idle", required_argument, NULL, 'i' },
		{ "load-threads", required_argument, NULL, 'L' },
		{ "out", required_argument, NULL, 'o' },
		{ "plot", no_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "size", required_argument, NULL, 's' },
		{ "syscalls", no_argument, NULL, 'S' },
		{ "syscall-time", required_argument, NULL, 'T' },
		{ "tenkd", required_argument, NULL, 'D' },
		{ "tenkload", required_argument, NULL, 'G' },
		{ "threads", required_argument, NULL, 't' },
		{ "version", no_argument, NULL, 'V' },
		{ "warmup", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 }
	};
	struct sigaction sa;
	const char *const *be;
	const char	*opt, *strace = NULL, *gnuplot = NULL;
	char		 logs[PATH_MAX], sbuf[PATH_MAX], gbuf[PATH_MAX];
	char		 d1[32], d2[32];
	size_t		 i, len;
	int		 ch, have_d = 0, have_l = 0, k;

	setproctitle_init(argc, argv, environ);
	for (be = tk_backend_names(); *be != NULL &&
	    conf.nbackends < MAXBACKENDS; be++)
		conf.backends[conf.nbackends++] = *be;
	for (i = 0; i < sizeof(default_idle) / sizeof(default_idle[0]); i++)
		conf.idle[conf.nidle++] = default_idle[i];
	conf.active = 100;
	conf.duration = 3 * TK_SEC;
	conf.warmup = TK_SEC;
	conf.systime = 2 * TK_SEC;
	conf.size = 64;
	conf.connect_rate = 10000;
	conf.repeat = 3;
	conf.threads = 1;
	conf.load_threads = 1;
	conf.out = "bench-out";
	strlcpy(conf.args, "tenkbench", sizeof(conf.args));
	for (k = 1; k < argc; k++) {
		strlcat(conf.args, " ", sizeof(conf.args));
		strlcat(conf.args, argv[k], sizeof(conf.args));
	}

	while ((ch = tk_cli_getopt(argc, argv, ":a:b:d:hi:o:pqr:s:t:Vw:",
	    longopts)) != -1) {
		opt = tk_cli_opt();
		switch (ch) {
		case 'a':
			conf.active = tk_cli_num(opt, optarg, 1, MAXACTIVE);
			break;
		case 'b':
			parse_backends(opt, optarg);
			break;
		case 'C':
			conf.connect_rate = tk_cli_rate(opt, optarg, 1,
			    1000000);
			break;
		case 'd':
			conf.duration = tk_cli_duration(opt, optarg,
			    100 * TK_MSEC, 3600 * TK_SEC, NULL);
			break;
		case 'D':
			strlcpy(conf.tenkd, optarg, sizeof(conf.tenkd));
			have_d = 1;
			break;
		case 'G':
			strlcpy(conf.tenkload, optarg, sizeof(conf.tenkload));
			have_l = 1;
			break;
		case 'h':
			usage(stdout, 0);
			/* NOTREACHED */
		case 'i':
			parse_idle(opt, optarg);
			break;
		case 'L':
			conf.load_threads = (int)tk_cli_num(opt, optarg, 1,
			    MAXLOADTHREADS);
			break;
		case 'o':
			conf.out = optarg;
			break;
		case 'p':
			conf.plot = 1;
			break;
		case 'q':
			conf.quiet = 1;
			break;
		case 'r':
			conf.repeat = (int)tk_cli_num(opt, optarg, 1,
			    MAXREPEAT);
			break;
		case 's':
			conf.size = tk_cli_size(opt, optarg, 1, 1024 * 1024);
			break;
		case 'S':
			conf.syscalls = 1;
			break;
		case 't':
			conf.threads = (int)tk_cli_num(opt, optarg, 1,
			    MAXTHREADS);
			break;
		case 'T':
			conf.systime = tk_cli_duration(opt, optarg,
			    100 * TK_MSEC, 600 * TK_SEC, NULL);
			break;
		case 'V':
			printf("tenkbench %s\n", TENK_VERSION);
			exit(0);
		case 'w':
			conf.warmup = tk_cli_duration(opt, optarg, 0,
			    3600 * TK_SEC, NULL);
			break;
		}
	}
	if (optind != argc)
		tk_cli_bad(argv[optind], NULL, "unexpected argument");
	len = strlen(conf.out);
	while (len > 1 && conf.out[len - 1] == '/')
		len--;
	if (len == 0 || len + 32 >= PATH_MAX)
		tk_cli_bad("--out", conf.out, "bad directory name");
	find_peers(have_d, have_l);

	/* Children inherit the hard limit as their soft one. */
	(void)tk_nofile_raise(&nofile);
	nports = local_ports();
	if ((clk_tck = sysconf(_SC_CLK_TCK)) <= 0)
		clk_tck = 100;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	mkdirs(conf.out);
	snprintf(logs, sizeof(logs), "%s/logs", conf.out);
	mkdirs(logs);
	if (conf.syscalls) {
		if (find_prog("strace", sbuf, sizeof(sbuf)))
			strace = sbuf;
		else
			fprintf(stderr, "tenkbench: strace not found, no "
			    "syscall counts (apt install strace)\n");
	}
	if (conf.plot) {
		if (find_prog("gnuplot", gbuf, sizeof(gbuf)))
			gnuplot = gbuf;
		else
			fprintf(stderr, "tenkbench: gnuplot not found, no "
			    "plots (apt install gnuplot-nox)\n");
	}
	plan_cells();

	t0_us = report_epoch_us();
	if (!conf.quiet) {
		double	plan = 0;

		for (k = 0; k < ncells; k++)
			plan += cells[k].plan;
		fprintf(stderr, "tenkbench: %d cell%s, %d repeat%s of %s, "
		    "about %s; logs in %s\n", ncells, ncells == 1 ? "" : "s",
		    conf.repeat, conf.repeat == 1 ? "" : "s",
		    tk_fmt_duration(conf.duration, d1, sizeof(d1)),
		    fmt_secs(plan, d2, sizeof(d2)), logs);
	}
	for (k = 0; k < ncells; k++) {
		prog.cell = k;
		prog.cell_t0 = report_epoch_us();
		if (cells[k].status == CELL_SKIPPED)
			continue;
		cell_run(&cells[k], strace);
		cells[k].took = (double)(report_epoch_us() - prog.cell_t0) /
		    1e6;
		if (!conf.quiet)
			fprintf(stderr, "tenkbench: [%d/%d] %s idle %llu: %s "
			    "in %.1f s%s%s\n", k + 1, ncells,
			    cells[k].backend,
			    (unsigned long long)cells[k].idle,
			    status_name(cells[k].status), cells[k].took,
			    cells[k].note[0] != '\0' ? ": " : "",
			    cells[k].note);
		check_quit();
	}
	prog.cell = ncells;

	print_table(stdout);
	write_csv();
	write_json();
	if (gnuplot != NULL)
		write_plot(gnuplot);
	if (!conf.quiet)
		fprintf(stderr, "tenkbench: results in %s/results.csv and "
		    "%s/results.json\n", conf.out, conf.out);
	cleanup();
	for (k = 0; k < ncells; k++)
		if (cells[k].status != CELL_OK &&
		    cells[k].status != CELL_SKIPPED)
			return 1;
	return 0;
}
