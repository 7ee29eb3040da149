/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tenkd: start-up (limits, listeners, privileges, pidfile, workers) on
 * the configuration config.c builds from the command line and its -f
 * file, and the main thread, which owns every signal and steers the
 * workers with posted messages: SIGTERM/SIGINT drain, a second one or
 * the drain deadline forces, SIGUSR1 and SIGHUP reopen the logs
 * (reopen.c; a reload is the master's, master.c, which runs with
 * --workers and whenever -f is given); statistics are on the metrics
 * listener (metrics.c).  Serving is in worker.c, accept.c, conn.c and
 * the protocol files; the main thread's loop also runs upstream.c's
 * health checks.  An upgrade runs the binary again with the command line
 * as typed, kept by config.c, and the binary's path kept here.
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/cli.h"
#include "tenk/log.h"
#include "tenk/parse.h"
#include "tenk/signal.h"
#include "tenk/sock.h"
#include "tenk/xmalloc.h"
#include "../tenkd.h"

#define DEFAULT_LISTEN		"127.0.0.1:7777"

static struct cmdline	 cmdline;		/* as read at start */
static char		 self_path[PATH_MAX];
static int		 upgraded;	/* started by an old master's SIGUSR2 */

static uint64_t	sessions_now(void);
static void	on_signal(struct tk_loop *, int, void *);
static void	drain_deadline(struct tk_loop *, struct tk_timer *);
static void	force_all(void);
static void	worker_done(struct tk_loop *, struct tk_msg *);
static void	save_self(const char *);
static int	upgrade_fd(void);

/*
 * Sessions open now, for messages, from the --max-conns count (the one
 * figure main may read while workers run): a proxy session holds two
 * units, its client's and its upstream's, an echo connection one
 * (proto->units).  A
 * worker between its reservation and the session's start holds one unit
 * more for a moment, which the halving mostly absorbs.
 */
static uint64_t
sessions_now(void)
{
	return atomic_load(&srv.nconns) / (uint64_t)srv.proto->units;
}

static void
on_signal(struct tk_loop *l, int signo, void *arg)
{
	uint64_t	n;
	char		dur[32];
	int		i;

	(void)arg;
	switch (signo) {
	case SIGHUP:
	case SIGUSR1:
		/*
		 * A worker's SIGHUP comes from its master, which reloads;
		 * without a master there is no file to read again.
		 */
		if (reopen_logs() == 0)
			log_info("SIG%s: logs reopened", sigabbrev_np(signo));
		break;
	case SIGUSR2:
		log_warnx("SIGUSR2 ignored: a binary upgrade is the "
		    "master's (-f or --workers)%s", master_role() == 2 ?
		    "; send it to the master" : "");
		break;
	case SIGINT:
	case SIGTERM:
		if (srv.draining) {
			log_info("SIG%s again: closing all %s now",
			    sigabbrev_np(signo), worker_sessions(2));
			force_all();
			break;
		}
		srv.draining = 1;
		n = sessions_now();
		systemd_notify("STOPPING=1\nSTATUS=draining %llu %s",
		    (unsigned long long)n, worker_sessions(n));
		log_info("SIG%s: no longer accepting, draining %llu %s for "
		    "up to %s", sigabbrev_np(signo), (unsigned long long)n,
		    worker_sessions(n),
		    tk_fmt_duration(srv.cfg.drain_timeout, dur, sizeof(dur)));
		setproctitle("%s: draining", srv.cfg.mode);
		for (i = 0; i < srv.nworkers; i++)
			tk_loop_post(srv.workers[i].l, &srv.workers[i].m_drain);
		if (srv.cfg.drain_timeout == 0)
			force_all();
		else if (tk_timer_arm(l, &srv.drain_timer,
		    srv.cfg.drain_timeout) == -1)
			force_all();
		break;
	}
}

static void
drain_deadline(struct tk_loop *l, struct tk_timer *t)
{
	uint64_t	n = sessions_now();

	(void)l;
	(void)t;
	log_info("drain timeout: closing %llu %s", (unsigned long long)n,
	    worker_sessions(n));
	force_all();
}

static void
force_all(void)
{
	int	i;

	if (srv.forcing)
		return;
	srv.forcing = 1;
	for (i = 0; i < srv.nworkers; i++)
		tk_loop_post(srv.workers[i].l, &srv.workers[i].m_force);
}

