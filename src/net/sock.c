/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Socket helpers: parsing and printing IPv4/IPv6 addresses with ports,
 * nonblocking listeners and connects, and the few options we set.  This
 * file makes no policy: which addresses to listen on, and what to do
 * when a connect fails, belong to tenkd and tenkload.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/sock.h"

/* Linux 4.2; glibc defines it from 2.23 on. */
#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT	24
#endif

/*
 * Read a port: decimal digits only, 0-65535.  Returns the port or -1
 * with *errstr set.
 */
static int
parse_port(const char *s, const char **errstr)
{
	const char	*err;
	long long	 n;

	if (*s == '\0') {
		*errstr = "missing port";
		return -1;
	}
	/* strtonum would take " 80" and "+80". */
	if (s[strspn(s, "0123456789")] != '\0') {
		*errstr = "bad port";
		return -1;
	}
	n = strtonum(s, 0, 65535, &err);
	if (err != NULL) {
		*errstr = "port out of range";
		return -1;
	}
	return (int)n;
}

/*
 * Split s into host and port, resolve the host and fill a.  Forms:
 * "[v6]:port", "[v6]", "v4:port", "name:port", and bare "v4", "name",
 * "v6" when default_port >= 0.  A bare v6 address is told apart by its
 * second colon.  Names go through getaddrinfo and may block on DNS, so
 * call this at start-up, not from a loop.
 */
int
tk_addr_parse(const char *s, int default_port, struct tk_addr *a,
    const char **errstr)
{
	struct addrinfo	 hints, *res;
	const char	*dummy, *host, *port = NULL, *end;
	char		 hbuf[NI_MAXHOST], pbuf[8];
	size_t		 hlen;
	int		 p, r;

	if (errstr == NULL)
		errstr = &dummy;
	errno = EINVAL;
	if (s == NULL || *s == '\0') {
		*errstr = "empty address";
		return -1;
	}
	/* A port alone, which inet_aton(3) would take as an IPv4 address. */
	if (s[strspn(s, "0123456789")] == '\0') {
		*errstr = "missing host";
		return -1;
	}
	if (*s == '[') {
		host = s + 1;
		if ((end = strchr(host, ']')) == NULL) {
			*errstr = "missing ]";
			return -1;
		}
		hlen = (size_t)(end - host);
		if (end[1] == ':')
			port = end + 2;
		else if (end[1] != '\0') {
			*errstr = "bad address";
			return -1;
		}
	} else {
		host = s;
		end = strrchr(s, ':');
		if (end != NULL && strchr(s, ':') == end) {
			hlen = (size_t)(end - s);
			port = end + 1;
		} else
			hlen = strlen(s);
	}
	if (hlen == 0) {
		*errstr = "missing host";
		return -1;
	}
	if (hlen >= sizeof(hbuf)) {
		*errstr = "host too long";
		return -1;
	}
	memcpy(hbuf, host, hlen);
	hbuf[hlen] = '\0';

	if (port != NULL) {
		if ((p = parse_port(port, errstr)) == -1)
			return -1;
	} else if (default_port >= 0 && default_port <= 65535)
		p = default_port;
	else {
		*errstr = default_port > 65535 ? "bad port" : "missing port";
		return -1;
	}
	snprintf(pbuf, sizeof(pbuf), "%d", p);

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if (*s == '[')
		hints.ai_flags |= AI_NUMERICHOST;
	if ((r = getaddrinfo(hbuf, pbuf, &hints, &res)) != 0) {
		if (r == EAI_MEMORY) {
			errno = ENOMEM;
			*errstr = "out of memory";
		} else if (r == EAI_SYSTEM)
			*errstr = "resolver failed";
		else {
			errno = EINVAL;
			*errstr = *s == '[' ? "bad address" : "unknown host";
		}
		return -1;
	}
	if (res->ai_addrlen > sizeof(a->ss)) {
		freeaddrinfo(res);
		*errstr = "bad address";
		return -1;
	}
	memset(a, 0, sizeof(*a));
	memcpy(&a->ss, res->ai_addr, res->ai_addrlen);
	a->len = res->ai_addrlen;
	freeaddrinfo(res);
	*errstr = NULL;
	return 0;
}

/*
 * Print the host part numerically: "1.2.3.4", "::1", "fe80::1%eth0".
 * Returns 0, or -1 after writing "?" for a family we do not know.
 */
