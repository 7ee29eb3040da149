/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tenkd: start-up (limits, listeners, privileges, pidfile, workers) on
 * the configuration config.c builds from the command line and its -f
 * file, and the main thread, which owns every signal and steers the
 * workers with posted messages: SIGTERM/SIGINT drain, a second one or
 * the drain deadline forces, SIGUSR1 and SIGHUP reopen the logs
 * (reopen.c; a reload is the master's, master.c, which runs with
 * --workers and whenever -f is given); statistics are on the metrics
 * listener (metrics.c).  Serving is in worker.c, conn.c and the
 * protocol files; the main thread's loop also runs upstream.c's health
 * checks.  An upgrade runs the binary again with the command line as
 * typed, kept by config.c, and the binary's path kept here.
 */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
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
#include "tenkd.h"

#define DEFAULT_LISTEN		"127.0.0.1:7777"

struct server	 srv;

static struct cmdline	 cmdline;		/* as read at start */
static char		 self_path[PATH_MAX];
static int		 upgraded;	/* started by an old master's SIGUSR2 */

static noreturn void	usage(int);
static void	set_limits(void);
static int	*open_listeners(void);
static int	*inherit_listeners(void);
static void	probe_owner(const struct tk_addr *);
static void	check_path(const char *, const char *);
static void	drop_privileges(void);
static uint64_t	sessions_now(void);
static void	on_signal(struct tk_loop *, int, void *);
static void	drain_deadline(struct tk_loop *, struct tk_timer *);
static void	force_all(void);
static void	worker_done(struct tk_loop *, struct tk_msg *);
static void	save_self(const char *);
static int	upgrade_fd(void);