/* A worker drained; when all have, stop them and the main loop. */
static void
worker_done(struct tk_loop *l, struct tk_msg *m)
{
	int	i;

	(void)m;
	if (++srv.ndone < srv.nworkers)
		return;
	srv.stopping = 1;
	tk_timer_cancel(l, &srv.drain_timer);
	for (i = 0; i < srv.nworkers; i++)
		tk_loop_post(srv.workers[i].l, &srv.workers[i].m_stop);
	tk_loop_stop(l);
}

/*
 * The binary's absolute path, for an upgrade: argv0 made absolute when
 * it names a path, so that an upgrade runs whatever file is at that path
 * then (a package manager replaces it), else the file we run from now.
 * Start-up.
 */
static void
save_self(const char *argv0)
{
	char	cwd[PATH_MAX];
	ssize_t	n;

	if (argv0 != NULL && argv0[0] == '/')
		strlcpy(self_path, argv0, sizeof(self_path));
	else if (argv0 != NULL && strchr(argv0, '/') != NULL &&
	    getcwd(cwd, sizeof(cwd)) != NULL &&
	    strlen(cwd) + 1 + strlen(argv0) < sizeof(self_path)) {
		strlcpy(self_path, cwd, sizeof(self_path));
		strlcat(self_path, "/", sizeof(self_path));
		strlcat(self_path, argv0, sizeof(self_path));
	} else if ((n = readlink("/proc/self/exe", self_path,
	    sizeof(self_path) - 1)) > 0)
		self_path[n] = '\0';
	else
		self_path[0] = '\0';
}

/*
 * In a new master started by an upgrade: the descriptor on which to
 * tell the old one we are ready ($TENKD_UPGRADE_FD), or -1.  The
 * variable is removed, so that nothing we start takes it for its own.
 */
static int
upgrade_fd(void)
{
	const char	*s, *errstr;
	int		 fd;

	if ((s = getenv(UPGRADE_ENV)) == NULL)
		return -1;
	fd = (int)strtonum(s, 3, INT_MAX, &errstr);
	unsetenv(UPGRADE_ENV);
	if (errstr != NULL || fcntl(fd, F_SETFD, FD_CLOEXEC) == -1)
		return -1;
	return fd;
}

/* A warning of the configuration at start: one line on stderr. */
static void
config_warn(const char *msg)
{
	fprintf(stderr, "%s: %s\n", getprogname(), msg);
}

/*
 * A worker of a configuration this process did not start with (a
 * reload's, or restarted since), as master_run() says: take its options
 * on (limits, memory budget, log level, a fresh access log descriptor,
 * as a rotation may have come since the master opened it).
 */
static void
config_apply(void)
{
	log_setlevel(srv.cfg.log_level);
	srv.proto = worker_proto(&srv.cfg);	/* echo over TLS or not */
	srv.fastpath = srv.fastpath && srv.cfg.fastpath;
	limits_set();
	mem_init();
	if (srv.access_fd != -1)
		(void)reopen_logs();
}

/*
 * The command line and the -f file into srv.cfg, and what needs no
 * resource: the logger, the limits, the memory budget.  Anything wrong
 * is one line on stderr and exit 2 (1 for a backend the kernel refuses).
 */
static void
configure(int argc, char *argv[], char *envp[])
{
	struct config		*cfg = &srv.cfg;
	struct tk_cli_err	 e;

	save_self(argv[0]);
	cmdline_read(&cmdline, argc, argv);
	setproctitle_init(argc, argv, envp);
	srv.access_fd = -1;
	if (cmdline.help)
		help_usage(1);
	if (cmdline.version) {
		printf("tenkd %s\n", TENK_VERSION);
		exit(0);
	}
	if (cmdline.list)
		tk_cli_backend_list();
	if (config_load(cfg, &cmdline, config_warn, &e) == -1 ||
	    config_check(cfg, &e) == -1)
		tk_cli_die(&e);
	if (cfg->backend != NULL && tk_backend_probe(cfg->backend) == -1) {
		fprintf(stderr, "%s: --backend %s: the kernel refuses it: %s\n",
		    getprogname(), cfg->backend, strerror(errno));
		exit(1);
	}
	srv.proto = worker_proto(cfg);
	if (cfg->facility != -1)
		log_facility(cfg->facility);
	log_init("tenkd", cfg->log_level, cfg->syslog ? LOG_F_SYSLOG :
	    LOG_F_STAMP);
	/*
	 * Start-up facts after what could still fail, or after its error;
	 * but not in an upgrade's new master, whose old one waits on it
	 * and reports its failure: there each step is told as it comes.
	 */
	if (!upgraded)
		log_hold(1);
	signal(SIGPIPE, SIG_IGN);
	limits_set();
	mem_init();
}