static int
fmt_host(const struct tk_addr *a, char *buf, size_t len)
{
	if ((a->ss.ss_family != AF_INET && a->ss.ss_family != AF_INET6) ||
	    getnameinfo((const struct sockaddr *)&a->ss, a->len, buf, len,
	    NULL, 0, NI_NUMERICHOST) != 0) {
		strlcpy(buf, "?", len);
		return -1;
	}
	return 0;
}

char *
tk_addr_fmt(const struct tk_addr *a, char *buf, size_t len)
{
	char	host[NI_MAXHOST];

	if (fmt_host(a, host, sizeof(host)) == -1)
		strlcpy(buf, host, len);
	else if (a->ss.ss_family == AF_INET6)
		snprintf(buf, len, "[%s]:%d", host, tk_addr_port(a));
	else
		snprintf(buf, len, "%s:%d", host, tk_addr_port(a));
	return buf;
}

char *
tk_addr_fmt_host(const struct tk_addr *a, char *buf, size_t len)
{
	fmt_host(a, buf, len);
	return buf;
}

void
tk_addr_from(struct tk_addr *a, const struct sockaddr *sa)
{
	memset(a, 0, sizeof(*a));
	a->len = sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
	    sizeof(struct sockaddr_in6);
	memcpy(&a->ss, sa, a->len);
}

/* The port in host order, or -1 for a family without ports. */
int
tk_addr_port(const struct tk_addr *a)
{
	switch (a->ss.ss_family) {
	case AF_INET:
		return ntohs(((const struct sockaddr_in *)&a->ss)->sin_port);
	case AF_INET6:
		return ntohs(((const struct sockaddr_in6 *)&a->ss)->sin6_port);
	default:
		return -1;
	}
}

/* Set the port (0-65535); other families are left alone. */
void
tk_addr_set_port(struct tk_addr *a, int port)
{
	switch (a->ss.ss_family) {
	case AF_INET:
		((struct sockaddr_in *)&a->ss)->sin_port = htons(port);
		break;
	case AF_INET6:
		((struct sockaddr_in6 *)&a->ss)->sin6_port = htons(port);
		break;
	}
}

/*
 * Compare the fields that name an endpoint, not whole structures: the
 * kernel and getaddrinfo may leave different bytes in the padding.
 */
int
tk_addr_eq(const struct tk_addr *a, const struct tk_addr *b)
{
	const struct sockaddr_in	*a4, *b4;
	const struct sockaddr_in6	*a6, *b6;

	if (a->ss.ss_family != b->ss.ss_family)
		return 0;
	switch (a->ss.ss_family) {
	case AF_INET:
		a4 = (const struct sockaddr_in *)&a->ss;
		b4 = (const struct sockaddr_in *)&b->ss;
		return a4->sin_port == b4->sin_port &&
		    a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	case AF_INET6:
		a6 = (const struct sockaddr_in6 *)&a->ss;
		b6 = (const struct sockaddr_in6 *)&b->ss;
		return a6->sin6_port == b6->sin6_port &&
		    a6->sin6_scope_id == b6->sin6_scope_id &&
		    memcmp(&a6->sin6_addr, &b6->sin6_addr,
		    sizeof(a6->sin6_addr)) == 0;
	default:
		return a->len == b->len && memcmp(&a->ss, &b->ss, a->len) == 0;
	}
}

static int
setopt_int(int fd, int level, int name, int val)
{
	return setsockopt(fd, level, name, &val, sizeof(val));
}

/* The end of a failed set-up: close fd, keep errno for the caller. */
static int
close_fail(int fd)
{
	int	saved = errno;

	close(fd);
	errno = saved;
	return -1;
}

/*
 * A nonblocking listener on a.  IPV6_V6ONLY is always set one way or
 * the other, because its default follows the net.ipv6.bindv6only sysctl
 * and a listener should not change meaning with it.  The kernel caps
 * the backlog at net.core.somaxconn.  Returns the fd or -1 with errno
 * set; nothing is left open on failure.
 */
int
tk_sock_listen(const struct tk_addr *a, int backlog, int flags)
{
	int	fd;

	fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (fd == -1)
		return -1;
	if (setopt_int(fd, SOL_SOCKET, SO_REUSEADDR, 1) == -1)
		goto fail;
	if ((flags & TK_SOCK_REUSEPORT) &&
	    setopt_int(fd, SOL_SOCKET, SO_REUSEPORT, 1) == -1)
		goto fail;
	if (a->ss.ss_family == AF_INET6 && setopt_int(fd, IPPROTO_IPV6,
	    IPV6_V6ONLY, (flags & TK_SOCK_V6ONLY) != 0) == -1)
		goto fail;
	if (bind(fd, (const struct sockaddr *)&a->ss, a->len) == -1)
		goto fail;
	if (listen(fd, backlog <= 0 ? SOMAXCONN : backlog) == -1)
		goto fail;
	return fd;

 fail:
	return close_fail(fd);
}

