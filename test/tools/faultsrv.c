/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * faultsrv: a small echo server with deliberate faults, for tenkload's
 * tests.  Single-threaded, level-triggered epoll, no libtenk loop, so that a
 * bug in the loop cannot hide a bug in the load generator.
 *
 *	--drop-byte[=OFF]	drop the byte at stream offset OFF (100)
 *	--flip-byte[=OFF]	invert the byte at stream offset OFF (100)
 *	--close-early[=N]	shut the write side once N bytes (1000)
 *				have been echoed
 *	--stall-once DUR	stop serving once for DUR (e.g. 500ms) ...
 *	--stall-after DUR	... this long after the first accept (1s)
 *	--delay DUR		echo every chunk DUR after it arrived
 *	--starve N		never read from every Nth connection accepted
 *				(it stays open, silent)
 *	--listen ADDR:PORT	IPv4 or [IPv6], default 127.0.0.1:0
 *
 * Offsets count per connection from 0.  Durations take ns, us, ms, s.
 * After binding it prints "listening on ADDR:PORT" on stderr.  SIGTERM
 * and SIGINT end it; with --delay it then says how late it released the
 * delayed chunks, and the time from a chunk's arrival in the kernel to
 * the next one's on its connection, which for a ping-pong client holds
 * its whole round trip ("delay: N chunks, late p50 NS ns, cycle p50 NS
 * ns"): the latency a client measures can be no more than that,
 * whatever the load of the machine.
 */
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tenk/clock.h"
#include "tenk/parse.h"
#include "tool.h"

#define NOFF		UINT64_MAX
#define SPIN_NS		400000		/* timers here run 100-200 us late */

struct fconn {
	int		 fd;		/* -1 when free */
	uint32_t	 gen;
	uint64_t	 in;		/* bytes received */
	uint64_t	 echoed;	/* bytes sent */
	char		*buf;		/* bytes not yet sent */
	size_t		 off;
	size_t		 len;
	size_t		 cap;
	size_t		 rel;		/* buf[off..rel) may be sent */
	int		 wantout;
	int		 shut;		/* --close-early: write side shut */
	uint64_t	 last;		/* the last chunk came, --delay */
};

/* A delayed chunk: conn fd/gen may send up to "upto" bytes at "due". */
struct seg {
	int		 fd;
	uint32_t	 gen;
	uint64_t	 due;
	uint64_t	 upto;		/* in units of the conn's "in" */
};

static struct fconn	*conns;
static size_t		 nconns;
static struct seg	*segs;
static size_t		 shead, stail, scap;
static int		 epfd;
static uint64_t		 drop_off = NOFF, flip_off = NOFF, close_after = NOFF;
static uint64_t		 delay_ns, stall_ns, stall_after = 1000000000ULL;
static uint64_t		 stall_at;	/* 0: not yet known */
static uint64_t		 starve_every, naccepted;
static int		 stalled;
#define NLATE		65536
static uint64_t		 late[NLATE];	/* a delayed chunk's lateness, ns */
static size_t		 nlate;
static uint64_t		 cycle[NLATE];	/* from one chunk to the next, ns */
static size_t		 ncycle;
static volatile sig_atomic_t	quit;

/*
 * The options that set a knob, a count or a duration (ns, us, ms, s; a
 * bare number is seconds, as tkcli reads it): one line each, read by
 * one loop in main().  An optional value left out gives def.
 */
static const struct knob {
	const char	*name;
	int		 has_arg;
	uint64_t	*var;
	int		 dur;		/* a duration, else a count */
	uint64_t	 def;		/* --NAME without =VALUE */
} knobs[] = {
	{ "close-early",	optional_argument, &close_after,  0, 1000 },
	{ "delay",		required_argument, &delay_ns,	  1, 0 },
	{ "drop-byte",		optional_argument, &drop_off,	  0, 100 },
	{ "flip-byte",		optional_argument, &flip_off,	  0, 100 },
	{ "stall-after",	required_argument, &stall_after,  1, 0 },
	{ "stall-once",		required_argument, &stall_ns,	  1, 0 },
	{ "starve",		required_argument, &starve_every, 0, 0 },
};
#define NKNOBS		(sizeof(knobs) / sizeof(knobs[0]))

/* Set k from the option's value s (NULL: none given), or exit 2. */
static void
knob_set(const struct knob *k, const char *s)
{
	const char	*err = NULL;
	int		 bad;

	if (s == NULL) {
		*k->var = k->def;
		return;
	}
	if (k->dur)
		bad = tk_parse_duration(s, 0, UINT64_MAX, k->var, &err) == -1;
	else {
		*k->var = (uint64_t)strtonum(s, 0, LLONG_MAX, &err);
		bad = err != NULL;
	}
	if (bad) {
		fprintf(stderr, "faultsrv: --%s: bad %s \"%s\": %s\n",
		    k->name, k->dur ? "duration" : "number", s, err);
		exit(2);
	}
}

static struct fconn *
conn_of(int fd)
{
	struct fconn	*nc;
	size_t		 n;

	if ((size_t)fd >= nconns) {
		n = (size_t)fd + 1024;
		if ((nc = realloc(conns, n * sizeof(*conns))) == NULL)
			tool_die("realloc");
		conns = nc;
		memset(conns + nconns, 0, (n - nconns) * sizeof(*conns));
		for (; nconns < n; nconns++)
			conns[nconns].fd = -1;
	}
	return &conns[fd];
}

static void
conn_close(struct fconn *c)
{
	epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->buf);
	c->buf = NULL;
	c->off = c->len = c->cap = c->rel = 0;
	c->fd = -1;
	c->gen++;
}

