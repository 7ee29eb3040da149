/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The listeners, at start-up: those systemd (or an upgrade's old
 * master) passes, or every --listen address bound once per thread of
 * every worker process with SO_REUSEPORT, after a probe that refuses an
 * address another process listens on; and the one line that says why a
 * bind failed.  What is bound is in srv.listen, as bound (port 0 made a
 * port); srv.cfg keeps the addresses as given.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/log.h"
#include "tenk/sock.h"
#include "tenk/xmalloc.h"
#include "../tenkd.h"

static int	*inherit(void);

/*
 * Exit 1 for a socket that could not be bound to a, errno saying why;
 * on EACCES for a port below net.ipv4.ip_unprivileged_port_start, with
 * the two ways to it.  what names the socket ("listen on", "--metrics").
 */
noreturn void
listen_fail(const char *what, const struct tk_addr *a)
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
 * --check, which binds nothing: exit 1 as listen_fail() if a's port needs
 * a capability this process lacks.
 */
void
listen_check(const char *what, const struct tk_addr *a)
{
	if (a == NULL || tk_addr_port(a) <= 0 ||
	    tk_addr_port(a) >= tk_sock_unpriv_port() || tk_sock_cap_bind())
		return;
	errno = EACCES;
	listen_fail(what, a);
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
		listen_fail("listen on", a);
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
inherit(void)
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
int *
listen_open(void)
{
	struct config	*cfg = &srv.cfg;
	struct tk_addr	 a;
	char		 name[TK_ADDRSTRLEN];
	int		 i, t, fd, somax, backlog, *lfds;

	if ((lfds = inherit()) != NULL)
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
				listen_fail("listen on", &srv.listen[i]);
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
