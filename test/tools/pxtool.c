/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pxtool: test peers for the proxy's integration scripts.  Plain
 * blocking sockets and one thread per connection, no libtenk loop, so a
 * bug in the loop cannot hide on both ends.  Every failure is one line
 * on stderr starting with "pxtool:" and exit status 1; bad usage exits 2.
 *
 *	upstream [-P] [-p] [-d ms | -s | -f bytes | -c] [-l addr:port]
 *		an upstream; prints "listening on ADDR:PORT" on stderr.  With
 *		-P each connection's peer is printed on stdout as one line
 *		"peer ADDR:PORT" when it is accepted.  With
 *		-p each connection must start with a PROXY protocol header
 *		(v1 or v2), printed on stdout as one line "PROXY v1 TCP4 src
 *		dst sport dport".  Then per connection: echo until EOF and
 *		close (default); -d: read until EOF, wait ms, send it all
 *		back, close; -s: read until EOF, then stay silent and open;
 *		-f: send bytes first and shut down the write side, then read
 *		until EOF, print "received N" on stdout, close; -c: echo
 *		what it can (a failed send stops the echo, not the reading)
 *		until EOF or a reset, then print "received N from TAG" on
 *		stdout, TAG being the stream's first line (as sendrst
 *		writes it), or "?" if fewer bytes came.
 *	blackhole [-l addr:port]
 *		a listener that never accepts, its backlog filled by its own
 *		connections, so that further connects hang in SYN-SENT.
 *	exhaust -S addr addr:port
 *		connect from the source address addr (any port) to
 *		addr:port until connect(2) finds no local port
 *		(EADDRNOTAVAIL), print "held N" on stdout and keep the N
 *		connections open until killed: the ports of addr toward
 *		addr:port are used up, and no other 4-tuple is touched.
 *		Meant for a network namespace with a narrow
 *		ip_local_port_range.
 *	sendrst [-e] [-n bytes] [-k tries] addr:port
 *		tries times in turn: connect, send bytes (at least 16) and
 *		reset the connection at once (SO_LINGER 0, close) without
 *		reading.  The bytes start with the line "port P\n", P being
 *		the connection's own port, which an upstream -c prints as
 *		its TAG, so that a script can pair what the upstream got
 *		with what the proxy's access log says it read from that
 *		client.  With -e (established) that line is sent first and
 *		its echo read back before the rest is sent.  Prints "reset
 *		N connections".
 *	client [-r] [-n bytes] [-T secs] addr:port
 *		connect; without -r send bytes, shut down the write side and
 *		read until EOF; with -r read until EOF first, then send and
 *		shut down, then wait for the close.  Prints "got N bytes in
 *		S s" (bytes read, seconds from the shutdown or connect to
 *		EOF or a reset, then " (reset)"), and checks an echo
 *		byte-exact when not -r.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/sock.h"
#include "tool.h"

#define BUFSZ	(64 * 1024)

static int	 opt_proxy;
static int	 opt_peer;
static long	 opt_delay = -1;
static int	 opt_silent;
static long	 opt_first = -1;
static int	 opt_count;
static pthread_mutex_t out_mtx = PTHREAD_MUTEX_INITIALIZER;

static noreturn void
usage(void)
{
	fprintf(stderr, "usage: pxtool upstream [-P] [-p] "
	    "[-d ms | -s | -f bytes | -c] [-l addr:port]\n"
	    "       pxtool blackhole [-l addr:port]\n"
	    "       pxtool exhaust -S addr addr:port\n"
	    "       pxtool sendrst [-e] [-n bytes] [-k tries] addr:port\n"
	    "       pxtool client [-r] [-n bytes] [-T secs] addr:port\n");
	exit(2);
}

/* optarg as a number from lo to hi, or the usage. */
static long
num(long lo, long hi)
{
	const char	*errstr;
	long		 v;

	v = strtonum(optarg, lo, hi, &errstr);
	if (errstr != NULL)
		usage();
	return v;
}

static int
readn(int fd, void *buf, size_t n)
{
	size_t	got = 0;
	ssize_t	r;

	while (got < n) {
		r = recv(fd, (char *)buf + got, n - got, 0);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += r;
	}
	return 0;
}

static int
writen(int fd, const void *buf, size_t n)
{
	size_t	done = 0;
	ssize_t	r;

	while (done < n) {
		r = send(fd, (const char *)buf + done, n - done, MSG_NOSIGNAL);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += r;
	}
	return 0;
}

