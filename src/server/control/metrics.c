/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --metrics ADDR:PORT: Prometheus text exposition (format 0.0.4, written
 * by promtext.c) at /metrics and the statistics lines at /stats, over
 * http.c, on the main thread's loop, or with --workers on the master's.
 *
 * The counters stay where the data path keeps them, per worker thread
 * with no atomics (struct stats); a request starts a stats round
 * (stats.c: a message to each thread, which copies its own counters)
 * and is answered when the round is in.  Under --workers the master
 * asks each worker process over a socket pair (master.c); a worker's
 * main thread runs the round and sends its whole struct msnap back in
 * one datagram.  The master keeps the last figures of every worker and
 * adds a dead worker's counters to its slot's base, so no counter of
 * the sum goes backwards when a worker is restarted.
 *
 * Under --workers every series is one worker's, labelled by its slot
 * (worker="N"), and there is no sum beside them: a query sums them.
 * process_* are each process's own, the master's too (promtext.c).
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/cli.h"
#include "tenk/log.h"
#include "tenk/sock.h"
#include "tenk/timer.h"
#include "../tenkd.h"

#define CTYPE_PROM	"text/plain; version=0.0.4; charset=utf-8"

static struct tk_addr	 maddr;		/* --metrics, as bound */
static int		 mfd = -1;	/* its listener */
static struct http_srv	 hs;
static int		 serving;	/* hs started */
static int		 child_fd = -1;	/* under a master: our socket */
static struct tk_io	 child_io;
static struct tk_timer	 child_timer;	/* the figures every second */
static int		 child_asked;	/* the master waits for a snapshot */
static struct msnap	 local;		/* this process, last round */

/* Set by metrics_answer() while the waiting clients are answered. */
static const struct msnap *ans;
static int		 ans_n;
static int		 ans_workers;

static void	on_request(struct http_srv *, struct http_client *,
		    const char *);
static void	child_read(struct tk_loop *, struct tk_io *);
static void	child_tick(struct tk_loop *, struct tk_timer *);
static void	metrics_stats_text(FILE *, const struct msnap *, int);

/* Whether a is a loopback address (127/8, ::1, ::ffff:127/104). */
static int
loopback(const struct tk_addr *a)
{
	const struct sockaddr_in	*sin;
	const struct sockaddr_in6	*sin6;

	if (a->ss.ss_family == AF_INET) {
		sin = (const struct sockaddr_in *)&a->ss;
		return (ntohl(sin->sin_addr.s_addr) >> 24) == 127;
	}
	sin6 = (const struct sockaddr_in6 *)&a->ss;
	return IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr) ||
	    (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr) &&
	    sin6->sin6_addr.s6_addr[12] == 127);
}

/*
 * Bind the metrics listener, before the data listeners, so that its
 * line comes first.  Without SO_REUSEPORT: one owner.  Returns 0 (also
 * when --metrics was not given), or -1 with errno set.  Start-up.
 */
int
metrics_open(void)
{
	struct tk_addr	 a;
	char		 name[TK_ADDRSTRLEN];

	if (!srv.cfg.metrics_on)
		return 0;
	/* Again (metrics_again): on the port it had, port 0 too. */
	if (maddr.len == 0)
		maddr = srv.cfg.metrics;
	if ((mfd = tk_sock_listen(&maddr, srv.cfg.backlog, TK_SOCK_V6ONLY)) ==
	    -1)
		return -1;
	if (tk_addr_port(&maddr) == 0 && tk_sock_local(mfd, &a) == 0)
		tk_addr_set_port(&maddr, tk_addr_port(&a));
	tk_addr_fmt(&maddr, name, sizeof(name));
	/*
	 * The figures say how busy the server is and to whom it proxies:
	 * off loopback only when asked for by address, and said once.
	 */
	if (!loopback(&maddr))
		log_warnx("metrics on %s, not a loopback address: anyone "
		    "who can reach it can read them", name);
	log_banner("metrics on http://%s/metrics", name);
	return 0;
}

/*
 * On loop l (the main thread's, or the master's): serve the metrics,
 * or in a worker under a master, answer the master's requests.
 */