static noreturn void
usage(int full)
{
	FILE	*f = full ? stdout : stderr;

	fprintf(f, "usage: tenkd echo [-l addr:port] [-t threads] "
	    "[-b backend] [--max-conns n]\n"
	    "\t[--backlog n] [--idle-timeout dur] [--drain-timeout dur]\n"
	    "\t[--buffer-limit size] [--max-memory size] [--log-level level]\n"
	    "\t[--syslog] [--syslog-facility name] [--access-log path]\n"
	    "\t[--access-log-format text|json] [--access-log-buffer size]\n"
	    "\t[--ring-buffers n] [--pidfile path] [--user user] "
	    "[--group group]\n"
	    "\t[--workers n] [--ready-timeout dur] [--metrics addr:port]\n"
	    "\t[--metrics-max-clients n] [--accept-proxy] "
	    "[--accept-proxy-timeout dur]\n"
	    "\t[--accept-proxy-from cidr,...] [--check] [-f file]\n"
	    "       tenkd proxy -u host:port[,weight=n][,backup][,name=name] "
	    "...\n"
	    "\t[--balance rr|leastconn|hash|source] [--connect-timeout dur]\n"
	    "\t[--hash-key source|source-port]\n"
	    "\t[--fin-timeout dur] [--retries n] [--fail-max n]\n"
	    "\t[--fail-timeout dur] [--max-conns-per-ip n] "
	    "[--send-proxy v1|v2]\n"
	    "\t[--source addr,...] [--splice auto|off] [--splice-pipes n]\n"
	    "\t[--fastpath sockmap|off]\n"
	    "\t[--check-interval dur] [--check-rise n] [--check-fall n]\n"
	    "\t[--check-send text] [--check-expect text] "
	    "[--check-timeout dur]\n"
	    "\t[echo's options]\n"
	    "       tenkd --help | --version\n");
	if (!full)
		exit(2);
	fprintf(f, "\n"
	    "  -l, --listen ADDR:PORT   listen address, repeatable "
	    "(default " DEFAULT_LISTEN ")\n"
	    "  -t, --threads N          worker threads (default: online "
	    "CPUs)\n"
	    "  -b, --backend NAME       epoll, poll, select or io_uring; "
	    "\"list\" prints them\n"
	    "      --max-conns N        connections per process, 0 = up "
	    "to the fd limit\n"
	    "      --backlog N          listen backlog (default: "
	    "net.core.somaxconn)\n"
	    "      --idle-timeout DUR   close idle connections (default "
	    "300s, 0 = never)\n"
	    "      --drain-timeout DUR  force-close after SIGTERM "
	    "(default 10s)\n"
	    "      --buffer-limit SIZE  queued bytes per connection "
	    "(default 64k)\n"
	    "      --ring-buffers N     io_uring: 16k receive buffers per "
	    "thread (default 256)\n"
	    "      --max-memory SIZE    queued bytes in all, 0 = no cap "
	    "(default:\n"
	    "                           half the cgroup limit or physical "
	    "memory)\n"
	    "      --log-level LEVEL    error, warn, info or debug "
	    "(default info)\n"
	    "      --syslog             log to syslog instead of stderr\n"
	    "      --syslog-facility NAME  daemon (default), local0-7, ...; "
	    "implies --syslog\n"
	    "      --access-log PATH    one line per connection at close\n"
	    "      --access-log-format text|json  its lines (default text)\n"
	    "      --access-log-buffer SIZE  records waiting to be written; "
	    "past it\n"
	    "                           they are dropped, counted (default "
	    "4m)\n"
	    "      --pidfile PATH       write and lock a pid file\n"
	    "      --user USER          drop to this user after binding\n"
	    "      --group GROUP        drop to this group after binding\n"
	    "      --workers N          worker processes under a master "
	    "(default 1: no\n"
	    "                           master, unless -f)\n"
	    "      --ready-timeout DUR  for a reload's workers or an "
	    "upgrade's master to\n"
	    "                           start (default 30s)\n"
	    "      --metrics ADDR:PORT  serve /metrics (Prometheus) and "
	    "/stats over HTTP\n"
	    "      --metrics-max-clients N  its clients at once; more are "
	    "refused (default\n"
	    "                           16)\n"
	    "      --accept-proxy       read a PROXY protocol header (v1 "
	    "or v2) first;\n"
	    "                           its client is the peer\n"
	    "      --accept-proxy-timeout DUR  for the whole header "
	    "(default 5s)\n"
	    "      --accept-proxy-from CIDR,...  only from these peers "
	    "(implies\n"
	    "                           --accept-proxy; others are "
	    "closed)\n"
	    "      --check              check the configuration and exit\n"
	    "  -f, --config FILE        options from FILE, one a line; "
	    "the command\n"
	    "                           line's take precedence\n"
	    "proxy:\n"
	    "  -u, --upstream H:P[,weight=N][,backup][,name=NAME]  an "
	    "upstream,\n"
	    "                           repeatable; a backup only while "
	    "every other one\n"
	    "                           is down; NAME for --balance hash "
	    "(default H:P)\n"
	    "      --balance METHOD     rr (weighted, default), leastconn "
	    "or hash\n"
	    "                           (consistent; source is the same)\n"
	    "      --hash-key KEY       hash: source (address, default) or "
	    "source-port\n"
	    "      --connect-timeout DUR  per connect attempt (default 5s)\n"
	    "      --fin-timeout DUR    close a silent half-closed session "
	    "(default 30s)\n"
	    "      --retries N          connect attempts after the first "
	    "(default 2)\n"
	    "      --fail-max N         failed connects in a row to take "
	    "one out (default 3)\n"
	    "      --fail-timeout DUR   for how long (default 10s)\n"
	    "      --check-interval DUR  connect to each upstream this often "
	    "(default 0: off)\n"
	    "      --check-fall N       failed checks in a row to take one "
	    "out (default 3)\n"
	    "      --check-rise N       passed checks in a row to bring it "
	    "back (default 2)\n"
	    "      --check-send TEXT    after connecting, send TEXT and "
	    "CRLF\n"
	    "      --check-expect TEXT  the reply must begin with TEXT\n"
	    "      --check-timeout DUR  for a whole check (default: the "
	    "interval, or\n"
	    "                           --connect-timeout if shorter)\n"
	    "      --max-conns-per-ip N  sessions per client address "
	    "(default 0: no cap)\n"
	    "      --send-proxy VER     PROXY protocol header v1 or v2\n"
	    "      --source LIST        local addresses for upstream "
	    "connects, in turn\n"
	    "      --splice auto|off    move bulk streams with splice(2) "
	    "(default auto)\n"
	    "      --splice-pipes N     pipes per thread for it (default "
	    "64)\n"
	    "      --fastpath sockmap|off  let the kernel forward established "
	    "sessions\n"
	    "                           (BPF sockmap; default off)\n"
	    "  (--buffer-limit is per direction in proxy mode, default 16k;\n"
	    "   --max-conns counts both sockets of a session)\n"
	    "  -h, --help               this help\n"
	    "  -V, --version            print the version\n");
	exit(0);
}