static void
set_out(struct fconn *c, int on)
{
	struct epoll_event	e;

	if (c->wantout == on)
		return;
	memset(&e, 0, sizeof(e));
	e.events = EPOLLIN | (on ? EPOLLOUT : 0);
	e.data.fd = c->fd;
	if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &e) == -1)
		tool_die("epoll_ctl");
	c->wantout = on;
}

/* Send what may be sent; returns -1 when c was closed. */
static int
conn_flush(struct fconn *c)
{
	ssize_t	n;

	while (c->off < c->rel) {
		n = send(c->fd, c->buf + c->off, c->rel - c->off,
		    MSG_NOSIGNAL);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			conn_close(c);
			return -1;
		}
		c->off += (size_t)n;
		c->echoed += (uint64_t)n;
		if (c->echoed >= close_after) {
			/*
			 * A FIN, not a RST: keep reading (and dropping) what
			 * the client still sends until it closes, or its
			 * next message would hit a closed socket and the
			 * client would see a reset instead of our close.
			 */
			shutdown(c->fd, SHUT_WR);
			c->shut = 1;
			c->off = c->len = c->rel = 0;
			set_out(c, 0);
			return -1;
		}
	}
	if (c->off == c->len) {
		c->off = c->len = c->rel = 0;
		if (c->cap > 65536) {
			free(c->buf);
			c->buf = NULL;
			c->cap = 0;
		}
	}
	set_out(c, c->off < c->rel);
	return 0;
}

