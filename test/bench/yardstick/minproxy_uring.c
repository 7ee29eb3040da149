/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * minproxy_uring: the least an io_uring proxy can do per message, as a
 * yardstick for proxy-compare.sh, not a proxy to use.
 *
 *	minproxy_uring LISTEN_ADDR:PORT UPSTREAM_ADDR:PORT NPROC
 *
 * NPROC processes, each with its own SO_REUSEPORT listener on 127.0.0.1
 * and one ring (single issuer, deferred task work): a multishot accept,
 * a multishot recv per socket into a ring of provided buffers, and a
 * send of each received buffer to the other side, the buffer going back
 * to the ring when the send completes; one io_uring_enter per batch.
 * Like minproxy.c it has no timeouts, no buffering (a partial send
 * loses bytes), a blocking connect, and no accounting.
 *
 *	cc -O2 -o minproxy_uring minproxy_uring.c -luring  (liburing-dev)
 */
#define _GNU_SOURCE
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <liburing.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "yardstick.h"

#define NBUF	4096
#define BUFSZ	2048

enum { T_ACCEPT, T_RECV, T_SEND };	/* low 3 bits of user_data */

struct end {
	int		 fd;
	struct end	*peer;
};

static struct io_uring		 ring;
static struct io_uring_buf_ring	*br;
static char			*bufs;
static int			 lfd;

static struct io_uring_sqe *
sqe_get(void)
{
	struct io_uring_sqe	*s;

	while ((s = io_uring_get_sqe(&ring)) == NULL)
		io_uring_submit(&ring);
	return s;
}

static void
arm_accept(void)
{
	struct io_uring_sqe	*s = sqe_get();

	io_uring_prep_multishot_accept(s, lfd, NULL, NULL, 0);
	io_uring_sqe_set_data64(s, T_ACCEPT);
}

static void
arm_recv(struct end *e)
{
	struct io_uring_sqe	*s = sqe_get();

	io_uring_prep_recv_multishot(s, e->fd, NULL, 0, 0);
	s->flags |= IOSQE_BUFFER_SELECT;
	s->buf_group = 0;
	io_uring_sqe_set_data64(s, (uint64_t)(uintptr_t)e | T_RECV);
}

static void
buf_put(int bid)
{
	io_uring_buf_ring_add(br, bufs + (size_t)bid * BUFSZ, BUFSZ, bid,
	    io_uring_buf_ring_mask(NBUF), 0);
	io_uring_buf_ring_advance(br, 1);
}

int
main(int argc, char *argv[])
{
	struct sockaddr_in	 ua;
	struct io_uring_params	 p;
	struct io_uring_buf_reg	 reg;
	struct io_uring_cqe	*cqe;
	struct io_uring_sqe	*s;
	struct end		*e, *a, *b;
	uint64_t		 ud;
	unsigned int		 head, n;
	int			 one = 1, ret, i, type, res, u, bid;

	lfd = yardstick_start(argc, argv, 0, &ua);

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
	    IORING_SETUP_CQSIZE;
	p.cq_entries = 16384;
	if ((ret = io_uring_queue_init_params(4096, &ring, &p)) < 0) {
		fprintf(stderr, "minproxy_uring: init: %s\n", strerror(-ret));
		return 1;
	}
	if (posix_memalign((void **)&br, 4096,
	    NBUF * sizeof(struct io_uring_buf)) != 0 ||
	    (bufs = malloc((size_t)NBUF * BUFSZ)) == NULL)
		return 1;
	io_uring_buf_ring_init(br);
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (uintptr_t)br;
	reg.ring_entries = NBUF;
	reg.bgid = 0;
	if ((ret = io_uring_register_buf_ring(&ring, &reg, 0)) < 0) {
		fprintf(stderr, "minproxy_uring: buffer ring: %s\n",
		    strerror(-ret));
		return 1;
	}
	for (i = 0; i < NBUF; i++)
		buf_put(i);

	arm_accept();
	for (;;) {
		io_uring_submit_and_wait(&ring, 1);
		n = 0;
		io_uring_for_each_cqe(&ring, head, cqe) {
			n++;
			ud = cqe->user_data;
			type = ud & 7;
			res = cqe->res;
			switch (type) {
			case T_ACCEPT:
				if ((cqe->flags & IORING_CQE_F_MORE) == 0)
					arm_accept();
				if (res < 0)
					break;
				u = socket(AF_INET, SOCK_STREAM, 0);
				if (connect(u, (struct sockaddr *)&ua,
				    sizeof(ua)) == -1) {
					close(u);
					close(res);
					break;
				}
				setsockopt(res, IPPROTO_TCP, TCP_NODELAY, &one,
				    sizeof(one));
				setsockopt(u, IPPROTO_TCP, TCP_NODELAY, &one,
				    sizeof(one));
				a = aligned_alloc(8, sizeof(*a));
				b = aligned_alloc(8, sizeof(*b));
				a->fd = res;
				b->fd = u;
				a->peer = b;
				b->peer = a;
				arm_recv(a);
				arm_recv(b);
				break;
			case T_RECV:
				e = (struct end *)(uintptr_t)(ud & ~7ULL);
				if (res > 0) {
					bid = cqe->flags >>
					    IORING_CQE_BUFFER_SHIFT;
					s = sqe_get();
					io_uring_prep_send(s, e->peer->fd,
					    bufs + (size_t)bid * BUFSZ, res,
					    MSG_NOSIGNAL);
					io_uring_sqe_set_data64(s,
					    ((uint64_t)bid << 3) | T_SEND);
				}
				if ((cqe->flags & IORING_CQE_F_MORE) != 0)
					break;
				if (res > 0 || res == -ENOBUFS)
					arm_recv(e);
				else {	/* EOF or error: both go (e leaks) */
					shutdown(e->fd, SHUT_RDWR);
					shutdown(e->peer->fd, SHUT_RDWR);
				}
				break;
			default:
				buf_put((int)(ud >> 3));
				break;
			}
		}
		io_uring_cq_advance(&ring, n);
	}
}