/* Read and print a PROXY header; -1 if there is none. */
static int
read_proxy(int fd)
{
	static const unsigned char sig[12] = {
		0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49,
		0x54, 0x0a
	};
	unsigned char	 b[256];
	char		 line[300], a[64], c[64];
	size_t		 i, len;

	if (readn(fd, b, 12) == -1)
		return -1;
	if (memcmp(b, sig, 12) == 0) {
		if (readn(fd, b + 12, 4) == -1)
			return -1;
		len = (size_t)b[14] << 8 | b[15];
		if (len > sizeof(b) - 16 || readn(fd, b + 16, len) == -1)
			return -1;
		if (b[12] == 0x20)
			snprintf(line, sizeof(line), "PROXY v2 LOCAL");
		else if (b[12] == 0x21 && b[13] == 0x11 && len >= 12) {
			inet_ntop(AF_INET, b + 16, a, sizeof(a));
			inet_ntop(AF_INET, b + 20, c, sizeof(c));
			snprintf(line, sizeof(line),
			    "PROXY v2 TCP4 %s %s %d %d", a, c,
			    b[24] << 8 | b[25], b[26] << 8 | b[27]);
		} else if (b[12] == 0x21 && b[13] == 0x21 && len >= 36) {
			inet_ntop(AF_INET6, b + 16, a, sizeof(a));
			inet_ntop(AF_INET6, b + 32, c, sizeof(c));
			snprintf(line, sizeof(line),
			    "PROXY v2 TCP6 %s %s %d %d", a, c,
			    b[48] << 8 | b[49], b[50] << 8 | b[51]);
		} else
			return -1;
	} else if (memcmp(b, "PROXY ", 6) == 0) {
		/* v1: up to 107 bytes ending in CRLF. */
		for (i = 12; i < 107; i++) {
			if (readn(fd, b + i, 1) == -1)
				return -1;
			if (b[i] == '\n' && b[i - 1] == '\r')
				break;
		}
		if (i == 107)
			return -1;
		b[i - 1] = '\0';
		snprintf(line, sizeof(line), "PROXY v1 %s", (char *)b + 6);
	} else
		return -1;
	pthread_mutex_lock(&out_mtx);
	printf("%s\n", line);
	fflush(stdout);
	pthread_mutex_unlock(&out_mtx);
	return 0;
}

/* Up to BUFSZ bytes from fd into buf, as recv(2), EINTR retried. */
static ssize_t
recv_some(int fd, char *buf)
{
	ssize_t	n;

	do {
		n = recv(fd, buf, BUFSZ, 0);
	} while (n == -1 && errno == EINTR);
	return n;
}

/*
 * Upstream -c: read until EOF or a reset, echoing what the socket
 * takes, then print what came and the stream's first line.
 */
static void
count(int fd, char *buf)
{
	char	tag[32];
	size_t	len = 0, k;
	ssize_t	n;
	int	echo = 1;

	while ((n = recv_some(fd, buf)) > 0) {
		if (len < sizeof(tag)) {
			k = sizeof(tag) - len < (size_t)n ? sizeof(tag) - len :
			    (size_t)n;
			memcpy(tag + len, buf, k);
		}
		len += n;
		if (echo && writen(fd, buf, n) == -1)
			echo = 0;
	}
	for (k = 0; k < len && k < sizeof(tag) && tag[k] != '\n'; k++)
		;
	if (k == len || k == sizeof(tag))
		strlcpy(tag, "?", sizeof(tag));
	else
		tag[k] = '\0';
	pthread_mutex_lock(&out_mtx);
	printf("received %zu from %s\n", len, tag);
	fflush(stdout);
	pthread_mutex_unlock(&out_mtx);
}

static void *
serve(void *arg)
{
	int	 fd = (int)(intptr_t)arg;
	char	*buf, *all = NULL;
	size_t	 len = 0, cap = 0;
	ssize_t	 n;
	long	 i;

	if ((buf = malloc(BUFSZ)) == NULL)
		tool_fail("malloc");
	if (opt_proxy && read_proxy(fd) == -1) {
		pthread_mutex_lock(&out_mtx);
		printf("no PROXY header\n");
		fflush(stdout);
		pthread_mutex_unlock(&out_mtx);
		goto done;
	}
	if (opt_count) {
		count(fd, buf);
		goto done;
	}
	if (opt_first >= 0) {
		for (i = 0; i < opt_first; i++)
			buf[i % BUFSZ] = (char)(i * 7);
		for (i = 0; i < opt_first; i += BUFSZ)
			if (writen(fd, buf, opt_first - i < BUFSZ ?
			    opt_first - i : BUFSZ) == -1)
				goto done;
		shutdown(fd, SHUT_WR);
	}
	while ((n = recv_some(fd, buf)) > 0) {
		if (opt_delay >= 0) {
			if (len + n > cap) {
				cap = (len + n) * 2;
				if ((all = realloc(all, cap)) == NULL)
					tool_fail("realloc");
			}
			memcpy(all + len, buf, n);
			len += n;
		} else if (opt_first >= 0 || opt_silent)
			len += n;
		else if (writen(fd, buf, n) == -1)
			break;
	}
	if (opt_silent)
		for (;;)
			pause();
	if (opt_first >= 0) {
		pthread_mutex_lock(&out_mtx);
		printf("received %zu\n", len);
		fflush(stdout);
		pthread_mutex_unlock(&out_mtx);
	}
	if (opt_delay >= 0) {
		usleep(opt_delay * 1000);
		(void)writen(fd, all, len);
	}
 done:
	close(fd);
	free(all);
	free(buf);
	return NULL;
}

