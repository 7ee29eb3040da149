/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The master: with --workers P, or with -f (one worker then, so that a
 * reload has a process to replace), it forks P workers and supervises
 * them.  The master has bound every listener before (main.c opens
 * threads x P sockets per address with SO_REUSEPORT, on one port even
 * for port 0, and prints "listening on" once); each worker keeps its own
 * slice and runs as a plain tenkd with its threads.  The master keeps
 * all of them open, so a worker that dies loses no connection waiting
 * in its listeners' backlog: its replacement inherits the same sockets.
 *
 * The master runs one event loop, as a worker does, and no thread; its
 * state is one struct master.  Its signals come through the loop's
 * signal watcher: SIGCHLD (restart the dead worker after a back-off
 * that doubles from 100 ms to 10 s while workers die young), SIGTERM
 * and SIGINT (passed on; no more restarts; exit when all are gone),
 * SIGUSR1 (reopen its logs, the access log too, which a worker it
 * restarts inherits; pass on: each worker reopens its own), SIGHUP
 * (reload) and SIGUSR2 (upgrade).  Its deadlines are timers: the end of
 * a back-off, a new generation's or a new master's --ready-timeout, the
 * kill of a new master that stays, the retry of the pidfile.  A worker
 * gets SIGTERM if the master dies (PR_SET_PDEATHSIG).
 *
 * A callback that may change what the master waits for (a worker's
 * byte, a death, a signal, a timer) stops the loop after its iteration,
 * and master_run() looks then (settle()): the first generation ready,
 * a reload's ready, a deferred signal due, our exit.  So a signal that
 * comes with a worker's ready byte is taken first, whatever order the
 * backend reports them in: a new master whose SIGTERM waited pending
 * from its start never says ready.  Workers are forked there too
 * (forks()), never from a callback, so that a new worker returns to
 * main() from master_run()'s frame; it leaves the master's loop with
 * tk_loop_forget(), since the epoll instance or ring is the master's
 * too, and the master's signals are blocked across each fork (mfork()).
 *
 * Reload: the master builds a new configuration from the command line
 * and the file as it is now (config.c), checks it and what a reload may
 * not change (config_fixed), and keeps the one it runs when anything is
 * wrong; then a new generation of P workers, each taking the new one
 * on, starts on the same sockets.
 * Each worker sends one byte once its threads run; when all of the new
 * generation have, the old one gets SIGTERM, its usual drain: it closes
 * its copies of the listeners (the sockets stay open here, so their
 * backlogs are the new workers') and ends with its last session or at
 * --drain-timeout.  A worker of an old generation is never restarted.
 * What a reload cannot change without closing a socket is refused by the
 * check: closing a SO_REUSEPORT socket would drop the connections in its
 * backlog, and the kernel's way out (net.ipv4.tcp_migrate_req) is a
 * sysctl.  Upgrade: the master forks and executes its binary with its
 * command line and every listener, as systemd passes sockets, and a
 * pipe; the new master writes a byte on it once its workers run, and
 * this one drains its workers, hands the pidfile over and exits.  A
 * SIGHUP or SIGUSR2 while a reload is under way, or a SIGHUP while an
 * upgrade is, waits for its end (deferred()), as the file may have
 * changed since it was read.  A SIGTERM before the new master is ready
 * stops it too, and this one exits once it is gone.  A new generation
 * or a new master has --ready-timeout to say it runs; a new master
 * that is told to stop, late or by our SIGTERM, and still runs
 * --drain-timeout and KILL_GRACE later is killed (up_stop).
 *
 * The loop also serves --metrics (metrics.c): each worker has a socket
 * pair with the master, over which a byte asks for its figures and one
 * datagram (struct msnap) brings them.  The master keeps each worker's
 * last figures, and when one dies adds its counters to its slot's base,
 * so a restart or a reload never makes a counter of the sum go
 * backwards; while two generations run, a slot sums both.  Workers also
 * send their figures once a second unasked, so what a killed worker
 * counted and no scrape saw is at most a second's worth.
 */
#include <sys/prctl.h>
#include <sys/socket.h>
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

#include "tenk/clock.h"
#include "tenk/log.h"
#include "tenk/parse.h"
#include "tenk/signal.h"
#include "tenk/timer.h"
#include "tenk/xmalloc.h"
#include "../tenkd.h"

#define BACKOFF_MIN	(100 * TK_MSEC)
#define BACKOFF_MAX	(10 * TK_SEC)
#define YOUNG		(10 * TK_SEC)	/* died young: back off */
#define COLLECT_WAIT	(2 * TK_SEC)	/* for the workers' figures */
#define KILL_GRACE	(5 * TK_SEC)	/* SIGTERM to SIGKILL, past a drain */
#define PIDFILE_RETRY	(100 * TK_MSEC)
#define BADSNAP_EVERY	(10 * TK_SEC)	/* a line about bad figures */
#define MAXKIDS		(4 * MAXWORKERS)	/* with old generations */

enum kstate {
	K_FREE,
	K_CUR,		/* the generation serving; restarted when dead */
	K_NEW,		/* a reload's, until all are ready */
	K_OLD,		/* draining; never restarted */
};

struct master;

struct child {
	struct master	*m;
	enum kstate	 state;
	int		 slot;		/* worker number, 0 to P-1 */
	int		 gen;
	pid_t		 pid;		/* -1 while dead */
	int		 ready;		/* its threads run */
	int		 asked;		/* for figures, not answered */
	int		 ulist;		/* its upstream list's version */
	uint64_t	 started;
	uint64_t	 restart_at;	/* 0: none scheduled */
	uint64_t	 backoff;
	struct tk_io	 io;		/* our end of its socket pair */
	struct msnap	 cur;		/* its last figures */
};

/*
 * All the master's state: one per process (master), which callbacks
 * find through their argument.  The part that stays in a worker after
 * the fork is role, msigs and ready_sock.
 */
struct master {
	struct tk_loop		*l;
	struct child		 kids[MAXKIDS];
	struct msnap		 base[MAXWORKERS];	/* of the dead */
	struct msnap		 sums[MAXWORKERS];	/* /metrics' figures */
	sigset_t		 oldmask;	/* our parent's: an upgrade's */
	sigset_t		 msigs;		/* what the master takes */
	pid_t			 pid;
	int			 role;		/* master_role() */
	int			 ready_sock;	/* a worker: its socket pair */
	int			 stopping;
	int			 done;		/* stopped and all gone */
	struct tk_timer		 restart;	/* the next back-off's end */

	/* /metrics and /stats: the workers' figures asked for. */
	struct tk_timer		 collect_timer;
	int			 pending;	/* asked, not answered */
	int			 collecting;
	uint64_t		 bad_last;	/* snap_warn()'s last line */
	uint64_t		 bad_skipped;

	/* Reload: the generations and the configuration of the new one. */
	const struct cmdline	*cmdl;		/* as read at start */
	int			 gen;		/* serving */
	struct config		 newcfg;	/* the new generation's */
	int			*freshp;	/* master_run()'s *fresh */
	int			 reloading;	/* a K_NEW generation starts */
	struct tk_timer		 reload_late;	/* its --ready-timeout */
	int			 first_ready;	/* generation 1 said so */
	int			 again_reload;	/* SIGHUP while busy */
	int			 again_upgrade;	/* SIGUSR2 during a reload */
	/*
	 * The metrics of upstream i are those of workers whose upstream
	 * list (version ulist, bumped by a reload that changes it) has had
	 * the current name at i since same_since[i]: a reload that puts
	 * another upstream at i starts a new series there, not adding the
	 * old one's.  The names are those of the configuration (srv.cfg),
	 * which label the series.
	 */
	int			 ulist;
	int			 same_since[MAXUPSTREAMS];

	/* Upgrade: the old master's side, then the new one's. */
	const char		*self;		/* the binary */
	const int		*lfds;
	int			 nlfds;
	pid_t			 up_pid;	/* the new master */
	int			 up_gaveup;	/* stopped it for being late */
	struct tk_timer		 up_late;	/* its --ready-timeout */
	struct tk_timer		 up_kill;	/* then SIGKILL if it stays */
	struct tk_io		 up_io;		/* its pipe, read end */
	int			 up_fd;		/* the new master: write end */
	int			 pidfile_wait;
	struct tk_timer		 pidfile_retry;
};

static struct master	 master = {
	.ready_sock = -1,
	.gen = 1,
	.up_pid = -1,
	.up_fd = -1,
};

static void	kid_io(struct tk_loop *, struct tk_io *);
static void	up_read(struct tk_loop *, struct tk_io *);
static void	up_stop(struct master *, int);
static void	collect_end(struct master *);
static void	metrics_again(struct master *);
static void	reload_abort(struct master *, const char *);

/* 0: no master here; 1: the master; 2: a worker under one. */
int
master_role(void)
{
	return master.role;
}

/*
 * fork() with the master's signals blocked across it: the child keeps
 * them blocked (a worker until master_worker_signals(), an upgrade's
 * new master until it leaves the loop), so that none runs the master's
 * handler there and writes into the self-pipe the two share; the
 * parent takes what came meanwhile once they are unblocked again.
 * Returns as fork() does.
 */
static pid_t
mfork(struct master *m)
{
	sigset_t	 prev;
	pid_t		 pid;
	int		 saved;

	if (sigprocmask(SIG_BLOCK, &m->msigs, &prev) == -1)
		return -1;
	if ((pid = fork()) != 0) {
		saved = errno;
		sigprocmask(SIG_SETMASK, &prev, NULL);
		errno = saved;
	}
	return pid;
}

/*
 * In a new worker: close what is the master's (its loop, metrics
 * listener and clients, the other workers' sockets, an upgrade's
 * pipe) without unregistering any (tk_loop_forget: the loop's kernel
 * object is the master's too); fd is this worker's end of its socket
 * pair.
 */
static void
child_setup(struct master *m, int i, int fd)
{
	int	j;

	m->role = 2;
	for (j = 0; j < MAXKIDS; j++)
		if (m->kids[j].io.fd != -1)
			close(m->kids[j].io.fd);
	if (m->up_io.fd != -1)
		close(m->up_io.fd);
	if (m->up_fd != -1)
		close(m->up_fd);
	m->up_io.fd = m->up_fd = -1;
	metrics_forget();
	tk_loop_forget(m->l);
	m->l = NULL;
	log_worker(i);
	systemd_quiet();
	metrics_child_fd(fd);
	m->ready_sock = fd;
}

/*
 * A worker's handlers are in place (main.c): take the signals the
 * master blocked across the fork, which wait pending since.  Unblocked
 * there, the SIGUSR1 or SIGHUP the master passes on, or a SIGTERM,
 * would have killed a worker in the middle of its start (default
 * actions).  Those the master's own parent left blocked (a mask passes
 * across exec) too: a worker that kept SIGTERM blocked would never
 * drain.
 */
void
master_worker_signals(void)
{
	if (master.role == 2)
		sigprocmask(SIG_UNBLOCK, &master.msigs, NULL);
}

/*
 * A worker's threads run: tell the master (one byte on the socket pair;
 * its figures are whole struct msnap datagrams).  Nothing without one.
 */
void
master_worker_ready(void)
{
	if (master.ready_sock != -1 && send(master.ready_sock, "R", 1,
	    MSG_NOSIGNAL | MSG_DONTWAIT) != 1)
		log_warn("telling the master we are ready");
}

/*
 * A worker's threads are done (joined): send the master its final
 * figures, so that what a worker of an old generation counted since its
 * last report is not lost when it exits after a reload.  Main thread.
 */
void
master_worker_final(void)
{
	static struct msnap	 m;
	int			 i;

	if (master.ready_sock == -1)
		return;
	for (i = 0; i < srv.nworkers; i++)
		worker_snapshot(&srv.workers[i], &srv.workers[i].snap);
	memset(&m, 0, sizeof(m));
	stats_fill(&m);
	upstream_metrics(&m);
	metrics_self(&m);
	if (send(master.ready_sock, &m, sizeof(m), MSG_NOSIGNAL |
	    MSG_DONTWAIT) != (ssize_t)sizeof(m))
		log_warn("metrics: the last figures to the master");
}

/*
 * Fork k (its state, slot and generation set), from forks() or before
 * the loop runs.  Returns 1 in the child (ready to go on as a worker),
 * 0 in the master.  A failed fork is retried after the back-off (a new
 * generation's: the reload fails).
 */
static int
spawn(struct master *m, struct child *k)
{
	pid_t		 pid;
	int		 sv[2];

	k->restart_at = 0;
	k->ready = 0;
	k->asked = 0;
	k->ulist = k->state == K_NEW ? m->ulist + 1 : m->ulist;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0, sv) == -1) {
		log_warn("worker %d: socketpair", k->slot);
		sv[0] = sv[1] = -1;
	}
	if ((pid = mfork(m)) == -1) {
		log_warn("worker %d: fork", k->slot);
		k->pid = -1;
		k->restart_at = tk_clock_mono() + BACKOFF_MAX;
		if (sv[0] != -1) {
			close(sv[0]);
			close(sv[1]);
		}
		return 0;
	}
	if (pid == 0) {
		/* The signals stay blocked: master_worker_signals(). */
		(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != m->pid)
			_exit(0);
		if (sv[0] != -1)
			close(sv[0]);
		child_setup(m, k->slot, sv[1]);
		/* A reload's configuration: the worker takes it on. */
		if (k->state == K_NEW) {
			config_free(&srv.cfg);
			srv.cfg = m->newcfg;
		}
		*m->freshp = k->state == K_NEW || m->gen > 1;
		return 1;
	}
	if (sv[1] != -1)
		close(sv[1]);
	k->pid = pid;
	k->started = tk_clock_mono();
	memset(&k->cur, 0, sizeof(k->cur));
	tk_io_init(&k->io, sv[0], kid_io, k);
	if (m->l != NULL && sv[0] != -1 &&
	    tk_io_start(m->l, &k->io, TK_EV_READ) == -1)
		log_warn("worker %d: watching its socket", k->slot);
	if (m->gen == 1 && k->state == K_CUR)
		log_info("worker %d: pid %d", k->slot, (int)pid);
	else
		log_info("worker %d of generation %d: pid %d", k->slot,
		    k->gen, (int)pid);
	return 0;
}