/*
 * Raise the soft RLIMIT_NOFILE to the hard one and derive how many
 * connections fit: the limit minus the descriptors tenkd itself holds
 * (stdio, listeners, each loop's backend and wake-up fds, the signal
 * pipe, logs, pidfile) and a small slack.
 */
static void
set_limits(void)
{
	struct config	*cfg = &srv.cfg;
	uint64_t	 reserve, fit;

	if (tk_nofile_raise(&srv.nofile) == -1)
		log_warn("RLIMIT_NOFILE %llu not raised to the hard limit",
		    (unsigned long long)srv.nofile);
	reserve = 3 + 16 + (uint64_t)cfg->threads * (cfg->nlisten + 3) +
	    (cfg->access_log != NULL) + (cfg->pidfile != NULL);
	/* Under a master, the master serves the metrics, not a worker. */
	if (!config_master(cfg))
		reserve += metrics_fds();
	/* Two descriptors a splice pipe; pipes take at most a quarter. */
	srv.splice = cfg->splice;
	srv.splice_pipes = cfg->splice_pipes;
	if (srv.splice) {
		fit = srv.nofile / 4 / (2 * (uint64_t)cfg->threads);
		if ((uint64_t)srv.splice_pipes > fit) {
			log_warnx("--splice-pipes %d does not fit "
			    "RLIMIT_NOFILE %llu: using %llu", srv.splice_pipes,
			    (unsigned long long)srv.nofile,
			    (unsigned long long)fit);
			srv.splice_pipes = (int)fit;
			if (fit == 0)
				srv.splice = 0;
		}
		reserve += (uint64_t)cfg->threads * srv.splice_pipes * 2;
	}
	fit = srv.nofile > reserve ? srv.nofile - reserve : 1;
	if (cfg->max_conns == -1)
		srv.max_conns = fit;
	else if ((uint64_t)cfg->max_conns > fit) {
		log_warnx("--max-conns %lld does not fit RLIMIT_NOFILE %llu: "
		    "using %llu", cfg->max_conns,
		    (unsigned long long)srv.nofile, (unsigned long long)fit);
		srv.max_conns = fit;
	} else
		srv.max_conns = cfg->max_conns;
	log_info("RLIMIT_NOFILE %llu, max-conns %llu%s",
	    (unsigned long long)srv.nofile,
	    (unsigned long long)srv.max_conns,
	    srv.max_conns == 0 ? " (no cap: up to the fd limit)" : "");
}

/*
 * Exit 1 for a socket that could not be bound to a, errno saying why;
 * on EACCES for a port below net.ipv4.ip_unprivileged_port_start, with
 * the two ways to it.  what names the socket ("listen on", "--metrics").
 */
static noreturn void
bind_fail(const char *what, const struct tk_addr *a)
{
	char	name[TK_ADDRSTRLEN];
	int	low = tk_sock_unpriv_port();

	tk_addr_fmt(a, name, sizeof(name));
	if (errno == EACCES && tk_addr_port(a) > 0 && tk_addr_port(a) < low)
		fatalx("%s %s: %s: a port below %d needs CAP_NET_BIND_SERVICE, "
		    "or let tenkd.socket bind it", what, name, strerror(EACCES),
		    low);
	fatal("%s %s", what, name);
}

/*
 * --check, which binds nothing: exit 1 as bind_fail() if a's port needs
 * a capability this process lacks.
 */
static void
check_bind(const char *what, const struct tk_addr *a)
{
	if (a == NULL || tk_addr_port(a) <= 0 ||
	    tk_addr_port(a) >= tk_sock_unpriv_port() || tk_sock_cap_bind())
		return;
	errno = EACCES;
	bind_fail(what, a);
}

