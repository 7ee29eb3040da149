/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * minproxy: the least an epoll proxy can do per message, as a yardstick
 * for proxy-compare.sh, not a proxy to use.
 *
 *	minproxy LISTEN_ADDR:PORT UPSTREAM_ADDR:PORT NPROC
 *
 * NPROC processes, each with its own SO_REUSEPORT listener on 127.0.0.1
 * and one edge-triggered epoll set; a readable socket is read until a
 * short read and each chunk is sent to the other side at once.  It has
 * none of what a proxy needs: no timeouts, no buffering (a partial send
 * loses bytes), a blocking-free connect that is assumed to finish before
 * the first byte (true on loopback), no accounting; a closed pair's
 * memory is never freed.  Whatever it costs per message, tenkd cannot
 * cost much less with the same system calls.
 *
 *	cc -O2 -o minproxy minproxy.c	(with yardstick.h beside it)
 */
#define _GNU_SOURCE
#include <sys/epoll.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "yardstick.h"

struct end {
	int		 fd;
	struct end	*peer;
};

static char	buf[16384];

int
main(int argc, char *argv[])
{
	struct sockaddr_in	 ua;
	struct epoll_event	 ev, evs[512];
	struct end		*e, *a, *b;
	ssize_t			 r;
	int			 one = 1, lfd, ep, n, i, c, u;

	lfd = yardstick_start(argc, argv, SOCK_NONBLOCK, &ua);
	ep = epoll_create1(0);
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = NULL;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	for (;;) {
		n = epoll_wait(ep, evs, 512, -1);
		for (i = 0; i < n; i++) {
			if ((e = evs[i].data.ptr) == NULL) {
				while ((c = accept4(lfd, NULL, NULL,
				    SOCK_NONBLOCK)) != -1) {
					u = socket(AF_INET, SOCK_STREAM |
					    SOCK_NONBLOCK, 0);
					setsockopt(c, IPPROTO_TCP, TCP_NODELAY,
					    &one, sizeof(one));
					setsockopt(u, IPPROTO_TCP, TCP_NODELAY,
					    &one, sizeof(one));
					connect(u, (struct sockaddr *)&ua,
					    sizeof(ua));
					a = malloc(sizeof(*a));
					b = malloc(sizeof(*b));
					a->fd = c;
					b->fd = u;
					a->peer = b;
					b->peer = a;
					ev.events = EPOLLIN | EPOLLRDHUP |
					    EPOLLET;
					ev.data.ptr = a;
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
					ev.data.ptr = b;
					epoll_ctl(ep, EPOLL_CTL_ADD, u, &ev);
				}
				continue;
			}
			for (;;) {
				r = recv(e->fd, buf, sizeof(buf), 0);
				if (r > 0) {
					send(e->peer->fd, buf, r, MSG_NOSIGNAL);
					if (r < (ssize_t)sizeof(buf))
						break;
					continue;
				}
				if (r == -1 && errno == EAGAIN)
					break;
				/* EOF or error: both go (e and peer leak) */
				close(e->fd);
				close(e->peer->fd);
				break;
			}
		}
	}
}
