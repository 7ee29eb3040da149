/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Socket helpers: address parsing and formatting (v4, v6, names, default
 * ports, bad input with its phrase), listeners and their options, and a
 * nonblocking connect from a second loopback address seen from the
 * accepting side.  Loopback only; no DNS beyond /etc/hosts.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "tenk/sock.h"
#include "../t.h"

/* Parse s and expect it printed back as want. */
static void
parse_fmt(const char *s, int defport, const char *want)
{
	struct tk_addr	 a, b;
	char		 buf[TK_ADDRSTRLEN];
	const char	*err = "unset";

	if (tk_addr_parse(s, defport, &a, &err) != 0)
		T_FAIL("\"%s\": %s", s, err);
	T_OK(err == NULL);
	T_OK(tk_addr_fmt(&a, buf, sizeof(buf)) == buf);
	T_STREQ(buf, want);
	/* And the printed form parses to the same address. */
	if (tk_addr_parse(buf, -1, &b, &err) != 0)
		T_FAIL("\"%s\" reparsed: %s", buf, err);
	T_OK(tk_addr_eq(&a, &b));
}

static void
parse_bad(const char *s, int defport, const char *want)
{
	struct tk_addr	 a;
	const char	*err = NULL;

	if (tk_addr_parse(s, defport, &a, &err) != -1)
		T_FAIL("\"%s\": accepted", s);
	if (err == NULL || strcmp(err, want) != 0)
		T_FAIL("\"%s\": errstr \"%s\", want \"%s\"", s,
		    err ? err : "(null)", want);
	/* errstr may be NULL. */
	T_EQ(tk_addr_parse(s, defport, &a, NULL), -1);
}

/* Wait for ev on fd, at most two seconds. */
static void
wait_fd(int fd, short ev)
{
	struct pollfd	pfd = { fd, ev, 0 };

	T_EQ(poll(&pfd, 1, 2000), 1);
}

TEST(sock_addr_v4)
{
	struct tk_addr	a, b;
	char		buf[TK_ADDRSTRLEN];

	parse_fmt("1.2.3.4:80", -1, "1.2.3.4:80");
	parse_fmt("0.0.0.0:0", -1, "0.0.0.0:0");
	parse_fmt("127.0.0.1:65535", -1, "127.0.0.1:65535");
	parse_fmt("127.0.0.1:0080", -1, "127.0.0.1:80");
	parse_fmt("10.0.0.1", 7, "10.0.0.1:7");
	parse_fmt("10.0.0.1:9", 7, "10.0.0.1:9");

	T_EQ(tk_addr_parse("192.168.1.2:443", -1, &a, NULL), 0);
	T_EQ(a.ss.ss_family, AF_INET);
	T_EQ(a.len, sizeof(struct sockaddr_in));
	T_EQ(tk_addr_port(&a), 443);
	T_STREQ(tk_addr_fmt_host(&a, buf, sizeof(buf)), "192.168.1.2");
	tk_addr_set_port(&a, 8443);
	T_EQ(tk_addr_port(&a), 8443);
	T_STREQ(tk_addr_fmt(&a, buf, sizeof(buf)), "192.168.1.2:8443");

	T_EQ(tk_addr_parse("192.168.1.2:8443", -1, &b, NULL), 0);
	T_OK(tk_addr_eq(&a, &b));
	tk_addr_set_port(&b, 1);
	T_OK(!tk_addr_eq(&a, &b));
	T_EQ(tk_addr_parse("192.168.1.3:8443", -1, &b, NULL), 0);
	T_OK(!tk_addr_eq(&a, &b));
}

TEST(sock_addr_v6)
{
	struct tk_addr	a, b;
	char		buf[TK_ADDRSTRLEN];

	parse_fmt("[::1]:8080", -1, "[::1]:8080");
	parse_fmt("[2001:db8::1]:443", -1, "[2001:db8::1]:443");
	parse_fmt("[::]:0", -1, "[::]:0");
	parse_fmt("::1", 80, "[::1]:80");
	parse_fmt("[::1]", 7, "[::1]:7");
	parse_fmt("[2001:DB8:0:0:0:0:0:1]:1", -1, "[2001:db8::1]:1");
	parse_fmt("[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535", -1,
	    "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535");

	T_EQ(tk_addr_parse("[::1]:9", -1, &a, NULL), 0);
	T_EQ(a.ss.ss_family, AF_INET6);
	T_EQ(tk_addr_port(&a), 9);
	T_STREQ(tk_addr_fmt_host(&a, buf, sizeof(buf)), "::1");
	/* Same port and "same" bits, other family: not equal. */
	T_EQ(tk_addr_parse("0.0.0.1:9", -1, &b, NULL), 0);
	T_OK(!tk_addr_eq(&a, &b));
	T_OK(tk_addr_eq(&a, &a));
}

