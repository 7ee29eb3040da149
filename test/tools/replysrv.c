/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * replysrv: a server that answers in one of tenkload's reply framings,
 * or deliberately in none, for the integration tests of --reply.  One
 * blocking thread per connection and no libtenk loop, so that it is
 * plainly correct and a bug in the loop cannot hide a bug in the load
 * generator.
 *
 *	(no mode)		echo every byte received
 *	--prefix u16be|u32be	length-prefixed echo: each request, a
 *				big-endian length and that many bytes,
 *				comes back as it was
 *	--line[=TEXT]		answer each line received (up to "\n")
 *				with TEXT and CRLF; TEXT is "+OK", a
 *				valid line and a valid RESP reply
 *	--silent		read everything, answer nothing
 *	--garbage		answer each chunk received with bytes that
 *				are no echo, no RESP and no HTTP reply, and
 *				hold no newline
 *	--close-after N		after N replies (lines, prefixed messages,
 *				or chunks echoed) close the connection:
 *				FIN first, then wait for the client's
 *				(2 s at most), so that replies already
 *				sent are never lost to a reset
 *	--listen ADDR:PORT	IPv4 or [IPv6], default 127.0.0.1:0
 *
 * After binding it prints "listening on ADDR:PORT" on stderr, as
 * test/tools/faultsrv.c does (test/integ/lib.sh await_listen).  SIGTERM
 * and SIGINT end it.
 */
#include <sys/socket.h>
#include <sys/time.h>

#include <netinet/in.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

#define BUFSZ		16384
#define STACKSZ		(256 * 1024)
#define LINGER_S	2		/* wait for the client's FIN */

enum mode {
	M_ECHO = 0,
	M_PREFIX,
	M_LINE,
	M_SILENT,
	M_GARBAGE
};

/* Starts with NUL and 0xff: no RESP type, no "HTTP/", no "\n". */
static const char	 garbage[] = "\0\377garbage\001";

static int		 mode;		/* enum mode; getopt_long sets it */
static unsigned int	 width;		/* --prefix: 2 or 4 */
static const char	*line_text = "+OK";
static uint64_t		 close_after;	/* 0: never */

/* A connection's output, staged so that pipelined replies go in one send. */
struct out {
	int		 fd;
	size_t		 len;
	unsigned char	 buf[BUFSZ];
};

static void
usage(void)
{
	fprintf(stderr, "usage: replysrv [--close-after N] "
	    "[--garbage | --line[=TEXT] | --prefix u16be|u32be |\n"
	    "\t--silent] [--listen ADDR:PORT]\n");
	exit(2);
}

/* recv() a chunk: >0 bytes, 0 at EOF or on any error. */
static size_t
rd(int fd, void *buf, size_t n)
{
	ssize_t	 r;

	for (;;) {
		if ((r = recv(fd, buf, n, 0)) >= 0)
			return (size_t)r;
		if (errno != EINTR)
			return 0;
	}
}

