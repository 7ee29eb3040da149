/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The smallest HTTP/1.1 server that Prometheus and curl are happy with,
 * for the metrics listener: one request per connection, GET or HEAD,
 * answered with "Connection: close" and closed.  It runs on one loop
 * (the main thread's, or the master's), accepts a handful of clients,
 * and owns nothing but their bytes: what a path means is the caller's
 * (metrics.c), which may answer at once or later, when the figures it
 * asked the workers for are in (http_answer).
 *
 * A request whose head passes HTTP_MAXREQ bytes, or a client that has
 * not been answered HTTP_DEADLINE after it connected, is closed: a
 * scraper that trickles bytes (slowloris) holds one descriptor for a
 * few seconds at most.  At most hs->max clients are served at once
 * (--metrics-max-clients); one more is accepted, told 503 in one
 * nonblocking send and closed, and counted (refused), rather than left
 * in the backlog: a scraper gets its answer at once, and what the
 * listener may hold is max + 2 descriptors, which main.c keeps out of
 * --max-conns where it serves them (metrics_fds).
 */
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/log.h"
#include "tenk/timer.h"
#include "../tenkd.h"

#define HTTP_MAXREQ	8192		/* request head, bytes */
#define HTTP_DEADLINE	(5 * TK_SEC)	/* from accept to the last byte */

struct http_client {
	struct tk_io		 io;
	struct http_srv		*hs;
	LIST_ENTRY(http_client)	 link;
	struct tk_timer		 timer;
	char			 in[HTTP_MAXREQ];
	size_t			 inlen;
	char			 path[256];
	char			*out;
	size_t			 outlen;
	size_t			 outoff;
	unsigned int		 waiting:1;	/* handed to fn, no reply */
	unsigned int		 head:1;	/* HEAD: no body */
};

static void	http_accept(struct tk_loop *, struct tk_io *);
static void	http_io(struct tk_loop *, struct tk_io *);
static void	http_expire(struct tk_loop *, struct tk_timer *);
static void	http_refuse(struct http_srv *, int);
static void	http_free(struct http_client *);
static int	http_parse(struct http_client *);

/*
 * Serve HTTP on the listening socket fd (nonblocking) in loop l; fn
 * gets each request's path.  Returns 0, or -1 with errno set.  Owner
 * thread of l.
 */
int
http_start(struct http_srv *hs, struct tk_loop *l, int fd, http_fn *fn,
    int max)
{
	hs->l = l;
	hs->fn = fn;
	hs->max = max;
	hs->nclients = 0;
	LIST_INIT(&hs->clients);
	tk_io_init(&hs->io, fd, http_accept, hs);
	return tk_io_start(l, &hs->io, TK_EV_READ);
}

/*
 * Close the listener and every client: at exit, or in a forked worker
 * that inherited them from the master, where the loop is not its own
 * (so nothing is unregistered, only closed).
 */
void
http_stop(struct http_srv *hs, int forked)
{
	struct http_client	*c;

	while ((c = LIST_FIRST(&hs->clients)) != NULL) {
		if (forked) {
			close(c->io.fd);
			LIST_REMOVE(c, link);
			hs->nclients--;
			free(c->out);
			free(c);
		} else
			http_free(c);
	}
	if (hs->io.fd == -1)
		return;
	if (!forked)
		tk_io_stop(hs->l, &hs->io);
	close(hs->io.fd);
	hs->io.fd = -1;
}

static void
http_accept(struct tk_loop *l, struct tk_io *io)
{
	struct http_srv		*hs = io->arg;
	struct http_client	*c;
	int			 fd, n;

	for (n = 0; n < 16; n++) {
		fd = accept4(io->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN)
				log_warn("metrics: accept4");
			tk_io_block(io, TK_EV_READ);
			return;
		}
		if (hs->nclients >= hs->max) {
			http_refuse(hs, fd);
			continue;
		}
		if ((c = calloc(1, sizeof(*c))) == NULL) {
			close(fd);
			continue;
		}
		c->hs = hs;
		tk_io_init(&c->io, fd, http_io, c);
		tk_timer_init(&c->timer, http_expire, c);
		if (tk_io_start(l, &c->io, TK_EV_READ) == -1 ||
		    tk_timer_arm(l, &c->timer, HTTP_DEADLINE) == -1) {
			tk_io_stop(l, &c->io);
			close(fd);
			free(c);
			continue;
		}
		LIST_INSERT_HEAD(&hs->clients, c, link);
		hs->nclients++;
	}
}

/*
 * A client past hs->max: "503", if its socket takes it at once, and
 * closed.  The request is not read, so the close may reset instead.
 */