TEST(sock_addr_name)
{
	struct tk_addr	a;
	char		buf[TK_ADDRSTRLEN];
	const char	*err;

	if (tk_addr_parse("localhost:80", -1, &a, &err) != 0)
		T_FAIL("localhost:80: %s", err);
	T_EQ(tk_addr_port(&a), 80);
	tk_addr_fmt_host(&a, buf, sizeof(buf));
	if (strcmp(buf, "127.0.0.1") != 0 && strcmp(buf, "::1") != 0)
		T_FAIL("localhost is %s", buf);
	T_EQ(tk_addr_parse("localhost", 25, &a, &err), 0);
	T_EQ(tk_addr_port(&a), 25);
}

TEST(sock_addr_bad)
{
	parse_bad("", 80, "empty address");
	parse_bad("1.2.3.4:65536", -1, "port out of range");
	parse_bad("1.2.3.4:99999999999", -1, "port out of range");
	parse_bad("1.2.3.4:-1", -1, "bad port");
	parse_bad("1.2.3.4:+1", -1, "bad port");
	parse_bad("1.2.3.4:8x", -1, "bad port");
	parse_bad("1.2.3.4: 8", -1, "bad port");
	parse_bad("1.2.3.4:", -1, "missing port");
	parse_bad("1.2.3.4:", 80, "missing port");
	parse_bad("1.2.3.4", -1, "missing port");
	parse_bad("::1", -1, "missing port");
	parse_bad("[::1]", -1, "missing port");
	parse_bad(":80", -1, "missing host");
	/* A port alone is not the IPv4 address inet_aton makes of it. */
	parse_bad("7777", -1, "missing host");
	parse_bad("7777", 80, "missing host");
	parse_bad("[]:80", -1, "missing host");
	parse_bad("[::1:80", -1, "missing ]");
	parse_bad("[::1]80", -1, "bad address");
	parse_bad("[::1]:", -1, "missing port");
	parse_bad("[1.2.3.4.5]:80", -1, "bad address");
	parse_bad("[localhost]:80", -1, "bad address");
	parse_bad("[::1]:65536", -1, "port out of range");
}

/*
 * A listener on 127.0.0.1:0, a nonblocking connect to it bound to
 * 127.0.0.2 with port 0 (IP_BIND_ADDRESS_NO_PORT), and the accepted
 * side sees 127.0.0.2 at the port the client was given.
 */
TEST(sock_listen_connect)
{
	struct tk_addr	 la, src, dst, peer, local, back;
	char		 buf[TK_ADDRSTRLEN], want[TK_ADDRSTRLEN];
	int		 lfd, cfd, afd, v;
	socklen_t	 len;

	T_EQ(tk_addr_parse("127.0.0.1:0", -1, &la, NULL), 0);
	T_SYS(lfd = tk_sock_listen(&la, 0, 0));
	T_OK(fcntl(lfd, F_GETFL) & O_NONBLOCK);
	T_OK(fcntl(lfd, F_GETFD) & FD_CLOEXEC);
	len = sizeof(v);
	T_SYS(getsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &v, &len));
	T_NE(v, 0);
	T_SYS(getsockopt(lfd, SOL_SOCKET, SO_REUSEPORT, &v, &len));
	T_EQ(v, 0);
	T_SYS(getsockopt(lfd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len));
	T_NE(v, 0);
	T_SYS(tk_sock_local(lfd, &dst));
	T_GT(tk_addr_port(&dst), 0);

	/* Nothing to accept yet: the listener does not block. */
	T_EQ(accept(lfd, NULL, NULL), -1);
	T_OK(errno == EAGAIN || errno == EWOULDBLOCK);

	T_EQ(tk_addr_parse("127.0.0.2:0", -1, &src, NULL), 0);
	cfd = tk_sock_connect(&dst, &src);
	if (cfd == -1 && errno == EADDRNOTAVAIL)
		T_SKIP("127.0.0.2 is not a local address here");
	T_SYS(cfd);
	T_OK(fcntl(cfd, F_GETFL) & O_NONBLOCK);
	T_OK(fcntl(cfd, F_GETFD) & FD_CLOEXEC);
	len = sizeof(v);
	T_SYS(getsockopt(cfd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &v, &len));
	T_NE(v, 0);
	wait_fd(cfd, POLLOUT);
	T_EQ(tk_sock_error(cfd), 0);
	T_SYS(tk_sock_nodelay(cfd));
	len = sizeof(v);
	T_SYS(getsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &v, &len));
	T_NE(v, 0);

	wait_fd(lfd, POLLIN);
	T_SYS(afd = accept(lfd, NULL, NULL));
	T_SYS(tk_sock_peer(afd, &peer));
	T_STREQ(tk_addr_fmt_host(&peer, buf, sizeof(buf)), "127.0.0.2");
	T_GT(tk_addr_port(&peer), 0);
	T_SYS(tk_sock_local(cfd, &local));
	T_OK(tk_addr_eq(&local, &peer));
	T_SYS(tk_sock_peer(cfd, &back));
	T_OK(tk_addr_eq(&back, &dst));
	tk_addr_fmt(&dst, want, sizeof(want));
	T_STREQ(tk_addr_fmt(&back, buf, sizeof(buf)), want);

	/* Bytes go through. */
	T_EQ(write(cfd, "ping", 4), 4);
	wait_fd(afd, POLLIN);
	T_EQ(read(afd, buf, sizeof(buf)), 4);
	T_OK(memcmp(buf, "ping", 4) == 0);
	close(afd);
	close(cfd);
	close(lfd);
}