/* --check: what start-up would open, tried without binding; exit. */
static noreturn void
check_only(void)
{
	struct config	*cfg = &srv.cfg;
	struct tk_loop	*l;
	int		 i;

	if ((l = tk_loop_new(cfg->backend, 0)) == NULL)
		fatal("backend %s", cfg->backend != NULL ? cfg->backend :
		    "default");
	limits_check_path("pidfile", cfg->pidfile, 0);
	limits_check_path("access log", cfg->access_log, 1);
	/* Sockets from systemd take the place of --listen. */
	for (i = 0; getenv("LISTEN_FDS") == NULL && i < cfg->nlisten; i++)
		listen_check("listen on", &cfg->listen[i]);
	if (cfg->metrics_on)
		listen_check("--metrics", &cfg->metrics);
	log_hold(0);
	log_info("configuration OK: %s, %d thread%s, backend %s, %d "
	    "address%s", cfg->mode, cfg->threads, cfg->threads == 1 ? "" :
	    "s", tk_loop_backend(l), cfg->nlisten, cfg->nlisten > 1 ? "es" :
	    "");
	tk_loop_free(l);
	exit(0);
}

/*
 * What needs privileges, before they go: the pidfile, the logs, the
 * metrics and data listeners, the fast path's program.  Returns the
 * listeners, [address][worker][thread].
 */
static int *
open_all(int upfd)
{
	struct config	*cfg = &srv.cfg;
	struct fowner	 owner;
	int		*lfds;

	safefile_owner(cfg, &owner);
	pidfile_start(cfg->pidfile, &owner, upfd != -1);
	if (upgraded)
		reopen_adopt();
	reopen_access_open();
	if (metrics_open() == -1)
		listen_fail("--metrics", &cfg->metrics);
	lfds = listen_open();
	reopen_init();
	pxfast_load();
	limits_drop(upgraded);
	if (pidfile_put(getpid()) == -1)
		fatal("pidfile %s", cfg->pidfile);
	log_hold(0);
	return lfds;
}

/*
 * -f or --workers: the master (master.c), which returns in each worker
 * process its number, with its slice of the listeners left open, and
 * exits here once its workers are gone.
 */
static int
fork_workers(int *lfds, int upfd)
{
	struct config	*cfg = &srv.cfg;
	int		 i, wk, fresh = 0, n = srv.nlisten * LISTEN_FDS(cfg);

	if ((wk = master_run(&cmdline, self_path, lfds, n, upfd,
	    &fresh)) == -1) {
		for (i = 0; i < n; i++)
			close(lfds[i]);
		free(lfds);
		pidfile_end(1);
		exit(0);
	}
	pidfile_end(0);
	if (fresh)
		config_apply();
	for (i = 0; i < n; i++)
		if (i % LISTEN_FDS(cfg) / cfg->threads != wk)
			close(lfds[i]);
	return wk;
}

/* The main thread's loop, its signals, and the health checks. */
static void
main_loop(void)
{
	if ((srv.l = tk_loop_new(srv.cfg.backend, 0)) == NULL)
		fatal("main loop");
	tk_timer_init(&srv.drain_timer, drain_deadline, NULL);
	metrics_start(srv.l);
	tlsterm_start(srv.l);
	if (tk_signal_watch(srv.l, SIGTERM, on_signal, NULL) == -1 ||
	    tk_signal_watch(srv.l, SIGINT, on_signal, NULL) == -1 ||
	    tk_signal_watch(srv.l, SIGHUP, on_signal, NULL) == -1 ||
	    tk_signal_watch(srv.l, SIGUSR1, on_signal, NULL) == -1 ||
	    tk_signal_watch(srv.l, SIGUSR2, on_signal, NULL) == -1)
		fatal("signals");
	master_worker_signals();
	if (srv.proto->init != NULL)
		srv.proto->init();
	upstream_check_start(srv.l);
}