static void
seg_push(struct fconn *c, uint64_t due)
{
	if (stail - shead == scap || scap == 0) {
		struct seg	*ns;
		size_t		 n = scap ? scap * 2 : 1024, i;

		if ((ns = calloc(n, sizeof(*ns))) == NULL)
			tool_die("calloc");
		for (i = 0; shead + i < stail; i++)
			ns[i] = segs[(shead + i) % scap];
		free(segs);
		segs = ns;
		stail -= shead;
		shead = 0;
		scap = n;
	}
	segs[stail % scap].fd = c->fd;
	segs[stail % scap].gen = c->gen;
	segs[stail % scap].due = due;
	segs[stail % scap].upto = c->in;
	stail++;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Release the delayed chunks that are due. */
static void
seg_run(uint64_t now)
{
	struct seg	*s;
	struct fconn	*c;
	uint64_t	 pending;

	while (shead < stail) {
		s = &segs[shead % scap];
		if (s->due > now)
			break;
		shead++;
		if (nlate < NLATE)
			late[nlate++] = now - s->due;
		c = conn_of(s->fd);
		if (c->fd != s->fd || c->gen != s->gen)
			continue;
		/* Bytes of the stream still queued end at c->in. */
		pending = c->in - s->upto;
		if (pending <= c->len && c->len - pending > c->rel)
			c->rel = c->len - pending;
		conn_flush(c);
	}
}

/*
 * recv(2), with --delay the time the kernel took the bytes in, in
 * *stamp (SO_TIMESTAMPNS, real time in ns; 0 without): a cycle measured
 * from there leaves out how late this process woke to read them.
 */
static ssize_t
recv_stamped(int fd, char *buf, size_t len, uint64_t *stamp)
{
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*cm;
	struct timespec	 ts;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(struct timespec))];
	}		 cbuf;
	ssize_t		 n;

	*stamp = 0;
	if (delay_ns == 0)
		return recv(fd, buf, len, 0);
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = buf;
	iov.iov_len = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf.buf;
	msg.msg_controllen = sizeof(cbuf.buf);
	if ((n = recvmsg(fd, &msg, 0)) <= 0)
		return n;
	for (cm = CMSG_FIRSTHDR(&msg); cm != NULL; cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_TIMESTAMPNS) {
			memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
			*stamp = (uint64_t)ts.tv_sec * 1000000000ULL +
			    (uint64_t)ts.tv_nsec;
		}
	return n;
}

static void
conn_read(struct fconn *c)
{
	char		 tmp[65536];
	ssize_t		 n;
	size_t		 k, i;
	uint64_t	 at, now;

	for (;;) {
		n = recv_stamped(c->fd, tmp, sizeof(tmp), &now);
		if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR)) {
			conn_close(c);
			return;
		}
		if (n == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (c->shut)
			continue;
		k = (size_t)n;
		at = c->in;
		c->in += k;
		if (flip_off >= at && flip_off < at + k)
			tmp[flip_off - at] ^= (char)0xff;
		if (drop_off >= at && drop_off < at + k) {
			i = (size_t)(drop_off - at);
			memmove(tmp + i, tmp + i + 1, k - i - 1);
			k--;
		}
		if (c->len + k > c->cap) {
			c->cap = (c->len + k) * 2;
			if ((c->buf = realloc(c->buf, c->cap)) == NULL)
				tool_die("realloc");
		}
		memcpy(c->buf + c->len, tmp, k);
		c->len += k;
		if (delay_ns == 0)
			c->rel = c->len;
		else {
			if (c->last != 0 && now != 0 && ncycle < NLATE)
				cycle[ncycle++] = now - c->last;
			c->last = now;
			seg_push(c, tk_clock_mono() + delay_ns);
		}
		if ((size_t)n < sizeof(tmp))
			break;
	}
	if (delay_ns == 0)
		conn_flush(c);
}

static void
do_accept(int lfd)
{
	struct epoll_event	 e;
	struct fconn		*c;
	int			 fd, one = 1;

	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (delay_ns > 0)
			setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one,
			    sizeof(one));
		c = conn_of(fd);
		c->fd = fd;
		c->in = c->echoed = 0;
		c->wantout = c->shut = 0;
		c->last = 0;
		if (starve_every > 0 && ++naccepted % starve_every == 0)
			continue;	/* held open, never read */
		memset(&e, 0, sizeof(e));
		e.events = EPOLLIN;
		e.data.fd = fd;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e) == -1)
			tool_die("epoll_ctl");
		if (stall_ns > 0 && stall_at == 0)
			stall_at = tk_clock_mono() + stall_after;
	}
}