/*
 * Refuse an address another process listens on, before binding our own
 * SO_REUSEPORT sockets there, which the kernel would let us add to a
 * group another tenkd (any process of the same user with SO_REUSEPORT)
 * already has, taking half its connections.  A socket bound without
 * SO_REUSEPORT (not listening, so no client can reach it) conflicts
 * with any listener on the address, ours included, so the probe goes
 * first and is closed before our binds.  Two tenkd started in the same
 * microsecond could both pass; reading /proc/net/tcp would have the
 * same window and more parsing, and the kernel offers no atomic "join
 * only a group of my own".  Port 0 needs no probe: the kernel picks a
 * free port.  Exits 1 with "address in use".
 *
 * The probe's bind also fails on connections that hold the port, such
 * as those in TIME_WAIT after a server that closed first stopped, when
 * they were bound without SO_REUSEADDR (or with SO_REUSEPORT alone): not
 * an owner, and our own binds (SO_REUSEADDR and SO_REUSEPORT) may well
 * pass them.  So a refused probe asks the kernel whether a listener is
 * there (tk_sock_listener), and only a listener, or no answer, is "in
 * use by another process"; otherwise our binds decide.
 */
static void
probe_owner(const struct tk_addr *a)
{
	char	name[TK_ADDRSTRLEN];
	int	fd, one = 1, err;

	if (tk_addr_port(a) == 0)
		return;
	if ((fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) ==
	    -1)
		fatal("socket");
	/* SO_REUSEADDR: connections in TIME_WAIT are no owner. */
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (a->ss.ss_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof(one));
	if (bind(fd, (const struct sockaddr *)&a->ss, a->len) == -1) {
		err = errno;
		close(fd);
		tk_addr_fmt(a, name, sizeof(name));
		if (err == EADDRINUSE && tk_sock_listener(a) == 0) {
			log_debug("%s: %s held, by no listener", __func__,
			    name);
			return;
		}
		errno = err;
		if (err == EADDRINUSE)
			fatalx("listen on %s: address in use (by another "
			    "process)", name);
		bind_fail("listen on", a);
	}
	close(fd);
}

/*
 * The sockets systemd passed (socket activation) as our listeners, in
 * place of --listen: each thread of each worker gets its own descriptor
 * of the one socket (a dup), as it would get its own socket otherwise.
 * An upgrade (master.c) passes the same way every socket the old master
 * held, several per address: they are grouped by address and kept as
 * they were, one a thread, so that their backlogs go on being served.
 * If the threads or workers changed, a socket left over is closed (the
 * connections in its backlog are lost, and said so) and a missing one
 * is a dup.  Returns lfds, or NULL when systemd passed none.
 */
static int *
inherit_listeners(void)
{
	struct config	*cfg = &srv.cfg;
	struct tk_addr	 a;
	char		**names, name[TK_ADDRSTRLEN];
	int		*fds, *grp, *lfds, n, i, j, t, k, per, lost = 0;

	if ((n = systemd_listen_fds(&fds, &names)) == 0)
		return NULL;
	if (cfg->listen_given && strcmp(names[0], UPGRADE_FDNAME) != 0)
		log_warnx("--listen ignored: listening on the %d socket%s "
		    "systemd passed", n, n == 1 ? "" : "s");
	srv.nlisten = 0;
	grp = xcalloc(n, sizeof(*grp));
	for (i = 0; i < n; i++) {
		if (tk_sock_local(fds[i], &a) == -1)
			fatal("socket %d from systemd", fds[i]);
		for (j = 0; j < srv.nlisten; j++)
			if (tk_addr_eq(&a, &srv.listen[j]))
				break;
		if (j == srv.nlisten) {
			if (j == MAXLISTEN)
				fatalx("sockets from systemd: more than %d "
				    "addresses", MAXLISTEN);
			srv.listen[srv.nlisten++] = a;
		}
		grp[i] = j;
	}
	per = LISTEN_FDS(cfg);
	lfds = xcalloc((size_t)srv.nlisten * per, sizeof(*lfds));
	for (j = 0; j < srv.nlisten; j++) {
		k = 0;
		for (i = 0; i < n; i++) {
			if (grp[i] != j)
				continue;
			if (k < per)
				lfds[j * per + k++] = fds[i];
			else {
				close(fds[i]);
				lost++;
			}
		}
		for (t = k; t < per; t++)
			if ((lfds[j * per + t] = fcntl(lfds[j * per + t % k],
			    F_DUPFD_CLOEXEC, 0)) == -1)
				fatal("dup of a socket from systemd");
		for (i = 0; i < n && grp[i] != j; i++)
			;
		tk_addr_fmt(&srv.listen[j], name, sizeof(name));
		if (strcmp(names[i], UPGRADE_FDNAME) == 0)
			log_banner("listening on %s (%d socket%s from the old "
			    "master)", name, k, k == 1 ? "" : "s");
		else
			log_banner("listening on %s (from systemd%s%s)", name,
			    names[i][0] != '\0' ? ": " : "", names[i]);
	}
	if (lost > 0)
		log_warnx("%d passed socket%s closed, fewer threads or "
		    "workers now: connections waiting in %s backlog are lost",
		    lost, lost == 1 ? "" : "s", lost == 1 ? "its" : "their");
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(fds);
	free(grp);
	return lfds;
}

