/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reopening the log files on SIGUSR1 (logrotate's postrotate), and on
 * SIGHUP where there is nothing to reload (no master, or a master
 * without -f: master.c): syslog gets a fresh connection and the access
 * log is opened again by name, so that a renamed file is left alone and
 * a new one starts.  A reload's new worker reopens its access log too,
 * as a rotation may have come since the master opened it.
 *
 * After --user/--group the process may no longer create a file in the
 * log's directory (root's /var/log/tenkd, a test's mkdtemp).  Three ways
 * out were weighed: opening as the user needs the directory writable by
 * the user, which logrotate setups rarely give; keeping a directory fd
 * does not help, since openat(2) checks the directory's permissions
 * against the caller all the same; keeping CAP_DAC_OVERRIDE would let
 * the server open any file.  So, as OpenBSD's daemons and OpenSSH do, a
 * small process forked before the privileges are dropped stays root and
 * opens one path, the --access-log given at start, on request; it takes
 * no path from the unprivileged side, so all it can give away is a
 * descriptor the server had anyway.  It opens as safefile.c does for
 * the --user: no link the user could have planted, a regular file owned
 * by root or the user, and never a FIFO to block on.
 *
 * A request is a fresh socket pair: one end goes to the opener in one
 * datagram (SCM_RIGHTS), the answer (an errno, the reason as text, and
 * on success the descriptor) comes back on the other.  Worker processes
 * share the opener's socket, and one datagram per request keeps their
 * answers apart.  The opener exits when its socket reaches end of file,
 * that is when the last tenkd process holding it is gone, and not when
 * the master that forked it dies: an upgrade passes its socket to the
 * new master (master.c), which, unprivileged, could not open a log in
 * root's directory otherwise, nor reopen it at the next rotation.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/log.h"
#include "../tenkd.h"

#define OPENER_WAIT	2000		/* ms for an answer */

/* The opener's answer. */
struct answer {
	int	 err;			/* 0, or an errno */
	char	 why[256];		/* what went wrong, for a log */
};

static int	opener = -1;		/* our end; -1: open directly */

static int	access_path(char *, size_t);
static int	reopen_access(char *, size_t);
static int	send_fd(int, const void *, size_t, int);
static int	recv_fd(int, void *, size_t, int *);

/* A message of the bytes at a buffer, with room for one descriptor. */
struct fdmsg {
	struct msghdr	 msg;
	struct iovec	 iov;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	}		 cbuf;
};

static void
fdmsg_init(struct fdmsg *m, void *buf, size_t len)
{
	memset(m, 0, sizeof(*m));
	m->iov.iov_base = buf;
	m->iov.iov_len = len;
	m->msg.msg_iov = &m->iov;
	m->msg.msg_iovlen = 1;
	m->msg.msg_control = m->cbuf.buf;
	m->msg.msg_controllen = sizeof(m->cbuf.buf);
}

/* Send the len bytes at buf and, unless -1, descriptor fd on sock. */
static int
send_fd(int sock, const void *buf, size_t len, int fd)
{
	struct fdmsg	 m;
	struct cmsghdr	*cm;

	fdmsg_init(&m, (void *)buf, len);
	if (fd != -1) {
		cm = CMSG_FIRSTHDR(&m.msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	} else {
		m.msg.msg_control = NULL;
		m.msg.msg_controllen = 0;
	}
	return sendmsg(sock, &m.msg, MSG_NOSIGNAL) == -1 ? -1 : 0;
}

/*
 * Receive up to len bytes into buf and a descriptor, if any, into *fd
 * (else -1).  Returns the bytes, 0 at end of file, or -1 with errno.
 */
static int
recv_fd(int sock, void *buf, size_t len, int *fd)
{
	struct fdmsg	 m;
	struct cmsghdr	*cm;
	ssize_t		 n;

	fdmsg_init(&m, buf, len);
	*fd = -1;
	do {
		n = recvmsg(sock, &m.msg, MSG_CMSG_CLOEXEC);
	} while (n == -1 && errno == EINTR);
	if (n <= 0)
		return (int)n;
	for (cm = CMSG_FIRSTHDR(&m.msg); cm != NULL;
	    cm = CMSG_NXTHDR(&m.msg, cm))
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(cm), sizeof(int));
	return (int)n;
}