/*
 * Start a nonblocking connect.  With a source address of port 0 we set
 * IP_BIND_ADDRESS_NO_PORT (Linux 4.2, ip(7)) before bind: bind() then
 * only fixes the address and the port is picked at connect() for the
 * 4-tuple, so every source address gets the whole ephemeral range per
 * destination instead of bind() reserving a port for good.  Kernels
 * without the option refuse it; we go on, as bind() still works there,
 * only with fewer ports.  EINTR on a nonblocking connect leaves it
 * going on in the background, like EINPROGRESS (connect(2)).
 */
int
tk_sock_connect(const struct tk_addr *dst, const struct tk_addr *src)
{
	int	fd;

	if (src != NULL && src->ss.ss_family != dst->ss.ss_family) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	fd = socket(dst->ss.ss_family,
	    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	if (src != NULL) {
		if (tk_addr_port(src) == 0)
			(void)setopt_int(fd, IPPROTO_IP,
			    IP_BIND_ADDRESS_NO_PORT, 1);
		if (bind(fd, (const struct sockaddr *)&src->ss,
		    src->len) == -1)
			goto fail;
	}
	if (connect(fd, (const struct sockaddr *)&dst->ss, dst->len) == -1 &&
	    errno != EINPROGRESS && errno != EINTR)
		goto fail;
	return fd;

 fail:
	return close_fail(fd);
}

int
tk_sock_error(int fd)
{
	socklen_t	len = sizeof(int);
	int		err = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
		return -1;
	return err;
}

int
tk_sock_nodelay(int fd)
{
	return setopt_int(fd, IPPROTO_TCP, TCP_NODELAY, 1);
}

int
tk_sock_local(int fd, struct tk_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->len = sizeof(a->ss);
	return getsockname(fd, (struct sockaddr *)&a->ss, &a->len);
}

int
tk_sock_peer(int fd, struct tk_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->len = sizeof(a->ss);
	return getpeername(fd, (struct sockaddr *)&a->ss, &a->len);
}

/* The number in a /proc file, or def when it cannot be read. */
static int
proc_num(const char *path, int min, int def)
{
	char		 buf[32];
	const char	*err;
	ssize_t		 n;
	long long	 v;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return def;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return def;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	v = strtonum(buf, min, INT_MAX, &err);
	return err == NULL ? (int)v : def;
}

/*
 * net.core.somaxconn, the ceiling the kernel puts on any backlog, or
 * SOMAXCONN when /proc cannot be read (a chroot, another system).
 */
int
tk_sock_somaxconn(void)
{
	return proc_num("/proc/sys/net/core/somaxconn", 1, SOMAXCONN);
}

/*
 * The first port a process without CAP_NET_BIND_SERVICE may bind:
 * net.ipv4.ip_unprivileged_port_start (Linux 4.11, per network
 * namespace), else 1024 as before it.
 */
int
tk_sock_unpriv_port(void)
{
	return proc_num("/proc/sys/net/ipv4/ip_unprivileged_port_start", 0,
	    1024);
}

/*
 * Whether this process holds CAP_NET_BIND_SERVICE (capability 10) in its
 * effective set, from the CapEff line of /proc/self/status: libcap would
 * be one more library for one bit.  0 when it cannot be read.
 */
int
tk_sock_cap_bind(void)
{
	FILE			*f;
	char			 line[128];
	unsigned long long	 caps;
	int			 have = 0;

	if ((f = fopen("/proc/self/status", "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "CapEff: %llx", &caps) == 1) {
			have = (caps >> 10) & 1;
			break;
		}
	fclose(f);
	return have;
}

/*
 * Whether the listener d (family fam, the attributes after it in the
 * len bytes of its message) takes connections for some address of a:
 * the same address, or a wildcard on either side; for an IPv4 a, also
 * an IPv6 listener on :: without IPV6_V6ONLY or on a's IPv4-mapped
 * address.  An IPv6 a is taken as tenkd binds it, IPV6_V6ONLY.
 */
static int
overlaps(const struct tk_addr *a, const struct inet_diag_msg *d, int len)
{
	static const uint8_t	 any[16], mapped[12] = { [10] = 0xff,
				    [11] = 0xff };
	const struct sockaddr_in	*s4;
	const struct sockaddr_in6	*s6;
	const struct rtattr		*at;
	const uint8_t			*src = (const uint8_t *)d->id.idiag_src;
	uint32_t			 v4;
	int				 v6only = 0;

	if (a->ss.ss_family == AF_INET6) {
		s6 = (const struct sockaddr_in6 *)&a->ss;
		return d->idiag_family == AF_INET6 && (memcmp(src,
		    &s6->sin6_addr, 16) == 0 || memcmp(src, any, 16) == 0 ||
		    memcmp(&s6->sin6_addr, any, 16) == 0);
	}
	s4 = (const struct sockaddr_in *)&a->ss;
	if (d->idiag_family == AF_INET) {
		memcpy(&v4, src, 4);
		return v4 == s4->sin_addr.s_addr || v4 == INADDR_ANY ||
		    s4->sin_addr.s_addr == INADDR_ANY;
	}
	for (at = (const struct rtattr *)(d + 1); RTA_OK(at, len);
	    at = RTA_NEXT(at, len))
		if (at->rta_type == INET_DIAG_SKV6ONLY &&
		    RTA_PAYLOAD(at) >= 1)
			v6only = *(const uint8_t *)RTA_DATA(at);
	if (memcmp(src, any, 16) == 0)
		return !v6only;
	if (memcmp(src, mapped, 12) != 0)
		return 0;
	memcpy(&v4, src + 12, 4);
	return v4 == s4->sin_addr.s_addr || v4 == INADDR_ANY ||
	    s4->sin_addr.s_addr == INADDR_ANY;
}

/* One family's listeners on a's port (tk_sock_listener): 1, 0, -1. */
static int
diag_listeners(int fd, int family, const struct tk_addr *a)
{
	struct {
		struct nlmsghdr		nlh;
		struct inet_diag_req_v2	req;
	}			 rq;
	struct sockaddr_nl	 nl;
	struct nlmsghdr		*h;
	struct inet_diag_msg	*d;
	union {
		struct nlmsghdr	 h;
		char		 b[16384];
	}			 buf;
	ssize_t			 n;
	int			 found = 0, port = tk_addr_port(a);

	memset(&nl, 0, sizeof(nl));
	nl.nl_family = AF_NETLINK;
	memset(&rq, 0, sizeof(rq));
	rq.nlh.nlmsg_len = sizeof(rq);
	rq.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	rq.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	rq.req.sdiag_family = (uint8_t)family;
	rq.req.sdiag_protocol = IPPROTO_TCP;
	rq.req.idiag_states = 1 << TCP_LISTEN;
	rq.req.id.idiag_sport = htons((uint16_t)port);
	if (sendto(fd, &rq, sizeof(rq), 0, (struct sockaddr *)&nl,
	    sizeof(nl)) == -1)
		return -1;
	for (;;) {
		if ((n = recv(fd, &buf, sizeof(buf), 0)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (h = &buf.h; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return found;
			if (h->nlmsg_type == NLMSG_ERROR) {
				errno = EPROTO;
				return -1;
			}
			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
			    h->nlmsg_len < NLMSG_LENGTH(sizeof(*d)))
				continue;
			d = NLMSG_DATA(h);
			if (ntohs(d->id.idiag_sport) == port && overlaps(a, d,
			    (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*d)))))
				found = 1;
		}
		if (n == 0) {
			errno = EPROTO;
			return -1;
		}
	}
}

/*
 * Whether a TCP socket listens on a's port at an address that overlaps
 * a's (as bind(2) would find it in the way, whatever its options),
 * asked of the kernel through sock_diag(7) (NETLINK_SOCK_DIAG, Linux
 * 3.3): unlike a bind, this tells a listener from connections that hold
 * the port, such as one in TIME_WAIT.  Returns 1, 0, or -1 with errno
 * set when it cannot tell (netlink refused, as in some sandboxes).
 */
int
tk_sock_listener(const struct tk_addr *a)
{
	int	fd, r;

	if ((fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
	    NETLINK_SOCK_DIAG)) == -1)
		return -1;
	if ((r = diag_listeners(fd, AF_INET, a)) == 0)
		r = diag_listeners(fd, AF_INET6, a);
	close(fd);
	return r;
}
