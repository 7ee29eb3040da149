/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The configuration file of -f/--config, as text: one option a line by
 * its long name and its value as the command line takes it (config.c
 * says what they mean), blank lines, and comments from a '#' that
 * starts a line or follows a blank to the end of the line.  This file
 * only reads a file whole and cuts its text into (name, value) pairs;
 * it knows no option, so that it can be fuzzed alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/cli.h"
#include "../tenkd.h"

#define CONF_MAXSIZE	(1024 * 1024)	/* bytes of one file */
#define CONF_MAXLINE	4096		/* bytes of one line */

static int
blank(int c)
{
	return c == ' ' || c == '\t';
}

/*
 * The line at p (n bytes, the newline left out), a copy in line
 * (CONF_MAXLINE + 1 bytes), cut into its name and value (NULL when the
 * line holds a name alone): comments, blanks at either end and a CR
 * gone.  Returns 1 with them, 0 for a line with no option, or -1 with
 * *why.
 */
static int
conf_line(const char *p, size_t n, char *line, char **name, char **value,
    const char **why)
{
	char	*s, *e;

	if (n > CONF_MAXLINE) {
		*why = "line too long (at most 4096 bytes)";
		return -1;
	}
	if (memchr(p, '\0', n) != NULL) {
		*why = "NUL byte";
		return -1;
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
		return 0;
	*name = s;
	s += strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-");
	if (**name < 'a' || **name > 'z' || (*s != '\0' && !blank(*s))) {
		*why = "not an option name (a long option, as "
		    "\"idle-timeout 5m\")";
		return -1;
	}
	*value = NULL;
	if (*s != '\0') {
		*s++ = '\0';
		while (blank(*s))
			s++;
		*value = s;
	}
	return 1;
}

/*
 * Cut the len bytes at buf, the text of the file named file, into
 * options: fn(arg, where, name, value, e) for each, where being
 * "FILE:LINE" and value NULL when the line holds a name alone.  The
 * strings live until fn returns.  Returns 0, or -1 with "FILE:LINE: why"
 * in e (a NUL byte, a line too long, a name that is not
 * [a-z][a-z0-9-]*, such as one with its dashes) or fn's -1, and no more
 * calls to fn.  Any thread; no state.
 */
int
conf_parse(const char *buf, size_t len, const char *file, conf_fn *fn,
    void *arg, struct tk_cli_err *e)
{
	char		 line[CONF_MAXLINE + 1], where[300], *name, *value;
	const char	*p = buf, *end = buf + len, *nl, *why;
	int		 lineno = 0, r;

	for (; p < end; p = nl + 1) {
		lineno++;
		snprintf(where, sizeof(where), "%s:%d", file, lineno);
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		r = conf_line(p, (size_t)(nl - p), line, &name, &value, &why);
		if (r == -1)
			return tk_cli_errf(e, where, NULL, "%s", why);
		if (r == 1 && fn(arg, where, name, value, e) == -1)
			return -1;
	}
	return 0;
}

/*
 * The file at path, read whole into *bufp (the caller's to free, *lenp
 * bytes, not terminated).  Returns 0, or -1 with e saying why ("FILE:
 * strerror", "FILE: too large").
 */
int
conf_load(const char *path, char **bufp, size_t *lenp, struct tk_cli_err *e)
{
	char		*buf, why[256];
	ssize_t		 n;
	size_t		 have = 0;
	int		 fd;

	/* A regular file, never waiting on a FIFO (safefile.c). */
	if ((fd = safefile_open(path, O_RDONLY, 0, NULL, why,
	    sizeof(why))) == -1)
		return tk_cli_errf(e, path, NULL, "%s", why);
	if ((buf = malloc(CONF_MAXSIZE + 1)) == NULL) {
		close(fd);
		return tk_cli_errf(e, path, NULL, "%s", strerror(errno));
	}
	/* Read to EOF rather than trust st_size: the file may grow. */
	while (have <= CONF_MAXSIZE) {
		n = read(fd, buf + have, CONF_MAXSIZE + 1 - have);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			(void)tk_cli_errf(e, path, NULL, "%s", strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		have += (size_t)n;
	}
	if (have > CONF_MAXSIZE) {
		(void)tk_cli_errf(e, path, NULL, "too large (at most 1m)");
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
