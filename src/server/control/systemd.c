/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * systemd without libsystemd: the two documented protocols tenkd needs,
 * each a few lines.  sd_notify(3): datagrams such as "READY=1" sent to
 * the AF_UNIX socket named by $NOTIFY_SOCKET (a path, or an abstract
 * name after "@").  sd_listen_fds(3): sockets passed from fd 3 on,
 * $LISTEN_FDS of them, meant for us when $LISTEN_PID is our pid, named
 * by $LISTEN_FDNAMES.  Linking libsystemd for this would add a
 * dependency on every build (and none on the BSDs) for no less code.
 *
 * Only the process systemd started speaks: a worker forked by the
 * master is told to keep quiet (systemd_quiet()), since with the
 * default NotifyAccess=main its datagrams would be dropped anyway.  A
 * master speaks around a reload too (RELOADING=1 with MONOTONIC_USEC=,
 * then READY=1, as Type=notify-reload wants), and an old master hands
 * over to the new one of an upgrade with MAINPID=, which also started
 * through the second protocol: the old master passes its listening
 * sockets as systemd would.
 */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/log.h"
#include "tenk/sock.h"
#include "tenk/xmalloc.h"
#include "../tenkd.h"

#define SD_LISTEN_FDS_START	3
/* Every socket of an upgrade: addresses x threads x workers. */
#define SD_LISTEN_MAX		(MAXLISTEN * MAXTHREADS * MAXWORKERS)

static int	quiet;

/*
 * Send one sd_notify(3) datagram built from fmt ("READY=1\nSTATUS=...").
 * Does nothing without $NOTIFY_SOCKET; a failure is logged at debug
 * level only, as systemd may simply not listen.  Main thread.
 */
void
systemd_notify(const char *fmt, ...)
{
	struct sockaddr_un	 sun;
	const char		*path;
	char			 msg[512];
	socklen_t		 len;
	va_list			 ap;
	int			 fd;

	if (quiet || (path = getenv("NOTIFY_SOCKET")) == NULL ||
	    (path[0] != '/' && path[0] != '@') ||
	    strlen(path) >= sizeof(sun.sun_path))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path));
	if (path[0] == '@')
		sun.sun_path[0] = '\0';		/* abstract namespace */
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
	    strlen(path));
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL,
	    (struct sockaddr *)&sun, len) == -1)
		log_debug("%s: %s: %s", __func__, path, strerror(errno));
	close(fd);
}

/* In a worker forked by the master: notify nothing. */
void
systemd_quiet(void)
{
	quiet = 1;
}

/*
 * The listening sockets systemd (or an old master handing over, in an
 * upgrade: master.c) passed us: *fdsp gets them, *namesp their names
 * from $LISTEN_FDNAMES (or "" when unnamed); the arrays and each string
 * are the caller's to free.  Returns how many, 0 when none are for us
 * (and then nothing to free).  Each must be a listening TCP socket:
 * anything else dies with one line (start-up).  The variables are
 * removed from the environment, so nothing we start sees them as its
 * own.
 */
int
systemd_listen_fds(int **fdsp, char ***namesp)
{
	const char	*s, *errstr;
	char		*fdnames, *p, *name, **names;
	int		*fds;
	long long	 n, pid;
	int		 i, acc, type;
	socklen_t	 len;

	if ((s = getenv("LISTEN_PID")) == NULL)
		return 0;
	pid = strtonum(s, 1, 1LL << 31, &errstr);
	if (errstr != NULL || pid != getpid())
		return 0;
	if ((s = getenv("LISTEN_FDS")) == NULL)
		return 0;
	n = strtonum(s, 0, SD_LISTEN_MAX, &errstr);
	if (errstr != NULL)
		fatalx("LISTEN_FDS %s: %s (at most %d)", s, errstr,
		    SD_LISTEN_MAX);
	if (n == 0)
		return 0;
	fds = xcalloc(n, sizeof(*fds));
	names = xcalloc(n, sizeof(*names));
	fdnames = (s = getenv("LISTEN_FDNAMES")) != NULL ? strdup(s) : NULL;
	p = fdnames;
	for (i = 0; i < n; i++) {
		fds[i] = SD_LISTEN_FDS_START + i;
		name = p != NULL ? strsep(&p, ":") : NULL;
		names[i] = xstrdup(name != NULL ? name : "");
		len = sizeof(acc);
		if (getsockopt(fds[i], SOL_SOCKET, SO_ACCEPTCONN, &acc,
		    &len) == -1 || !acc)
			fatalx("socket %d from systemd (%s): not a listening "
			    "socket", fds[i], names[i]);
		len = sizeof(type);
		if (getsockopt(fds[i], SOL_SOCKET, SO_TYPE, &type, &len) ==
		    -1 || type != SOCK_STREAM)
			fatalx("socket %d from systemd (%s): not a stream "
			    "socket", fds[i], names[i]);
		/* Ours from now on: nonblocking, not inherited by exec. */
		if (fcntl(fds[i], F_SETFD, FD_CLOEXEC) == -1 ||
		    fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) |
		    O_NONBLOCK) == -1)
			fatal("socket %d from systemd", fds[i]);
	}
	free(fdnames);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	*fdsp = fds;
	*namesp = names;
	return (int)n;
}
