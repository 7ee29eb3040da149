/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The PROXY protocol (haproxy's proxy-protocol.txt), versions 1 and 2:
 * the header that --send-proxy puts in front of a session's bytes
 * toward the upstream, telling it the client's address and the one the
 * client connected to; and pp_parse(), which reads such a header from
 * a client that a load balancer in front of us sends.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tenkd.h"

/*
 * An IPv4 address in a as its IPv4-mapped IPv6 form (::ffff:a.b.c.d,
 * RFC 4291 2.5.5.2), port kept.  Built aside and copied in: a store
 * through a struct sockaddr_in6 pointer into a->ss need not be seen by
 * a later read of a->ss.ss_family once the compiler inlines both
 * (strict aliasing).
 */
static void
pp_map6(struct tk_addr *a)
{
	struct sockaddr_in	s4;
	struct sockaddr_in6	s6;

	memcpy(&s4, &a->ss, sizeof(s4));
	memset(&s6, 0, sizeof(s6));
	s6.sin6_family = AF_INET6;
	s6.sin6_port = s4.sin_port;
	s6.sin6_addr.s6_addr[10] = s6.sin6_addr.s6_addr[11] = 0xff;
	memcpy(&s6.sin6_addr.s6_addr[12], &s4.sin_addr, 4);
	memcpy(&a->ss, &s6, sizeof(s6));
	a->len = sizeof(s6);
}

/*
 * a's address at p and its port at port, in network order, as a v2
 * header carries them; fam is a's family, AF_INET or AF_INET6.
 */
static void
pp_put(const struct tk_addr *a, int fam, unsigned char *p,
    unsigned char *port)
{
	const struct sockaddr_in	*s4;
	const struct sockaddr_in6	*s6;

	if (fam == AF_INET) {
		s4 = (const struct sockaddr_in *)&a->ss;
		memcpy(p, &s4->sin_addr, sizeof(s4->sin_addr));
		memcpy(port, &s4->sin_port, sizeof(s4->sin_port));
	} else {
		s6 = (const struct sockaddr_in6 *)&a->ss;
		memcpy(p, &s6->sin6_addr, sizeof(s6->sin6_addr));
		memcpy(port, &s6->sin6_port, sizeof(s6->sin6_port));
	}
}

/*
 * The header of the given version (1 or 2) for a client at peer that
 * connected to the local end of fd.  Returns its length in buf, which
 * holds PP_MAXLEN bytes.  When one address is IPv4 and the other IPv6
 * (with --accept-proxy, the client's family is whatever the balancer
 * in front saw), the IPv4 one goes as IPv4-mapped IPv6, as haproxy
 * does, so the client is still told.  A family the protocol cannot
 * carry, or a local address that cannot be read, makes "PROXY UNKNOWN"
 * (v1) or a LOCAL command (v2): the receiver then uses the
 * connection's own addresses.
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
	char				 a[TK_ADDRSTRLEN], b[TK_ADDRSTRLEN];
	unsigned char			*p = (unsigned char *)buf;
	size_t				 alen;
	int				 fam;

	tk_addr_from(&src, (const struct sockaddr *)peer);
	fam = peer->sin6_family;
	if (fam != AF_INET && fam != AF_INET6)
		fam = AF_UNSPEC;
	else if (tk_sock_local(fd, &dst) == -1 ||
	    (dst.ss.ss_family != AF_INET && dst.ss.ss_family != AF_INET6))
		fam = AF_UNSPEC;
	else if (dst.ss.ss_family != fam) {
		pp_map6(fam == AF_INET ? &src : &dst);
		fam = AF_INET6;
	}
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
	p[13] = fam == AF_INET ? 0x11 : 0x21;	/* TCP over IPv4, IPv6 */
	alen = fam == AF_INET ? sizeof(struct in_addr) :
	    sizeof(struct in6_addr);
	/* Length, then both addresses and both ports in network order. */
	p[14] = 0;
	p[15] = (unsigned char)(2 * alen + 4);
	pp_put(&src, fam, p + 16, p + 16 + 2 * alen);
	pp_put(&dst, fam, p + 16 + alen, p + 18 + 2 * alen);
	return (int)(PP2_HDRLEN + 2 * alen + 4);
}

/*
 * The receiving side.  pp_parse() is stateless: the caller hands it
 * every byte read so far, each time, and a header is at most
 * PP_IN_MAXLEN bytes, so parsing again from the start costs nothing
 * worth a state machine, and a fuzzer can drive it with no setup.
 */

static const unsigned char pp2_sig[12] = {
	0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a
};