/* The opener: answer requests until end of file.  Never returns. */
static noreturn void
opener_main(int sock)
{
	struct answer	a;
	int		reply, fd, dummy;

	signal(SIGINT, SIG_IGN);	/* a ^C is for the server to drain */
	signal(SIGHUP, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);
	if (dup2(sock, 3) == -1)
		_exit(1);
	closefrom(4);
	sock = 3;
	setproctitle("%s: log opener", srv.cfg.mode);
	for (;;) {
		if (recv_fd(sock, &dummy, sizeof(dummy), &reply) <= 0)
			_exit(0);
		if (reply == -1)
			continue;
		memset(&a, 0, sizeof(a));
		fd = access_path(a.why, sizeof(a.why));
		a.err = fd == -1 ? errno : 0;
		(void)send_fd(reply, &a, sizeof(a), fd);
		close(reply);
		if (fd != -1)
			close(fd);
	}
}

/*
 * Start the opener if privileges are to be dropped and there is a file
 * to reopen, unless an upgrade passed us one (reopen_adopt).  Start-up,
 * as root, before drop_privileges() and before the workers are forked
 * (they inherit its socket).
 */
void
reopen_init(void)
{
	int	sv[2];
	pid_t	pid;

	if ((srv.cfg.user == NULL && srv.cfg.group == NULL) ||
	    srv.cfg.access_log == NULL || geteuid() != 0 || opener != -1)
		return;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
		fatal("log opener: socketpair");
	if ((pid = fork()) == -1)
		fatal("log opener: fork");
	if (pid == 0) {
		close(sv[0]);
		opener_main(sv[1]);
	}
	close(sv[1]);
	opener = sv[0];
	log_debug("%s: log opener pid %d", __func__, (int)pid);
}

/* Our end of the opener's socket, for an upgrade to pass on; or -1. */
int
reopen_opener(void)
{
	return opener;
}

/*
 * In the child of an upgrade, before execv(2), once the opener's socket
 * is descriptor fd: name it, and the path it opens, in the environment
 * ("FD:PATH" in $UPGRADE_OPENER_ENV) for reopen_adopt().
 */
void
reopen_pass(int fd)
{
	char	*s;

	if (asprintf(&s, "%d:%s", fd, srv.cfg.access_log) != -1)
		setenv(UPGRADE_OPENER_ENV, s, 1);
}

/*
 * In the new master of an upgrade, before the access log is opened:
 * the old master's opener, if it passed one, becomes ours when it opens
 * the access log we are told to write; after --user we could not open
 * that one ourselves, nor reopen it at a rotation.  A log of another
 * path (the -f file changed) is opened here as any other.  The variable
 * is removed, so that nothing we start takes it for its own.  Start-up.
 */
void
reopen_adopt(void)
{
	const char	*s, *errstr;
	char		 num[16];
	socklen_t	 len = sizeof(int);
	size_t		 n;
	int		 fd, type;

	if ((s = getenv(UPGRADE_OPENER_ENV)) == NULL)
		return;
	n = strcspn(s, ":");
	snprintf(num, sizeof(num), "%.*s", (int)n, s);
	fd = (int)strtonum(num, 3, INT_MAX, &errstr);
	if (errstr != NULL || s[n] != ':' || getsockopt(fd, SOL_SOCKET,
	    SO_TYPE, &type, &len) == -1 || type != SOCK_SEQPACKET)
		log_warnx("$%s %s: not a log opener's socket",
		    UPGRADE_OPENER_ENV, s);
	else if (srv.cfg.access_log == NULL ||
	    strcmp(s + n + 1, srv.cfg.access_log) != 0) {
		log_info("the old master's log opener opens %s: not used",
		    s + n + 1);
		close(fd);
	} else if (fcntl(fd, F_SETFD, FD_CLOEXEC) == -1)
		log_warn("log opener");
	else {
		opener = fd;
		log_info("access log %s: through the old master's log opener",
		    srv.cfg.access_log);
	}
	unsetenv(UPGRADE_OPENER_ENV);
}

