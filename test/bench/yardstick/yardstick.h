/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The start-up the yardstick proxies share: arguments, the worker
 * processes and the listener.
 */
#ifndef YARDSTICK_H
#define YARDSTICK_H

#include <sys/prctl.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
port_of(const char *s)
{
	const char	*c = strrchr(s, ':');

	return c != NULL ? atoi(c + 1) : atoi(s);
}

/*
 * argv is LISTEN UPSTREAM NPROC: fork to NPROC processes (the others
 * die with the first), then return this one's listener on 127.0.0.1,
 * SO_REUSEPORT, made with the socket type flags in type, and fill *ua
 * with the upstream's address.  Exits on a bad command line or bind.
 */
static int
yardstick_start(int argc, char *argv[], int type, struct sockaddr_in *ua)
{
	struct sockaddr_in	 sa;
	int			 np, i, one = 1, lfd;

	if (argc != 4) {
		fprintf(stderr, "usage: %s LISTEN UPSTREAM NPROC\n", argv[0]);
		exit(2);
	}
	np = atoi(argv[3]);
	for (i = 1; i < np; i++)
		if (fork() == 0) {
			(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
			break;
		}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*ua = sa;
	sa.sin_port = htons(port_of(argv[1]));
	ua->sin_port = htons(port_of(argv[2]));
	lfd = socket(AF_INET, SOCK_STREAM | type, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    listen(lfd, 4096) == -1) {
		perror("bind");
		exit(1);
	}
	return lfd;
}

#endif
