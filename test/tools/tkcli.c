/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tkcli: the test client of the integration scripts.  It uses plain
 * poll(2), not libtenk's loop, so that a bug in the loop cannot hide
 * itself by being on both ends; from libtenk it takes only address and
 * size parsing.  Every failure is one line on stderr starting with
 * "tkcli:" and exit status 1; bad usage exits 2.
 *
 *	echo	open connections (a bounded number connecting at once), send
 *		pseudo-random bytes in random-size writes, verify the echo
 *		byte-exact, in rounds with a barrier between them (so all
 *		connections are shown open and served at the same time),
 *		optionally idle between rounds, hold after the last, and
 *		half-close (shutdown SHUT_WR, expect all bytes then EOF).
 *	hold	echo with one small round, then "ready N" on stdout, then
 *		hold the connections idle until -d seconds or SIGTERM; with
 *		-e expect the server to close every one (idle timeout).
 *	noread	send without ever reading until the server stops taking
 *		bytes (with -a, a connection the server closes is counted
 *		and left, not a failure)
 *		bytes, say "stalled after N bytes", then sleep until killed.
 *	rst	send, read a little, then reset the connection (SO_LINGER 0)
 *		in the middle of the transfer, for -c connections.
 *
 * The byte at offset k of connection i is a function of (seed, i, k), so
 * both directions are checked without keeping what was sent.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/parse.h"
#include "tenk/rand.h"
#include "tenk/sock.h"
#include "tool.h"

#define BUFSZ		(64 * 1024)

enum cstate {
	C_IDLE = 0,		/* not yet connecting */
	C_CONNECTING,
	C_ROUND,		/* sending and verifying a round */
	C_WAIT,			/* round done, at the barrier */
	C_CLOSED,		/* closed by the server (allowed with -a) */
	C_DONE,			/* finished, socket closed */
};

struct cconn {
	int		 fd;
	uint8_t		 state;
	uint8_t		 shut;		/* SHUT_WR sent */
	uint32_t	 idx;
	uint64_t	 rng;		/* write sizes and round sizes */
	uint64_t	 target;	/* bytes sent by the end of the round */
	uint64_t	 sent;
	uint64_t	 recvd;
	double		 last;		/* time of the last byte received */
};

struct opts {
	const char	*cmd;
	struct tk_addr	 addr;
	long		 conns;
	long		 parallel;
	long		 rounds;
	uint64_t	 bmin, bmax;	/* bytes per round */
	uint64_t	 wmin, wmax;	/* bytes per write */
	uint64_t	 seed;
	double		 idle;		/* between rounds */
	double		 hold;		/* after the last round; -1 = signal */
	double		 timeout;
	long		 allow;		/* -a: minimum verified, or -1 */
	int		 half;		/* -H */
	int		 expect_close;	/* hold -e */
	int		 ready;		/* print "ready N" after round 1 */
	int		 verbose;
	unsigned int	 nsrc;		/* -S: source addresses */
	unsigned int	 src0;		/* -O: the first one's offset */
};

static struct opts	 o;
static struct cconn	*cs;
static struct pollfd	*pfds;
static char		 buf[BUFSZ], want[BUFSZ];
static volatile sig_atomic_t stop_flag;

static noreturn void fail(const char *, ...)
		    __attribute__((format(printf, 1, 2)));
static noreturn void usage(void);

/* tool_fail() naming the command: "tkcli: echo: ...". */
static void
fail(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	tool_vfail(o.cmd != NULL ? o.cmd : "error", fmt, ap);
}

static void
usage(void)
{
	fprintf(stderr, "usage: tkcli echo [-Hv] [-a min] [-b size[-size]] "
	    "[-c conns] [-d hold] [-i idle]\n"
	    "\t[-O first] [-P parallel] [-r rounds] [-S sources] [-s seed] "
	    "[-T timeout] "
	    "[-w size[-size]] addr:port\n"
	    "       tkcli hold [-ev] [-c conns] [-d secs] [-P parallel] "
	    "[-T timeout] addr:port\n"
	    "       tkcli noread [-c conns] [-a 0] [-n bytes] addr:port\n"
	    "       tkcli rst [-c conns] [-b bytes] addr:port\n");
	exit(2);
}

static void
on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static uint64_t
rnd(uint64_t *s)
{
	*s = tk_mix64(*s);
	return *s;
}