/*
 * The counters of b added to a; with gauges, its gauges too; an
 * upstream's only when b's list (version ul) has it where it is now.
 */
static void
snap_add(const struct master *m, struct msnap *a, const struct msnap *b,
    int gauges, int ul)
{
	int	i;

	stats_add(&a->st, &b->st, gauges);
	for (i = 0; i < CAP_NKINDS; i++)
		a->caps[i] += b->caps[i];
	for (i = 0; i < MAXUPSTREAMS; i++) {
		if (ul < m->same_since[i])
			continue;
		a->ups[i].sessions += b->ups[i].sessions;
		a->ups[i].fails += b->ups[i].fails;
		a->ups[i].tx += b->ups[i].tx;
		a->ups[i].rx += b->ups[i].rx;
	}
	for (i = 0; i < MHIST_N; i++)
		a->hist[i] += b->hist[i];
	a->hist_sum += b->hist_sum;
	a->cpu += b->cpu;
	if (!gauges)
		return;
	a->mem_held += b->mem_held;
	for (i = 0; i < MAXUPSTREAMS; i++)
		if (ul >= m->same_since[i])
			a->ups[i].active += b->ups[i].active;
	a->rss += b->rss;
	a->fds += b->fds;
}

/*
 * What is wrong with the n bytes at m from worker k (n is the whole
 * datagram's length), or NULL when they are its figures: one struct
 * msnap, from k's own pid, whose text and upstream count fit their
 * arrays.  A worker is our own code, but its figures are read into
 * the master's memory and its text written out by length, so that
 * length is checked, not trusted.
 */
