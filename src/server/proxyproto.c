/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The PROXY protocol (haproxy's proxy-protocol.txt), versions 1 and 2:
 * the header that --send-proxy puts in front of a session's bytes
 * toward the upstream, telling it the client's address and the one the
 * client connected to.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <stdio.h>
#include <string.h>

#include "tenkd.h"

/*
 * The header of the given version (1 or 2) for a client at peer that
 * connected to the local end of fd.  Returns its length in buf, which
 * holds PP_MAXLEN bytes.  A family the protocol cannot carry, or a
 * local address that cannot be read, makes "PROXY UNKNOWN" (v1) or a
 * LOCAL command (v2): the receiver then uses the connection's own
 * addresses.
 */
int
pp_header(int version, const struct sockaddr_in6 *peer, int fd, char *buf,
    size_t len)
{
	static const unsigned char sig[12] = {
		0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49,
		0x54, 0x0a
	};
	struct tk_addr			 src, dst;
	const struct sockaddr_in	*s4, *d4;
	const struct sockaddr_in6	*s6, *d6;
	const void			*sa, *da, *sp, *dp;
	char				 a[TK_ADDRSTRLEN], b[TK_ADDRSTRLEN];
	unsigned char			*p = (unsigned char *)buf;
	size_t				 alen;
	int				 fam;

	conn_addr(peer, &src);
	fam = peer->sin6_family;
	if (tk_sock_local(fd, &dst) == -1 ||
	    dst.ss.ss_family != fam || (fam != AF_INET && fam != AF_INET6))
		fam = AF_UNSPEC;
	if (version == 1) {
		if (fam == AF_UNSPEC)
			return snprintf(buf, len, "PROXY UNKNOWN\r\n");
		return snprintf(buf, len, "PROXY %s %s %s %d %d\r\n",
		    fam == AF_INET ? "TCP4" : "TCP6",
		    tk_addr_fmt_host(&src, a, sizeof(a)),
		    tk_addr_fmt_host(&dst, b, sizeof(b)),
		    tk_addr_port(&src), tk_addr_port(&dst));
	}
	memcpy(p, sig, sizeof(sig));
	if (fam == AF_UNSPEC) {
		/* LOCAL command: the receiver uses the real addresses. */
		p[12] = 0x20;
		p[13] = 0x00;
		p[14] = p[15] = 0;
		return PP2_HDRLEN;
	}
	p[12] = 0x21;			/* version 2, PROXY */
	if (fam == AF_INET) {
		s4 = (const struct sockaddr_in *)&src.ss;
		d4 = (const struct sockaddr_in *)&dst.ss;
		p[13] = 0x11;		/* TCP over IPv4 */
		alen = sizeof(s4->sin_addr);
		sa = &s4->sin_addr;
		da = &d4->sin_addr;
		sp = &s4->sin_port;
		dp = &d4->sin_port;
	} else {
		s6 = (const struct sockaddr_in6 *)&src.ss;
		d6 = (const struct sockaddr_in6 *)&dst.ss;
		p[13] = 0x21;		/* TCP over IPv6 */
		alen = sizeof(s6->sin6_addr);
		sa = &s6->sin6_addr;
		da = &d6->sin6_addr;
		sp = &s6->sin6_port;
		dp = &d6->sin6_port;
	}
	/* Length, then both addresses and both ports in network order. */
	p[14] = 0;
	p[15] = (unsigned char)(2 * alen + 4);
	memcpy(p + 16, sa, alen);
	memcpy(p + 16 + alen, da, alen);
	memcpy(p + 16 + 2 * alen, sp, 2);
	memcpy(p + 18 + 2 * alen, dp, 2);
	return (int)(PP2_HDRLEN + 2 * alen + 4);
}
