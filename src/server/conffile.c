/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The configuration file of -f/--config: one option a line by its long
 * name and its value as the command line takes it,
 *
 *	# the front end
 *	listen 127.0.0.1:8000
 *	upstream 10.0.0.1:80 weight=2
 *	idle-timeout 5m
 *	syslog
 *
 * blank lines, and comments from a '#' that starts a line or follows a
 * blank to the end of the line.  This file only cuts lines into (name,
 * value) pairs; main.c applies them through the same code as the
 * command line's, so an option means the same in both places.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenkd.h"

#define CONF_MAXSIZE	(1024 * 1024)	/* bytes of one file */
#define CONF_MAXLINE	4096		/* bytes of one line */

static int
blank(int c)
{
	return c == ' ' || c == '\t';
}

/*
 * Cut the len bytes at buf, the text of the file named file, into
 * options: fn(arg, where, name, value) for each, where being "FILE:LINE"
 * and value NULL when the line holds a name alone.  The strings live
 * until fn returns.  Returns 0, or -1 with "FILE:LINE: why" in err (a
 * NUL byte, a line too long, a name that is not [a-z][a-z0-9-]*, such
 * as one with its dashes) and no more calls to fn.  Any thread; no
 * state.
 */
int
conf_parse(const char *buf, size_t len, const char *file, conf_fn *fn,
    void *arg, char *err, size_t errlen)
{
	char		 line[CONF_MAXLINE + 1], where[300];
	const char	*p = buf, *end = buf + len, *nl, *why = NULL;
	char		*s, *e, *name, *value;
	size_t		 n;
	int		 lineno = 0;

	for (; p < end; p = nl + 1) {
		lineno++;
		snprintf(where, sizeof(where), "%s:%d", file, lineno);
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		n = (size_t)(nl - p);
		if (n > CONF_MAXLINE) {
			why = "line too long (at most 4096 bytes)";
			break;
		}
		if (memchr(p, '\0', n) != NULL) {
			why = "NUL byte";
			break;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		/* A comment: '#' first on the line or after a blank. */
		for (s = line; *s != '\0'; s++)
			if (*s == '#' && (s == line || blank(s[-1]))) {
				*s = '\0';
				break;
			}
		/* A CR ends a line of a file written on Windows: a blank. */
		for (e = s; e > line && (blank(e[-1]) || e[-1] == '\r'); e--)
			;
		*e = '\0';
		for (s = line; blank(*s); s++)
			;
		if (*s == '\0')
			continue;
		name = s;
		s += strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-");
		if (*name < 'a' || *name > 'z' ||
		    (*s != '\0' && !blank(*s))) {
			why = "not an option name (a long option, as "
			    "\"idle-timeout 5m\")";
			break;
		}
		value = NULL;
		if (*s != '\0') {
			*s++ = '\0';
			while (blank(*s))
				s++;
			value = s;
		}
		fn(arg, where, name, value);
	}
	if (why == NULL)
		return 0;
	snprintf(err, errlen, "%s: %s", where, why);
	return -1;
}

/*
 * The file at path, read whole into *bufp (the caller's to free, *lenp
 * bytes, not terminated), for conf_parse() now or later: the master
 * keeps a reload's text so that every worker of that generation, a
 * restarted one too, reads the same options.  Returns 0, or -1 with err
 * saying why ("FILE: strerror", "FILE: too large").
 */
int
conf_load(const char *path, char **bufp, size_t *lenp, char *err,
    size_t errlen)
{
	char		*buf, why[256];
	ssize_t		 n;
	size_t		 have = 0;
	int		 fd;

	/* A regular file, never waiting on a FIFO (safefile.c). */
	if ((fd = safefile_open(path, O_RDONLY, 0, NULL, why,
	    sizeof(why))) == -1) {
		snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	if ((buf = malloc(CONF_MAXSIZE + 1)) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	/* Read to EOF rather than trust st_size: the file may grow. */
	while (have <= CONF_MAXSIZE) {
		n = read(fd, buf + have, CONF_MAXSIZE + 1 - have);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		have += (size_t)n;
	}
	if (have > CONF_MAXSIZE) {
		snprintf(err, errlen, "%s: too large (at most 1m)", path);
		goto fail;
	}
	close(fd);
	*bufp = buf;
	*lenp = have;
	return 0;

 fail:
	free(buf);
	close(fd);
	return -1;
}

/*
 * conf_parse() on the file at path, read whole.  Returns 0, or -1 with
 * err saying why (conf_load's, or conf_parse's "FILE:LINE: why").
 * Start-up.
 */
int
conf_read(const char *path, conf_fn *fn, void *arg, char *err, size_t errlen)
{
	char	*buf;
	size_t	 len;
	int	 r;

	if (conf_load(path, &buf, &len, err, errlen) == -1)
		return -1;
	r = conf_parse(buf, len, path, fn, arg, err, errlen);
	free(buf);
	return r;
}
