/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tenkload's operands: what it connects to, and, for a URL, the request
 * it builds.  A target is
 *
 *	HOST:PORT			TCP, as tk_addr_parse() reads it
 *	unix:PATH, unix:@NAME		a unix(7) stream socket, @ for the
 *					abstract namespace
 *	http://HOST[:PORT][/PATH]	HTTP/1.1 over TCP, port 80 by default
 *	https://HOST[:PORT][/PATH]	the same over TLS, port 443 by
 *					default (tlsopt.c)
 *
 * A URL's request is a template (template.c), so that its path, its -H
 * headers and its --body take placeholders:
 *
 *	METHOD PATH HTTP/1.1		GET, or POST with a body
 *	Host: HOST[:PORT]		as the URL has it, unless -H gives one
 *	-H lines
 *	Content-Length: N		with a body; right-aligned after
 *					spaces when the body's length varies
 *	(empty line)
 *	BODY				--body with escapes and placeholders,
 *					or --body-file as it is
 *
 * HTTP/1.1 keeps the connection open; a server's "Connection: close"
 * reopens it, as the http framing says.  Bad input ends here through
 * tk_cli_bad(), naming the operand or option and, in a template, the
 * column.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "tenk/cli.h"
#include "tenk/sock.h"
#include "tenk/xmalloc.h"
#include "framing.h"
#include "loadgen.h"

#define MAXBODYFILE	TP_MAXLEN	/* --body-file, bytes */

/* unix:PATH into a; -1 with *errstr on a bad one. */
static int
target_unix(const char *path, struct tk_addr *a, const char **errstr)
{
	struct sockaddr_un	*sun = (struct sockaddr_un *)&a->ss;
	size_t			 n = strlen(path);

	memset(a, 0, sizeof(*a));
	if (n == 0 || (n == 1 && *path == '@')) {
		*errstr = "unix: needs a path";
		return -1;
	}
	if (n >= sizeof(sun->sun_path)) {
		*errstr = "unix: path longer than 107 bytes";
		return -1;
	}
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, path, n);
	/* "@NAME": the abstract namespace, named without a NUL after. */
	if (*path == '@') {
		sun->sun_path[0] = '\0';
		a->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
		    n);
	} else
		a->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
		    n + 1);
	return 0;
}

/*
 * A URL into u and a.  The authority is HOST or [V6], an optional
 * :PORT; the path runs to '#' (a fragment is the client's own) and is
 * "/" when the URL has none.  Returns 0, or -1 with *errstr.
 */
static int
target_url(const char *arg, struct lg_url *u, struct tk_addr *a,
    const char **errstr)
{
	const char	*p, *auth, *end;
	char		 hp[300];
	size_t		 alen;
	int		 port;

	memset(u, 0, sizeof(*u));
	if (strncasecmp(arg, "https://", 8) == 0) {
		u->scheme = SCHEME_HTTPS;
		auth = arg + 8;
		port = 443;
	} else {
		u->scheme = SCHEME_HTTP;
		auth = arg + 7;
		port = 80;
	}
	end = auth + strcspn(auth, "/?#");
	alen = (size_t)(end - auth);
	if (alen == 0) {
		*errstr = "no host in the URL";
		return -1;
	}
	if (memchr(auth, '@', alen) != NULL) {
		*errstr = "user names in URLs are not supported";
		return -1;
	}
	if (alen >= sizeof(u->authority)) {
		*errstr = "host too long";
		return -1;
	}
	memcpy(u->authority, auth, alen);
	u->authority[alen] = '\0';
	/* A port after the host (after "]" for an IPv6 address). */
	p = strrchr(u->authority, ':');
	if (p != NULL && (u->authority[0] != '[' || p > strchr(u->authority,
	    ']')))
		snprintf(hp, sizeof(hp), "%s", u->authority);
	else
		snprintf(hp, sizeof(hp), "%s:%d", u->authority, port);
	if (tk_addr_parse(hp, -1, a, errstr) == -1)
		return -1;
	u->path = *end == '/' ? end : NULL;
	u->query = *end == '?' ? end : NULL;
	u->path_col = (size_t)(end - arg);
	u->pathlen = strcspn(end, "#");
	if (memchr(end, ' ', u->pathlen) != NULL) {
		*errstr = "space in the URL (write %20)";
		return -1;
	}
	return 0;
}

/*
 * Parse operand arg into a, and into u when it is a URL.  Returns the
 * scheme; bad input ends the program.
 */
enum lg_scheme
target_parse(const char *arg, struct tk_addr *a, struct lg_url *u)
{
	const char	*errstr;

	if (strncmp(arg, "unix:", 5) == 0) {
		if (target_unix(arg + 5, a, &errstr) == -1)
			tk_cli_bad(arg, NULL, "%s", errstr);
		return SCHEME_UNIX;
	}
	if (strncasecmp(arg, "http://", 7) == 0 ||
	    strncasecmp(arg, "https://", 8) == 0) {
		if (target_url(arg, u, a, &errstr) == -1)
			tk_cli_bad(arg, NULL, "%s", errstr);
		u->text = arg;
		return u->scheme;
	}
	if (strstr(arg, "://") != NULL)
		tk_cli_bad(arg, NULL, "not a scheme tenkload speaks (http://, "
		    "https://, unix:, or HOST:PORT)");
	if (tk_addr_parse(arg, -1, a, &errstr) == -1)
		tk_cli_bad_addr(NULL, arg, errstr);
	return SCHEME_TCP;
}