/* Uniform in [lo, hi]; log-uniform when the range spans decades. */
static uint64_t
rnd_range(uint64_t *s, uint64_t lo, uint64_t hi)
{
	uint64_t	v;
	double		f;

	if (hi <= lo)
		return lo;
	if (hi / (lo ? lo : 1) >= 64) {
		f = (double)(rnd(s) >> 11) / (double)(1ULL << 53);
		v = (uint64_t)((double)(lo ? lo : 1) *
		    exp2(f * log2((double)hi / (lo ? lo : 1))));
		if (v < lo)
			v = lo;
		if (v > hi)
			v = hi;
		return v;
	}
	return lo + rnd(s) % (hi - lo + 1);
}

/* The bytes at [off, off + n) of connection idx's stream. */
static void
gen(uint32_t idx, uint64_t off, char *p, size_t n)
{
	uint64_t	blk, v;
	size_t		i = 0, k;

	while (i < n) {
		blk = (off + i) / 8;
		v = tk_mix64(o.seed * 0x100000001b3ULL ^ ((uint64_t)idx << 40) ^
		    blk);
		k = (off + i) % 8;
		for (; k < 8 && i < n; k++, i++)
			p[i] = (char)(v >> (k * 8));
	}
}

static void
parse_range(const char *s, uint64_t *lo, uint64_t *hi)
{
	char		 a[64];
	const char	*dash, *err;

	strlcpy(a, s, sizeof(a));
	if ((dash = strchr(s, '-')) != NULL)
		a[dash - s] = '\0';
	if (tk_parse_size(a, 0, 1ULL << 40, lo, &err) == -1)
		fail("size %s: %s", s, err);
	*hi = *lo;
	if (dash != NULL && tk_parse_size(dash + 1, *lo, 1ULL << 40, hi,
	    &err) == -1)
		fail("size %s: %s", s, err);
}

static long
num(const char *s, long min, long max)
{
	const char	*err;
	long long	 n;

	n = strtonum(s, min, max, &err);
	if (err != NULL)
		fail("number %s: %s", s, err);
	return n;
}

static double
secs(const char *s)
{
	const char	*err;
	uint64_t	 ns;

	if (tk_parse_duration(s, 0, 3600ULL * 1000000000ULL, &ns, &err) == -1)
		fail("duration %s: %s", s, err);
	return ns / 1e9;
}

static void
start_connect(struct cconn *c)
{
	struct tk_addr	 src;
	const char	*err;
	char		 a[32];

	if (o.nsrc > 0) {
		/*
		 * Spread over 127.0.0.2 and up (from -O's), a port range
		 * for each.
		 */
		snprintf(a, sizeof(a), "127.0.%u.%u:0",
		    (c->idx % o.nsrc + 2 + o.src0) / 256,
		    (c->idx % o.nsrc + 2 + o.src0) % 256);
		if (tk_addr_parse(a, -1, &src, &err) == -1)
			fail("source %s: %s", a, err);
		c->fd = tk_sock_connect(&o.addr, &src);
	} else
		c->fd = tk_sock_connect(&o.addr, NULL);
	if (c->fd == -1)
		fail("conn %u: connect: %s", c->idx, strerror(errno));
	(void)tk_sock_nodelay(c->fd);
	c->state = C_CONNECTING;
}

static void
new_round(struct cconn *c)
{
	c->target += rnd_range(&c->rng, o.bmin, o.bmax);
	c->state = C_ROUND;
}

/* The server closed c early: allowed with -a, else a failure. */
static void
closed_early(struct cconn *c, const char *what)
{
	if (o.allow < 0)
		fail("conn %u: %s after %llu of %llu bytes echoed", c->idx,
		    what, (unsigned long long)c->recvd,
		    (unsigned long long)c->target);
	close(c->fd);
	c->fd = -1;
	c->state = C_CLOSED;
}

static void
do_send(struct cconn *c)
{
	uint64_t	n;
	ssize_t		r;

	while (c->sent < c->target) {
		n = rnd_range(&c->rng, o.wmin, o.wmax);
		if (n > c->target - c->sent)
			n = c->target - c->sent;
		if (n > BUFSZ)
			n = BUFSZ;
		gen(c->idx, c->sent, buf, n);
		r = send(c->fd, buf, n, MSG_NOSIGNAL);
		if (r == -1) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			if (errno == ECONNRESET || errno == EPIPE) {
				closed_early(c, strerror(errno));
				return;
			}
			fail("conn %u: send: %s", c->idx, strerror(errno));
		}
		c->sent += r;
		if ((uint64_t)r < n)
			return;
	}
}

