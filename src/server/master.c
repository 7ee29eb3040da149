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
 * The master runs one event loop and no thread.  Its signals stay
 * blocked and arrive through a signalfd: SIGCHLD (restart the dead
 * worker after a back-off that doubles from 100 ms to 10 s while workers
 * die young), SIGTERM and SIGINT (passed on; no more restarts; exit when
 * all are gone), SIGUSR1 (reopen its logs, the access log too, which a
 * worker it restarts inherits; pass on: each worker reopens its own),
 * SIGHUP (reload) and SIGUSR2 (upgrade).  A worker gets
 * SIGTERM if the master dies (PR_SET_PDEATHSIG).  Workers are forked
 * between iterations, never from a callback, so a new worker leaves the
 * master's loop cleanly.
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
#include <sys/signalfd.h>
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
#include "tenk/timer.h"
#include "tenk/xmalloc.h"
#include "tenkd.h"

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

struct child {
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

static struct child	 kids[MAXKIDS];
static struct msnap	 base[MAXWORKERS];	/* counters of the dead */
static struct msnap	 sums[MAXWORKERS];	/* what /metrics shows */
static sigset_t		 oldmask;
static sigset_t		 msigs;		/* what the master takes */
static pid_t		 master_pid;
static int		 role;		/* master_role() */
static struct tk_loop	*ml;		/* the master's loop */
static int		 sfd = -1;	/* its signalfd */
static struct tk_io	 sio;
static struct tk_timer	 tick;		/* the next restart, or 1 s */
static struct tk_timer	 collect_timer;
static int		 pending;	/* workers asked, not answered */
static int		 collecting;
static int		 stopping;
static int		 ready_sock = -1;	/* a worker: its socket pair */

/* Reload: the generations and the configuration of the new one. */
static const struct cmdline *cmdl;	/* as read at start */
static int		 gen = 1;	/* serving */
static struct config	 newcfg;	/* the new generation's */
static int		*freshp;	/* master_run()'s *fresh */
static int		 reloading;	/* a K_NEW generation starts */
static uint64_t		 reload_by;
static int		 first_ready;	/* generation 1 said so */
static int		 again_reload;	/* SIGHUP during a reload, an upgrade */
static int		 again_upgrade;	/* SIGUSR2 during a reload */

/*
 * The metrics of upstream i are those of workers whose upstream list
 * (version ulist, bumped by a reload that changes it) has had the
 * current name at i since same_since[i]: a reload that puts another
 * upstream at i starts a new series there, not adding the old one's.
 * The names are those of the configuration (srv.cfg), which label the
 * series.
 */
static int		 ulist;
static int		 same_since[MAXUPSTREAMS];

/* Upgrade: the old master's side, then the new one's. */
static const char	*self;		/* the binary */
static const int	*lfds;
static int		 nlfds;
static pid_t		 up_pid = -1;	/* the new master */
static uint64_t		 up_by;
static int		 up_gaveup;	/* killed it for being late */
static struct tk_timer	 up_kill;	/* then SIGKILL if it stays */
static struct tk_io	 up_io;		/* its pipe, read end */
static int		 up_fd = -1;	/* the new master: write end */
static int		 pidfile_wait;

static void	sig_ready(struct tk_loop *, struct tk_io *);
static void	tick_fired(struct tk_loop *, struct tk_timer *);
static void	kid_read(struct tk_loop *, struct tk_io *);
static void	up_read(struct tk_loop *, struct tk_io *);
static void	up_stop(int);
static void	up_killed(struct tk_loop *, struct tk_timer *);
static void	collect_end(void);
static void	metrics_again(void);

/* 0: no master here; 1: the master; 2: a worker under one. */
int
master_role(void)
{
	return role;
}

/*
 * In a new worker: close what is the master's (its loop, signalfd,
 * metrics listener and clients, the other workers' sockets, an
 * upgrade's pipe); fd is this worker's end of its socket pair.
 */
static void
child_setup(int i, int fd)
{
	int	j;

	role = 2;
	for (j = 0; j < MAXKIDS; j++)
		if (kids[j].io.fd != -1)
			close(kids[j].io.fd);
	if (up_io.fd != -1)
		close(up_io.fd);
	if (up_fd != -1)
		close(up_fd);
	up_io.fd = up_fd = -1;
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
	ready_sock = fd;
}

/*
 * A worker's handlers are in place (main.c): take the signals the
 * master blocked, which wait pending since the fork.  Unblocked there,
 * the SIGUSR1 or SIGHUP the master passes on, or a SIGTERM, would have
 * killed a worker in the middle of its start (default actions).  Those
 * the master's own parent left blocked (a mask passes across exec) too:
 * a worker that kept SIGTERM blocked would never drain.
 */
void
master_worker_signals(void)
{
	if (role == 2)
		sigprocmask(SIG_UNBLOCK, &msigs, NULL);
}

/*
 * A worker's threads run: tell the master (one byte on the socket pair;
 * its figures are whole struct msnap datagrams).  Nothing without one.
 */
void
master_worker_ready(void)
{
	if (ready_sock != -1 && send(ready_sock, "R", 1,
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

	if (ready_sock == -1)
		return;
	for (i = 0; i < srv.nworkers; i++)
		worker_snapshot(&srv.workers[i], &srv.workers[i].snap);
	memset(&m, 0, sizeof(m));
	stats_fill(&m);
	upstream_metrics(&m);
	metrics_self(&m);
	if (send(ready_sock, &m, sizeof(m), MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    (ssize_t)sizeof(m))
		log_warn("metrics: the last figures to the master");
}

/*
 * Fork k (its state, slot and generation set).  Returns 1 in the child
 * (ready to go on as a worker), 0 in the master.  A failed fork is
 * retried after the back-off (a new generation's: the reload fails).
 */
static int
spawn(struct child *k)
{
	pid_t		 pid;
	int		 sv[2];

	k->restart_at = 0;
	k->ready = 0;
	k->asked = 0;
	k->ulist = k->state == K_NEW ? ulist + 1 : ulist;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0, sv) == -1) {
		log_warn("worker %d: socketpair", k->slot);
		sv[0] = sv[1] = -1;
	}
	if ((pid = fork()) == -1) {
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
		if (getppid() != master_pid)
			_exit(0);
		if (sv[0] != -1)
			close(sv[0]);
		child_setup(k->slot, sv[1]);
		/* A reload's configuration: the worker takes it on. */
		if (k->state == K_NEW) {
			config_free(&srv.cfg);
			srv.cfg = newcfg;
		}
		*freshp = k->state == K_NEW || gen > 1;
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
		log_warn("worker %d: watching its socket", k->slot);
	if (gen == 1 && k->state == K_CUR)
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
snap_add(struct msnap *a, const struct msnap *b, int gauges, int ul)
{
	int	i;

	a->st.accepted += b->st.accepted;
	for (i = 0; i < CONN_NREASONS; i++)
		a->st.closed[i] += b->st.closed[i];
	for (i = 0; i < SIDE_N; i++) {
		a->st.bytes_in[i] += b->st.bytes_in[i];
		a->st.bytes_out[i] += b->st.bytes_out[i];
	}
	a->st.spliced += b->st.spliced;
	a->st.nopipe += b->st.nopipe;
	a->st.fpbytes += b->st.fpbytes;
	a->st.fpsess += b->st.fpsess;
	a->st.noport += b->st.noport;
	a->st.iterations += b->st.iterations;
	a->st.ring_dry += b->st.ring_dry;
	a->st.cq_overflow += b->st.cq_overflow;
	a->st.ms_accepted += b->st.ms_accepted;
	a->st.accept_dropped += b->st.accept_dropped;
	a->st.tls_new += b->st.tls_new;
	a->st.tls_resumed += b->st.tls_resumed;
	for (i = 0; i < TK_TLS_F_MAX; i++)
		a->st.tls_fail[i] += b->st.tls_fail[i];
	a->st.log_dropped += b->st.log_dropped;
	for (i = 0; i < CAP_NKINDS; i++)
		a->caps[i] += b->caps[i];
	for (i = 0; i < MAXUPSTREAMS; i++) {
		if (ul < same_since[i])
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
	a->st.active += b->st.active;
	a->st.bufs_inuse += b->st.bufs_inuse;
	a->st.bufs_free += b->st.bufs_free;
	a->st.pipes += b->st.pipes;
	a->st.piped += b->st.piped;
	a->mem_held += b->mem_held;
	for (i = 0; i < MAXUPSTREAMS; i++)
		if (ul >= same_since[i])
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
snap_warn(const struct child *k, const char *why)
{
	static uint64_t	 last, skipped;
	uint64_t	 now = tk_clock_mono();

	if (last != 0 && now - last < BADSNAP_EVERY) {
		skipped++;
		return;
	}
	log_warnx("worker %d (pid %d): malformed figures dropped: %s (%llu "
	    "more since the last line)", k->slot, (int)k->pid, why,
	    (unsigned long long)skipped);
	last = now;
	skipped = 0;
}

/* Figures from worker k, its ready byte, or its socket closed. */
static void
kid_read(struct tk_loop *l, struct tk_io *io)
{
	static struct msnap	 m;
	struct child		*k = io->arg;
	const char		*why;
	ssize_t			 n;

	/* MSG_TRUNC: the datagram's length, if longer (Linux 3.4). */
	while ((n = chan_recv(io, &m, sizeof(m), MSG_TRUNC)) > 0) {
		if (n == 1 && ((char *)&m)[0] == 'R') {
			k->ready = 1;
			continue;
		}
		/* An answer all the same: nobody waits for more. */
		if ((why = snap_bad(k, &m, n)) != NULL)
			snap_warn(k, why);
		else
			k->cur = m;
		if (k->asked) {
			k->asked = 0;
			pending--;
		}
	}
	if (n == -1) {
		(void)tk_io_close(l, io);
		if (k->asked) {
			k->asked = 0;
			pending--;
		}
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
	for (i = 0; i < MAXKIDS; i++) {
		kids[i].asked = 0;
		if (kids[i].pid != -1 && kids[i].io.fd != -1 &&
		    send(kids[i].io.fd, &c, 1, MSG_NOSIGNAL) == 1) {
			kids[i].asked = 1;
			pending++;
		}
	}
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

/*
 * Each slot's figures: its serving worker's (gauges included), the
 * counters of its dead ones, and all of what its other live ones (a
 * draining generation, a starting one) hold.
 */
static void
collect_end(void)
{
	struct child	*k;
	int		 i, s;

	tk_timer_cancel(ml, &collect_timer);
	collecting = 0;
	memset(sums, 0, sizeof(sums[0]) * srv.cfg.workers);
	for (i = 0; i < MAXKIDS; i++) {
		k = &kids[i];
		if (k->state != K_CUR)
			continue;
		sums[k->slot] = k->cur;
		if (k->pid == -1)
			sums[k->slot].pid = 0;
	}
	for (i = 0; i < MAXKIDS; i++) {
		k = &kids[i];
		if (k->state != K_FREE && k->state != K_CUR && k->pid != -1)
			snap_add(&sums[k->slot], &k->cur, 1, k->ulist);
	}
	for (s = 0; s < srv.cfg.workers; s++)
		snap_add(&sums[s], &base[s], 0, ulist);
	metrics_answer(sums, srv.cfg.workers, 1);
}

/* After a failed upgrade: serve the metrics again, on the same port. */
static void
metrics_again(void)
{
	if (metrics_open() == -1)
		log_warn("--metrics after the upgrade failed");
	else
		metrics_start(ml);
}

#define ALL		-1	/* relay_signal(): every live worker */
#define NOT_OLD		-2	/* all but those draining already */

/* Pass signo on to every live worker of state st (or ALL, NOT_OLD). */
static void
relay_signal(int signo, int st)
{
	struct child	*k;
	int		 i;

	for (i = 0; i < MAXKIDS; i++) {
		k = &kids[i];
		if (k->state == K_FREE || k->pid == -1 ||
		    (st == NOT_OLD && k->state == K_OLD) ||
		    (st >= 0 && k->state != (enum kstate)st))
			continue;
		(void)kill(k->pid, signo);
	}
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

static const char *
status_str(int st, char *buf, size_t len)
{
	if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(st));
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
	return buf;
}

static void	reload_abort(const char *);

/* Reap dead workers; schedule restarts of the serving ones. */
static void
reap(void)
{
	struct child	*k;
	uint64_t	 now = tk_clock_mono();
	pid_t		 pid;
	char		 how[64], why[128];
	int		 st, i;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		if (pid == up_pid) {
			up_pid = -1;
			tk_timer_cancel(ml, &up_kill);
			if (up_io.fd != -1)
				(void)tk_io_close(ml, &up_io);
			if (stopping) {
				log_info("upgrade: the new master (pid %d) "
				    "stopped: %s", (int)pid,
				    status_str(st, how, sizeof(how)));
				continue;
			}
			if (!up_gaveup)
				log_warnx("upgrade: the new master (pid %d) "
				    "%s before it was ready; this one keeps "
				    "serving", (int)pid,
				    status_str(st, how, sizeof(how)));
			else
				log_info("upgrade: the new master (pid %d) %s",
				    (int)pid, status_str(st, how, sizeof(how)));
			metrics_again();
			systemd_notify("READY=1\nSTATUS=upgrade failed");
			continue;
		}
		for (i = 0; i < MAXKIDS; i++)
			if (kids[i].state != K_FREE && kids[i].pid == pid)
				break;
		if (i == MAXKIDS)
			continue;
		k = &kids[i];
		/*
		 * Its last figures, if still queued, then into the base;
		 * read while k->pid is still its pid, which they carry.
		 */
		if (k->io.fd != -1) {
			kid_read(ml, &k->io);
			if (k->io.fd != -1)
				(void)tk_io_close(ml, &k->io);
		}
		k->pid = -1;
		snap_add(&base[k->slot], &k->cur, 0, k->ulist);
		memset(&k->cur, 0, sizeof(k->cur));
		status_str(st, how, sizeof(how));
		if (k->state == K_OLD) {
			log_info("worker %d of generation %d (pid %d) %s",
			    k->slot, k->gen, (int)pid, how);
			k->state = K_FREE;
			continue;
		}
		if (k->state == K_NEW) {
			k->state = K_FREE;
			snprintf(why, sizeof(why), "worker %d (pid %d) %s "
			    "before it was ready", k->slot, (int)pid, how);
			reload_abort(why);
			continue;
		}
		if (stopping) {
			log_info("worker %d (pid %d) %s", k->slot, (int)pid,
			    how);
			continue;
		}
		if (now - k->started > YOUNG || k->backoff == 0)
			k->backoff = BACKOFF_MIN;
		else if ((k->backoff *= 2) > BACKOFF_MAX)
			k->backoff = BACKOFF_MAX;
		k->restart_at = now + k->backoff;
		log_warnx("worker %d (pid %d) %s; restarting in %llu ms",
		    k->slot, (int)pid, how,
		    (unsigned long long)(k->backoff / TK_MSEC));
	}
}

/* A warning of a reload's configuration (an option given twice). */
static void
reload_warn(const char *msg)
{
	log_warnx("reload: %s", msg);
}

/*
 * The reload's configuration into newcfg: built from the command line
 * and the file as it is now, checked, and compared with the one that
 * runs.  Returns 0, or -1 with what is wrong logged.
 */
static int
reload_config(void)
{
	struct tk_cli_err	 e;
	const char		*what;

	if (config_load(&newcfg, cmdl, reload_warn, &e) == -1 ||
	    config_check(&newcfg, &e) == -1) {
		log_warnx("reload: %s", e.msg);
		config_free(&newcfg);
		return -1;
	}
	if ((what = config_fixed(&srv.cfg, &newcfg)) != NULL) {
		log_warnx("reload: '%s' changed: needs a restart or an "
		    "upgrade (SIGUSR2)", what);
		config_free(&newcfg);
		return -1;
	}
	return 0;
}

/*
 * SIGHUP: read the -f file, check it, and start a new generation of
 * workers with it.  Returns the slot in a new worker (which goes on as
 * one), -1 in the master.
 */
static int
reload(void)
{
	struct child	*k;
	int		 i, s, nfree = 0;

	if (cmdl->conf == NULL) {
		(void)reopen_logs();
		relay_signal(SIGHUP, ALL);
		log_info("SIGHUP: no -f file to read again: logs reopened");
		return -1;
	}
	if (stopping) {
		log_warnx("SIGHUP ignored: a stop under way");
		return -1;
	}
	if (reloading || up_pid != -1) {
		/*
		 * Not dropped: the file may have changed since the one
		 * under way read it.  The new master of an upgrade that
		 * succeeds gets it instead (up_read).
		 */
		again_reload = 1;
		log_info("SIGHUP: will reload after the %s under way",
		    reloading ? "reload" : "upgrade");
		return -1;
	}
	systemd_notify("RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading",
	    (unsigned long long)(tk_clock_mono() / 1000));
	if (reload_config() == -1)
		goto refused;
	for (i = 0; i < MAXKIDS; i++)
		nfree += kids[i].state == K_FREE;
	if (nfree < srv.cfg.workers) {
		log_warnx("reload: %d old workers still draining",
		    MAXKIDS - nfree);
		config_free(&newcfg);
		goto refused;
	}
	reloading = 1;
	reload_by = tk_clock_mono() + srv.cfg.ready_timeout;
	for (s = 0, i = 0; s < srv.cfg.workers; s++) {
		while (kids[i].state != K_FREE)
			i++;
		k = &kids[i];
		k->state = K_NEW;
		k->slot = s;
		k->gen = gen + 1;
		k->backoff = 0;
		if (spawn(k))
			return s;
		if (k->pid == -1) {
			k->state = K_FREE;
			reload_abort("fork failed");
			break;
		}
	}
	return -1;

 refused:
	log_warnx("reload refused: generation %d keeps serving", gen);
	systemd_notify("READY=1\nSTATUS=reload refused; generation %d "
	    "serving", gen);
	return -1;
}

/* The new generation failed: stop what of it runs, keep the old. */
static void
reload_abort(const char *why)
{
	int	i;

	if (!reloading)
		return;
	for (i = 0; i < MAXKIDS; i++)
		if (kids[i].state == K_NEW) {
			kids[i].state = K_OLD;
			if (kids[i].pid != -1)
				(void)kill(kids[i].pid, SIGTERM);
		}
	config_free(&newcfg);
	reloading = 0;
	log_warnx("reload failed: generation %d: %s; generation %d keeps "
	    "serving", gen + 1, why, gen);
	systemd_notify("READY=1\nSTATUS=reload failed; generation %d "
	    "serving", gen);
}

/*
 * The new generation's upstream list (newcfg's) against the one that
 * runs: where a name changed, its series starts again; the rest go on.
 */
static void
new_upstreams(void)
{
	const struct config	*c = &srv.cfg;
	int			 i, s, same = c->nups == newcfg.nups;

	for (i = 0; same && i < c->nups; i++)
		same = strcmp(c->ups[i].name, newcfg.ups[i].name) == 0;
	ulist++;
	if (same)
		return;
	for (i = 0; i < MAXUPSTREAMS; i++) {
		if (i < c->nups && i < newcfg.nups &&
		    strcmp(c->ups[i].name, newcfg.ups[i].name) == 0)
			continue;
		same_since[i] = ulist;
		for (s = 0; s < MAXWORKERS; s++)
			memset(&base[s].ups[i], 0, sizeof(base[s].ups[i]));
	}
	log_info("reload: %d upstream%s now", newcfg.nups,
	    newcfg.nups == 1 ? "" : "s");
}

/* Every worker of the new generation runs: the old one drains. */
static void
reload_commit(void)
{
	int	i, nold = 0;

	for (i = 0; i < MAXKIDS; i++) {
		if (kids[i].state == K_CUR) {
			if (kids[i].pid == -1) {
				kids[i].state = K_FREE;
				continue;
			}
			kids[i].state = K_OLD;
			(void)kill(kids[i].pid, SIGTERM);
			nold++;
		} else if (kids[i].state == K_NEW)
			kids[i].state = K_CUR;
	}
	new_upstreams();
	config_free(&srv.cfg);
	srv.cfg = newcfg;
	memset(&newcfg, 0, sizeof(newcfg));
	reloading = 0;
	gen++;
	log_info("reload: %d worker%s of generation %d started; "
	    "generation %d draining (%d worker%s)", srv.cfg.workers,
	    srv.cfg.workers == 1 ? "" : "s", gen, gen - 1, nold,
	    nold == 1 ? "" : "s");
	setproctitle("%s: master, %d worker%s, generation %d",
	    srv.cfg.mode, srv.cfg.workers, srv.cfg.workers == 1 ? "" : "s",
	    gen);
	systemd_notify("READY=1\nSTATUS=%s: master, %d worker%s, "
	    "generation %d", srv.cfg.mode, srv.cfg.workers,
	    srv.cfg.workers == 1 ? "" : "s", gen);
}

/* Whether every worker of state st runs its threads. */
static int
all_ready(enum kstate st)
{
	int	i, n = 0;

	for (i = 0; i < MAXKIDS; i++)
		if (kids[i].state == st) {
			if (kids[i].pid == -1 || !kids[i].ready)
				return 0;
			n++;
		}
	return n > 0;
}

/*
 * SIGUSR2: fork and execute the binary with the command line as typed,
 * the listeners passed as systemd passes them (the new process is
 * $LISTEN_PID, so it is set after the fork), a pipe the new master
 * writes a byte to once its workers run, and the log opener if there
 * is one (reopen.c: after --user, the new master could not open a log
 * in root's directory itself).
 */
static void
upgrade(void)
{
	char		 num[32], *names;
	size_t		 nl;
	pid_t		 pid;
	int		 fd[2], i, lo, op, n, *tmp;

	if (stopping || up_pid != -1) {
		log_warnx("SIGUSR2 ignored: %s under way", stopping ?
		    "a stop" : "an upgrade");
		return;
	}
	/*
	 * After a reload under way; and in a new master, after it took
	 * the pidfile over: the old one let it go unlocked, and the next
	 * new master would take it before it is ready.
	 */
	if (reloading || pidfile_wait) {
		again_upgrade = 1;
		log_info("SIGUSR2: will upgrade after %s", reloading ?
		    "the reload under way" : "taking the pidfile over");
		return;
	}
	if (*self == '\0') {
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
	if ((pid = fork()) == -1) {
		log_warn("upgrade: fork");
		close(fd[0]);
		close(fd[1]);
		metrics_again();
		return;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		/* Out of the way first, then from 3 on, inherited. */
		op = reopen_opener();
		n = nlfds + 1 + (op != -1);
		lo = 3 + n;
		if ((tmp = calloc(n, sizeof(*tmp))) == NULL)
			_exit(127);
		for (i = 0; i < nlfds; i++)
			if ((tmp[i] = fcntl(lfds[i], F_DUPFD_CLOEXEC, lo)) ==
			    -1)
				_exit(127);
		if ((tmp[nlfds] = fcntl(fd[1], F_DUPFD_CLOEXEC, lo)) == -1)
			_exit(127);
		if (op != -1 && (tmp[nlfds + 1] = fcntl(op, F_DUPFD_CLOEXEC,
		    lo)) == -1)
			_exit(127);
		for (i = 0; i < n; i++)
			if (dup2(tmp[i], 3 + i) == -1)
				_exit(127);
		if (op != -1)
			reopen_pass(3 + nlfds + 1);
		nl = sizeof(UPGRADE_FDNAME) * (size_t)nlfds + 1;
		if ((names = malloc(nl)) == NULL)
			_exit(127);
		names[0] = '\0';
		for (i = 0; i < nlfds; i++) {
			if (i > 0)
				strlcat(names, ":", nl);
			strlcat(names, UPGRADE_FDNAME, nl);
		}
		snprintf(num, sizeof(num), "%d", nlfds);
		setenv("LISTEN_FDS", num, 1);
		setenv("LISTEN_FDNAMES", names, 1);
		snprintf(num, sizeof(num), "%d", (int)getpid());
		setenv("LISTEN_PID", num, 1);
		snprintf(num, sizeof(num), "%d", 3 + nlfds);
		setenv(UPGRADE_ENV, num, 1);
		execv(self, cmdl->argv);
		fprintf(stderr, "%s: upgrade: %s: %s\n", getprogname(), self,
		    strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	up_pid = pid;
	up_gaveup = 0;
	up_by = tk_clock_mono() + srv.cfg.ready_timeout;
	tk_io_init(&up_io, fd[0], up_read, NULL);
	if (tk_io_start(ml, &up_io, TK_EV_READ) == -1)
		log_warn("upgrade: watching its pipe");
	log_info("upgrade: %s started as pid %d with %d socket%s", self,
	    (int)pid, nlfds, nlfds == 1 ? "" : "s");
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
	char	c;
	ssize_t	n;

	n = read(io->fd, &c, 1);
	if (n == -1 && (errno == EINTR || errno == EAGAIN)) {
		tk_io_block(io, TK_EV_READ);
		return;
	}
	(void)tk_io_close(l, io);
	/* Stopping: the new master was told to stop as well. */
	if (n != 1 || up_pid == -1 || stopping)
		return;
	if (up_gaveup) {
		log_warnx("upgrade: the new master (pid %d) is ready after "
		    "this one gave up on it: ignored, this one keeps serving",
		    (int)up_pid);
		return;
	}
	log_info("upgrade: the new master (pid %d) is ready: this one "
	    "drains generation %d and exits", (int)up_pid, gen);
	pidfile_handover(up_pid);
	systemd_notify("MAINPID=%d\nSTATUS=handed over to pid %d",
	    (int)up_pid, (int)up_pid);
	if (again_reload) {
		again_reload = 0;
		log_info("upgrade: the SIGHUP that came meanwhile passed on");
		(void)kill(up_pid, SIGHUP);
	}
	stopping = 1;
	up_pid = -1;	/* no longer ours to watch */
	relay_signal(SIGTERM, NOT_OLD);	/* a second one would force */
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
up_stop(int signo)
{
	(void)kill(up_pid, signo);
	if (!tk_timer_pending(&up_kill) && tk_timer_arm(ml, &up_kill,
	    srv.cfg.drain_timeout + KILL_GRACE) == -1)
		log_warn("upgrade: no timer to kill pid %d", (int)up_pid);
}

static void
up_killed(struct tk_loop *l, struct tk_timer *t)
{
	char	dur[32];

	(void)l;
	(void)t;
	if (up_pid == -1)
		return;
	log_warnx("upgrade: the new master (pid %d) still runs %s after it "
	    "was told to stop: SIGKILL", (int)up_pid, tk_fmt_duration(
	    srv.cfg.drain_timeout + KILL_GRACE, dur, sizeof(dur)));
	(void)kill(up_pid, SIGKILL);
}

/*
 * A SIGHUP or SIGUSR2 that came while a reload or an upgrade was under
 * way, once none is (and an upgrade once the pidfile is ours): the
 * reload first.  Returns as reload() does.
 */
static int
deferred(void)
{
	if (stopping || reloading || up_pid != -1)
		return -1;
	if (again_reload) {
		again_reload = 0;
		return reload();
	}
	if (again_upgrade && !pidfile_wait) {
		again_upgrade = 0;
		upgrade();
	}
	return -1;
}

/*
 * Restart the serving workers whose back-off is over, counting in
 * *alive the workers that run and moving *next to the next restart.
 * Returns the slot in a new worker, -1 in the master.
 */
static int
restarts(uint64_t now, uint64_t *next, int *alive)
{
	struct child	*k;
	int		 i;

	for (i = 0; i < MAXKIDS; i++) {
		k = &kids[i];
		if (k->state == K_FREE)
			continue;
		if (k->pid != -1)
			(*alive)++;
		else if (!stopping && k->state == K_CUR &&
		    k->restart_at != 0) {
			if (k->restart_at <= now) {
				if (spawn(k))
					return k->slot;
				if (k->pid != -1)
					(*alive)++;
			}
			if (k->restart_at != 0 && k->restart_at < *next)
				*next = k->restart_at;
		}
	}
	return -1;
}

/* The first generation runs: say so, and to an upgrade's old master. */
static void
first_ready_now(void)
{
	first_ready = 1;
	log_info("master: %d worker%s ready", srv.cfg.workers,
	    srv.cfg.workers == 1 ? "" : "s");
	systemd_notify("READY=1\nSTATUS=%s: master, %d worker%s",
	    srv.cfg.mode, srv.cfg.workers, srv.cfg.workers == 1 ? "" : "s");
	if (up_fd != -1) {
		if (write(up_fd, "R", 1) != 1)
			log_warn("upgrade: telling the old master");
		close(up_fd);
		up_fd = -1;
	}
}

/*
 * What waits on the workers or on time: the first generation ready, a
 * reload's generation ready or late, an upgrade's new master late, the
 * pidfile to take over, a deferred SIGHUP or SIGUSR2; *next moves to
 * when to look again.  Returns the slot in a new worker, -1 in the
 * master.
 */
static int
waits(uint64_t now, uint64_t *next)
{
	char	dur[32];
	int	wk;

	if (!first_ready && all_ready(K_CUR))
		first_ready_now();
	if (reloading && all_ready(K_NEW))
		reload_commit();
	else if (reloading && now >= reload_by)
		reload_abort("not ready in time");
	if (up_pid != -1 && !up_gaveup && now >= up_by) {
		log_warnx("upgrade: the new master (pid %d) not ready in %s: "
		    "stopping it; this one keeps serving", (int)up_pid,
		    tk_fmt_duration(srv.cfg.ready_timeout, dur, sizeof(dur)));
		up_gaveup = 1;
		up_stop(SIGTERM);
	}
	if (pidfile_wait)
		pidfile_wait = !pidfile_take();
	if ((wk = deferred()) != -1)
		return wk;
	if ((pidfile_wait || reloading || up_pid != -1 || !first_ready) &&
	    now + PIDFILE_RETRY < *next)
		*next = now + PIDFILE_RETRY;
	return -1;
}

/* SIGTERM or SIGINT: the first drains, a second forces. */
static void
stop(int signo)
{
	/* The old workers drain already. */
	if (!stopping) {
		log_info("master: SIG%s: stopping the workers",
		    sigabbrev_np(signo));
		systemd_notify("STOPPING=1\nSTATUS=stopping the workers");
	}
	relay_signal(signo, stopping ? ALL : NOT_OLD);
	/* A new master not ready yet is ours still: it stops too. */
	if (up_pid != -1)
		up_stop(signo);
	/*
	 * A new master stopped before it was ready says no to the old one
	 * (end of file), which goes on serving, and never says ready.
	 */
	if (up_fd != -1) {
		log_info("upgrade: stopped before this master was ready: the "
		    "old one keeps serving");
		close(up_fd);
		up_fd = -1;
	}
	stopping = 1;
	/* Its new workers were told to stop with the others. */
	if (reloading)
		config_free(&newcfg);
	reloading = 0;
}

/*
 * The signals that came, read from the signalfd between iterations,
 * not in a handler.  Returns the slot in a new worker (a reload's), -1
 * in the master.
 */
static int
signals(void)
{
	struct signalfd_siginfo	 si;
	int			 wk;

	while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			reap();
			break;
		case SIGTERM:
		case SIGINT:
			stop((int)si.ssi_signo);
			break;
		case SIGHUP:
			if ((wk = reload()) != -1)
				return wk;
			break;
		case SIGUSR1:
			(void)reopen_logs();
			relay_signal(SIGUSR1, ALL);
			break;
		case SIGUSR2:
			upgrade();
			break;
		}
	}
	return -1;
}

/*
 * The master's signals blocked (for its signalfd, and in a worker until
 * master_worker_signals), and the first generation forked.  Returns the
 * slot in a new worker, -1 in the master.
 */
static int
master_start(sigset_t *set)
{
	int	i;

	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGUSR2);
	msigs = *set;
	if (sigprocmask(SIG_BLOCK, set, &oldmask) == -1)
		fatal("sigprocmask");
	for (i = 0; i < MAXKIDS; i++) {
		kids[i].state = K_FREE;
		kids[i].pid = -1;
		tk_io_init(&kids[i].io, -1, kid_read, &kids[i]);
	}
	tk_io_init(&up_io, -1, up_read, NULL);
	for (i = 0; i < srv.cfg.workers; i++) {
		kids[i].state = K_CUR;
		kids[i].slot = i;
		kids[i].gen = 1;
		if (spawn(&kids[i]))
			return i;
	}
	setproctitle("%s: master, %d worker%s", srv.cfg.mode,
	    srv.cfg.workers, srv.cfg.workers == 1 ? "" : "s");
	log_info("master: %d worker%s", srv.cfg.workers,
	    srv.cfg.workers == 1 ? "" : "s");
	return -1;
}

/* The master's loop: the signalfd, the workers' sockets, the timers. */
static void
master_loop(const sigset_t *set)
{
	int	i;

	if ((ml = tk_loop_new(srv.cfg.backend, 0)) == NULL)
		fatal("master: loop");
	if ((sfd = signalfd(-1, set, SFD_NONBLOCK | SFD_CLOEXEC)) == -1)
		fatal("master: signalfd");
	tk_io_init(&sio, sfd, sig_ready, NULL);
	if (tk_io_start(ml, &sio, TK_EV_READ) == -1)
		fatal("master: watching the signalfd");
	for (i = 0; i < MAXKIDS; i++)
		if (kids[i].io.fd != -1 &&
		    tk_io_start(ml, &kids[i].io, TK_EV_READ) == -1)
			fatal("master: watching worker %d", i);
	tk_timer_init(&tick, tick_fired, NULL);
	tk_timer_init(&collect_timer, collect_expired, NULL);
	tk_timer_init(&up_kill, up_killed, NULL);
	metrics_start(ml);
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
	sigset_t	 set;
	uint64_t	 now, next;
	int		 alive, wk;

	master_pid = getpid();
	role = 1;
	cmdl = cl;
	self = binary;
	freshp = fresh;
	lfds = lfd;
	nlfds = nlfd;
	up_fd = upfd;
	pidfile_wait = !pidfile_take();
	if ((wk = master_start(&set)) != -1)
		return wk;
	master_loop(&set);
	for (;;) {
		now = tk_clock_mono();
		next = now + TK_SEC;
		alive = 0;
		if ((wk = restarts(now, &next, &alive)) != -1)
			return wk;
		if (stopping && alive == 0 && up_pid == -1)
			break;
		if ((wk = waits(now, &next)) != -1)
			return wk;
		(void)tk_timer_arm(ml, &tick, next > now ? next - now : 0);
		tk_loop_run(ml, TK_RUN_ONCE);
		if ((wk = signals()) != -1)
			return wk;
	}
	metrics_stop();
	tk_timer_cancel(ml, &tick);
	tk_timer_cancel(ml, &collect_timer);
	tk_timer_cancel(ml, &up_kill);
	tk_loop_free(ml);
	ml = NULL;
	close(sfd);
	sfd = -1;
	log_info("master: all workers gone, exiting");
	return -1;
}