static const char *
snap_bad(const struct child *k, const struct msnap *m, ssize_t n)
{
	if (n != (ssize_t)sizeof(*m))
		return n > (ssize_t)sizeof(*m) ? "too long" : "too short";
	if (m->pid != k->pid)
		return "another pid";
	if (m->textlen > sizeof(m->text))
		return "text length past its buffer";
	if (m->nups > MAXUPSTREAMS)
		return "too many upstreams";
	return NULL;
}

/* Say that worker k sent figures we dropped, once in BADSNAP_EVERY. */
static void
snap_warn(struct master *m, const struct child *k, const char *why)
{
	uint64_t	 now = tk_clock_mono();

	if (m->bad_last != 0 && now - m->bad_last < BADSNAP_EVERY) {
		m->bad_skipped++;
		return;
	}
	log_warnx("worker %d (pid %d): malformed figures dropped: %s (%llu "
	    "more since the last line)", k->slot, (int)k->pid, why,
	    (unsigned long long)m->bad_skipped);
	m->bad_last = now;
	m->bad_skipped = 0;
}

/* Figures from worker k, its ready byte, or its socket closed. */
static void
kid_read(struct master *m, struct child *k)
{
	static struct msnap	 sn;	/* scratch, too big for the stack */
	const char		*why;
	ssize_t			 n;

	/* MSG_TRUNC: the datagram's length, if longer (Linux 3.4). */
	while ((n = chan_recv(&k->io, &sn, sizeof(sn), MSG_TRUNC)) > 0) {
		if (n == 1 && ((char *)&sn)[0] == 'R') {
			k->ready = 1;
			continue;
		}
		/* An answer all the same: nobody waits for more. */
		if ((why = snap_bad(k, &sn, n)) != NULL)
			snap_warn(m, k, why);
		else
			k->cur = sn;
		if (k->asked) {
			k->asked = 0;
			m->pending--;
		}
	}
	if (n == -1) {
		(void)tk_io_close(m->l, &k->io);
		if (k->asked) {
			k->asked = 0;
			m->pending--;
		}
	}
	if (m->collecting && m->pending == 0)
		collect_end(m);
}

/*
 * Worker k's socket: its figures, or a ready byte, which settle() looks
 * at after the loop's iteration.
 */
static void
kid_io(struct tk_loop *l, struct tk_io *io)
{
	struct child	*k = io->arg;

	kid_read(k->m, k);
	tk_loop_stop(l);
}

/*
 * /metrics or /stats asked for figures: ask every live worker, answer
 * when all did or after COLLECT_WAIT.  Master only.
 */
void
master_collect(void)
{
	struct master	*m = &master;
	char		 c = 's';
	int		 i;

	if (m->collecting)
		return;
	m->collecting = 1;
	m->pending = 0;
	for (i = 0; i < MAXKIDS; i++) {
		m->kids[i].asked = 0;
		if (m->kids[i].pid != -1 && m->kids[i].io.fd != -1 &&
		    send(m->kids[i].io.fd, &c, 1, MSG_NOSIGNAL) == 1) {
			m->kids[i].asked = 1;
			m->pending++;
		}
	}
	if (m->pending == 0 || tk_timer_arm(m->l, &m->collect_timer,
	    COLLECT_WAIT) == -1)
		collect_end(m);
}

static void
collect_expired(struct tk_loop *l, struct tk_timer *t)
{
	(void)l;
	collect_end(t->arg);
}