/* Read and verify; returns 1 at EOF. */
static int
do_recv(struct cconn *c)
{
	ssize_t	r;
	size_t	i;

	for (;;) {
		r = recv(c->fd, buf, BUFSZ, 0);
		if (r == -1) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			if (errno == ECONNRESET) {
				closed_early(c, "reset by server");
				return 0;
			}
			fail("conn %u: recv: %s", c->idx, strerror(errno));
		}
		if (r == 0)
			return 1;
		if (c->recvd + r > c->sent)
			fail("conn %u: %zd bytes back but only %llu sent",
			    c->idx, r + (size_t)c->recvd,
			    (unsigned long long)c->sent);
		gen(c->idx, c->recvd, want, r);
		if (memcmp(buf, want, r) != 0) {
			for (i = 0; buf[i] == want[i]; i++)
				;
			fail("conn %u: byte %llu differs: got 0x%02x, want "
			    "0x%02x", c->idx,
			    (unsigned long long)(c->recvd + i),
			    (unsigned char)buf[i], (unsigned char)want[i]);
		}
		c->recvd += r;
		c->last = tool_now();
		if (r < BUFSZ)
			return 0;
	}
}

/* o.conns as a size, for the allocations (it is 1 to 1000000). */
static size_t
nconns(void)
{
	return o.conns > 0 && o.conns <= 1000000 ? (size_t)o.conns : 1;
}

static long
count(int state)
{
	long	i, n = 0;

	for (i = 0; i < o.conns; i++)
		if (cs[i].state == state)
			n++;
	return n;
}

/*
 * Drive every connection until each is at the barrier (C_WAIT), closed
 * by the server with -a (C_CLOSED) or finished (C_DONE).  Only the busy
 * ones are polled, so a round over thousands of connections does not
 * rescan the idle ones on every turn; those at the barrier are checked
 * for an early close afterwards.
 */
static void
run_round(int round, double deadline)
{
	struct cconn	*c;
	long		*act, nact, i, k, next = 0, connecting;
	int		 n, err, last = round == o.rounds, eof;
	socklen_t	 len;

	if ((act = calloc(nconns(), sizeof(*act))) == NULL)
		fail("out of memory");
	nact = 0;
	if (round > 1) {
		next = o.conns;		/* all connected already */
		for (i = 0; i < o.conns; i++)
			if (cs[i].state == C_ROUND)
				act[nact++] = i;
	}
	for (;;) {
		/* Drop the ones that are through, keep the order. */
		connecting = 0;
		for (i = 0, k = 0; i < nact; i++) {
			c = &cs[act[i]];
			if (c->state != C_CONNECTING && c->state != C_ROUND)
				continue;
			if (c->state == C_CONNECTING)
				connecting++;
			act[k++] = act[i];
		}
		nact = k;
		while (next < o.conns && connecting < o.parallel) {
			start_connect(&cs[next]);
			act[nact++] = next++;
			connecting++;
		}
		if (nact == 0)
			break;
		if (tool_now() > deadline)
			fail("timeout in round %d: %ld connecting, %ld "
			    "sending, %ld done, %ld closed by server", round,
			    count(C_CONNECTING), count(C_ROUND), count(C_WAIT) +
			    count(C_DONE), count(C_CLOSED));
		for (i = 0; i < nact; i++) {
			c = &cs[act[i]];
			pfds[i].fd = c->fd;
			if (c->state == C_CONNECTING)
				pfds[i].events = POLLOUT;
			else {
				pfds[i].events = POLLIN;
				if (c->sent < c->target)
					pfds[i].events |= POLLOUT;
			}
			pfds[i].revents = 0;
		}
		n = poll(pfds, nact, 100);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			fail("poll: %s", strerror(errno));
		}
		for (i = 0; i < nact && n > 0; i++) {
			c = &cs[act[i]];
			if (pfds[i].revents == 0)
				continue;
			n--;
			if (c->state == C_CONNECTING) {
				len = sizeof(err);
				err = 0;
				getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err,
				    &len);
				if (err != 0)
					fail("conn %u: connect: %s", c->idx,
					    strerror(err));
				new_round(c);
			}
			if (pfds[i].revents & (POLLOUT | POLLERR))
				do_send(c);
			if (c->state != C_ROUND)
				continue;
			if (last && o.half && !c->shut &&
			    c->sent == c->target) {
				if (shutdown(c->fd, SHUT_WR) == -1)
					fail("conn %u: shutdown: %s", c->idx,
					    strerror(errno));
				c->shut = 1;
			}
			eof = do_recv(c);
			if (c->state != C_ROUND)
				continue;
			if (eof) {
				if (o.half && c->recvd == c->target) {
					close(c->fd);
					c->fd = -1;
					c->state = C_DONE;
				} else
					closed_early(c, "closed by server");
				continue;
			}
			if (c->recvd == c->target && !o.half)
				c->state = C_WAIT;
		}
	}
	free(act);
	/* Those at the barrier must still be open. */
	for (i = 0, k = 0; i < o.conns; i++) {
		if (cs[i].state != C_WAIT)
			continue;
		pfds[k].fd = cs[i].fd;
		pfds[k].events = POLLIN;
		pfds[k].revents = 0;
		k++;
	}
	if (k > 0 && poll(pfds, k, 0) > 0) {
		for (i = 0, k = 0; i < o.conns; i++) {
			if (cs[i].state != C_WAIT)
				continue;
			if (pfds[k++].revents != 0 && do_recv(&cs[i]) &&
			    cs[i].state == C_WAIT)
				closed_early(&cs[i], "closed by server at "
				    "the barrier");
		}
	}
}