/*
 * The worker threads, each with its listeners of worker process wk,
 * started with every signal blocked (main unblocks after).
 */
static void
start_threads(int *lfds, int wk)
{
	struct config	*cfg = &srv.cfg;
	sigset_t	 all, old;
	int		 i, k, error, mine[MAXLISTEN];

	srv.nworkers = cfg->threads;
	srv.workers = xcalloc(srv.nworkers, sizeof(*srv.workers));
	for (i = 0; i < srv.nworkers; i++) {
		for (k = 0; k < srv.nlisten; k++)
			mine[k] = lfds[k * LISTEN_FDS(cfg) +
			    wk * cfg->threads + i];
		worker_init(&srv.workers[i], i, mine);
		srv.workers[i].m_done.fn = worker_done;
	}
	free(lfds);
	alog_start();
	sigfillset(&all);
	if ((error = pthread_sigmask(SIG_BLOCK, &all, &old)) != 0) {
		errno = error;
		fatal("pthread_sigmask");
	}
	for (i = 0; i < srv.nworkers; i++)
		worker_start(&srv.workers[i]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	master_worker_ready();
}

/* Serving: the title, the line and systemd's status say so. */
static void
say_ready(void)
{
	struct config	*cfg = &srv.cfg;
	char		 name[TK_ADDRSTRLEN], idle[32], drain[32];
	const char	*s = srv.nworkers == 1 ? "" : "s";
	const char	*more = srv.nlisten > 1 ? " ..." : "";

	tk_addr_fmt(&srv.listen[0], name, sizeof(name));
	setproctitle("%s: %d thread%s, %s, %s%s", cfg->mode, srv.nworkers, s,
	    tk_loop_backend(srv.workers[0].l), name, more);
	log_info("%s: %d thread%s, backend %s%s, idle timeout %s, buffer "
	    "limit %zu, drain timeout %s", cfg->mode, srv.nworkers, s,
	    tk_loop_backend(srv.workers[0].l), srv.workers[0].cq ?
	    " (completions)" : "", cfg->idle_timeout == 0 ? "off" :
	    tk_fmt_duration(cfg->idle_timeout, idle, sizeof(idle)),
	    cfg->buffer_limit, tk_fmt_duration(cfg->drain_timeout, drain,
	    sizeof(drain)));
	tlsterm_log();
	systemd_notify("READY=1\nSTATUS=%s: %d thread%s, %s%s", cfg->mode,
	    srv.nworkers, s, name, more);
}

/*
 * Drained.  tk_loop_free() gives the signals their default actions
 * back, and a SIGUSR1 from logrotate, one the master passes on, or a
 * second SIGTERM would kill us before the last figures, the access log
 * and the pidfile are seen to: blocked, they are dropped at exit.  The
 * worker threads block them all already.
 */
static void
shut_down(void)
{
	int	i;

	(void)tk_signal_block_all();
	for (i = 0; i < srv.nworkers; i++)
		pthread_join(srv.workers[i].thread, NULL);
	master_worker_final();
	for (i = 0; i < srv.nworkers; i++)
		worker_free(&srv.workers[i]);
	free(srv.workers);
	alog_stop();
	upstream_check_stop();
	tk_timer_cancel(srv.l, &srv.drain_timer);
	tlsterm_stop(srv.l);
	metrics_stop();
	tk_loop_free(srv.l);
	if (srv.access_fd != -1)
		close(srv.access_fd);
	pidfile_end(1);
	log_info("exiting");
}

int
main(int argc, char *argv[], char *envp[])
{
	int	*lfds, upfd, wk = 0;

	upfd = upgrade_fd();
	upgraded = upfd != -1;
	configure(argc, argv, envp);
	if (srv.cfg.check)
		check_only();
	lfds = open_all(upfd);
	/* -f: an implicit master, so that SIGHUP can reload. */
	if (config_master(&srv.cfg))
		wk = fork_workers(lfds, upfd);
	main_loop();
	start_threads(lfds, wk);
	say_ready();
	tk_loop_run(srv.l, 0);
	shut_down();
	return 0;
}