/* Send all of o's staged bytes: 0, or -1 when the client is gone. */
static int
flush(struct out *o)
{
	size_t	 off = 0;
	ssize_t	 r;

	while (off < o->len) {
		r = send(o->fd, o->buf + off, o->len - off, MSG_NOSIGNAL);
		if (r == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		off += (size_t)r;
	}
	o->len = 0;
	return 0;
}

static int
put(struct out *o, const void *p, size_t n)
{
	const unsigned char	*s = p;
	size_t			 k;

	while (n > 0) {
		if (o->len == sizeof(o->buf) && flush(o) == -1)
			return -1;
		k = sizeof(o->buf) - o->len;
		if (k > n)
			k = n;
		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
	}
	return 0;
}

/* One reply more: 1 when --close-after is reached. */
static int
counted(uint64_t *replies)
{
	return close_after > 0 && ++*replies >= close_after;
}

/*
 * Serve one connection in the chosen mode until EOF, an error or
 * --close-after.  Returns 1 when this side should close first.
 */
static int
serve(struct out *o, unsigned char *in)
{
	uint64_t	 replies = 0, left = 0;
	size_t		 linelen = strlen(line_text);
	unsigned char	 hdr[4];
	unsigned int	 have = 0;
	size_t		 n, i, k;

	while ((n = rd(o->fd, in, BUFSZ)) > 0) {
		switch (mode) {
		case M_SILENT:
			continue;
		case M_ECHO:
		case M_GARBAGE:
			if ((mode == M_ECHO ? put(o, in, n) :
			    put(o, garbage, sizeof(garbage) - 1)) == -1 ||
			    flush(o) == -1)
				return 0;
			if (counted(&replies))
				return 1;
			continue;
		case M_LINE:
			for (i = 0; i < n; i++) {
				if (in[i] != '\n')
					continue;
				if (put(o, line_text, linelen) == -1 ||
				    put(o, "\r\n", 2) == -1)
					return 0;
				if (counted(&replies))
					return flush(o) == 0;
			}
			break;
		case M_PREFIX:
			for (i = 0; i < n; i += k) {
				k = 1;
				if (have < width) {
					hdr[have++] = in[i];
					left = left << 8 | in[i];
					if (have < width)
						continue;
					if (put(o, hdr, width) == -1)
						return 0;
				} else {
					k = n - i < left ? n - i : (size_t)left;
					if (put(o, in + i, k) == -1)
						return 0;
					left -= k;
				}
				if (left > 0)
					continue;
				have = 0;
				if (counted(&replies))
					return flush(o) == 0;
			}
			break;
		}
		if (flush(o) == -1)
			return 0;
	}
	return 0;
}

static void *
conn_main(void *arg)
{
	struct out	*o = arg;
	unsigned char	*in;
	struct timeval	 tv = { LINGER_S, 0 };

	if ((in = malloc(BUFSZ)) == NULL)
		goto done;
	if (serve(o, in) == 1) {
		shutdown(o->fd, SHUT_WR);
		setsockopt(o->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		while (rd(o->fd, in, BUFSZ) > 0)
			;
	}
	free(in);
 done:
	close(o->fd);
	free(o);
	return NULL;
}

static void
spawn(int fd)
{
	pthread_attr_t	 attr;
	pthread_t	 t;
	struct out	*o;

	if ((o = calloc(1, sizeof(*o))) == NULL) {
		close(fd);
		return;
	}
	o->fd = fd;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, STACKSZ);
	if (pthread_create(&t, &attr, conn_main, o) != 0) {
		fprintf(stderr, "replysrv: pthread_create failed\n");
		close(fd);
		free(o);
	}
	pthread_attr_destroy(&attr);
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "close-after",	required_argument, NULL,  'c' },
		{ "garbage",		no_argument,	   &mode, M_GARBAGE },
		{ "line",		optional_argument, &mode, M_LINE },
		{ "listen",		required_argument, NULL,  'l' },
		{ "prefix",		required_argument, &mode, M_PREFIX },
		{ "silent",		no_argument,	   &mode, M_SILENT },
		{ NULL,			0,		   NULL,  0 }
	};
	struct timespec		 pause = { 0, 10000000 };
	const char		*listen_on = "127.0.0.1:0", *err;
	int			 ch, lfd, fd, nmodes = 0;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 0:		/* a mode, which getopt_long stored */
			nmodes++;
			if (mode == M_LINE && optarg != NULL)
				line_text = optarg;
			if (mode != M_PREFIX)
				break;
			if (strcmp(optarg, "u16be") == 0)
				width = 2;
			else if (strcmp(optarg, "u32be") == 0)
				width = 4;
			else {
				fprintf(stderr, "replysrv: --prefix is u16be "
				    "or u32be\n");
				return 2;
			}
			break;
		case 'c':
			close_after = (uint64_t)strtonum(optarg, 1, LLONG_MAX,
			    &err);
			if (err != NULL) {
				fprintf(stderr, "replysrv: --close-after: "
				    "%s\n", err);
				return 2;
			}
			break;
		case 'l':
			listen_on = optarg;
			break;
		default:
			usage();
		}
	}
	if (argc > optind || nmodes > 1)
		usage();

	signal(SIGPIPE, SIG_IGN);
	lfd = tool_listen(listen_on, 4096, SOCK_CLOEXEC);

	/* SIGTERM and SIGINT keep their default action: the end. */
	for (;;) {
		if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) == -1) {
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM)
				nanosleep(&pause, NULL);
			else if (errno != EINTR && errno != ECONNABORTED)
				tool_die("accept4");
			continue;
		}
		spawn(fd);
	}
}