/*
 * Hold every open connection idle for t seconds (t < 0: until SIGTERM
 * or SIGINT).  Any byte or close from the server is a failure, except
 * that with -e every connection must be closed by the server in time.
 */
static void
hold(double t, const char *why)
{
	struct cconn	*c;
	double		 start = tool_now(), end = t < 0 ? 0 : start + t;
	double		 d, dmin = 1e9, dmax = 0;
	long		 i, open;
	int		 n;

	for (;;) {
		open = 0;
		for (i = 0; i < o.conns; i++) {
			pfds[i].fd = -1;
			pfds[i].events = 0;
			if (cs[i].state == C_WAIT) {
				pfds[i].fd = cs[i].fd;
				pfds[i].events = POLLIN;
				open++;
			}
		}
		if (o.expect_close && open == 0) {
			printf("closed %ld by server after %.2f s (idle %.3f "
			    "to %.3f s)\n", o.conns, tool_now() - start, dmin,
			    dmax);
			fflush(stdout);
			return;
		}
		if (stop_flag || (t >= 0 && tool_now() >= end)) {
			if (o.expect_close)
				fail("%ld of %ld connections still open "
				    "after %.1f s", open, o.conns,
				    tool_now() - start);
			return;
		}
		n = poll(pfds, o.conns, 50);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			fail("poll: %s", strerror(errno));
		}
		for (i = 0; i < o.conns && n > 0; i++) {
			c = &cs[i];
			if (pfds[i].fd == -1 || pfds[i].revents == 0)
				continue;
			n--;
			if (!o.expect_close) {
				if (do_recv(c) && c->state == C_WAIT)
					closed_early(c, why);
				continue;
			}
			if (recv(c->fd, buf, sizeof(buf), 0) > 0)
				fail("conn %u: unexpected bytes while idle",
				    c->idx);
			d = tool_now() - c->last;
			if (d < dmin)
				dmin = d;
			if (d > dmax)
				dmax = d;
			close(c->fd);
			c->fd = -1;
			c->state = C_DONE;
		}
	}
}

