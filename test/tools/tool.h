/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the test tools (faultsrv, pxtool, replysrv, tkcli) share: one way
 * to fail, the clock, and the listener they print for lib.sh's
 * await_listen.  Each tool is one file, so these are static inline
 * functions in a header rather than a library of their own; from
 * libtenk they take only the clock and address parsing, never the loop,
 * so that a bug in the loop cannot hide on both ends.
 *
 * A failure is one line on stderr, "PROG: what went wrong", then exit
 * status 1.
 */
#ifndef TENK_TEST_TOOL_H
#define TENK_TEST_TOOL_H

#include <sys/socket.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>

#include "tenk/clock.h"
#include "tenk/sock.h"

/* "PROG: CTX: message" (no "CTX: " when ctx is NULL), then exit 1. */
static inline noreturn void
tool_vfail(const char *ctx, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", getprogname());
	if (ctx != NULL)
		fprintf(stderr, "%s: ", ctx);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	exit(1);
}

static inline noreturn void __attribute__((format(printf, 1, 2)))
tool_fail(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	tool_vfail(NULL, fmt, ap);
}

/* A failed call: "PROG: what: strerror(errno)", then exit 1. */
static inline noreturn void
tool_die(const char *what)
{
	tool_fail("%s: %s", what, strerror(errno));
}

/* The monotonic clock in seconds, for timeouts and reports. */
static inline double
tool_now(void)
{
	return tk_clock_mono() / 1e9;
}

/*
 * A listener on arg ("ADDR:PORT", port 0 for any) with SO_REUSEADDR;
 * type adds SOCK_NONBLOCK or SOCK_CLOEXEC.  Prints "listening on
 * ADDR:PORT" with the port bound on stderr, which lib.sh's await_listen
 * waits for.  Fails rather than returns on error.
 */
static inline int
tool_listen(const char *arg, int backlog, int type)
{
	struct tk_addr	 a;
	const char	*err;
	char		 name[TK_ADDRSTRLEN];
	int		 fd, one = 1;

	if (tk_addr_parse(arg, 0, &a, &err) == -1)
		tool_fail("%s: %s", arg, err);
	if ((fd = socket(a.ss.ss_family, SOCK_STREAM | type, 0)) == -1)
		tool_die("socket");
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a.ss, a.len) == -1 ||
	    listen(fd, backlog) == -1 || tk_sock_local(fd, &a) == -1)
		tool_fail("listen on %s: %s", arg, strerror(errno));
	fprintf(stderr, "listening on %s\n", tk_addr_fmt(&a, name,
	    sizeof(name)));
	return fd;
}

#endif /* TENK_TEST_TOOL_H */