/*
 * Each slot's figures: its serving worker's (gauges included), the
 * counters of its dead ones, and all of what its other live ones (a
 * draining generation, a starting one) hold.
 */
static void
collect_end(struct master *m)
{
	struct child	*k;
	int		 i, s;

	tk_timer_cancel(m->l, &m->collect_timer);
	m->collecting = 0;
	memset(m->sums, 0, sizeof(m->sums[0]) * srv.cfg.workers);
	for (i = 0; i < MAXKIDS; i++) {
		k = &m->kids[i];
		if (k->state != K_CUR)
			continue;
		m->sums[k->slot] = k->cur;
		if (k->pid == -1)
			m->sums[k->slot].pid = 0;
	}
	for (i = 0; i < MAXKIDS; i++) {
		k = &m->kids[i];
		if (k->state != K_FREE && k->state != K_CUR && k->pid != -1)
			snap_add(m, &m->sums[k->slot], &k->cur, 1, k->ulist);
	}
	for (s = 0; s < srv.cfg.workers; s++)
		snap_add(m, &m->sums[s], &m->base[s], 0, m->ulist);
	metrics_answer(m->sums, srv.cfg.workers, 1);
}

/* After a failed upgrade: serve the metrics again, on the same port. */
static void
metrics_again(struct master *m)
{
	if (metrics_open() == -1)
		log_warn("--metrics after the upgrade failed");
	else
		metrics_start(m->l);
}

#define ALL		-1	/* relay_signal(): every live worker */
#define NOT_OLD		-2	/* all but those draining already */

/* Pass signo on to every live worker of state st (or ALL, NOT_OLD). */
static void
relay_signal(struct master *m, int signo, int st)
{
	struct child	*k;
	int		 i;

	for (i = 0; i < MAXKIDS; i++) {
		k = &m->kids[i];
		if (k->state == K_FREE || k->pid == -1 ||
		    (st == NOT_OLD && k->state == K_OLD) ||
		    (st >= 0 && k->state != (enum kstate)st))
			continue;
		(void)kill(k->pid, signo);
	}
}

static const char *
status_str(int st, char *buf, size_t len)
{
	if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(st));
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
	return buf;
}

/*
 * The restart timer at the earliest back-off's end among the serving
 * workers that are dead, or off when there is none or we stop.
 */
static void
restart_arm(struct master *m)
{
	struct child	*k;
	uint64_t	 next = 0;
	int		 i;

	for (i = 0; i < MAXKIDS; i++) {
		k = &m->kids[i];
		if (k->state == K_CUR && k->pid == -1 && k->restart_at != 0 &&
		    (next == 0 || k->restart_at < next))
			next = k->restart_at;
	}
	if (next == 0 || m->stopping)
		tk_timer_cancel(m->l, &m->restart);
	else if (tk_timer_arm_at(m->l, &m->restart, next) == -1)
		log_warn("master: no timer for a worker's restart");
}

/* A back-off is over: master_run() forks, out of the loop. */
static void
restart_due(struct tk_loop *l, struct tk_timer *t)
{
	(void)t;
	tk_loop_stop(l);
}

/* The new master of an upgrade is gone (pid, status st). */
static void
up_reaped(struct master *m, pid_t pid, int st)
{
	char	how[64];

	m->up_pid = -1;
	tk_timer_cancel(m->l, &m->up_kill);
	tk_timer_cancel(m->l, &m->up_late);
	if (m->up_io.fd != -1)
		(void)tk_io_close(m->l, &m->up_io);
	status_str(st, how, sizeof(how));
	if (m->stopping) {
		log_info("upgrade: the new master (pid %d) stopped: %s",
		    (int)pid, how);
		return;
	}
	if (!m->up_gaveup)
		log_warnx("upgrade: the new master (pid %d) %s before it was "
		    "ready; this one keeps serving", (int)pid, how);
	else
		log_info("upgrade: the new master (pid %d) %s", (int)pid, how);
	metrics_again(m);
	systemd_notify("READY=1\nSTATUS=upgrade failed");
}

/* Worker k is gone (pid, status st): restart it if it serves. */
static void
kid_reaped(struct master *m, struct child *k, pid_t pid, int st)
{
	uint64_t	 now = tk_clock_mono();
	char		 how[64], why[128];

	/*
	 * Its last figures, if still queued, then into the base; read
	 * while k->pid is still its pid, which they carry.
	 */
	if (k->io.fd != -1) {
		kid_read(m, k);
		if (k->io.fd != -1)
			(void)tk_io_close(m->l, &k->io);
	}
	k->pid = -1;
	snap_add(m, &m->base[k->slot], &k->cur, 0, k->ulist);
	memset(&k->cur, 0, sizeof(k->cur));
	status_str(st, how, sizeof(how));
	if (k->state == K_OLD) {
		log_info("worker %d of generation %d (pid %d) %s", k->slot,
		    k->gen, (int)pid, how);
		k->state = K_FREE;
		return;
	}
	if (k->state == K_NEW) {
		k->state = K_FREE;
		snprintf(why, sizeof(why), "worker %d (pid %d) %s before it "
		    "was ready", k->slot, (int)pid, how);
		reload_abort(m, why);
		return;
	}
	if (m->stopping) {
		log_info("worker %d (pid %d) %s", k->slot, (int)pid, how);
		return;
	}
	if (now - k->started > YOUNG || k->backoff == 0)
		k->backoff = BACKOFF_MIN;
	else if ((k->backoff *= 2) > BACKOFF_MAX)
		k->backoff = BACKOFF_MAX;
	k->restart_at = now + k->backoff;
	log_warnx("worker %d (pid %d) %s; restarting in %llu ms", k->slot,
	    (int)pid, how, (unsigned long long)(k->backoff / TK_MSEC));
}

/* SIGCHLD: reap the dead, schedule restarts of the serving workers. */
static void
reap(struct master *m)
{
	pid_t	pid;
	int	st, i;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		if (pid == m->up_pid) {
			up_reaped(m, pid, st);
			continue;
		}
		for (i = 0; i < MAXKIDS; i++)
			if (m->kids[i].state != K_FREE &&
			    m->kids[i].pid == pid)
				break;
		if (i < MAXKIDS)
			kid_reaped(m, &m->kids[i], pid, st);
	}
	restart_arm(m);
}

/* A warning of a reload's configuration (an option given twice). */
static void
reload_warn(const char *msg)
{
	log_warnx("reload: %s", msg);
}

/*
 * The reload's configuration into m->newcfg: built from the command
 * line and the file as it is now, checked, and compared with the one
 * that runs.  Returns 0, or -1 with what is wrong logged.
 */