static void
cmd_echo(void)
{
	struct sigaction	 sa;
	double			 t0 = tool_now(), deadline = t0 + o.timeout;
	uint64_t		 total = 0;
	long			 i, closed;
	int			 r;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if ((cs = calloc(nconns(), sizeof(*cs))) == NULL ||
	    (pfds = calloc(nconns(), sizeof(*pfds))) == NULL)
		fail("out of memory");
	for (i = 0; i < o.conns; i++) {
		cs[i].idx = i;
		cs[i].fd = -1;
		cs[i].rng = tk_mix64(o.seed + 7 * (uint64_t)i + 1);
	}
	for (r = 1; r <= o.rounds; r++) {
		if (r > 1)
			for (i = 0; i < o.conns; i++)
				if (cs[i].state == C_WAIT)
					new_round(&cs[i]);
		run_round(r, deadline);
		if (stop_flag) {
			/* SIGTERM: stop after a whole round. */
			o.rounds = r;
			o.hold = 0;
		}
		if (o.verbose)
			fprintf(stderr, "tkcli: round %d done: %ld connections "
			    "at %.2f s\n", r, count(C_WAIT) + count(C_DONE),
			    tool_now() - t0);
		if (r == 1 && o.ready) {
			printf("ready %ld\n", count(C_WAIT));
			fflush(stdout);
		}
		if (r < o.rounds && o.idle > 0 && !stop_flag)
			hold(o.idle, "closed by server while idle");
	}
	if (o.hold != 0)
		hold(o.hold, "closed by server during hold");
	if (o.expect_close)
		return;
	for (i = 0; i < o.conns; i++) {
		total += cs[i].recvd;
		if (cs[i].fd != -1)
			close(cs[i].fd);
	}
	closed = count(C_CLOSED);
	if (o.allow >= 0 && o.conns - closed < o.allow)
		fail("only %ld of %ld connections served (%ld closed by "
		    "server), wanted %ld", o.conns - closed, o.conns, closed,
		    o.allow);
	printf("%s: %ld connections, %ld rounds, %llu bytes verified, %ld "
	    "closed by server, %.2f s\n", o.cmd, o.conns - closed, o.rounds,
	    (unsigned long long)total, closed, tool_now() - t0);
}

/* Send without reading until the server stops taking bytes. */
static void
cmd_noread(uint64_t limit)
{
	struct pollfd	*p;
	uint64_t	 total = 0, *sent;
	double		 lastp;
	long		 i, closed = 0;
	int		 n;
	ssize_t		 r;

	if ((p = calloc(nconns(), sizeof(*p))) == NULL ||
	    (sent = calloc(nconns(), sizeof(*sent))) == NULL)
		fail("out of memory");
	for (i = 0; i < o.conns; i++) {
		if ((p[i].fd = tk_sock_connect(&o.addr, NULL)) == -1)
			fail("connect: %s", strerror(errno));
		p[i].events = POLLOUT;
	}
	memset(buf, 'x', sizeof(buf));
	lastp = tool_now();
	while (tool_now() - lastp < 1.0) {
		n = poll(p, o.conns, 200);
		if (n == -1 && errno != EINTR)
			fail("poll: %s", strerror(errno));
		for (i = 0; i < o.conns; i++) {
			if ((p[i].revents & (POLLOUT | POLLERR | POLLHUP)) == 0)
				continue;
			if (sent[i] >= limit) {
				p[i].fd = -1;
				continue;
			}
			r = send(p[i].fd, buf, sizeof(buf), MSG_NOSIGNAL);
			if (r == -1) {
				if (errno == EAGAIN || errno == EINTR)
					continue;
				if (o.allow >= 0 && (errno == EPIPE ||
				    errno == ECONNRESET)) {
					close(p[i].fd);
					p[i].fd = -1;
					closed++;
					continue;
				}
				fail("conn %ld: send after %llu bytes: %s", i,
				    (unsigned long long)sent[i],
				    strerror(errno));
			}
			sent[i] += r;
			total += r;
			lastp = tool_now();
		}
	}
	printf("stalled after %llu bytes", (unsigned long long)total);
	if (closed > 0)
		printf(", %ld closed by the server", closed);
	printf("\n");
	fflush(stdout);
	for (;;)
		pause();
}