void
metrics_start(struct tk_loop *l)
{
	if (child_fd != -1) {
		tk_io_init(&child_io, child_fd, child_read, NULL);
		if (tk_io_start(l, &child_io, TK_EV_READ) == -1)
			fatal("metrics: watching the master's socket");
		tk_timer_init(&child_timer, child_tick, NULL);
		(void)tk_timer_arm(l, &child_timer, TK_SEC);
	}
	if (mfd == -1)
		return;
	if (http_start(&hs, l, mfd, on_request, srv.cfg.metrics_clients) ==
	    -1)
		fatal("metrics listener");
	serving = 1;
}

/*
 * Under a master, send the figures unasked once a second too: what a
 * worker counted after its last report dies with it, and this bounds
 * that to a second.  A round a second costs each thread one message.
 */
static void
child_tick(struct tk_loop *l, struct tk_timer *t)
{
	if (srv.stopping)
		return;
	child_asked = 1;
	stats_request();
	(void)tk_timer_arm(l, t, TK_SEC);
}

/* Close the listener and its clients; forget: without the loop. */
static void
serve_close(int forget)
{
	if (serving)
		http_stop(&hs, forget);
	else if (mfd != -1)
		close(mfd);
	serving = 0;
	mfd = -1;
}

/* Close the listener and its clients, at exit.  Owner of its loop. */
void
metrics_stop(void)
{
	if (child_fd != -1)
		tk_timer_cancel(srv.l, &child_timer);
	serve_close(0);
}

/*
 * In a worker forked by the master: close what the master serves with
 * (the listener, its clients) without touching the master's loop.
 */
void
metrics_forget(void)
{
	serve_close(1);
}

/*
 * In a worker process under a master: fd is our end of the socket
 * pair (-1: none); each byte read from it asks for a snapshot, once
 * metrics_start() watches it.
 */
void
metrics_child_fd(int fd)
{
	child_fd = fd;
}

static void
child_read(struct tk_loop *l, struct tk_io *io)
{
	char	buf[64];
	ssize_t	n;

	while ((n = chan_recv(io, buf, sizeof(buf), 0)) > 0)
		child_asked = 1;
	/* The master is gone: PR_SET_PDEATHSIG does the rest. */
	if (n == -1)
		tk_io_stop(l, io);
	if (child_asked && !srv.stopping)
		stats_request();
}

/*
 * The descriptors the metrics listener may hold at once: itself, its
 * clients, and one it refuses (http.c); 0 without --metrics.  main.c
 * keeps them out of --max-conns rather than counting them in it: a
 * scraper then never takes a unit from the data path, nor does a full
 * data path leave the metrics without a descriptor, when they are
 * wanted most.  Under a master only the master serves them, and its
 * workers keep no room for them.
 */
uint64_t
metrics_fds(void)
{
	return srv.cfg.metrics_on ? (uint64_t)srv.cfg.metrics_clients + 2 : 0;
}

/* This process's own figures (process_*) into ms, from /proc.  Any thread. */
void
metrics_self(struct msnap *ms)
{
	struct rlimit	 rl;
	struct dirent	*de;
	DIR		*d;
	FILE		*f;
	char		 buf[1024], *p;
	unsigned long	 ut, st;
	unsigned long long start = 0, btime = 0;
	long		 rss, tck = sysconf(_SC_CLK_TCK);
	long		 pg = sysconf(_SC_PAGESIZE);

	ms->pid = (int32_t)getpid();
	if ((f = fopen("/proc/self/stat", "r")) != NULL) {
		/* After the ")" of the command, which may hold spaces. */
		if (fgets(buf, sizeof(buf), f) != NULL &&
		    (p = strrchr(buf, ')')) != NULL &&
		    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
		    "%*u %lu %lu %*d %*d %*d %*d %*d %*d %llu %*u %ld", &ut,
		    &st, &start, &rss) == 4) {
			ms->cpu = (double)(ut + st) / (double)tck;
			ms->rss = (uint64_t)rss * (uint64_t)pg;
		}
		fclose(f);
	}
	if ((f = fopen("/proc/stat", "r")) != NULL) {
		while (fgets(buf, sizeof(buf), f) != NULL)
			if (sscanf(buf, "btime %llu", &btime) == 1)
				break;
		fclose(f);
	}
	ms->start = (double)btime + (double)start / (double)tck;
	ms->fds = 0;
	if ((d = opendir("/proc/self/fd")) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (de->d_name[0] != '.')
				ms->fds++;
		closedir(d);
		ms->fds--;		/* opendir's own */
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		ms->maxfds = rl.rlim_cur;
}