TEST(sock_reuseport)
{
	struct tk_addr	a;
	int		l1, l2, v;
	socklen_t	len = sizeof(v);

	T_EQ(tk_addr_parse("127.0.0.1:0", -1, &a, NULL), 0);
	T_SYS(l1 = tk_sock_listen(&a, 16, TK_SOCK_REUSEPORT));
	T_SYS(getsockopt(l1, SOL_SOCKET, SO_REUSEPORT, &v, &len));
	T_NE(v, 0);
	T_SYS(tk_sock_local(l1, &a));
	/* A second worker's listener on the same port. */
	T_SYS(l2 = tk_sock_listen(&a, 16, TK_SOCK_REUSEPORT));
	/* Without the flag the port is taken, and nothing leaks. */
	T_EQ(tk_sock_listen(&a, 16, 0), -1);
	T_EQ(errno, EADDRINUSE);
	close(l1);
	close(l2);
}

TEST(sock_v6)
{
	struct tk_addr	a, c;
	int		lfd, cfd, v;
	socklen_t	len = sizeof(v);

	T_EQ(tk_addr_parse("[::1]:0", -1, &a, NULL), 0);
	lfd = tk_sock_listen(&a, 0, TK_SOCK_V6ONLY);
	if (lfd == -1 && (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL))
		T_SKIP("no IPv6 loopback");
	T_SYS(lfd);
	T_SYS(getsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &v, &len));
	T_NE(v, 0);
	T_SYS(tk_sock_local(lfd, &a));
	T_SYS(cfd = tk_sock_connect(&a, NULL));
	wait_fd(cfd, POLLOUT);
	T_EQ(tk_sock_error(cfd), 0);
	T_SYS(tk_sock_local(cfd, &c));
	T_EQ(c.ss.ss_family, AF_INET6);
	close(cfd);
	close(lfd);

	/*
	 * Without the flag, V6ONLY is off whatever bindv6only says.  On the
	 * wildcard only: Linux turns it on when binding a specific v6
	 * address, where v4 could not arrive anyway.
	 */
	T_EQ(tk_addr_parse("[::]:0", -1, &a, NULL), 0);
	T_SYS(lfd = tk_sock_listen(&a, 0, 0));
	T_SYS(getsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &v, &len));
	T_EQ(v, 0);
	close(lfd);
}

TEST(sock_connect_errors)
{
	struct tk_addr	a, src;
	int		lfd, cfd;

	/* A port nobody listens on: bind, learn it, close. */
	T_EQ(tk_addr_parse("127.0.0.1:0", -1, &a, NULL), 0);
	T_SYS(lfd = tk_sock_listen(&a, 0, 0));
	T_SYS(tk_sock_local(lfd, &a));
	close(lfd);
	T_SYS(cfd = tk_sock_connect(&a, NULL));
	wait_fd(cfd, POLLOUT);
	T_EQ(tk_sock_error(cfd), ECONNREFUSED);
	close(cfd);

	/* A source of the other family. */
	T_EQ(tk_addr_parse("[::1]:0", -1, &src, NULL), 0);
	T_EQ(tk_sock_connect(&a, &src), -1);
	T_EQ(errno, EAFNOSUPPORT);

	/* A source address that is not ours. */
	T_EQ(tk_addr_parse("192.0.2.1:0", -1, &src, NULL), 0);
	T_EQ(tk_sock_connect(&a, &src), -1);
	T_EQ(errno, EADDRNOTAVAIL);

	T_EQ(tk_sock_error(-1), -1);
	T_GT(tk_sock_somaxconn(), 0);
}