/* Template text into the request, or the program ends naming where. */
static void
req_text(struct tmpl_set *ts, const char *opt, const char *arg,
    const char *text, size_t col0)
{
	struct tp_err	 err;

	memset(&err, 0, sizeof(err));
	if (tmpl_text(ts, text, col0, &err) == -1)
		tk_cli_bad(opt, arg, "column %zu: %s%s%s", err.col, err.why,
		    err.detail != NULL ? ": " : "",
		    err.detail != NULL ? err.detail : "");
}

static void
req_lit(struct tmpl_set *ts, const char *opt, const void *p, size_t n)
{
	struct tp_err	 err;

	if (tmpl_lit(ts, p, n, &err) == -1)
		tk_cli_bad(opt, NULL, "%s", err.why);
}

/* A -H line: "Name: value", the name an HTTP token. */
static void
check_header(const char *h)
{
	const char	*p;

	for (p = h; *p != ':' && *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) &&
		    strchr("!#$%&'*+-.^_`|~", *p) == NULL)
			tk_cli_bad("-H", h, "not \"Name: value\" (bad byte "
			    "in the name at column %zu)", (size_t)(p - h) + 1);
	if (*p != ':' || p == h)
		tk_cli_bad("-H", h, "not \"Name: value\"");
}

/* --body-file: its bytes, at most MAXBODYFILE; *len their number. */
static unsigned char *
read_body(const char *path, size_t *len)
{
	unsigned char	*buf;
	size_t		 n = 0;
	ssize_t		 r;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		tk_cli_bad("--body-file", path, "%s", strerror(errno));
	buf = xmalloc(MAXBODYFILE + 1);
	while (n < MAXBODYFILE + 1) {
		if ((r = read(fd, buf + n, MAXBODYFILE + 1 - n)) == -1) {
			if (errno == EINTR)
				continue;
			tk_cli_bad("--body-file", path, "%s",
			    strerror(errno));
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (n > MAXBODYFILE)
		tk_cli_bad("--body-file", path, "larger than 1 MiB");
	*len = n;
	return buf;
}

/*
 * The request of URL u with the options of h, as the one template of
 * ts.  Start-up; bad input ends the program.
 */
void
target_request(struct tmpl_set *ts, const struct lg_url *u,
    const struct lg_http *h)
{
	struct tmpl_set	 bt;
	struct tp_err	 err;
	const unsigned char *fixed = NULL;
	const char	*method = h->method, *p;
	unsigned char	*file = NULL;
	char		 cl[64], *path;
	size_t		 i, n = 0, flen = 0;
	int		 has_body = h->body != NULL || h->body_file != NULL;
	int		 host = 0;

	if (method == NULL)
		method = has_body ? "POST" : "GET";
	for (p = method; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) &&
		    strchr("!#$%&'*+-.^_`|~", *p) == NULL)
			break;
	if (*method == '\0' || *p != '\0')
		tk_cli_bad("--method", method, "not an HTTP method");
	if (tmpl_begin(ts, &err) == -1)
		tk_cli_bad(NULL, NULL, "%s", err.why);
	req_lit(ts, "--method", method, strlen(method));
	req_lit(ts, u->text, " ", 1);
	if (u->path == NULL)
		req_lit(ts, u->text, "/", 1);
	p = u->path != NULL ? u->path : u->query != NULL ? u->query : "";
	n = *p != '\0' ? u->pathlen : 0;
	path = xmalloc(n + 1);
	memcpy(path, p, n);
	path[n] = '\0';
	req_text(ts, NULL, u->text, path, u->path_col);
	free(path);
	req_lit(ts, u->text, " HTTP/1.1\r\n", 11);
	for (i = 0; i < h->nhdrs; i++) {
		check_header(h->hdrs[i]);
		if (strncasecmp(h->hdrs[i], "host:", 5) == 0)
			host = 1;
	}
	if (!host) {
		req_lit(ts, u->text, "Host: ", 6);
		req_lit(ts, u->text, u->authority, strlen(u->authority));
		req_lit(ts, u->text, "\r\n", 2);
	}
	for (i = 0; i < h->nhdrs; i++) {
		req_text(ts, "-H", h->hdrs[i], h->hdrs[i], 0);
		req_lit(ts, "-H", "\r\n", 2);
	}
	if (h->body_file != NULL)
		fixed = file = read_body(h->body_file, &flen);
	else if (h->body != NULL) {
		/* A body without placeholders has its length now. */
		memset(&bt, 0, sizeof(bt));
		memset(&err, 0, sizeof(err));
		if (tmpl_add(&bt, h->body, &err) == 0 &&
		    (p = (const char *)tmpl_fixed(bt.t[0], &n)) != NULL) {
			file = xmalloc(n);
			memcpy(file, p, n);
			fixed = file;
			flen = n;
		} else if (err.why != NULL && strcmp(err.why,
		    "empty message") == 0) {
			fixed = file = xmalloc(1);
			flen = 0;
		}
		tmpl_free(&bt);
	}
	if (has_body && fixed != NULL) {
		n = (size_t)snprintf(cl, sizeof(cl), "Content-Length: %zu\r\n"
		    "\r\n", flen);
		req_lit(ts, "--body", cl, n);
		req_lit(ts, "--body", fixed, flen);
	} else if (has_body) {
		req_lit(ts, "--body", "Content-Length:", 15);
		if (tmpl_clen(ts, &err) == -1 || tmpl_lit(ts, "\r\n\r\n", 4,
		    &err) == -1 || tmpl_body(ts, &err) == -1)
			tk_cli_bad("--body", NULL, "%s", err.why);
		req_text(ts, "--body", h->body, h->body, 0);
	} else
		req_lit(ts, u->text, "\r\n", 2);
	free(file);
	if (tmpl_end(ts, &err) == -1)
		tk_cli_bad(u->text, NULL, "%s", err.why);
}