static void
http_refuse(struct http_srv *hs, int fd)
{
	static const char	msg[] = "HTTP/1.1 503 Service Unavailable\r\n"
	    "Content-Type: text/plain\r\nContent-Length: 17\r\n"
	    "Connection: close\r\n\r\ntoo many clients\n";

	(void)send(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
	if (hs->refused++ == 0)
		log_warnx("metrics: more than %d clients at once: refusing "
		    "the rest (--metrics-max-clients)", hs->max);
}

static void
http_free(struct http_client *c)
{
	tk_timer_cancel(c->hs->l, &c->timer);
	(void)tk_io_close(c->hs->l, &c->io);
	LIST_REMOVE(c, link);
	c->hs->nclients--;
	free(c->out);
	free(c);
}

static void
http_expire(struct tk_loop *l, struct tk_timer *t)
{
	(void)l;
	http_free(t->arg);
}

/*
 * Look for the end of the head in c->in; on finding it, take the path
 * of "GET /path HTTP/1.x".  Returns 1 when a whole head is in (the
 * path set, or a status to send in c->out), 0 to read on, -1 to close.
 */
static int
http_parse(struct http_client *c)
{
	char	*end, *sp, *sp2;

	if ((end = memmem(c->in, c->inlen, "\r\n\r\n", 4)) == NULL &&
	    (end = memmem(c->in, c->inlen, "\n\n", 2)) == NULL)
		return c->inlen == sizeof(c->in) ? -1 : 0;
	*end = '\0';
	if ((sp = strchr(c->in, ' ')) == NULL ||
	    (sp2 = strchr(sp + 1, ' ')) == NULL ||
	    strncmp(sp2 + 1, "HTTP/1.", 7) != 0) {
		HTTP_TEXT(c, 400, "bad request\n");
		return 1;
	}
	*sp = *sp2 = '\0';
	if (strcmp(c->in, "HEAD") == 0)
		c->head = 1;
	else if (strcmp(c->in, "GET") != 0) {
		HTTP_TEXT(c, 405, "GET only\n");
		return 1;
	}
	/* The query string is not ours: "/metrics?x" is "/metrics". */
	sp2 = sp + 1 + strcspn(sp + 1, "?#");
	*sp2 = '\0';
	strlcpy(c->path, sp + 1, sizeof(c->path));
	return 1;
}

static void
http_io(struct tk_loop *l, struct tk_io *io)
{
	struct http_client	*c = io->arg;
	ssize_t			 n;
	int			 r;

	(void)l;
	if (c->out == NULL && !c->waiting) {
		n = recv(io->fd, c->in + c->inlen, sizeof(c->in) - c->inlen,
		    0);
		if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
			tk_io_block(io, TK_EV_READ);
			return;
		}
		if (n <= 0) {
			http_free(c);
			return;
		}
		c->inlen += (size_t)n;
		if ((r = http_parse(c)) == -1) {
			http_free(c);
			return;
		}
		if (r == 0)
			return;
		if (c->out == NULL) {
			c->waiting = 1;
			(void)tk_io_want(c->hs->l, io, 0);
			c->hs->fn(c->hs, c, c->path);
		}
		return;
	}
	while (c->outoff < c->outlen) {
		n = send(io->fd, c->out + c->outoff, c->outlen - c->outoff,
		    MSG_NOSIGNAL);
		if (n == -1) {
			if (errno == EAGAIN) {
				tk_io_block(io, TK_EV_WRITE);
				return;
			}
			if (errno == EINTR)
				continue;
			break;
		}
		c->outoff += (size_t)n;
	}
	http_free(c);
}

/*
 * Answer c with status and body (len bytes, copied), then close it.
 * May be called from fn or later through http_answer().
 */
void
http_reply(struct http_client *c, int status, const char *ctype,
    const char *body, size_t len)
{
	const char	*reason;
	char		 head[256];
	int		 n;

	switch (status) {
	case 200:
		reason = "OK";
		break;
	case 400:
		reason = "Bad Request";
		break;
	case 404:
		reason = "Not Found";
		break;
	case 405:
		reason = "Method Not Allowed";
		break;
	default:
		reason = "Service Unavailable";
		break;
	}
	n = snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\n"
	    "Content-Type: %s\r\nContent-Length: %zu\r\n"
	    "Connection: close\r\n\r\n", status, reason, ctype, len);
	if (c->head)
		len = 0;
	c->waiting = 0;
	if ((c->out = malloc((size_t)n + len)) == NULL) {
		http_free(c);
		return;
	}
	memcpy(c->out, head, (size_t)n);
	if (len > 0)
		memcpy(c->out + n, body, len);
	c->outlen = (size_t)n + len;
	if (tk_io_want(c->hs->l, &c->io, TK_EV_WRITE) == -1)
		http_free(c);
}

/* Call fn again for every client still waiting for its answer. */
void
http_answer(struct http_srv *hs)
{
	struct http_client	*c, *next;

	LIST_FOREACH_SAFE(c, &hs->clients, link, next)
		if (c->waiting)
			hs->fn(hs, c, c->path);
}