int
main(int argc, char *argv[])
{
	struct option		 opts[NKNOBS + 2];
	struct epoll_event	 evs[256], e;
	struct timespec		 ts, *tp;
	sigset_t		 sigs;
	const char		*listen_on = "127.0.0.1:0";
	uint64_t		 now, wake;
	size_t			 k;
	int			 ch, lfd, sfd, n, i;

	for (k = 0; k < NKNOBS; k++)
		opts[k] = (struct option){ knobs[k].name, knobs[k].has_arg,
		    NULL, (int)k };
	opts[k++] = (struct option){ "listen", required_argument, NULL, 'l' };
	opts[k] = (struct option){ NULL, 0, NULL, 0 };
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch >= 0 && (size_t)ch < NKNOBS)
			knob_set(&knobs[ch], optarg);
		else if (ch == 'l')
			listen_on = optarg;
		else {
			fprintf(stderr, "usage: faultsrv [--close-early[=N]] "
			    "[--delay DUR] [--drop-byte[=OFF]]\n"
			    "\t[--flip-byte[=OFF]] [--listen ADDR:PORT] "
			    "[--stall-once DUR] [--stall-after DUR]\n"
			    "\t[--starve N]\n");
			return 2;
		}
	}

	/* Wake-ups for --delay to the microsecond, not the 50 us default. */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	/*
	 * SIGTERM and SIGINT arrive through a signalfd in the epoll set
	 * rather than a handler: ThreadSanitizer defers handlers to the
	 * next call it intercepts, and it does not intercept epoll_pwait2,
	 * so a handler-set flag would never be seen under make SAN=tsan.
	 */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL) == -1)
		tool_die("sigprocmask");
	if ((sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC)) == -1)
		tool_die("signalfd");
	signal(SIGPIPE, SIG_IGN);

	lfd = tool_listen(listen_on, 4096, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if ((epfd = epoll_create1(EPOLL_CLOEXEC)) == -1)
		tool_die("epoll_create1");
	memset(&e, 0, sizeof(e));
	e.events = EPOLLIN;
	e.data.fd = lfd;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &e) == -1)
		tool_die("epoll_ctl");
	e.data.fd = sfd;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, sfd, &e) == -1)
		tool_die("epoll_ctl");

	while (!quit) {
		now = tk_clock_mono();
		if (stall_ns > 0 && !stalled && stall_at != 0 &&
		    now >= stall_at) {
			ts.tv_sec = (time_t)(stall_ns / 1000000000ULL);
			ts.tv_nsec = (long)(stall_ns % 1000000000ULL);
			while (nanosleep(&ts, &ts) == -1 && errno == EINTR &&
			    !quit)
				;
			stalled = 1;
			now = tk_clock_mono();
		}
		seg_run(now);
		wake = UINT64_MAX;
		if (shead < stail)
			wake = segs[shead % scap].due;
		if (stall_ns > 0 && !stalled && stall_at != 0 &&
		    stall_at < wake)
			wake = stall_at;
		tp = NULL;
		if (wake != UINT64_MAX) {
			/*
			 * Sleep until shortly before a delayed echo is due,
			 * then poll without blocking: a 10 ms delay must be
			 * 10 ms to within 1%, and a sleeping wake-up on a
			 * virtual machine is late by up to 200 us.
			 */
			wake = wake > now + SPIN_NS ? wake - now - SPIN_NS : 0;
			ts.tv_sec = (time_t)(wake / 1000000000ULL);
			ts.tv_nsec = (long)(wake % 1000000000ULL);
			tp = &ts;
		}
		n = epoll_pwait2(epfd, evs, 256, tp, NULL);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			tool_die("epoll_pwait2");
		}
		for (i = 0; i < n; i++) {
			struct fconn	*c;

			if (evs[i].data.fd == lfd) {
				do_accept(lfd);
				continue;
			}
			if (evs[i].data.fd == sfd) {
				quit = 1;
				continue;
			}
			c = conn_of(evs[i].data.fd);
			if (c->fd == -1)
				continue;
			if (evs[i].events & EPOLLOUT && conn_flush(c) == -1)
				continue;
			if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				conn_read(c);
		}
	}
	if (delay_ns > 0) {
		qsort(late, nlate, sizeof(late[0]), cmp_u64);
		qsort(cycle, ncycle, sizeof(cycle[0]), cmp_u64);
		fprintf(stderr, "delay: %zu chunks, late p50 %llu ns, "
		    "cycle p50 %llu ns\n", nlate,
		    nlate > 0 ? (unsigned long long)late[(nlate - 1) / 2] : 0,
		    ncycle > 0 ? (unsigned long long)cycle[(ncycle - 1) / 2] :
		    0);
	}
	return 0;
}
