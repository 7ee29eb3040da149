/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --pidfile: the file is opened through safefile.c (so root never
 * writes through a link the --user could have planted), locked with
 * flock(2) for as long as the master runs (a second tenkd finds it
 * locked and names the holder), written with our pid once the
 * privileges are dropped, and removed at exit when it is still ours.
 * libbsd's pidfile_open(3) did the same but opened the path as given,
 * following a symbolic link as root.
 *
 * An upgrade hands it over (master.c): the old master writes the new
 * master's pid and lets the lock go, and the new one, which found it
 * locked by its parent at start, takes it then (pidfile_take).
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tenk/log.h"
#include "tenk/xmalloc.h"
#include "../tenkd.h"

#define LOCK_TRIES	3	/* the file replaced while we locked it */

static int		 pfd = -1;
static char		*ppath;
static struct fowner	 powner;
static int		 later;		/* the old master holds it */

/*
 * The pid in the file fd, locked by another process, or 0: it writes
 * its pid a moment after it locks, so an empty file is read again for
 * up to 100 ms.
 */
static pid_t
holder(int fd)
{
	struct timespec	 ts = { 0, 10 * 1000 * 1000 };
	const char	*errstr;
	char		 buf[32];
	ssize_t		 n;
	pid_t		 pid;
	int		 i;

	for (i = 0; i < 10; i++) {
		if ((n = pread(fd, buf, sizeof(buf) - 1, 0)) > 0) {
			buf[n] = '\0';
			buf[strcspn(buf, "\n")] = '\0';
			pid = (pid_t)strtonum(buf, 1, INT_MAX, &errstr);
			return errstr == NULL ? pid : 0;
		}
		nanosleep(&ts, NULL);
	}
	return 0;
}

/*
 * Open and lock the pidfile at path, emptied.  Returns 0, or -1 with
 * errno EEXIST and *other the holder's pid (0 if unknown) when another
 * process holds the lock, else with errno and err set.
 */
static int
lock(const char *path, pid_t *other, char *err, size_t errlen)
{
	struct stat	 a, b;
	int		 fd, i;

	for (i = 0; i < LOCK_TRIES; i++) {
		fd = safefile_open(path, O_RDWR | O_CREAT, 0644, &powner, err,
		    errlen);
		if (fd == -1)
			return -1;
		if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
			if (errno == EWOULDBLOCK) {
				*other = holder(fd);
				errno = EEXIST;
			} else
				snprintf(err, errlen, "flock: %s",
				    strerror(errno));
			close(fd);
			return -1;
		}
		/*
		 * Its last holder may have removed it between our open and
		 * our lock, and another process made a new one: then ours
		 * is no longer the file at path, and we start over.
		 */
		if (fstat(fd, &a) == 0 && stat(path, &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			break;
		close(fd);
		fd = -1;
	}
	if (fd == -1) {
		snprintf(err, errlen, "replaced while locking it");
		errno = EAGAIN;
		return -1;
	}
	if (ftruncate(fd, 0) == -1) {
		snprintf(err, errlen, "ftruncate: %s", strerror(errno));
		close(fd);
		return -1;
	}
	pfd = fd;
	return 0;
}

/*
 * At start-up, before the privileges are dropped: open and lock path
 * for user o.  upgrade: we are the new master of an upgrade, whose old
 * master (our parent) holds the file until it hands over.  Another
 * holder, or a path that cannot be opened, dies with one line; in an
 * upgrade it is a warning (the old master writes our pid; as --user
 * the file may be root's) and the pidfile is not ours.
 */
void
pidfile_start(const char *path, const struct fowner *o, int upgrade)
{
	char	err[256];
	pid_t	other = 0;

	if (path == NULL)
		return;
	ppath = xstrdup(path);
	powner = *o;
	if (lock(path, &other, err, sizeof(err)) == 0)
		return;
	if (errno == EEXIST && upgrade && other == getppid()) {
		log_info("pidfile %s: the old master (pid %d) holds it until "
		    "it hands over", path, (int)other);
		later = 1;
	} else if (errno == EEXIST && upgrade)
		log_warnx("pidfile %s: not taken over: held by pid %d", path,
		    (int)other);
	else if (upgrade)
		log_warnx("pidfile %s: not taken over: %s", path, err);
	else if (errno == EEXIST)
		fatalx("pidfile %s: already running as pid %d", path,
		    (int)other);
	else
		fatalx("pidfile %s: %s", path, err);
}

/* Write pid into the pidfile (if we hold one).  0, or -1 with errno. */
int
pidfile_put(pid_t pid)
{
	char	buf[32];
	int	n;

	if (pfd == -1)
		return 0;
	n = snprintf(buf, sizeof(buf), "%d\n", (int)pid);
	if (ftruncate(pfd, 0) == -1 || pwrite(pfd, buf, n, 0) != n)
		return -1;
	return 0;
}

/*
 * The old master, handing over in an upgrade: the pidfile gets the new
 * master's pid and is closed without being removed, which releases the
 * lock for the new master to take (pidfile_take).
 */
void
pidfile_handover(pid_t pid)
{
	if (pfd == -1)
		return;
	if (pidfile_put(pid) == -1)
		log_warn("pidfile %s", ppath);
	/*
	 * Unlocked for every holder of this open file (a process forked
	 * before that keeps it), then closed.
	 */
	(void)flock(pfd, LOCK_UN);
	close(pfd);
	pfd = -1;
}

/*
 * The new master after an upgrade: take the pidfile once the old master
 * let it go.  Returns 1 when done (or nothing to do), 0 to try again.
 */
int
pidfile_take(void)
{
	char	err[256];
	pid_t	other;

	if (!later)
		return 1;
	if (lock(ppath, &other, err, sizeof(err)) == -1) {
		if (errno == EEXIST || errno == EAGAIN)
			return 0;
		log_warnx("pidfile %s: %s", ppath, err);
		later = 0;
		return 1;
	}
	if (pidfile_put(getpid()) == -1)
		log_warn("pidfile %s", ppath);
	later = 0;
	log_info("pidfile %s: taken over", ppath);
	return 1;
}

/*
 * Let the pidfile go: at exit, removed if the path still names the file
 * we hold (unlink); in a worker, only our descriptor closed, since the
 * master keeps the lock.
 */
void
pidfile_end(int unlink_it)
{
	struct stat	a, b;

	later = 0;
	if (pfd == -1)
		return;
	if (unlink_it && fstat(pfd, &a) == 0 && stat(ppath, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		(void)unlink(ppath);
	close(pfd);
	pfd = -1;
}