/*
 * Bind every address once per thread (of every --workers process) with
 * SO_REUSEPORT; lfds is [address][worker][thread].  Port 0 is bound
 * once, read back and reused for the other threads, so all threads share
 * one port per address, and
 * "listening on ADDR:PORT" is printed once per address (tests read it).
 * Sockets from systemd take the place of all of it.  Returns lfds.
 */
static int *
open_listeners(void)
{
	struct config	*cfg = &srv.cfg;
	struct tk_addr	 a;
	char		 name[TK_ADDRSTRLEN];
	int		 i, t, fd, somax, backlog, *lfds;

	if ((lfds = inherit_listeners()) != NULL)
		return lfds;
	srv.nlisten = cfg->nlisten;
	memcpy(srv.listen, cfg->listen, sizeof(srv.listen));
	lfds = xcalloc((size_t)srv.nlisten * LISTEN_FDS(cfg), sizeof(*lfds));
	somax = tk_sock_somaxconn();
	backlog = cfg->backlog == 0 || cfg->backlog > somax ? somax :
	    cfg->backlog;
	if (cfg->backlog > somax)
		log_info("backlog %d capped by net.core.somaxconn to %d",
		    cfg->backlog, somax);
	else
		log_info("backlog %d", backlog);
	for (i = 0; i < srv.nlisten; i++) {
		probe_owner(&srv.listen[i]);
		for (t = 0; t < LISTEN_FDS(cfg); t++) {
			fd = tk_sock_listen(&srv.listen[i], backlog,
			    TK_SOCK_REUSEPORT | TK_SOCK_V6ONLY);
			if (fd == -1 && errno == EADDRINUSE)
				fatalx("listen on %s: address in use, though "
				    "no listener holds it: by connections (in "
				    "TIME_WAIT, for up to a minute) of a "
				    "server that set neither SO_REUSEADDR nor "
				    "SO_REUSEPORT", tk_addr_fmt(
				    &srv.listen[i], name, sizeof(name)));
			if (fd == -1)
				bind_fail("listen on", &srv.listen[i]);
			if (t == 0 && tk_addr_port(&srv.listen[i]) == 0) {
				if (tk_sock_local(fd, &a) == -1)
					fatal("getsockname");
				tk_addr_set_port(&srv.listen[i],
				    tk_addr_port(&a));
			}
			lfds[i * LISTEN_FDS(cfg) + t] = fd;
		}
		tk_addr_fmt(&srv.listen[i], name, sizeof(name));
		log_banner("listening on %s", name);
	}
	return lfds;
}

/*
 * --check: whether path (NULL: not asked for) can be opened for writing
 * as tenkd will open it (safefile_check), before any privilege is
 * dropped.  Dies with one line otherwise.
 */
static void
check_path(const char *what, const char *path)
{
	struct fowner	o;
	char		err[256];

	if (path == NULL)
		return;
	safefile_owner(&srv.cfg, &o);
	if (safefile_check(path, &o, err, sizeof(err)) == -1)
		fatalx("%s %s: %s", what, path, err);
}