/*
 * The access log opened by the opener: the fd, or -1 with errno set and
 * the opener's reason in why (else strerror's).
 */
static int
opener_open(char *why, size_t whylen)
{
	struct pollfd	 pfd;
	struct answer	 a;
	int		 rp[2], err, fd, one = 1, r;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rp) == -1) {
		snprintf(why, whylen, "socketpair: %s", strerror(errno));
		return -1;
	}
	if (send_fd(opener, &one, sizeof(one), rp[1]) == -1) {
		err = errno;
		goto fail;
	}
	close(rp[1]);
	rp[1] = -1;
	pfd.fd = rp[0];
	pfd.events = POLLIN;
	if ((r = poll(&pfd, 1, OPENER_WAIT)) <= 0) {
		err = r == 0 ? ETIMEDOUT : errno;
		goto fail;
	}
	memset(&a, 0, sizeof(a));
	if ((r = recv_fd(rp[0], &a, sizeof(a), &fd)) != (int)sizeof(a)) {
		if (fd != -1)
			close(fd);
		err = r == -1 ? errno : r == 0 ? EPIPE : EBADMSG;
		goto fail;
	}
	close(rp[0]);
	a.why[sizeof(a.why) - 1] = '\0';
	if (a.err == 0 && fd == -1)
		a.err = EBADMSG;
	if (a.err != 0) {
		if (fd != -1)
			close(fd);
		snprintf(why, whylen, "%s", a.why[0] != '\0' ? a.why :
		    strerror(a.err));
		errno = a.err;
		return -1;
	}
	return fd;
 fail:
	close(rp[0]);
	if (rp[1] != -1)
		close(rp[1]);
	snprintf(why, whylen, "log opener: %s", strerror(err));
	errno = err;
	return -1;
}

/*
 * The access log's path opened as safefile.c opens it for the --user
 * (by us, or by the opener), or -1 with errno and err set.
 */
static int
access_path(char *err, size_t errlen)
{
	struct fowner	o;

	safefile_owner(&srv.cfg, &o);
	return safefile_open_log(srv.cfg.access_log, &o, err, errlen);
}

/*
 * The access log opened at start (--access-log), into srv.access_fd
 * (-1 without one); dies if it cannot be.  Main thread, start-up.
 */
void
reopen_access_open(void)
{
	char	err[256];
	int	fd;

	srv.access_fd = -1;
	if (srv.cfg.access_log == NULL)
		return;
	if ((fd = reopen_access(err, sizeof(err))) == -1)
		fatalx("access log %s: %s", srv.cfg.access_log, err);
	srv.access_fd = fd;
}

/*
 * The access log opened now, by the opener if there is one, else here
 * as conn.c opens it: the fd, or -1 with errno and why set.  Main
 * thread (start-up: reopen_access_open).
 */
static int
reopen_access(char *why, size_t whylen)
{
	if (opener != -1)
		return opener_open(why, whylen);
	return access_path(why, whylen);
}

/*
 * Reopen syslog and the access log.  Returns 0, or -1 when the access
 * log could not be reopened (warned once; the old file stays in use).
 * Main thread.
 */
int
reopen_logs(void)
{
	char	why[256];
	int	fd;

	log_reopen();
	if (srv.access_fd == -1)
		return 0;
	if ((fd = reopen_access(why, sizeof(why))) == -1) {
		log_warnx("reopening access log %s: %s", srv.cfg.access_log,
		    why);
		return -1;
	}
	if (dup3(fd, srv.access_fd, O_CLOEXEC) == -1) {
		log_warn("reopening access log %s: dup3", srv.cfg.access_log);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}