static void
upstream(const char *addr)
{
	struct tk_addr	peer;
	pthread_t	t;
	char		name[TK_ADDRSTRLEN];
	int		lfd, fd;

	lfd = tool_listen(addr, 1024, 0);
	for (;;) {
		if ((fd = accept(lfd, NULL, NULL)) == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			tool_die("accept");
		}
		if (opt_peer && tk_sock_peer(fd, &peer) == 0) {
			pthread_mutex_lock(&out_mtx);
			printf("peer %s\n", tk_addr_fmt(&peer, name,
			    sizeof(name)));
			fflush(stdout);
			pthread_mutex_unlock(&out_mtx);
		}
		if (pthread_create(&t, NULL, serve, (void *)(intptr_t)fd) != 0)
			tool_fail("pthread_create");
		pthread_detach(t);
	}
}

/*
 * Use up the local ports of src toward dst: nonblocking connects (the
 * peer need not accept) until one fails with EADDRNOTAVAIL.  Each
 * binds src with IP_BIND_ADDRESS_NO_PORT (tk_sock_connect), so the
 * port is picked per 4-tuple and other destinations keep theirs.
 */
static void
exhaust(const char *srcarg, const char *dstarg)
{
	struct tk_addr	 src, dst;
	const char	*errstr;
	long		 n = 0;

	if (tk_addr_parse(srcarg, 0, &src, &errstr) == -1 ||
	    tk_addr_parse(dstarg, -1, &dst, &errstr) == -1)
		tool_fail("%s", errstr);
	while (tk_sock_connect(&dst, &src) != -1)
		if (++n > 200000)
			tool_fail("still connecting after %ld: is the port "
			    "range narrow?", n);
	if (errno != EADDRNOTAVAIL)
		tool_die("connect");
	printf("held %ld\n", n);
	fflush(stdout);
	for (;;)
		pause();
}

/*
 * Fill the accept queue: with backlog 0 Linux queues one connection
 * (and later SYNs are dropped); connect until one hangs.
 */
static void
blackhole(const char *addr)
{
	struct pollfd	 pfd;
	struct tk_addr	 a;
	int		 lfd, fd, i;

	lfd = tool_listen(addr, 0, 0);
	if (tk_sock_local(lfd, &a) == -1)
		tool_die("getsockname");
	for (i = 0; i < 64; i++) {
		if ((fd = tk_sock_connect(&a, NULL)) == -1)
			tool_die("connect");
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, 300) == 0)
			break;
	}
	if (i == 64)
		tool_fail("the backlog never filled");
	fprintf(stderr, "backlog full after %d connections\n", i);
	for (;;)
		pause();
}

/*
 * sendrst: tries connections in turn, each sending bytes that start
 * with "port P\n" and reset at once; with est, that line's echo is
 * read back before the rest goes.
 */
static void
sendrst(const char *addr, long bytes, long tries, int est)
{
	struct tk_addr	 a, me;
	struct linger	 lg = { 1, 0 };
	const char	*err;
	char		*buf, line[16];
	long		 i, k;
	int		 fd, n;

	if (tk_addr_parse(addr, -1, &a, &err) == -1)
		tool_fail("%s: %s", addr, err);
	if ((buf = malloc(bytes)) == NULL)
		tool_fail("malloc");
	for (i = 0; i < tries; i++) {
		if ((fd = socket(a.ss.ss_family, SOCK_STREAM, 0)) == -1)
			tool_die("socket");
		if (connect(fd, (struct sockaddr *)&a.ss, a.len) == -1)
			tool_fail("connect %s: %s", addr, strerror(errno));
		if (tk_sock_local(fd, &me) == -1)
			tool_die("getsockname");
		n = snprintf(buf, bytes, "port %d\n", tk_addr_port(&me));
		for (k = n; k < bytes; k++)
			buf[k] = (char)('a' + (i + k) % 26);
		if (est && (writen(fd, buf, n) == -1 ||
		    readn(fd, line, n) == -1 || memcmp(buf, line, n) != 0))
			tool_fail("try %ld: no echo of the first line", i);
		if (writen(fd, buf + (est ? n : 0), bytes - (est ? n : 0)) ==
		    -1)
			tool_fail("try %ld: send: %s", i, strerror(errno));
		if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) ==
		    -1)
			tool_die("SO_LINGER");
		close(fd);
	}
	printf("reset %ld connections\n", tries);
	free(buf);
}