/*
 * --user/--group, after binding: supplementary groups (only the target
 * group: none of root's stay), then the group, then the user (the other
 * way round the group could no longer be changed), then check that none
 * can be taken back.  PR_SET_NO_NEW_PRIVS (Linux 3.5) last: no execve(2)
 * of a set-user-ID or file-capability binary can give any back either.
 */
static void
drop_privileges(void)
{
	struct config	*cfg = &srv.cfg;
	uid_t		 ru, eu, su;
	gid_t		 rg, eg, sg;

	if (cfg->user == NULL && cfg->group == NULL)
		return;
	/*
	 * An upgrade's new master runs as the old one did after dropping
	 * them, with no way back: nothing left to drop.
	 */
	if (upgraded && getuid() != 0 && geteuid() != 0 &&
	    (cfg->user == NULL || getuid() == cfg->uid) &&
	    getgid() == cfg->gid) {
		log_info("running as user %s group %u (as the old master)",
		    cfg->user != NULL ? cfg->user : "(unchanged)",
		    (unsigned int)cfg->gid);
		return;
	}
	if (setgroups(1, &cfg->gid) == -1)
		fatal("setgroups");
	if (setresgid(cfg->gid, cfg->gid, cfg->gid) == -1)
		fatal("setresgid %u", (unsigned int)cfg->gid);
	if (cfg->user != NULL && setresuid(cfg->uid, cfg->uid, cfg->uid) == -1)
		fatal("setresuid %u", (unsigned int)cfg->uid);
	if (getresgid(&rg, &eg, &sg) == -1 || rg != cfg->gid ||
	    eg != cfg->gid || sg != cfg->gid)
		fatalx("group %u was not dropped", (unsigned int)cfg->gid);
	if (cfg->user != NULL) {
		if (getresuid(&ru, &eu, &su) == -1 || ru != cfg->uid ||
		    eu != cfg->uid || su != cfg->uid)
			fatalx("user %u was not dropped",
			    (unsigned int)cfg->uid);
		if (cfg->uid != 0 && setuid(0) != -1)
			fatalx("could regain root after dropping it");
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		fatal("prctl PR_SET_NO_NEW_PRIVS");
	log_info("running as user %s group %u",
	    cfg->user != NULL ? cfg->user : "(unchanged)",
	    (unsigned int)cfg->gid);
}

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
	srv.fastpath = srv.fastpath && srv.cfg.fastpath;
	set_limits();
	mem_init();
	if (srv.access_fd != -1)
		(void)reopen_logs();
}