static int
reload_config(struct master *m)
{
	struct tk_cli_err	 e;
	const char		*what;

	if (config_load(&m->newcfg, m->cmdl, reload_warn, &e) == -1 ||
	    config_check(&m->newcfg, &e) == -1) {
		log_warnx("reload: %s", e.msg);
		config_free(&m->newcfg);
		return -1;
	}
	if ((what = config_fixed(&srv.cfg, &m->newcfg)) != NULL) {
		log_warnx("reload: '%s' changed: needs a restart or an "
		    "upgrade (SIGUSR2)", what);
		config_free(&m->newcfg);
		return -1;
	}
	return 0;
}

/*
 * SIGHUP: read the -f file, check it, and mark a new generation of
 * workers with it, which forks() starts once the loop stopped.
 */
static void
reload(struct master *m)
{
	struct child	*k;
	int		 i, s, nfree = 0;

	if (m->cmdl->conf == NULL) {
		(void)reopen_logs();
		relay_signal(m, SIGHUP, ALL);
		log_info("SIGHUP: no -f file to read again: logs reopened");
		return;
	}
	if (m->stopping) {
		log_warnx("SIGHUP ignored: a stop under way");
		return;
	}
	if (m->reloading || m->up_pid != -1) {
		/*
		 * Not dropped: the file may have changed since the one
		 * under way read it.  The new master of an upgrade that
		 * succeeds gets it instead (up_read).
		 */
		m->again_reload = 1;
		log_info("SIGHUP: will reload after the %s under way",
		    m->reloading ? "reload" : "upgrade");
		return;
	}
	systemd_notify("RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading",
	    (unsigned long long)(tk_clock_mono() / 1000));
	if (reload_config(m) == -1)
		goto refused;
	for (i = 0; i < MAXKIDS; i++)
		nfree += m->kids[i].state == K_FREE;
	if (nfree < srv.cfg.workers) {
		log_warnx("reload: %d old workers still draining",
		    MAXKIDS - nfree);
		config_free(&m->newcfg);
		goto refused;
	}
	m->reloading = 1;
	if (tk_timer_arm(m->l, &m->reload_late, srv.cfg.ready_timeout) ==
	    -1)
		log_warn("reload: no timer for --ready-timeout");
	for (s = 0, i = 0; s < srv.cfg.workers; s++) {
		while (m->kids[i].state != K_FREE)
			i++;
		k = &m->kids[i];
		k->state = K_NEW;
		k->slot = s;
		k->gen = m->gen + 1;
		k->backoff = 0;
		k->pid = -1;
	}
	tk_loop_stop(m->l);
	return;

 refused:
	log_warnx("reload refused: generation %d keeps serving", m->gen);
	systemd_notify("READY=1\nSTATUS=reload refused; generation %d "
	    "serving", m->gen);
}

/*
 * The new generation failed: stop what of it runs (what is not forked
 * yet never will be), keep the old.
 */
static void
reload_abort(struct master *m, const char *why)
{
	struct child	*k;
	int		 i;

	if (!m->reloading)
		return;
	for (i = 0; i < MAXKIDS; i++) {
		k = &m->kids[i];
		if (k->state != K_NEW)
			continue;
		k->state = k->pid != -1 ? K_OLD : K_FREE;
		if (k->pid != -1)
			(void)kill(k->pid, SIGTERM);
	}
	tk_timer_cancel(m->l, &m->reload_late);
	config_free(&m->newcfg);
	m->reloading = 0;
	log_warnx("reload failed: generation %d: %s; generation %d keeps "
	    "serving", m->gen + 1, why, m->gen);
	systemd_notify("READY=1\nSTATUS=reload failed; generation %d "
	    "serving", m->gen);
}

/* A new generation not ready in --ready-timeout. */
static void
reload_expired(struct tk_loop *l, struct tk_timer *t)
{
	reload_abort(t->arg, "not ready in time");
	tk_loop_stop(l);
}

/*
 * The new generation's upstream list (newcfg's) against the one that
 * runs: where a name changed, its series starts again; the rest go on.
 */
static void
new_upstreams(struct master *m)
{
	const struct config	*c = &srv.cfg, *n = &m->newcfg;
	int			 i, s, same = c->nups == n->nups;

	for (i = 0; same && i < c->nups; i++)
		same = strcmp(c->ups[i].name, n->ups[i].name) == 0;
	m->ulist++;
	if (same)
		return;
	for (i = 0; i < MAXUPSTREAMS; i++) {
		if (i < c->nups && i < n->nups &&
		    strcmp(c->ups[i].name, n->ups[i].name) == 0)
			continue;
		m->same_since[i] = m->ulist;
		for (s = 0; s < MAXWORKERS; s++)
			memset(&m->base[s].ups[i], 0,
			    sizeof(m->base[s].ups[i]));
	}
	log_info("reload: %d upstream%s now", n->nups,
	    n->nups == 1 ? "" : "s");
}

/* Every worker of the new generation runs: the old one drains. */
static void
reload_commit(struct master *m)
{
	struct child	*k;
	int		 i, nold = 0;

	for (i = 0; i < MAXKIDS; i++) {
		k = &m->kids[i];
		if (k->state == K_CUR) {
			if (k->pid == -1) {
				k->state = K_FREE;
				continue;
			}
			k->state = K_OLD;
			(void)kill(k->pid, SIGTERM);
			nold++;
		} else if (k->state == K_NEW)
			k->state = K_CUR;
	}
	tk_timer_cancel(m->l, &m->reload_late);
	new_upstreams(m);
	config_free(&srv.cfg);
	srv.cfg = m->newcfg;
	memset(&m->newcfg, 0, sizeof(m->newcfg));
	m->reloading = 0;
	m->gen++;
	log_info("reload: %d worker%s of generation %d started; "
	    "generation %d draining (%d worker%s)", srv.cfg.workers,
	    srv.cfg.workers == 1 ? "" : "s", m->gen, m->gen - 1, nold,
	    nold == 1 ? "" : "s");
	setproctitle("%s: master, %d worker%s, generation %d",
	    srv.cfg.mode, srv.cfg.workers, srv.cfg.workers == 1 ? "" : "s",
	    m->gen);
	systemd_notify("READY=1\nSTATUS=%s: master, %d worker%s, "
	    "generation %d", srv.cfg.mode, srv.cfg.workers,
	    srv.cfg.workers == 1 ? "" : "s", m->gen);
}

