/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Opening a file by the path the operator gave: the access log, the
 * pidfile, the -f file.  Every such open goes through safefile_open(),
 * which owns two rules (a log may also be a pipe or a device: see
 * safefile_open_log()).
 *
 * Only regular files, and never blocking to find out.  A FIFO would
 * hold open(2) until a writer or reader came (the master at a reload,
 * --check forever), and a device may act on being opened, so the name
 * is looked at first (fstatat) and a file that is not regular is
 * refused unopened; the open itself is O_NONBLOCK, and the descriptor
 * is looked at again (fstat), since the name may have changed between
 * the two.
 *
 * When root opens a file for a user it will hand the descriptor to
 * (--user: the workers write the access log and the pidfile after the
 * privileges are dropped, and the log opener of reopen.c opens the log
 * again at each rotation), that user must not be able to point the
 * open elsewhere.  A user who can write in the log's directory could
 * otherwise plant a symbolic link to a root-owned file, which root
 * would append to (or truncate, for the pidfile) and then give the user
 * a descriptor on.  So, as logrotate and Postfix's safe_open do:
 *
 * - the last component is opened O_NOFOLLOW: a symbolic link there is
 *   refused, wherever it points;
 * - the directories on the way are opened one by one, and a symbolic
 *   link among them is followed only when it sits in a directory the
 *   user cannot write (root's own /var/run -> /run), never in one the
 *   user could have made it in;
 * - the file opened must be owned by root or by the user (logrotate's
 *   "create 0640 tenkd adm" makes the latter), and have one link: a
 *   second hard link is a name someone else made for it (logrotate
 *   refuses those too; fs.protected_hardlinks stops most, not all).
 *
 * Anything else (tenkd running as root with no --user, or as a plain
 * user) opens for itself: links are followed as the operator set them.
 *
 * XXX Write access through an ACL, or a group the user gains later, is
 * not seen by the directory check; a log directory is rarely set up so.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../tenkd.h"

static const char a_link[] = "a symbolic link";

static int	strict(const struct fowner *);

/*
 * Fill o with the user that the files of configuration cfg are opened
 * for: its --user, and the group it will have, or none.
 */
void
safefile_owner(const struct config *cfg, struct fowner *o)
{
	o->name = cfg->user;
	o->uid = cfg->uid;
	o->gid = cfg->gid;
}

/* Whether we open as root for another user (o), with every check. */
static int
strict(const struct fowner *o)
{
	return o != NULL && o->name != NULL && o->uid != 0 && geteuid() == 0;
}

/* Whether user o could make or replace a name in directory sb. */
static int
writable(const struct stat *sb, const struct fowner *o)
{
	return sb->st_uid == o->uid ||
	    (sb->st_gid == o->gid && (sb->st_mode & S_IWGRP)) ||
	    (sb->st_mode & S_IWOTH);
}

/* What sb is when it is not a regular file, for a message; or NULL. */
static const char *
not_regular(const struct stat *sb)
{
	if (S_ISREG(sb->st_mode))
		return NULL;
	if (S_ISDIR(sb->st_mode))
		return strerror(EISDIR);
	if (S_ISFIFO(sb->st_mode))
		return "a FIFO, not a regular file";
	if (S_ISCHR(sb->st_mode))
		return "a character device, not a regular file";
	if (S_ISBLK(sb->st_mode))
		return "a block device, not a regular file";
	if (S_ISSOCK(sb->st_mode))
		return "a socket, not a regular file";
	if (S_ISLNK(sb->st_mode))
		return a_link;
	return "not a regular file";
}

/*
 * The directory path (which this cuts into components), opened O_PATH
 * one component at a time from fd (which this owns: closed or returned)
 * or, for an absolute path, from "/", following a symbolic link only
 * where o cannot write beside it, and then by walking what it points to
 * by the same rules: the kernel never resolves more than one component,
 * so a link the user made further down an allowed link's target is
 * seen (root's logs -> /home/u/logs, where u swaps logs for a link to a
 * root-owned directory).  *links counts the links followed, at most
 * WALK_LINKS (ELOOP past them, as path_resolution(7)'s 40).  Returns the
 * fd, or -1 with errno and err set.
 */
#define WALK_LINKS	40
static int
walk(int fd, char *path, const struct fowner *o, int *links, char *err,
    size_t errlen)
{
	struct stat	 sb;
	char		*p, *c, target[PATH_MAX];
	ssize_t		 n;
	int		 nfd, saved;
	int		 flags = O_PATH | O_DIRECTORY | O_CLOEXEC;

	if (path[0] == '/') {
		if ((nfd = open("/", flags)) == -1)
			goto fail;
		close(fd);
		fd = nfd;
	}
	for (p = path; (c = strsep(&p, "/")) != NULL;) {
		if (*c == '\0' || strcmp(c, ".") == 0)
			continue;
		nfd = openat(fd, c, flags | O_NOFOLLOW);
		if (nfd == -1 && (errno == ENOTDIR || errno == ELOOP) &&
		    fstatat(fd, c, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(sb.st_mode)) {
			if (fstat(fd, &sb) == -1)
				goto fail;
			if (writable(&sb, o)) {
				snprintf(err, errlen, "%s is a symbolic link "
				    "in a directory user %s can write: not "
				    "followed", c, o->name);
				close(fd);
				errno = ELOOP;
				return -1;
			}
			if (++*links > WALK_LINKS) {
				errno = ELOOP;
				goto fail;
			}
			if ((n = readlinkat(fd, c, target,
			    sizeof(target))) == -1)
				goto fail;
			if ((size_t)n == sizeof(target)) {
				errno = ENAMETOOLONG;
				goto fail;
			}
			target[n] = '\0';
			if ((nfd = dup(fd)) == -1)
				goto fail;
			if ((nfd = walk(nfd, target, o, links, err,
			    errlen)) == -1) {
				saved = errno;
				close(fd);
				errno = saved;
				return -1;
			}
		}
		if (nfd == -1)
			goto fail;
		close(fd);
		fd = nfd;
	}
	return fd;

 fail:
	saved = errno;
	snprintf(err, errlen, "%s", strerror(errno));
	close(fd);
	errno = saved;
	return -1;
}

/*
 * Where path's last component is to be opened: *name in the directory
 * *dfd (AT_FDCWD, or the directory walked for user o when root opens
 * for it: strict()).  Returns 0, or -1 with errno and err set.
 */
static int
locate(const char *path, const struct fowner *o, int *dfd,
    const char **name, char *err, size_t errlen)
{
	char		 dir[PATH_MAX];
	const char	*slash;
	int		 fd, links = 0;

	*dfd = AT_FDCWD;
	*name = path;
	if (!strict(o))
		return 0;
	if ((slash = strrchr(path, '/')) != NULL) {
		*name = slash + 1;
		if ((size_t)(*name - path) >= sizeof(dir)) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		memcpy(dir, path, (size_t)(*name - path));
		dir[*name - path] = '\0';
		if ((fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
			goto fail;
		if ((*dfd = walk(fd, dir, o, &links, err, errlen)) == -1)
			return -1;
	}
	if (**name == '\0') {
		if (*dfd != AT_FDCWD)
			close(*dfd);
		*dfd = AT_FDCWD;
		errno = EISDIR;
		goto fail;
	}
	return 0;

 fail:
	snprintf(err, errlen, "%s", strerror(errno));
	return -1;
}

/*
 * Open path with flags (O_RDONLY, or O_WRONLY or O_RDWR with O_APPEND,
 * O_CREAT, O_EXCL) and mode, for user o (NULL, or o->name NULL: for
 * ourselves), by the rules above: a regular file only, found without
 * blocking; and when root opens for another user, through no link that
 * user could have made, owned by root or that user, with one link.
 * Returns the descriptor (close-on-exec, blocking), or -1 with errno
 * set and the reason in err, as a phrase without the path ("a FIFO, not
 * a regular file", strerror's).  Any thread.
 */
int
safefile_open(const char *path, int flags, mode_t mode,
    const struct fowner *o, char *err, size_t errlen)
{
	struct stat	 sb;
	const char	*name, *why;
	int		 dfd, fd = -1, nofollow, saved;

	if (locate(path, o, &dfd, &name, err, errlen) == -1)
		return -1;
	nofollow = strict(o) ? AT_SYMLINK_NOFOLLOW : 0;
	/* Look first: a FIFO or a device is refused before it is opened. */
	if (fstatat(dfd, name, &sb, nofollow) == 0) {
		if ((why = not_regular(&sb)) != NULL)
			goto refuse;
	} else if (errno != ENOENT || !(flags & O_CREAT))
		goto fail;
	fd = openat(dfd, name, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
	    (nofollow ? O_NOFOLLOW : 0), mode);
	if (fd == -1) {
		if (errno == ELOOP && nofollow) {
			why = a_link;
			goto refuse;
		}
		goto fail;
	}
	if (fstat(fd, &sb) == -1)
		goto fail;
	if ((why = not_regular(&sb)) != NULL)
		goto refuse;
	if (nofollow && sb.st_uid != 0 && sb.st_uid != o->uid) {
		snprintf(err, errlen, "owned by uid %u, not by root or user "
		    "%s: not opened for it", (unsigned int)sb.st_uid, o->name);
		errno = EPERM;
		goto out;
	}
	if (nofollow && sb.st_nlink > 1) {
		snprintf(err, errlen, "has %lu hard links: not opened for "
		    "user %s", (unsigned long)sb.st_nlink, o->name);
		errno = EMLINK;
		goto out;
	}
	/* Regular files do not block; keep the descriptor as open(2)'s. */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == -1)
		goto fail;
	if (dfd != AT_FDCWD)
		close(dfd);
	return fd;

 refuse:
	if (why == a_link) {
		snprintf(err, errlen, "a symbolic link: root follows none for "
		    "user %s", o->name);
		errno = ELOOP;
	} else {
		snprintf(err, errlen, "%s", why);
		errno = EINVAL;
	}
	goto out;
 fail:
	snprintf(err, errlen, "%s", strerror(errno));
 out:
	saved = errno;
	if (fd != -1)
		close(fd);
	if (dfd != AT_FDCWD)
		close(dfd);
	errno = saved;
	return -1;
}

/*
 * A log's path (the access log) opened for appending.  A regular file
 * as safefile_open() opens one for user o; where tenkd opens for itself
 * (no --user to open for as root), also a FIFO or a pipe that has a
 * reader, and a character device, as the operator named it: a container
 * logs to /dev/stdout, a pipe, and a test to /dev/null.  A FIFO without
 * a reader is refused at once (O_NONBLOCK: ENXIO), not waited on; the
 * descriptor is blocking, since only alog.c's thread writes to it.
 * Returns the descriptor, or -1 with errno and err set.  Any thread.
 */
int
safefile_open_log(const char *path, const struct fowner *o, char *err,
    size_t errlen)
{
	struct stat	sb;
	int		fd, saved;

	if (strict(o) || stat(path, &sb) == -1 ||
	    !(S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode)))
		return safefile_open(path, O_WRONLY | O_APPEND | O_CREAT, 0644,
		    o, err, errlen);
	if ((fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s", errno == ENXIO ?
		    "a FIFO or pipe with no reader" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) == -1 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == -1) {
		saved = errno;
		snprintf(err, errlen, "%s", strerror(saved));
		close(fd);
		errno = saved;
		return -1;
	}
	if (!(S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode))) {
		/* Renamed over between the two looks: take it as a file. */
		close(fd);
		return safefile_open(path, O_WRONLY | O_APPEND | O_CREAT, 0644,
		    o, err, errlen);
	}
	return fd;
}

/*
 * --check: whether path can be opened for writing as tenkd will open
 * it for user o (a log: as safefile_open_log() opens it).  An existing
 * file is opened for append and left as it was (a running tenkd's
 * pidfile, lock and all); a missing one is created and removed.
 * Returns 0, or -1 with err set.  Start-up.
 */
int
safefile_check(const char *path, const struct fowner *o, int log,
    char *err, size_t errlen)
{
	struct stat	 sb;
	const char	*name;
	int		 fd, dfd, r, saved, created = 0;

	if (log && !strict(o) && stat(path, &sb) == 0 &&
	    (S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode))) {
		if ((fd = safefile_open_log(path, o, err, errlen)) == -1)
			return -1;
		close(fd);
		return 0;
	}
	fd = safefile_open(path, O_WRONLY | O_APPEND, 0, o, err, errlen);
	if (fd == -1 && errno == ENOENT) {
		fd = safefile_open(path, O_WRONLY | O_CREAT | O_EXCL, 0644, o,
		    err, errlen);
		created = fd != -1;
	}
	if (fd == -1)
		return -1;
	close(fd);
	if (!created)
		return 0;
	/* Where it was made: a directory swapped since is not followed. */
	if (locate(path, o, &dfd, &name, err, errlen) == -1)
		return -1;
	r = unlinkat(dfd, name, 0);
	saved = errno;
	if (dfd != AT_FDCWD)
		close(dfd);
	if (r == -1) {
		snprintf(err, errlen, "removing the file made to check it: %s",
		    strerror(saved));
		return -1;
	}
	return 0;
}
