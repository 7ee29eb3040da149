/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Socket helpers: address parsing and formatting, nonblocking listeners
 * and connects, socket options.  All sockets are created with
 * SOCK_NONBLOCK | SOCK_CLOEXEC.  Functions return -1 with errno set on
 * failure unless said otherwise.  Any thread.
 */
#ifndef TENK_SOCK_H
#define TENK_SOCK_H

#include <sys/socket.h>

#include <stdint.h>

struct tk_addr {
	struct sockaddr_storage	ss;
	socklen_t		len;
};

/* Room for "[ffff:...:ffff]:65535" and a NUL. */
#define TK_ADDRSTRLEN	64

/*
 * Parse "A.B.C.D:PORT", "[V6]:PORT", "HOST:PORT" (resolved with
 * getaddrinfo, first result) or, when default_port >= 0, an address
 * without a port.  Ports 0-65535.  On failure returns -1 and, when errstr
 * is not NULL, points it at a static phrase ("missing port", "bad port",
 * "unknown host", ...).
 */
int	tk_addr_parse(const char *s, int default_port, struct tk_addr *a,
	    const char **errstr);

/* Format as "1.2.3.4:80" or "[::1]:80" into buf; returns buf. */
char	*tk_addr_fmt(const struct tk_addr *a, char *buf, size_t len);

/* Format the address without the port. */
char	*tk_addr_fmt_host(const struct tk_addr *a, char *buf, size_t len);

/*
 * a = the IPv4 or IPv6 address at sa (a sockaddr_in or sockaddr_in6,
 * told by its family); any other family is copied as a sockaddr_in6.
 */
void	tk_addr_from(struct tk_addr *a, const struct sockaddr *sa);

/* The port of an IPv4 or IPv6 address, and setting it. */
int	tk_addr_port(const struct tk_addr *a);
void	tk_addr_set_port(struct tk_addr *a, int port);

/* Equal family, address and port. */
int	tk_addr_eq(const struct tk_addr *a, const struct tk_addr *b);

#define TK_SOCK_REUSEPORT	0x01	/* SO_REUSEPORT on a listener */
#define TK_SOCK_V6ONLY		0x02	/* IPV6_V6ONLY on a v6 listener */

/*
 * A bound, listening, nonblocking socket with SO_REUSEADDR and, with
 * TK_SOCK_REUSEPORT, SO_REUSEPORT.  backlog <= 0 means SOMAXCONN.
 */
int	tk_sock_listen(const struct tk_addr *a, int backlog, int flags);

/*
 * Start a nonblocking connect to dst, bound first to src when src is not
 * NULL (port 0 with IP_BIND_ADDRESS_NO_PORT, so the port is chosen at
 * connect time per destination).  Returns the fd with the connect in
 * progress or done; completion shows as writability, then
 * tk_sock_error() tells the outcome.  EADDRNOTAVAIL means the source
 * ports are exhausted.
 */
int	tk_sock_connect(const struct tk_addr *dst, const struct tk_addr *src);

/* SO_ERROR: 0 or the pending error number; -1 if getsockopt fails. */
int	tk_sock_error(int fd);

/* TCP_NODELAY on. */
int	tk_sock_nodelay(int fd);

/* The local (or peer) address of fd. */
int	tk_sock_local(int fd, struct tk_addr *a);
int	tk_sock_peer(int fd, struct tk_addr *a);

/* The effective listen backlog ceiling: /proc/sys/net/core/somaxconn. */
int	tk_sock_somaxconn(void);

/*
 * Whether a TCP listener holds a's port at an address that overlaps a's
 * (not connections, such as those in TIME_WAIT): 1, 0, or -1 with errno
 * set when the kernel cannot be asked (sock_diag(7)).
 */
int	tk_sock_listener(const struct tk_addr *a);

/*
 * The first port a process may bind without CAP_NET_BIND_SERVICE
 * (net.ipv4.ip_unprivileged_port_start, 1024 by default), and whether
 * this process has that capability (1) or not (0).
 */
int	tk_sock_unpriv_port(void);
int	tk_sock_cap_bind(void);

#endif /* TENK_SOCK_H */