/* A round is in (stats.c): answer who waits for it.  Main thread. */
void
metrics_collected(void)
{
	ssize_t	n;

	memset(&local, 0, sizeof(local));
	stats_fill(&local);
	upstream_metrics(&local);
	metrics_self(&local);
	if (child_fd != -1 && child_asked) {
		child_asked = 0;
		n = send(child_fd, &local, sizeof(local), MSG_NOSIGNAL |
		    MSG_DONTWAIT);
		if (n == -1 && errno != EAGAIN)
			log_warn("metrics: sending to the master");
	}
	if (serving)
		metrics_answer(&local, 1, 0);
}

/*
 * The figures are in: n snapshots, one per worker process when workers
 * (the master), else this process's.  Answers every waiting client.
 */
void
metrics_answer(const struct msnap *s, int n, int workers)
{
	ans = s;
	ans_n = n;
	ans_workers = workers;
	http_answer(&hs);
	ans = NULL;
}

static void
on_request(struct http_srv *h, struct http_client *c, const char *path)
{
	FILE	*f;
	char	*buf = NULL;
	size_t	 len = 0;
	int	 prom;

	(void)h;
	if (strcmp(path, "/metrics") == 0)
		prom = 1;
	else if (strcmp(path, "/stats") == 0)
		prom = 0;
	else {
		HTTP_TEXT(c, 404, "not found: try /metrics or /stats\n");
		return;
	}
	if (ans == NULL && srv.stopping) {
		HTTP_TEXT(c, 503, "stopping\n");
		return;
	}
	if (ans == NULL) {
		/* Ask for fresh figures; we are called again with them. */
		if (master_role() == 1)
			master_collect();
		else
			stats_request();
		return;
	}
	if ((f = open_memstream(&buf, &len)) == NULL) {
		HTTP_TEXT(c, 503, "out of memory\n");
		return;
	}
	if (prom) {
		promtext_write(f, ans, ans_n, ans_workers);
		/* The serving process's own: the master's, as process_*. */
		fprintf(f, "# HELP tenkd_metrics_refused_total Clients of this "
		    "listener closed at once, past --metrics-max-clients.\n"
		    "# TYPE tenkd_metrics_refused_total counter\n"
		    "tenkd_metrics_refused_total%s %llu\n",
		    ans_workers ? "{worker=\"master\"}" : "",
		    (unsigned long long)hs.refused);
	} else {
		metrics_stats_text(f, ans, ans_workers ? ans_n : 0);
		fprintf(f, "stats metrics: clients %d max %d refused %llu\n",
		    hs.nclients, hs.max, (unsigned long long)hs.refused);
	}
	if (fclose(f) != 0) {
		free(buf);
		HTTP_TEXT(c, 503, "out of memory\n");
		return;
	}
	http_reply(c, 200, prom ? CTYPE_PROM : "text/plain; charset=utf-8",
	    buf, len);
	free(buf);
}

/* /stats: the lines of each process, under a heading per worker. */
static void
metrics_stats_text(FILE *f, const struct msnap *s, int workers)
{
	int	i;

	if (workers == 0) {
		fwrite(s->text, 1, s->textlen, f);
		return;
	}
	for (i = 0; i < workers; i++) {
		if (s[i].pid == 0) {
			fprintf(f, "worker %d: no figures\n", i);
			continue;
		}
		fprintf(f, "worker %d: pid %d\n", i, (int)s[i].pid);
		fwrite(s[i].text, 1, s[i].textlen, f);
	}
}