#define PP1_MAXLEN	107		/* 2.1: longest line, CRLF included */
#define PP1_MINLEN	15		/* "PROXY UNKNOWN\r\n" */
#define PP1_FIELDS	6		/* PROXY TCP4 src dst sport dport */

static int
pp_bad(struct pp_info *pi, const char *why)
{
	pi->why = why;
	return PP_BAD;
}

/*
 * Store host (a NUL-terminated token of a v1 line) and port as a
 * sockaddr of family fam in sa, or return -1.
 */
static int
pp_sockaddr(int fam, const char *host, int port, struct sockaddr_in6 *sa)
{
	struct sockaddr_in	*s4 = (struct sockaddr_in *)sa;

	memset(sa, 0, sizeof(*sa));
	if (fam == AF_INET) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		return inet_pton(AF_INET, host, &s4->sin_addr) == 1 ? 0 : -1;
	}
	sa->sin6_family = AF_INET6;
	sa->sin6_port = htons((uint16_t)port);
	return inet_pton(AF_INET6, host, &sa->sin6_addr) == 1 ? 0 : -1;
}

/*
 * Check field f of a TCP4/TCP6 v1 line (2, 3: addresses; 4, 5: ports),
 * n bytes at s; part says it may still grow.  Returns NULL or why not.
 */
static const char *
v1_field(int fam, int f, const char *s, size_t n, int part)
{
	const char	*chars;
	size_t		 i, max;

	if (f >= 4) {
		if (n > 5 || strspn(s, "0123456789") < n)
			return "v1: bad port";
		if (n > 1 && s[0] == '0')
			return "v1: port with a leading zero";
		if (!part && n == 5 && strncmp(s, "65535", 5) > 0)
			return "v1: port above 65535";
		return NULL;
	}
	/* INET6_ADDRSTRLEN - 1: the IPv4-mapped form is the longest. */
	chars = fam == AF_INET ? "0123456789." : "0123456789abcdefABCDEF:.";
	max = fam == AF_INET ? INET_ADDRSTRLEN - 1 : INET6_ADDRSTRLEN - 1;
	for (i = 0; i < n; i++)
		if (strchr(chars, s[i]) == NULL)
			return "v1: bad address";
	if (n > max)
		return "v1: address too long";
	return NULL;
}

/* The shortest field f of a v1 line of family fam can be. */
static size_t
v1_min(int fam, int f)
{
	static const size_t	 minf[PP1_FIELDS] = { 5, 4, 0, 0, 1, 1 };

	if (f == 2 || f == 3)
		return fam == AF_INET ? 7 : 2;	/* "0.0.0.0", "::" */
	return minf[f];
}

/*
 * A v1 line, len bytes at buf, of which line bytes come before its
 * CR (line == len when no CR has come yet).  complete: the CRLF is
 * there.  On PP_MORE, pi->want is the fewest bytes the shortest line
 * that could still follow needs, so a read of that many never passes
 * the header.
 */
static int
pp_v1(const unsigned char *buf, size_t len, size_t line, int complete,
    struct pp_info *pi)
{
	char			 tok[PP1_MAXLEN + 1], src[64], dst[64];
	const char		*s = (const char *)buf, *why, *sp;
	size_t			 pos = 0, n, lb, mn;
	int			 f, fam = AF_UNSPEC, sport = 0, dport = 0;