/* Whether every worker of state st runs its threads. */
static int
all_ready(const struct master *m, enum kstate st)
{
	int	i, n = 0;

	for (i = 0; i < MAXKIDS; i++)
		if (m->kids[i].state == st) {
			if (m->kids[i].pid == -1 || !m->kids[i].ready)
				return 0;
			n++;
		}
	return n > 0;
}

/*
 * An upgrade's child: execute the binary with the command line as
 * typed, the listeners passed as systemd passes them (the new process
 * is $LISTEN_PID), the write end wfd of the pipe the new master writes
 * a byte to once its workers run, and the log opener if there is one
 * (reopen.c: after --user, the new master could not open a log in
 * root's directory itself).  The master's signals, blocked since the
 * fork, get their default actions back with the loop, then our
 * parent's mask, which passes across exec.
 */
static noreturn void
upgrade_exec(struct master *m, int wfd)
{
	char	 num[32], *names;
	size_t	 nl;
	int	 i, lo, op, n, *tmp;

	tk_loop_forget(m->l);
	sigprocmask(SIG_SETMASK, &m->oldmask, NULL);
	/* Out of the way first, then from 3 on, inherited. */
	op = reopen_opener();
	n = m->nlfds + 1 + (op != -1);
	lo = 3 + n;
	if ((tmp = calloc(n, sizeof(*tmp))) == NULL)
		_exit(127);
	for (i = 0; i < m->nlfds; i++)
		if ((tmp[i] = fcntl(m->lfds[i], F_DUPFD_CLOEXEC, lo)) == -1)
			_exit(127);
	if ((tmp[m->nlfds] = fcntl(wfd, F_DUPFD_CLOEXEC, lo)) == -1)
		_exit(127);
	if (op != -1 && (tmp[m->nlfds + 1] = fcntl(op, F_DUPFD_CLOEXEC,
	    lo)) == -1)
		_exit(127);
	for (i = 0; i < n; i++)
		if (dup2(tmp[i], 3 + i) == -1)
			_exit(127);
	if (op != -1)
		reopen_pass(3 + m->nlfds + 1);
	nl = sizeof(UPGRADE_FDNAME) * (size_t)m->nlfds + 1;
	if ((names = malloc(nl)) == NULL)
		_exit(127);
	names[0] = '\0';
	for (i = 0; i < m->nlfds; i++) {
		if (i > 0)
			strlcat(names, ":", nl);
		strlcat(names, UPGRADE_FDNAME, nl);
	}
	snprintf(num, sizeof(num), "%d", m->nlfds);
	setenv("LISTEN_FDS", num, 1);
	setenv("LISTEN_FDNAMES", names, 1);
	snprintf(num, sizeof(num), "%d", (int)getpid());
	setenv("LISTEN_PID", num, 1);
	snprintf(num, sizeof(num), "%d", 3 + m->nlfds);
	setenv(UPGRADE_ENV, num, 1);
	execv(m->self, m->cmdl->argv);
	fprintf(stderr, "%s: upgrade: %s: %s\n", getprogname(), m->self,
	    strerror(errno));
	_exit(127);
}

/*
 * SIGUSR2: fork a new master (upgrade_exec) and wait for its byte on
 * the pipe, --ready-timeout at most.  From a callback: the child
 * executes a binary and never returns into the loop.
 */
static void
upgrade(struct master *m)
{
	pid_t	pid;
	int	fd[2];

	if (m->stopping || m->up_pid != -1) {
		log_warnx("SIGUSR2 ignored: %s under way", m->stopping ?
		    "a stop" : "an upgrade");
		return;
	}
	/*
	 * After a reload under way; and in a new master, after it took
	 * the pidfile over: the old one let it go unlocked, and the next
	 * new master would take it before it is ready.
	 */
	if (m->reloading || m->pidfile_wait) {
		m->again_upgrade = 1;
		log_info("SIGUSR2: will upgrade after %s", m->reloading ?
		    "the reload under way" : "taking the pidfile over");
		return;
	}
	if (*m->self == '\0') {
		log_warnx("upgrade: the binary's path is unknown");
		return;
	}
	if (pipe2(fd, O_CLOEXEC) == -1) {
		log_warn("upgrade: pipe");
		return;
	}
	/*
	 * The metrics listener is bound without SO_REUSEPORT: let it go
	 * for the new master to bind, and take it back if that fails.
	 */
	metrics_stop();
	fflush(NULL);
	if ((pid = mfork(m)) == -1) {
		log_warn("upgrade: fork");
		close(fd[0]);
		close(fd[1]);
		metrics_again(m);
		return;
	}
	if (pid == 0)
		upgrade_exec(m, fd[1]);
	close(fd[1]);
	m->up_pid = pid;
	m->up_gaveup = 0;
	if (tk_timer_arm(m->l, &m->up_late, srv.cfg.ready_timeout) == -1)
		log_warn("upgrade: no timer for --ready-timeout");
	tk_io_init(&m->up_io, fd[0], up_read, m);
	if (tk_io_start(m->l, &m->up_io, TK_EV_READ) == -1)
		log_warn("upgrade: watching its pipe");
	log_info("upgrade: %s started as pid %d with %d socket%s", m->self,
	    (int)pid, m->nlfds, m->nlfds == 1 ? "" : "s");
	systemd_notify("STATUS=upgrading: new master pid %d", (int)pid);
}

/*
 * The new master's pipe: its byte says its workers run, and this
 * master hands over: the pidfile, systemd's main pid, and its workers
 * drain.  End of file without it: the new master failed (reap() says
 * how once it is gone).  A byte that comes once this master gave up on
 * it (late: told to stop, SIGKILL to follow) hands nothing over: this
 * one goes on serving, whatever the new one thinks.
 */
static void
up_read(struct tk_loop *l, struct tk_io *io)
{
	struct master	*m = io->arg;
	char		 c;
	ssize_t		 n;

	n = read(io->fd, &c, 1);
	if (n == -1 && (errno == EINTR || errno == EAGAIN)) {
		tk_io_block(io, TK_EV_READ);
		return;
	}
	(void)tk_io_close(l, io);
	/* Stopping: the new master was told to stop as well. */
	if (n != 1 || m->up_pid == -1 || m->stopping)
		return;
	if (m->up_gaveup) {
		log_warnx("upgrade: the new master (pid %d) is ready after "
		    "this one gave up on it: ignored, this one keeps serving",
		    (int)m->up_pid);
		return;
	}
	log_info("upgrade: the new master (pid %d) is ready: this one "
	    "drains generation %d and exits", (int)m->up_pid, m->gen);
	tk_timer_cancel(l, &m->up_late);
	pidfile_handover(m->up_pid);
	systemd_notify("MAINPID=%d\nSTATUS=handed over to pid %d",
	    (int)m->up_pid, (int)m->up_pid);
	if (m->again_reload) {
		m->again_reload = 0;
		log_info("upgrade: the SIGHUP that came meanwhile passed on");
		(void)kill(m->up_pid, SIGHUP);
	}
	m->stopping = 1;
	m->up_pid = -1;	/* no longer ours to watch */
	relay_signal(m, SIGTERM, NOT_OLD);	/* a second one would force */
	restart_arm(m);
	tk_loop_stop(l);
}