/* Reset connections in the middle of a transfer. */
static void
cmd_rst(uint64_t bytes)
{
	struct linger	 lg;
	struct pollfd	 p;
	uint64_t	 sent, got;
	double		 end;
	long		 i;
	ssize_t		 r;

	memset(buf, 'r', sizeof(buf));
	for (i = 0; i < o.conns; i++) {
		if ((p.fd = tk_sock_connect(&o.addr, NULL)) == -1)
			fail("connect: %s", strerror(errno));
		sent = got = 0;
		end = tool_now() + 10;
		while (sent < bytes / 2 || got == 0) {
			if (tool_now() > end)
				fail("conn %ld: no progress (sent %llu, got "
				    "%llu)", i, (unsigned long long)sent,
				    (unsigned long long)got);
			p.events = POLLIN | (sent < bytes ? POLLOUT : 0);
			if (poll(&p, 1, 100) <= 0)
				continue;
			if ((p.revents & POLLOUT) && sent < bytes) {
				r = send(p.fd, buf, bytes - sent < BUFSZ ?
				    bytes - sent : BUFSZ, MSG_NOSIGNAL);
				if (r == -1 && errno != EAGAIN)
					fail("conn %ld: send: %s", i,
					    strerror(errno));
				if (r > 0)
					sent += r;
			}
			if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
				r = recv(p.fd, want, 1024, 0);
				if (r == 0 || (r == -1 && errno != EAGAIN))
					fail("conn %ld: closed by server", i);
				if (r > 0)
					got += r;
			}
		}
		lg.l_onoff = 1;
		lg.l_linger = 0;
		if (setsockopt(p.fd, SOL_SOCKET, SO_LINGER, &lg,
		    sizeof(lg)) == -1)
			fail("SO_LINGER: %s", strerror(errno));
		close(p.fd);
	}
	printf("rst: %ld connections reset mid-transfer\n", o.conns);
}

int
main(int argc, char *argv[])
{
	const char	*err, *opts;
	uint64_t	 n = 64ULL << 20, rstbytes = 256 * 1024;
	int		 ch;

	if (argc < 2)
		usage();
	o.cmd = argv[1];
	o.conns = 1;
	o.parallel = 256;
	o.rounds = 1;
	o.bmin = 1;
	o.bmax = 64 * 1024;
	o.wmin = 1;
	o.wmax = 64 * 1024;
	o.seed = 1;
	o.timeout = 60;
	o.allow = -1;
	signal(SIGPIPE, SIG_IGN);

	if (strcmp(o.cmd, "echo") == 0)
		opts = "Ha:b:c:d:i:O:P:r:S:s:T:vw:";
	else if (strcmp(o.cmd, "hold") == 0) {
		opts = "c:d:eP:T:v";
		o.bmin = o.bmax = 16;
		o.hold = -1;
		o.ready = 1;
	} else if (strcmp(o.cmd, "noread") == 0)
		opts = "a:c:n:";
	else if (strcmp(o.cmd, "rst") == 0)
		opts = "b:c:";
	else
		usage();
	argc--;
	argv++;
	while ((ch = getopt(argc, argv, opts)) != -1) {
		switch (ch) {
		case 'H':
			o.half = 1;
			break;
		case 'a':
			o.allow = num(optarg, 0, 1000000);
			break;
		case 'b':
			if (strcmp(o.cmd, "rst") == 0)
				parse_range(optarg, &rstbytes, &rstbytes);
			else
				parse_range(optarg, &o.bmin, &o.bmax);
			if (o.bmin == 0)
				fail("-b: sizes start at 1");
			break;
		case 'c':
			o.conns = num(optarg, 1, 1000000);
			break;
		case 'd':
			o.hold = secs(optarg);
			break;
		case 'e':
			o.expect_close = 1;
			break;
		case 'i':
			o.idle = secs(optarg);
			break;
		case 'n':
			parse_range(optarg, &n, &n);
			break;
		case 'O':
			o.src0 = num(optarg, 0, 60000);
			break;
		case 'P':
			o.parallel = num(optarg, 1, 100000);
			break;
		case 'r':
			o.rounds = num(optarg, 1, 1000000);
			break;
		case 'S':
			o.nsrc = num(optarg, 0, 60000);
			break;
		case 's':
			o.seed = num(optarg, 0, LONG_MAX);
			break;
		case 'T':
			o.timeout = secs(optarg);
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'w':
			parse_range(optarg, &o.wmin, &o.wmax);
			if (o.wmin == 0)
				fail("-w: sizes start at 1");
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 1)
		usage();
	if (tk_addr_parse(argv[0], -1, &o.addr, &err) == -1)
		fail("address %s: %s", argv[0], err);
	if (o.expect_close && o.hold < 0)
		o.hold = 60;
	if (o.src0 + o.nsrc > 60000)
		fail("-O and -S: beyond 127.0.234.97");

	if (strcmp(o.cmd, "noread") == 0)
		cmd_noread(n);
	else if (strcmp(o.cmd, "rst") == 0)
		cmd_rst(rstbytes);
	else
		cmd_echo();
	return 0;
}