	for (f = 0;; f++) {
		sp = memchr(s + pos, ' ', line - pos);
		n = sp != NULL ? (size_t)(sp - (s + pos)) : line - pos;
		memcpy(tok, s + pos, n);
		tok[n] = '\0';
		/* The last token of an unfinished line may still grow. */
		if (sp == NULL && !complete && len == line)
			break;
		if (n == 0)
			return pp_bad(pi, "v1: empty field");
		if (f == 0 && strcmp(tok, "PROXY") != 0)
			return pp_bad(pi, "v1: bad signature");
		if (f == 1) {
			if (strcmp(tok, "UNKNOWN") == 0)
				goto unknown;
			if (strcmp(tok, "TCP4") == 0)
				fam = AF_INET;
			else if (strcmp(tok, "TCP6") == 0)
				fam = AF_INET6;
			else
				return pp_bad(pi, "v1: bad protocol");
		}
		if (f >= 2) {
			if ((why = v1_field(fam, f, tok, n, 0)) != NULL)
				return pp_bad(pi, why);
			if (f == 2)
				memcpy(src, tok, n + 1);
			else if (f == 3)
				memcpy(dst, tok, n + 1);
			else if (f == 4)
				sport = (int)strtol(tok, NULL, 10);
			else
				dport = (int)strtol(tok, NULL, 10);
		}
		if (sp == NULL)
			break;
		if (f == PP1_FIELDS - 1)
			return pp_bad(pi, "v1: too many fields");
		pos += n + 1;
	}
	if (sp == NULL && !complete && len == line) {
		/* Token f, n bytes, unfinished: fail early if it cannot be. */
		if (f == 0 && strncmp(tok, "PROXY", n) != 0)
			return pp_bad(pi, "v1: bad signature");
		if (f == 1 && strncmp(tok, "TCP4", n) != 0 &&
		    strncmp(tok, "TCP6", n) != 0 &&
		    strncmp(tok, "UNKNOWN", n) != 0)
			return pp_bad(pi, "v1: bad protocol");
		if (f == 1 && n > 0 && tok[0] == 'U')
			goto unknown;
		if (f >= 2 && (why = v1_field(fam, f, tok, n, 1)) != NULL)
			return pp_bad(pi, why);
		/* The shortest line from here: this field and the rest. */
		if (f <= 1 && fam == AF_UNSPEC)
			lb = PP1_MINLEN;
		else {
			mn = v1_min(fam, f);
			lb = pos + (n > mn ? n : mn);
			for (f++; f < PP1_FIELDS; f++)
				lb += 1 + v1_min(fam, f);
			lb += 2;
		}
		if (lb > PP1_MAXLEN)
			return pp_bad(pi, "v1: line too long");
		pi->want = lb > len ? lb - len : 1;
		return PP_MORE;
	}
	if (f != PP1_FIELDS - 1)
		return pp_bad(pi, "v1: missing fields");
	if (pp_sockaddr(fam, src, sport, &pi->src) == -1 ||
	    pp_sockaddr(fam, dst, dport, &pi->dst) == -1)
		return pp_bad(pi, "v1: bad address");
	if (!complete) {
		pi->want = 1;		/* the LF after the CR */
		return PP_MORE;
	}
	pi->family = fam;
	pi->len = line + 2;
	return PP_DONE;

 unknown:
	/* 2.1: whatever follows UNKNOWN up to the CRLF is ignored. */
	if (!complete) {
		lb = len < PP1_MINLEN ? PP1_MINLEN :
		    len + (line < len ? 1 : 2);
		if (lb > PP1_MAXLEN)
			return pp_bad(pi, "v1: no CRLF in 107 bytes");
		pi->want = lb - len;
		return PP_MORE;
	}
	pi->family = AF_UNSPEC;
	pi->len = line + 2;
	return PP_DONE;
}

/* The v2 address block's length for family byte fam, or -1. */
static int
pp2_addrlen(unsigned char fam)
{
	switch (fam) {
	case 0x00:			/* UNSPEC */
		return 0;
	case 0x11:			/* TCP over IPv4 */
	case 0x12:			/* UDP over IPv4 */
		return 12;
	case 0x21:			/* TCP over IPv6 */
	case 0x22:			/* UDP over IPv6 */
		return 36;
	case 0x31:			/* UNIX stream */
	case 0x32:			/* UNIX datagram */
		return 216;
	}
	return -1;
}

/* A v2 header: len bytes at buf, the 12 of its signature checked. */
static int
pp_v2(const unsigned char *buf, size_t len, struct pp_info *pi)
{
	struct sockaddr_in	*s4 = (struct sockaddr_in *)&pi->src;
	struct sockaddr_in	*d4 = (struct sockaddr_in *)&pi->dst;
	size_t			 total, alen, i;
	int			 al, cmd;

	if (len > 12 && (buf[12] >> 4) != 2)
		return pp_bad(pi, "v2: bad version");
	cmd = len > 12 ? buf[12] & 0x0f : 0;
	if (cmd > 1)
		return pp_bad(pi, "v2: bad command");
	if (len > 13 && pp2_addrlen(buf[13]) == -1)
		return pp_bad(pi, "v2: bad family");
	if (len > 13 && cmd == 1 && (buf[13] & 0x0f) == 2)
		return pp_bad(pi, "v2: datagram over a stream");
	if (len < PP2_HDRLEN) {
		pi->want = PP2_HDRLEN - len;
		return PP_MORE;
	}
	al = pp2_addrlen(buf[13]);
	alen = (size_t)buf[14] << 8 | buf[15];
	total = PP2_HDRLEN + alen;
	/*
	 * 2.2: a receiver skips the block of a LOCAL command whatever
	 * its family says; we still want the block to hold what the
	 * family announces, as every sender writes it.
	 */
	if (alen < (size_t)al)
		return pp_bad(pi, "v2: length below the address block");
	if (total > PP_IN_MAXLEN)
		return pp_bad(pi, "v2: header too long");
	if (len < total) {
		pi->want = total - len;
		return PP_MORE;
	}
	/* The TLVs fill the rest of the block exactly (2.2.7). */
	for (i = PP2_HDRLEN + (size_t)al; i < total;) {
		if (total - i < 3)
			return pp_bad(pi, "v2: truncated TLV");
		i += 3 + ((size_t)buf[i + 1] << 8 | buf[i + 2]);
		if (i > total)
			return pp_bad(pi, "v2: TLV past the header");
	}
	pi->len = total;
	pi->family = AF_UNSPEC;
	if (cmd == 0 || ((buf[13] >> 4) != 1 && (buf[13] >> 4) != 2))
		return PP_DONE;		/* LOCAL, UNSPEC, UNIX: our own */
	memset(&pi->src, 0, sizeof(pi->src));
	memset(&pi->dst, 0, sizeof(pi->dst));
	if (buf[13] >> 4 == 1) {
		pi->family = s4->sin_family = d4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, buf + 16, 4);
		memcpy(&d4->sin_addr, buf + 20, 4);
		memcpy(&s4->sin_port, buf + 24, 2);
		memcpy(&d4->sin_port, buf + 26, 2);
	} else {
		pi->family = AF_INET6;
		pi->src.sin6_family = pi->dst.sin6_family = AF_INET6;
		memcpy(&pi->src.sin6_addr, buf + 16, 16);
		memcpy(&pi->dst.sin6_addr, buf + 32, 16);
		memcpy(&pi->src.sin6_port, buf + 48, 2);
		memcpy(&pi->dst.sin6_port, buf + 50, 2);
	}
	return PP_DONE;
}