/*
 * Stop the new master of an upgrade under way, not ready (late, or a
 * stop of ours): signo, and SIGKILL should it still run KILL_GRACE
 * after its --drain-timeout, for a binary that hangs or ignores
 * signo would hold the metrics port, SIGHUP and SIGUSR2 (which wait
 * for it) and our own exit for ever.  Its workers get SIGTERM from
 * their PR_SET_PDEATHSIG and drain as they would have.
 */
static void
up_stop(struct master *m, int signo)
{
	(void)kill(m->up_pid, signo);
	tk_timer_cancel(m->l, &m->up_late);
	if (!tk_timer_pending(&m->up_kill) && tk_timer_arm(m->l, &m->up_kill,
	    srv.cfg.drain_timeout + KILL_GRACE) == -1)
		log_warn("upgrade: no timer to kill pid %d", (int)m->up_pid);
}

static void
up_killed(struct tk_loop *l, struct tk_timer *t)
{
	struct master	*m = t->arg;
	char		 dur[32];

	(void)l;
	if (m->up_pid == -1)
		return;
	log_warnx("upgrade: the new master (pid %d) still runs %s after it "
	    "was told to stop: SIGKILL", (int)m->up_pid, tk_fmt_duration(
	    srv.cfg.drain_timeout + KILL_GRACE, dur, sizeof(dur)));
	(void)kill(m->up_pid, SIGKILL);
}

/* The new master not ready in --ready-timeout: stopped, we serve on. */
static void
up_expired(struct tk_loop *l, struct tk_timer *t)
{
	struct master	*m = t->arg;
	char		 dur[32];

	(void)l;
	if (m->up_pid == -1 || m->up_gaveup)
		return;
	log_warnx("upgrade: the new master (pid %d) not ready in %s: "
	    "stopping it; this one keeps serving", (int)m->up_pid,
	    tk_fmt_duration(srv.cfg.ready_timeout, dur, sizeof(dur)));
	m->up_gaveup = 1;
	up_stop(m, SIGTERM);
}

/*
 * A new master: the pidfile the old one let go, tried again every
 * PIDFILE_RETRY until ours.
 */
static void
pidfile_again(struct tk_loop *l, struct tk_timer *t)
{
	struct master	*m = t->arg;

	if (!(m->pidfile_wait = !pidfile_take()))
		tk_loop_stop(l);	/* a SIGUSR2 may wait for it */
	else if (tk_timer_arm(l, t, PIDFILE_RETRY) == -1)
		log_warn("master: no timer to take the pidfile over");
}

/*
 * A SIGHUP or SIGUSR2 that came while a reload or an upgrade was under
 * way, once none is (and an upgrade once the pidfile is ours): the
 * reload first.
 */
static void
deferred(struct master *m)
{
	if (m->stopping || m->reloading || m->up_pid != -1)
		return;
	if (m->again_reload) {
		m->again_reload = 0;
		reload(m);
	} else if (m->again_upgrade && !m->pidfile_wait) {
		m->again_upgrade = 0;
		upgrade(m);
	}
}

/* The first generation runs: say so, and to an upgrade's old master. */
static void
first_ready_now(struct master *m)
{
	m->first_ready = 1;
	log_info("master: %d worker%s ready", srv.cfg.workers,
	    srv.cfg.workers == 1 ? "" : "s");
	systemd_notify("READY=1\nSTATUS=%s: master, %d worker%s",
	    srv.cfg.mode, srv.cfg.workers, srv.cfg.workers == 1 ? "" : "s");
	if (m->up_fd != -1) {
		if (write(m->up_fd, "R", 1) != 1)
			log_warn("upgrade: telling the old master");
		close(m->up_fd);
		m->up_fd = -1;
	}
}

/*
 * What waits on the workers: the first generation ready, a reload's
 * generation ready, a deferred SIGHUP or SIGUSR2, and, stopping, the
 * last worker and a new master gone (m->done).  From master_run(),
 * between runs of the loop.
 */
static void
settle(struct master *m)
{
	int	i, alive = 0;

	if (!m->first_ready && all_ready(m, K_CUR))
		first_ready_now(m);
	if (m->reloading && all_ready(m, K_NEW))
		reload_commit(m);
	deferred(m);
	for (i = 0; i < MAXKIDS; i++)
		alive += m->kids[i].state != K_FREE && m->kids[i].pid != -1;
	m->done = m->stopping && alive == 0 && m->up_pid == -1;
}

/* SIGTERM or SIGINT: the first drains, a second forces. */
static void
stop(struct master *m, int signo)
{
	int	i;

	/* The old workers drain already. */
	if (!m->stopping) {
		log_info("master: SIG%s: stopping the workers",
		    sigabbrev_np(signo));
		systemd_notify("STOPPING=1\nSTATUS=stopping the workers");
	}
	relay_signal(m, signo, m->stopping ? ALL : NOT_OLD);
	/* A new master not ready yet is ours still: it stops too. */
	if (m->up_pid != -1)
		up_stop(m, signo);
	/*
	 * A new master stopped before it was ready says no to the old one
	 * (end of file), which goes on serving, and never says ready.
	 */
	if (m->up_fd != -1) {
		log_info("upgrade: stopped before this master was ready: the "
		    "old one keeps serving");
		close(m->up_fd);
		m->up_fd = -1;
	}
	m->stopping = 1;
	restart_arm(m);
	/*
	 * Its new workers were told to stop with the others; those not
	 * forked yet never will be.
	 */
	if (m->reloading) {
		for (i = 0; i < MAXKIDS; i++)
			if (m->kids[i].state == K_NEW && m->kids[i].pid == -1)
				m->kids[i].state = K_FREE;
		tk_timer_cancel(m->l, &m->reload_late);
		config_free(&m->newcfg);
	}
	m->reloading = 0;
}

