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
 * The master runs one event loop and no thread.  Its signals stay
 * blocked and arrive through a signalfd: SIGCHLD (restart the dead
 * worker after a back-off that doubles from 100 ms to 10 s while workers
 * die young), SIGTERM and SIGINT (passed on; no more restarts; exit when
 * all are gone), SIGUSR1 and SIGHUP (reopen its log, pass on: each
 * worker reopens its own).  A worker gets SIGTERM if the master dies
 * (PR_SET_PDEATHSIG).  Workers are forked between iterations, never
 * from a callback, so a new worker leaves the master's loop cleanly.
 *
 * The loop also serves --metrics (metrics.c): each worker has a socket
 * pair with the master, over which a byte asks for its figures and one
 * datagram (struct msnap) brings them.  The master keeps each slot's
 * last figures, and when a worker dies adds its counters to the slot's
 * base, so a restart never makes a counter of the sum go backwards.
 * Workers also send their figures once a second unasked, so what a
 * killed worker counted and no scrape saw is at most a second's worth.
 */
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
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
#define COLLECT_WAIT	(2 * TK_SEC)	/* for the workers' figures */

struct child {
	pid_t		 pid;		/* -1 while dead */
	uint64_t	 started;
	uint64_t	 restart_at;	/* 0: none scheduled */
	uint64_t	 backoff;
	struct tk_io	 io;		/* our end of its socket pair */
	struct msnap	 cur;		/* its last figures */
	struct msnap	 base;		/* counters of dead workers here */
};

static struct child	 kids[MAXWORKERS];
static struct msnap	 sums[MAXWORKERS];	/* what /metrics shows */
static sigset_t		 oldmask;
static pid_t		 master_pid;
static struct tk_loop	*ml;		/* the master's loop */
static int		 sfd = -1;	/* its signalfd */
static struct tk_io	 sio;
static struct tk_timer	 tick;		/* the next restart, or 1 s */
static struct tk_timer	 collect_timer;
static uint64_t		 pending;	/* workers asked, not answered */
static int		 collecting;
static int		 stopping;

static void	sig_ready(struct tk_loop *, struct tk_io *);
static void	tick_fired(struct tk_loop *, struct tk_timer *);

static void	kid_read(struct tk_loop *, struct tk_io *);
static void	collect_end(void);

/*
 * In a new worker: close what is the master's (its loop, signalfd,
 * metrics listener and clients, the other workers' sockets); fd is
 * this worker's end of its socket pair.
 */
static void
child_setup(int i, int fd)
{
	int	j;

	for (j = 0; j < srv.cfg.workers; j++)
		if (kids[j].io.fd != -1)
			close(kids[j].io.fd);
	metrics_forget();
	if (ml != NULL)
		tk_loop_free(ml);	/* closes, unregisters nothing */
	if (sfd != -1)
		close(sfd);
	ml = NULL;
	sfd = -1;
	log_worker(i);
	systemd_quiet();
	metrics_child_fd(fd);
}

/*
 * Fork worker i.  Returns 1 in the child (ready to go on as a worker),
 * 0 in the master.  A failed fork is retried after the back-off.
 */
static int
spawn(int i)
{
	struct child	*k = &kids[i];
	pid_t		 pid;
	int		 sv[2];

	k->restart_at = 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0, sv) == -1) {
		log_warn("worker %d: socketpair", i);
		sv[0] = sv[1] = -1;
	}
	if ((pid = fork()) == -1) {
		log_warn("worker %d: fork", i);
		k->pid = -1;
		k->restart_at = tk_clock_mono() + BACKOFF_MAX;
		if (sv[0] != -1) {
			close(sv[0]);
			close(sv[1]);
		}
		return 0;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != master_pid)
			_exit(0);
		if (sv[0] != -1)
			close(sv[0]);
		child_setup(i, sv[1]);
		return 1;
	}
	if (sv[1] != -1)
		close(sv[1]);
	k->pid = pid;
	k->started = tk_clock_mono();
	memset(&k->cur, 0, sizeof(k->cur));
	tk_io_init(&k->io, sv[0], kid_read, k);
	if (ml != NULL && sv[0] != -1 &&
	    tk_io_start(ml, &k->io, TK_EV_READ) == -1)
		log_warn("worker %d: watching its socket", i);
	log_info("worker %d: pid %d", i, (int)pid);
	return 0;
}

/* The counters of b added to a; gauges are left as they are. */
static void
snap_add(struct msnap *a, const struct msnap *b)
{
	int	i;

	a->st.accepted += b->st.accepted;
	for (i = 0; i < CONN_NREASONS; i++)
		a->st.closed[i] += b->st.closed[i];
	a->st.bytes_in += b->st.bytes_in;
	a->st.bytes_out += b->st.bytes_out;
	a->st.noport += b->st.noport;
	a->st.iterations += b->st.iterations;
	for (i = 0; i < CAP_NKINDS; i++)
		a->caps[i] += b->caps[i];
	for (i = 0; i < MAXUPSTREAMS; i++) {
		a->ups[i].sessions += b->ups[i].sessions;
		a->ups[i].fails += b->ups[i].fails;
		a->ups[i].tx += b->ups[i].tx;
		a->ups[i].rx += b->ups[i].rx;
	}
	for (i = 0; i < MHIST_N; i++)
		a->hist[i] += b->hist[i];
	a->hist_sum += b->hist_sum;
	a->cpu += b->cpu;
}

