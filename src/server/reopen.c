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
 * descriptor the server had anyway.
 *
 * A request is a fresh socket pair: one end goes to the opener in one
 * datagram (SCM_RIGHTS), the answer (an errno and, on success, the
 * descriptor) comes back on the other.  Worker processes share the
 * opener's socket, and one datagram per request keeps their answers
 * apart.  The opener exits when its socket reaches end of file, that is
 * when the last tenkd process holding it is gone.
 */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/log.h"
#include "tenkd.h"

#define OPENER_WAIT	2000		/* ms for an answer */

static int	opener = -1;		/* our end; -1: open directly */

static int	send_fd(int, int, int);
static int	recv_fd(int, int *, int *);

/* Send err and, unless it is -1, descriptor fd on sock.  0 or -1. */
static int
send_fd(int sock, int err, int fd)
{
	struct msghdr	 msg;
	struct cmsghdr	*cm;
	struct iovec	 iov;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	}		 cmsgbuf;

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = &err;
	iov.iov_len = sizeof(err);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (fd != -1) {
		memset(&cmsgbuf, 0, sizeof(cmsgbuf));
		msg.msg_control = cmsgbuf.buf;
		msg.msg_controllen = sizeof(cmsgbuf.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == -1 ? -1 : 0;
}

/*
 * Receive an int into *err and a descriptor, if any, into *fd (else
 * -1).  Returns 1, 0 at end of file, or -1 with errno set.
 */
static int
recv_fd(int sock, int *err, int *fd)
{
	struct msghdr	 msg;
	struct cmsghdr	*cm;
	struct iovec	 iov;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	}		 cmsgbuf;
	ssize_t		 n;

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = err;
	iov.iov_len = sizeof(*err);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cmsgbuf.buf;
	msg.msg_controllen = sizeof(cmsgbuf.buf);
	*fd = -1;
	do {
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	} while (n == -1 && errno == EINTR);
	if (n <= 0)
		return (int)n;
	for (cm = CMSG_FIRSTHDR(&msg); cm != NULL; cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(cm), sizeof(int));
	return 1;
}

/* The opener: answer requests until end of file.  Never returns. */
static noreturn void
opener_main(int sock)
{
	int	reply, err, fd, dummy;

	(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
	signal(SIGINT, SIG_IGN);	/* a ^C is for the server to drain */
	signal(SIGHUP, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);
	if (dup2(sock, 3) == -1)
		_exit(1);
	closefrom(4);
	sock = 3;
	setproctitle("%s: log opener", srv.cfg.mode);
	for (;;) {
		if (recv_fd(sock, &dummy, &reply) != 1)
			_exit(0);
		if (reply == -1)
			continue;
		fd = open(srv.cfg.access_log, O_WRONLY | O_APPEND | O_CREAT |
		    O_CLOEXEC | O_NOCTTY, 0644);
		err = fd == -1 ? errno : 0;
		(void)send_fd(reply, err, fd);
		close(reply);
		if (fd != -1)
			close(fd);
	}
}

/*
 * Start the opener if privileges are to be dropped and there is a file
 * to reopen.  Start-up, as root, before drop_privileges() and before
 * the workers are forked (they inherit its socket).
 */
void
reopen_init(void)
{
	int	sv[2];
	pid_t	pid;

	if ((srv.cfg.user == NULL && srv.cfg.group == NULL) ||
	    srv.cfg.access_log == NULL || geteuid() != 0)
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

/* The access log opened by the opener: the fd, or -1 with errno set. */
static int
opener_open(void)
{
	struct pollfd	 pfd;
	int		 rp[2], err, fd, one = 1, r;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rp) == -1)
		return -1;
	if (send_fd(opener, one, rp[1]) == -1) {
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
	if ((r = recv_fd(rp[0], &err, &fd)) != 1) {
		err = r == 0 ? EPIPE : errno;
		goto fail;
	}
	close(rp[0]);
	if (err == 0 && fd == -1)
		err = EBADMSG;
	if (err != 0) {
		errno = err;
		return -1;
	}
	return fd;
 fail:
	close(rp[0]);
	if (rp[1] != -1)
		close(rp[1]);
	errno = err;
	return -1;
}

/* Whether srv.access_fd is the file the access log's path names now. */
static int
access_current(void)
{
	struct stat	a, b;

	return fstat(srv.access_fd, &a) == 0 &&
	    stat(srv.cfg.access_log, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * Reopen syslog and the access log.  Returns 0, or -1 when the access
 * log could not be reopened (warned; the old file stays in use).  Main
 * thread.
 */
int
reopen_logs(void)
{
	int	fd;

	log_reopen();
	if (srv.access_fd == -1)
		return 0;
	if (opener == -1) {
		/* conn.c opens it, and warns if it cannot. */
		conn_access_reopen();
		return access_current() ? 0 : -1;
	}
	if ((fd = opener_open()) == -1) {
		log_warn("reopening access log %s", srv.cfg.access_log);
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