/*
 * The master's signals, from the loop's signal watcher: the loop stops
 * after the iteration for settle() and forks() (a reload's workers).
 */
static void
on_signal(struct tk_loop *l, int signo, void *arg)
{
	struct master	*m = arg;

	switch (signo) {
	case SIGCHLD:
		reap(m);
		break;
	case SIGTERM:
	case SIGINT:
		stop(m, signo);
		break;
	case SIGHUP:
		reload(m);
		break;
	case SIGUSR1:
		(void)reopen_logs();
		relay_signal(m, SIGUSR1, ALL);
		break;
	case SIGUSR2:
		upgrade(m);
		break;
	}
	tk_loop_stop(l);
}

/* Whether k is to be forked: a reload's, or its back-off is over. */
static int
fork_due(const struct master *m, const struct child *k, uint64_t now)
{
	if (k->pid != -1)
		return 0;
	if (k->state == K_NEW)
		return 1;
	return k->state == K_CUR && !m->stopping && k->restart_at != 0 &&
	    k->restart_at <= now;
}

/*
 * Fork the workers due, with the loop stopped: a reload's generation
 * (reload() marked it) and the serving workers whose back-off is over.
 * Returns the slot in a new worker, -1 in the master.
 */
static int
forks(struct master *m)
{
	struct child	*k;
	uint64_t	 now = tk_clock_mono();
	int		 i;

	for (i = 0; i < MAXKIDS; i++) {
		k = &m->kids[i];
		if (!fork_due(m, k, now))
			continue;
		if (spawn(m, k))
			return k->slot;
		if (k->pid == -1 && k->state == K_NEW) {
			k->state = K_FREE;
			reload_abort(m, "fork failed");
		}
	}
	restart_arm(m);
	return -1;
}

static const int	 msiglist[] = {
	SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2
};
#define NMSIGS	(sizeof(msiglist) / sizeof(msiglist[0]))

/*
 * The master's signals blocked (until its loop watches them, and in a
 * worker until master_worker_signals), and the first generation
 * forked.  Returns the slot in a new worker, -1 in the master.
 */
static int
master_start(struct master *m)
{
	size_t	j;
	int	i;

	sigemptyset(&m->msigs);
	for (j = 0; j < NMSIGS; j++)
		sigaddset(&m->msigs, msiglist[j]);
	if (sigprocmask(SIG_BLOCK, &m->msigs, &m->oldmask) == -1)
		fatal("sigprocmask");
	for (i = 0; i < MAXKIDS; i++) {
		m->kids[i].m = m;
		m->kids[i].state = K_FREE;
		m->kids[i].pid = -1;
		tk_io_init(&m->kids[i].io, -1, kid_io, &m->kids[i]);
	}
	tk_io_init(&m->up_io, -1, up_read, m);
	for (i = 0; i < srv.cfg.workers; i++) {
		m->kids[i].state = K_CUR;
		m->kids[i].slot = i;
		m->kids[i].gen = 1;
		if (spawn(m, &m->kids[i]))
			return i;
	}
	setproctitle("%s: master, %d worker%s", srv.cfg.mode,
	    srv.cfg.workers, srv.cfg.workers == 1 ? "" : "s");
	log_info("master: %d worker%s", srv.cfg.workers,
	    srv.cfg.workers == 1 ? "" : "s");
	return -1;
}

/*
 * The master's loop: its signals (unblocked once watched: what came
 * since master_start() comes through now), the workers' sockets, the
 * timers, the metrics listener.
 */
static void
master_loop(struct master *m)
{
	size_t	j;
	int	i;

	if ((m->l = tk_loop_new(srv.cfg.backend, 0)) == NULL)
		fatal("master: loop");
	for (j = 0; j < NMSIGS; j++)
		if (tk_signal_watch(m->l, msiglist[j], on_signal, m) == -1)
			fatal("master: watching SIG%s",
			    sigabbrev_np(msiglist[j]));
	for (i = 0; i < MAXKIDS; i++)
		if (m->kids[i].io.fd != -1 &&
		    tk_io_start(m->l, &m->kids[i].io, TK_EV_READ) == -1)
			fatal("master: watching worker %d", i);
	tk_timer_init(&m->restart, restart_due, m);
	tk_timer_init(&m->collect_timer, collect_expired, m);
	tk_timer_init(&m->reload_late, reload_expired, m);
	tk_timer_init(&m->up_late, up_expired, m);
	tk_timer_init(&m->up_kill, up_killed, m);
	tk_timer_init(&m->pidfile_retry, pidfile_again, m);
	if (m->pidfile_wait && tk_timer_arm(m->l, &m->pidfile_retry,
	    PIDFILE_RETRY) == -1)
		fatal("master: pidfile timer");
	metrics_start(m->l);
	if (sigprocmask(SIG_UNBLOCK, &m->msigs, NULL) == -1)
		fatal("sigprocmask");
}

/*
 * Start srv.cfg.workers workers and supervise them; cl is the command
 * line (a reload reads it again, an upgrade runs binary with it),
 * lfd[0..nlfd-1] every listener, for an upgrade, and upfd (-1: none)
 * the pipe of the old master that started us for one.  Returns the
 * worker's number (0 to P-1) in a worker process, which then goes on as
 * a plain tenkd, with *fresh set when srv.cfg is not the one this
 * process started with (a reload's); and -1 in the master once every
 * worker is gone after SIGTERM or SIGINT, and the new master of an
 * upgrade under way too.  Main thread, before any thread or loop exists.
 */
int
master_run(const struct cmdline *cl, const char *binary, const int *lfd,
    int nlfd, int upfd, int *fresh)
{
	struct master	*m = &master;
	int		 wk;

	m->pid = getpid();
	m->role = 1;
	m->cmdl = cl;
	m->self = binary;
	m->freshp = fresh;
	m->lfds = lfd;
	m->nlfds = nlfd;
	m->up_fd = upfd;
	m->pidfile_wait = !pidfile_take();
	if ((wk = master_start(m)) != -1)
		return wk;
	master_loop(m);
	for (;;) {
		if ((wk = forks(m)) != -1)
			return wk;
		settle(m);
		if (m->done)
			break;
		tk_loop_run(m->l, 0);
	}
	/* A signal from now on waits, blocked, for our exit. */
	sigprocmask(SIG_BLOCK, &m->msigs, NULL);
	metrics_stop();
	tk_loop_free(m->l);
	m->l = NULL;
	log_info("master: all workers gone, exiting");
	return -1;
}