/*
 * A PROXY protocol header, v1 or v2 by its first byte, from the len
 * bytes at buf that the connection has sent so far (any len, 0 too;
 * bytes after the header are not looked at).  Returns:
 *
 *	PP_MORE	the header is not complete: read at most pi->want
 *		(>= 1) more bytes and call again with all of them.
 *		Reading no more than that never reads past the header,
 *		so the session's own bytes stay in the socket.
 *	PP_DONE	the header is the first pi->len bytes; pi->family is
 *		AF_INET or AF_INET6 with pi->src (the client) and pi->dst
 *		(the address it connected to) set, or AF_UNSPEC (v1
 *		UNKNOWN, v2 LOCAL, UNSPEC or UNIX): use the connection's
 *		own addresses.
 *	PP_BAD	no valid header can start with these bytes; pi->why is
 *		a short constant phrase ("v1: lone LF") for a counter or
 *		a log line.
 *
 * Strict, as 2.1 and 2.2 of haproxy's proxy-protocol.txt ask of a
 * receiver: a v1 line is printable ASCII, single spaces, no leading
 * zero in a port, ends in CRLF within 107 bytes; a v2 block holds its
 * family's addresses and whole TLVs.  A v2 header longer than
 * PP_IN_MAXLEN is refused, and UDP addresses over a TCP connection.
 * Any thread.
 */
int
pp_parse(const void *p, size_t len, struct pp_info *pi)
{
	const unsigned char	*buf = p;
	size_t			 i, n;

	memset(pi, 0, sizeof(*pi));
	if (len == 0) {
		pi->want = PP1_MINLEN;	/* the shorter of the two */
		return PP_MORE;
	}
	if (buf[0] == pp2_sig[0]) {
		n = len < sizeof(pp2_sig) ? len : sizeof(pp2_sig);
		if (memcmp(buf, pp2_sig, n) != 0)
			return pp_bad(pi, "v2: bad signature");
		pi->version = 2;
		return pp_v2(buf, len, pi);
	}
	if (buf[0] != 'P')
		return pp_bad(pi, "no PROXY header");
	pi->version = 1;
	n = len < PP1_MAXLEN ? len : PP1_MAXLEN;
	for (i = 0; i < n; i++) {
		if (buf[i] == '\r') {
			if (i + 2 > PP1_MAXLEN)
				return pp_bad(pi, "v1: no CRLF in 107 bytes");
			if (i + 1 == len)
				return pp_v1(buf, len, i, 0, pi);
			if (buf[i + 1] != '\n')
				return pp_bad(pi, "v1: CR without LF");
			return pp_v1(buf, len, i, 1, pi);
		}
		if (buf[i] == '\n')
			return pp_bad(pi, "v1: lone LF");
		if (buf[i] < 0x20 || buf[i] > 0x7e)
			return pp_bad(pi, "v1: not printable");
	}
	if (n == PP1_MAXLEN)
		return pp_bad(pi, "v1: no CRLF in 107 bytes");
	return pp_v1(buf, len, len, 0, pi);
}