static void
client(const char *addr, long bytes, int recv_first, double timeout)
{
	struct tk_addr	 a;
	struct timeval	 tv;
	const char	*err;
	char		*buf, *in;
	size_t		 got = 0, cap;
	ssize_t		 n;
	double		 t0;
	long		 i;
	int		 fd, reset = 0;

	if (tk_addr_parse(addr, -1, &a, &err) == -1)
		tool_fail("%s: %s", addr, err);
	if ((fd = socket(a.ss.ss_family, SOCK_STREAM, 0)) == -1)
		tool_die("socket");
	if (connect(fd, (struct sockaddr *)&a.ss, a.len) == -1)
		tool_fail("connect %s: %s", addr, strerror(errno));
	tv.tv_sec = (time_t)timeout;
	tv.tv_usec = (suseconds_t)((timeout - tv.tv_sec) * 1e6);
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	cap = bytes > 0 ? (size_t)bytes + BUFSZ : BUFSZ;
	if ((buf = malloc(cap)) == NULL || (in = malloc(cap + BUFSZ)) ==
	    NULL)
		tool_fail("malloc");
	for (i = 0; i < bytes; i++)
		buf[i] = (char)(i * 13 + 5);
	t0 = tool_now();
	if (recv_first) {
		for (;;) {
			n = recv(fd, in, BUFSZ, 0);
			if (n == -1 && errno == EINTR)
				continue;
			if (n == -1)
				tool_die("recv");
			if (n == 0)
				break;
			got += n;
		}
	}
	if (writen(fd, buf, bytes) == -1 || shutdown(fd, SHUT_WR) == -1) {
		/* Closed by the other side before we were done. */
		if (errno != EPIPE && errno != ECONNRESET && errno != ENOTCONN)
			tool_die("send");
		reset = 1;
	}
	if (!recv_first)
		t0 = tool_now();
	while (!reset) {
		n = recv(fd, in + (recv_first ? 0 : got), recv_first ? BUFSZ :
		    cap + BUFSZ - got, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == ECONNRESET) {
			reset = 1;
			break;
		}
		if (n == -1)
			tool_fail("recv after %zu bytes, %.2f s: %s", got,
			    tool_now() - t0, strerror(errno));
		if (n == 0)
			break;
		if (!recv_first) {
			got += n;
			if (got > cap)
				tool_fail("more bytes than sent");
		}
	}
	if (!recv_first && got == (size_t)bytes &&
	    memcmp(in, buf, bytes) != 0)
		tool_fail("echo differs");
	printf("got %zu bytes in %.2f s%s\n", got, tool_now() - t0,
	    reset ? " (reset)" : "");
	close(fd);
	free(in);
	free(buf);
}

int
main(int argc, char *argv[])
{
	const char	*addr = "127.0.0.1:0", *cmd, *src = NULL;
	double		 timeout = 30;
	long		 bytes = 1000;
	long		 tries = 1;
	int		 ch, recv_first = 0, est = 0;

	if (argc < 2)
		usage();
	cmd = argv[1];
	argc--;
	argv++;
	signal(SIGPIPE, SIG_IGN);
	while ((ch = getopt(argc, argv, "cd:ef:k:l:n:PprS:sT:")) != -1) {
		switch (ch) {
		case 'c':
			opt_count = 1;
			break;
		case 'd':
			opt_delay = num(0, 600000);
			break;
		case 'f':
			opt_first = num(0, 1 << 30);
			break;
		case 'e':
			est = 1;
			break;
		case 'k':
			tries = num(1, 1000000);
			break;
		case 'l':
			addr = optarg;
			break;
		case 'n':
			bytes = num(0, 1 << 30);
			break;
		case 'P':
			opt_peer = 1;
			break;
		case 'p':
			opt_proxy = 1;
			break;
		case 'r':
			recv_first = 1;
			break;
		case 'S':
			src = optarg;
			break;
		case 's':
			opt_silent = 1;
			break;
		case 'T':
			timeout = num(1, 3600);
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (strcmp(cmd, "upstream") == 0 && argc == 0)
		upstream(addr);
	else if (strcmp(cmd, "blackhole") == 0 && argc == 0)
		blackhole(addr);
	else if (strcmp(cmd, "exhaust") == 0 && argc == 1 && src != NULL)
		exhaust(src, argv[0]);
	else if (strcmp(cmd, "sendrst") == 0 && argc == 1 && bytes >= 16)
		sendrst(argv[0], bytes, tries, est);
	else if (strcmp(cmd, "client") == 0 && argc == 1)
		client(argv[0], bytes, recv_first, timeout);
	else
		usage();
	return 0;
}