/* Figures from worker k, or its socket closed. */
static void
kid_read(struct tk_loop *l, struct tk_io *io)
{
	struct child	*k = io->arg;
	int		 i = (int)(k - kids);
	ssize_t		 n;

	for (;;) {
		n = recv(io->fd, &sums[i], sizeof(sums[i]), 0);
		if (n == (ssize_t)sizeof(sums[i])) {
			k->cur = sums[i];
			pending &= ~(1ULL << i);
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN) {
			tk_io_block(io, TK_EV_READ);
			break;
		}
		if (n > 0)
			continue;	/* not ours: a short datagram */
		(void)tk_io_close(l, io);
		pending &= ~(1ULL << i);
		break;
	}
	if (collecting && pending == 0)
		collect_end();
}

/*
 * /metrics or /stats asked for figures: ask every live worker, answer
 * when all did or after COLLECT_WAIT.  Master only.
 */
void
master_collect(void)
{
	char	c = 's';
	int	i;

	if (collecting)
		return;
	collecting = 1;
	pending = 0;
	for (i = 0; i < srv.cfg.workers; i++)
		if (kids[i].pid != -1 && kids[i].io.fd != -1 &&
		    send(kids[i].io.fd, &c, 1, MSG_NOSIGNAL) == 1)
			pending |= 1ULL << i;
	if (pending == 0 || tk_timer_arm(ml, &collect_timer,
	    COLLECT_WAIT) == -1) {
		collect_end();
		return;
	}
}

static void
collect_expired(struct tk_loop *l, struct tk_timer *t)
{
	(void)l;
	(void)t;
	collect_end();
}

static void
collect_end(void)
{
	int	i;

	tk_timer_cancel(ml, &collect_timer);
	collecting = 0;
	for (i = 0; i < srv.cfg.workers; i++) {
		sums[i] = kids[i].cur;
		snap_add(&sums[i], &kids[i].base);
		if (kids[i].pid == -1)
			sums[i].pid = 0;
	}
	metrics_answer(sums, srv.cfg.workers, 1);
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

/*
 * The signalfd or the tick woke the loop: nothing to do in the loop,
 * master_run() reads the signals and restarts workers after the
 * iteration.  The watcher stays ready; it is read until EAGAIN there.
 */
static void
sig_ready(struct tk_loop *l, struct tk_io *io)
{
	(void)l;
	tk_io_block(io, TK_EV_READ);
}

static void
tick_fired(struct tk_loop *l, struct tk_timer *t)
{
	(void)l;
	(void)t;
}

/* Reap dead workers; schedule restarts unless stopping. */
static void
reap(int stop)
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
		/* Its last figures, if still queued, then into the base. */
		if (k->io.fd != -1) {
			kid_read(ml, &k->io);
			if (k->io.fd != -1)
				(void)tk_io_close(ml, &k->io);
		}
		snap_add(&k->base, &k->cur);
		memset(&k->cur, 0, sizeof(k->cur));
		if (stop) {
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
	struct signalfd_siginfo	 si;
	sigset_t		 set;
	uint64_t		 now, next;
	ssize_t			 n;
	int			 i, signo, alive;

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
		tk_io_init(&kids[i].io, -1, kid_read, &kids[i]);
	}
	for (i = 0; i < srv.cfg.workers; i++)
		if (spawn(i))
			return i;
	setproctitle("%s: master, %d worker%s", srv.cfg.mode,
	    srv.cfg.workers, srv.cfg.workers == 1 ? "" : "s");
	log_info("master: %d worker%s", srv.cfg.workers,
	    srv.cfg.workers == 1 ? "" : "s");
	systemd_notify("READY=1\nSTATUS=%s: master, %d worker%s",
	    srv.cfg.mode, srv.cfg.workers, srv.cfg.workers == 1 ? "" : "s");

	if ((ml = tk_loop_new(srv.cfg.backend, 0)) == NULL)
		fatal("master: loop");
	if ((sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) == -1)
		fatal("master: signalfd");
	tk_io_init(&sio, sfd, sig_ready, NULL);
	if (tk_io_start(ml, &sio, TK_EV_READ) == -1)
		fatal("master: watching the signalfd");
	for (i = 0; i < srv.cfg.workers; i++)
		if (kids[i].io.fd != -1 &&
		    tk_io_start(ml, &kids[i].io, TK_EV_READ) == -1)
			fatal("master: watching worker %d", i);
	tk_timer_init(&tick, tick_fired, NULL);
	tk_timer_init(&collect_timer, collect_expired, NULL);
	metrics_start(ml);

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
		(void)tk_timer_arm(ml, &tick, next > now ? next - now : 0);
		tk_loop_run(ml, TK_RUN_ONCE);
		/* Signals: read here, between iterations, not in a handler. */
		while ((n = read(sfd, &si, sizeof(si))) == sizeof(si)) {
			signo = (int)si.ssi_signo;
			switch (signo) {
			case SIGCHLD:
				reap(stopping);
				break;
			case SIGTERM:
			case SIGINT:
				if (!stopping) {
					log_info("master: SIG%s: stopping the "
					    "workers", sigabbrev_np(signo));
					systemd_notify("STOPPING=1\nSTATUS="
					    "stopping the workers");
				}
				stopping = 1;
				relay_signal(signo);
				break;
			case SIGHUP:
			case SIGUSR1:
				log_reopen();
				relay_signal(signo);
				break;
			}
		}
	}
	metrics_stop();
	tk_timer_cancel(ml, &tick);
	tk_timer_cancel(ml, &collect_timer);
	tk_loop_free(ml);
	ml = NULL;
	close(sfd);
	sfd = -1;
	log_info("master: all workers gone, exiting");
	return -1;
}
