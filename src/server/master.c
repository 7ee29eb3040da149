/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --workers P: a master process that forks P workers and supervises
 * them.  The master has bound every listener before (main.c opens
 * threads x P sockets per address with SO_REUSEPORT, on one port even
 * for port 0, and prints "listening on" once); each worker keeps its own
 * slice and runs as a plain tenkd with its threads.  The master keeps
 * all of them open, so a worker that dies loses no connection waiting
 * in its listeners' backlog: its replacement inherits the same sockets.
 *
 * The master runs no event loop and no thread: it waits in
 * sigtimedwait() for SIGCHLD (restart the dead worker after a back-off
 * that doubles from 100 ms to 10 s while workers die young), SIGTERM
 * and SIGINT (passed on; no more restarts; exit when all are gone),
 * SIGHUP (reopen its log, pass on) and SIGUSR1 (pass on; each worker
 * logs its own statistics).  A worker gets SIGTERM if the master dies
 * (PR_SET_PDEATHSIG).
 */
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tenk/clock.h"
#include "tenk/log.h"
#include "tenk/timer.h"
#include "tenkd.h"

#define BACKOFF_MIN	(100 * TK_MSEC)
#define BACKOFF_MAX	(10 * TK_SEC)
#define YOUNG		(10 * TK_SEC)	/* died young: back off */

struct child {
	pid_t		 pid;		/* -1 while dead */
	uint64_t	 started;
	uint64_t	 restart_at;	/* 0: none scheduled */
	uint64_t	 backoff;
};

static struct child	 kids[MAXWORKERS];
static sigset_t		 oldmask;
static pid_t		 master_pid;

/*
 * Fork worker i.  Returns 1 in the child (ready to go on as a worker),
 * 0 in the master.  A failed fork is retried after the back-off.
 */
static int
spawn(int i)
{
	struct child	*k = &kids[i];
	pid_t		 pid;

	k->restart_at = 0;
	if ((pid = fork()) == -1) {
		log_warn("worker %d: fork", i);
		k->pid = -1;
		k->restart_at = tk_clock_mono() + BACKOFF_MAX;
		return 0;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != master_pid)
			_exit(0);
		log_worker(i);
		return 1;
	}
	k->pid = pid;
	k->started = tk_clock_mono();
	log_info("worker %d: pid %d", i, (int)pid);
	return 0;
}

/* Pass signo on to every live worker. */
static void
relay_signal(int signo)
{
	int	i;

	for (i = 0; i < srv.cfg.workers; i++)
		if (kids[i].pid != -1)
			(void)kill(kids[i].pid, signo);
}

/* Reap dead workers; schedule restarts unless stopping. */
static void
reap(int stopping)
{
	struct child	*k;
	uint64_t	 now = tk_clock_mono();
	pid_t		 pid;
	int		 st, i;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (i = 0; i < srv.cfg.workers; i++)
			if (kids[i].pid == pid)
				break;
		if (i == srv.cfg.workers)
			continue;
		k = &kids[i];
		k->pid = -1;
		if (stopping) {
			log_info("worker %d (pid %d) exited", i, (int)pid);
			continue;
		}
		if (now - k->started > YOUNG || k->backoff == 0)
			k->backoff = BACKOFF_MIN;
		else if ((k->backoff *= 2) > BACKOFF_MAX)
			k->backoff = BACKOFF_MAX;
		k->restart_at = now + k->backoff;
		if (WIFSIGNALED(st))
			log_warnx("worker %d (pid %d) killed by signal %d; "
			    "restarting in %llu ms", i, (int)pid,
			    WTERMSIG(st),
			    (unsigned long long)(k->backoff / TK_MSEC));
		else
			log_warnx("worker %d (pid %d) exited with status %d; "
			    "restarting in %llu ms", i, (int)pid,
			    WEXITSTATUS(st),
			    (unsigned long long)(k->backoff / TK_MSEC));
	}
}

/*
 * Start srv.cfg.workers workers and supervise them.  Returns the
 * worker's number (0 to P-1) in a worker process, which then goes on as
 * a plain tenkd, and -1 in the master once every worker is gone after
 * SIGTERM or SIGINT.  Main thread, before any thread or loop exists.
 */
int
master_run(void)
{
	struct timespec	 ts;
	sigset_t	 set;
	uint64_t	 now, next;
	int		 i, signo, stopping = 0, alive;

	if (srv.cfg.workers > MAXWORKERS)
		fatalx("--workers %d: at most %d", srv.cfg.workers,
		    MAXWORKERS);
	master_pid = getpid();
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, &oldmask) == -1)
		fatal("sigprocmask");
	for (i = 0; i < srv.cfg.workers; i++) {
		kids[i].pid = -1;
		if (spawn(i))
			return i;
	}
	setproctitle("%s: master, %d worker%s", srv.cfg.mode,
	    srv.cfg.workers, srv.cfg.workers == 1 ? "" : "s");
	log_info("master: %d worker%s", srv.cfg.workers,
	    srv.cfg.workers == 1 ? "" : "s");

	for (;;) {
		now = tk_clock_mono();
		next = now + TK_SEC;
		alive = 0;
		for (i = 0; i < srv.cfg.workers; i++) {
			if (kids[i].pid != -1)
				alive++;
			else if (!stopping && kids[i].restart_at != 0) {
				if (kids[i].restart_at <= now) {
					if (spawn(i))
						return i;
					if (kids[i].pid != -1)
						alive++;
				}
				if (kids[i].restart_at != 0 &&
				    kids[i].restart_at < next)
					next = kids[i].restart_at;
			}
		}
		if (stopping && alive == 0)
			break;
		next = next > now ? next - now : 0;
		ts.tv_sec = next / TK_SEC;
		ts.tv_nsec = next % TK_SEC;
		signo = sigtimedwait(&set, NULL, &ts);
		if (signo == -1)
			continue;	/* EAGAIN (timeout) or EINTR */
		switch (signo) {
		case SIGCHLD:
			reap(stopping);
			break;
		case SIGTERM:
		case SIGINT:
			if (!stopping)
				log_info("master: SIG%s: stopping the workers",
				    sigabbrev_np(signo));
			stopping = 1;
			relay_signal(signo);
			break;
		case SIGHUP:
			log_reopen();
			relay_signal(signo);
			break;
		case SIGUSR1:
			relay_signal(signo);
			break;
		}
	}
	log_info("master: all workers gone, exiting");
	return -1;
}