int
main(int argc, char *argv[], char *envp[])
{
	struct config		*cfg = &srv.cfg;
	struct tk_cli_err	 e;
	struct fowner		 owner;
	struct tk_loop		*l;
	sigset_t		 all, old;
	int			*lfds, i, error, upfd, wk = 0, fresh = 0;
	char			 name[TK_ADDRSTRLEN], idle[32], drain[32];

	save_self(argv[0]);
	cmdline_read(&cmdline, argc, argv);
	setproctitle_init(argc, argv, envp);
	srv.access_fd = -1;
	if (cmdline.help)
		usage(1);
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
	srv.proto = worker_proto(cfg->mode);
	upfd = upgrade_fd();
	upgraded = upfd != -1;
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
	set_limits();
	mem_init();

	if (cfg->check) {
		if ((l = tk_loop_new(cfg->backend, 0)) == NULL)
			fatal("backend %s", cfg->backend != NULL ?
			    cfg->backend : "default");
		check_path("pidfile", cfg->pidfile);
		check_path("access log", cfg->access_log);
		/* Sockets from systemd take the place of --listen. */
		for (i = 0; getenv("LISTEN_FDS") == NULL && i < cfg->nlisten;
		    i++)
			check_bind("listen on", &cfg->listen[i]);
		if (cfg->metrics_on)
			check_bind("--metrics", &cfg->metrics);
		log_hold(0);
		log_info("configuration OK: %s, %d thread%s, backend %s, "
		    "%d address%s", cfg->mode, cfg->threads,
		    cfg->threads == 1 ? "" : "s", tk_loop_backend(l),
		    cfg->nlisten, cfg->nlisten > 1 ? "es" : "");
		tk_loop_free(l);
		return 0;
	}

	safefile_owner(cfg, &owner);
	pidfile_start(cfg->pidfile, &owner, upfd != -1);
	if (upgraded)
		reopen_adopt();
	conn_access_open();
	if (metrics_open() == -1)
		bind_fail("--metrics", &cfg->metrics);
	lfds = open_listeners();
	reopen_init();
	pxfast_load();
	drop_privileges();
	if (pidfile_put(getpid()) == -1)
		fatal("pidfile %s", cfg->pidfile);
	log_hold(0);
	/* -f: an implicit master, so that SIGHUP can reload. */
	if (config_master(cfg)) {
		/* The master returns -1 when its workers are gone. */
		if ((wk = master_run(&cmdline, self_path, lfds,
		    srv.nlisten * LISTEN_FDS(cfg), upfd, &fresh)) == -1) {
			for (i = 0; i < srv.nlisten * LISTEN_FDS(cfg); i++)
				close(lfds[i]);
			free(lfds);
			pidfile_end(1);
			return 0;
		}
		pidfile_end(0);
		if (fresh)
			config_apply();
		/* Keep this worker's slice of the listeners only. */
		for (i = 0; i < srv.nlisten * LISTEN_FDS(cfg); i++)
			if (i % LISTEN_FDS(cfg) / cfg->threads != wk)
				close(lfds[i]);
	}

	if ((srv.l = tk_loop_new(cfg->backend, 0)) == NULL)
		fatal("main loop");
	tk_timer_init(&srv.drain_timer, drain_deadline, NULL);
	metrics_start(srv.l);
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

	srv.nworkers = cfg->threads;
	srv.workers = xcalloc(srv.nworkers, sizeof(*srv.workers));
	for (i = 0; i < srv.nworkers; i++) {
		int	 k, mine[MAXLISTEN];

		for (k = 0; k < srv.nlisten; k++)
			mine[k] = lfds[k * LISTEN_FDS(cfg) +
			    wk * cfg->threads + i];
		worker_init(&srv.workers[i], i, mine);
		srv.workers[i].m_done.fn = worker_done;
	}
	free(lfds);

	alog_start();
	/* Threads start with every signal blocked; main unblocks after. */
	sigfillset(&all);
	if ((error = pthread_sigmask(SIG_BLOCK, &all, &old)) != 0) {
		errno = error;
		fatal("pthread_sigmask");
	}
	for (i = 0; i < srv.nworkers; i++)
		worker_start(&srv.workers[i]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	master_worker_ready();

	tk_addr_fmt(&srv.listen[0], name, sizeof(name));
	setproctitle("%s: %d thread%s, %s, %s%s", cfg->mode, srv.nworkers,
	    srv.nworkers == 1 ? "" : "s", tk_loop_backend(srv.workers[0].l),
	    name, srv.nlisten > 1 ? " ..." : "");
	log_info("%s: %d thread%s, backend %s%s, idle timeout %s, buffer "
	    "limit %zu, drain timeout %s", cfg->mode, srv.nworkers,
	    srv.nworkers == 1 ? "" : "s",
	    tk_loop_backend(srv.workers[0].l), srv.workers[0].cq ?
	    " (completions)" : "", cfg->idle_timeout == 0 ?
	    "off" : tk_fmt_duration(cfg->idle_timeout, idle, sizeof(idle)),
	    cfg->buffer_limit, tk_fmt_duration(cfg->drain_timeout, drain,
	    sizeof(drain)));

	systemd_notify("READY=1\nSTATUS=%s: %d thread%s, %s%s", cfg->mode,
	    srv.nworkers, srv.nworkers == 1 ? "" : "s", name,
	    srv.nlisten > 1 ? " ..." : "");
	tk_loop_run(srv.l, 0);
	/*
	 * Drained.  tk_loop_free() gives the signals their default actions
	 * back, and a SIGUSR1 from logrotate, one the master passes on, or
	 * a second SIGTERM would kill us before the last figures, the
	 * access log and the pidfile are seen to: blocked, they are dropped
	 * at exit.  The worker threads block them all already.
	 */
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
	metrics_stop();
	tk_loop_free(srv.l);
	if (srv.access_fd != -1)
		close(srv.access_fd);
	pidfile_end(1);
	log_info("exiting");
	return 0;
}
