/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tenkbench's children: tenkd, the tenkload runs and idle holders,
 * strace, gnuplot.  Every child runs in a process group of its own, with
 * stdout and stderr in a log file under OUT/logs.  Each one is tracked
 * until reaped; on exit, on a fatal error and on SIGINT/SIGTERM/SIGHUP
 * every group still alive gets SIGTERM, then SIGKILL, and is reaped.
 */
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tenk/log.h"
#include "loadgen.h"
#include "bench.h"

#define MAXKIDS		(MAXHOLDERS + 8)

static pid_t			 kids[MAXKIDS];
static volatile sig_atomic_t	 quit;

static void	 stopall(void);

static void
on_signal(int signo)
{
	quit = signo;
}

/*
 * Before the first child: SIGINT, SIGTERM and SIGHUP only set a flag
 * that child_quit reads, and every exit (fatal() too) stops the children
 * still tracked.
 */
void
child_init(void)
{
	struct sigaction sa;

	if (atexit(stopall) != 0)
		fatalx("atexit failed");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* After a signal: leave as the signal would; exit stops the children. */
void
child_quit(void)
{
	int	sig = quit;

	if (sig == 0)
		return;
	fprintf(stderr, "\ntenkbench: %s, stopping the children\n",
	    strsignal(sig));
	exit(128 + sig);
}

void
child_nap(int ms)
{
	struct timespec	ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	(void)nanosleep(&ts, NULL);
}

static void
track(pid_t pid)
{
	int	i;

	for (i = 0; i < MAXKIDS; i++)
		if (kids[i] == 0) {
			kids[i] = pid;
			return;
		}
	/* The caller never has more than a few at a time. */
	kill(-pid, SIGKILL);
	fatalx("too many child processes");
}

static void
untrack(pid_t pid)
{
	int	i;

	for (i = 0; i < MAXKIDS; i++)
		if (kids[i] == pid)
			kids[i] = 0;
}

/*
 * Start argv[0] with stdin from /dev/null and stdout and stderr to
 * logpath, in a process group of its own, with default signal handling,
 * in directory dir unless it is NULL.  Returns the pid; dies when the
 * log cannot be opened or fork fails.
 */
pid_t
child_spawn(const char *const argv[], const char *dir, const char *logpath)
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
		fatal("%s", logpath);
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == -1)
		fatal("fork");
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
	track(pid);
	return pid;
}

/*
 * Has pid (a child we started, leader of its own group) exited?  If so,
 * kill what is left of its group while the zombie still holds the group
 * id, reap it, store its wait status and return 1; else return 0.
 */
int
child_done(pid_t pid, int *status)
{
	siginfo_t	si;
	int		st;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == -1) {
		if (errno == EINTR)
			return 0;
		untrack(pid);
		if (status != NULL)
			*status = -1;
		return 1;
	}
	if (si.si_pid != pid)
		return 0;
	(void)kill(-pid, SIGKILL);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	untrack(pid);
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
int
child_stop(pid_t pid, int sig, int secs, int *status)
{
	uint64_t	deadline = report_epoch_us() + (uint64_t)secs * 1000000;

	if (child_done(pid, status))
		return 0;
	if (sig != 0)
		(void)kill(-pid, sig);
	while (report_epoch_us() < deadline) {
		if (child_done(pid, status))
			return 0;
		child_nap(TICK_MS);
	}
	(void)kill(-pid, SIGKILL);
	while (!child_done(pid, status))
		child_nap(TICK_MS);
	return 1;
}

/* Wait for pid to exit by itself; a signal to us stops everything. */
void
child_wait(pid_t pid, int *status)
{
	while (!child_done(pid, status)) {
		child_quit();
		child_nap(TICK_MS);
	}
}

/* Stop every child still tracked; from exit paths and after signals. */
static void
stopall(void)
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
			(void)child_stop(kids[i], 0, 3, NULL);
}

/* Did a wait status from child_done say anything but "exit 0"? */
int
child_failed(int status)
{
	return status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

/* The tail of a log file, squeezed into one line, for error messages. */
const char *
child_log_tail(const char *path, char *buf, size_t len)
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
