/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The PROXY protocol reader, pp_parse(): good v1 and v2 headers whole
 * and split at every byte, a reader that reads only what it is told
 * and so never passes the header, each strict refusal with its phrase,
 * and a round trip through the sender, pp_header().
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <string.h>
#include <unistd.h>

#include "../../src/server/tenkd.h"
#include "../t.h"

#define SIG2	"\r\n\r\n\0\r\nQUIT\n"

struct hdr {
	const char	*s;
	size_t		 n;		/* 0: strlen(s) */
	int		 family;
};

static const struct hdr good[] = {
	{ "PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\n", 0, AF_INET },
	{ "PROXY TCP4 0.0.0.0 0.0.0.0 0 0\r\n", 0, AF_INET },
	{ "PROXY TCP4 255.255.255.255 255.255.255.255 65535 65535\r\n", 0,
	    AF_INET },
	{ "PROXY TCP6 ::1 2001:db8::1 1 65535\r\n", 0, AF_INET6 },
	{ "PROXY TCP6 :: :: 0 0\r\n", 0, AF_INET6 },
	{ "PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff "
	    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n", 0,
	    AF_INET6 },
	{ "PROXY UNKNOWN\r\n", 0, AF_UNSPEC },
	{ "PROXY UNKNOWN ffff:f:: 1.2.3.4 whatever\r\n", 0, AF_UNSPEC },
	/* v2: TCP4 10.0.0.1:258 -> 10.0.0.2:80 */
	{ SIG2 "\x21\x11\x00\x0c" "\x0a\x00\x00\x01" "\x0a\x00\x00\x02"
	    "\x01\x02" "\x00\x50", 28, AF_INET },
	/* v2: TCP4 with two TLVs, one empty (NOOP) */
	{ SIG2 "\x21\x11\x00\x15" "\x0a\x00\x00\x01" "\x0a\x00\x00\x02"
	    "\x01\x02" "\x00\x50" "\x04\x00\x00" "\x02\x00\x03" "abc", 37,
	    AF_INET },
	/* v2: TCP6 ::1 port 1 -> ::2 port 2 */
	{ SIG2 "\x21\x21\x00\x24"
	    "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x01"
	    "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x02" "\x00\x01" "\x00\x02",
	    52, AF_INET6 },
	/* v2: LOCAL, no block; LOCAL with a TCP4 block; PROXY UNSPEC */
	{ SIG2 "\x20\x00\x00\x00", 16, AF_UNSPEC },
	{ SIG2 "\x20\x11\x00\x0c" "\x0a\x00\x00\x01" "\x0a\x00\x00\x02"
	    "\x01\x02" "\x00\x50", 28, AF_UNSPEC },
	{ SIG2 "\x21\x00\x00\x03" "\x04\x00\x00", 19, AF_UNSPEC },
	{ NULL, 0, 0 }
};

static size_t
hlen(const struct hdr *h)
{
	return h->n != 0 ? h->n : strlen(h->s);
}

TEST(pp_parse_good)
{
	const struct hdr	*h;
	struct pp_info		 pi;
	char			 buf[PP_IN_MAXLEN + 64];
	size_t			 n;

	for (h = good; h->s != NULL; h++) {
		n = hlen(h);
		if (pp_parse(h->s, n, &pi) != PP_DONE)
			T_FAIL("header %zu: %s", h - good, pi.why);
		T_UEQ(pi.len, n);
		T_EQ(pi.family, h->family);
		T_EQ(pi.version, h->s[0] == 'P' ? 1 : 2);
		/* Bytes after it, even ones that look like a TLV, are data. */
		memcpy(buf, h->s, n);
		memcpy(buf + n, "\x01\x00\x05" "abcde", 8);
		T_EQ(pp_parse(buf, n + 8, &pi), PP_DONE);
		T_UEQ(pi.len, n);
	}
}

/* Every prefix asks for more, and never for a byte past the header. */
TEST(pp_parse_split)
{
	const struct hdr	*h;
	struct pp_info		 pi;
	size_t			 n, k, have;
	int			 r;

	for (h = good; h->s != NULL; h++) {
		n = hlen(h);
		for (k = 0; k < n; k++) {
			r = pp_parse(h->s, k, &pi);
			if (r != PP_MORE)
				T_FAIL("header %zu cut at %zu: %d %s",
				    h - good, k, r, pi.why);
			T_GE(pi.want, 1);
			if (k + pi.want > n)
				T_FAIL("header %zu cut at %zu: wants %zu "
				    "of %zu", h - good, k, pi.want, n - k);
		}
		/* A reader that takes exactly what it is told to. */
		for (have = 0; (r = pp_parse(h->s, have, &pi)) == PP_MORE;)
			have += pi.want;
		T_EQ(r, PP_DONE);
		T_UEQ(have, n);
	}
}

struct bad {
	const char	*s;
	size_t		 n;		/* 0: strlen(s) */
	const char	*why;
};

static const struct bad bad[] = {
	{ "GET / HTTP/1.0\r\n", 0, "no PROXY header" },
	{ "PROXZ", 0, "v1: bad signature" },
	{ "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n", 0, "v1: lone LF" },
	{ "PROXY UNKNOWN\n", 0, "v1: lone LF" },
	{ "PROXY UNKNOWN\rX", 0, "v1: CR without LF" },
	{ "PROXY TCP4 1.2.3.4\t5.6.7.8 1 2\r\n", 0, "v1: not printable" },
	{ "PROXY TCP5", 0, "v1: bad protocol" },
	{ "PROXY TCP4X ", 0, "v1: bad protocol" },
	{ "PROXY  TCP4", 0, "v1: empty field" },
	{ "PROXY TCP4 1.2.3.4  5.6.7.8 1 2\r\n", 0, "v1: empty field" },
	{ "PROXY TCP4 1.2.3 5.6.7.8 1 2\r\n", 0, "v1: bad address" },
	{ "PROXY TCP4 1.2.3.04 5.6.7.8 1 2\r\n", 0, "v1: bad address" },
	{ "PROXY TCP4 ::1", 0, "v1: bad address" },
	{ "PROXY TCP4 1.2.3.4.5.6.7.8.9", 0, "v1: address too long" },
	{ "PROXY TCP6 1.2.3.4 ::1 1 2\r\n", 0, "v1: bad address" },
	{ "PROXY TCP6 ::g", 0, "v1: bad address" },
	{ "PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n", 0,
	    "v1: port above 65535" },
	{ "PROXY TCP4 1.2.3.4 5.6.7.8 1 01", 0,
	    "v1: port with a leading zero" },
	{ "PROXY TCP4 1.2.3.4 5.6.7.8 1 -2", 0, "v1: bad port" },
	{ "PROXY TCP4 1.2.3.4 5.6.7.8 1 123456", 0, "v1: bad port" },
	{ "PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3", 0, "v1: too many fields" },
	{ "PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n", 0, "v1: missing fields" },
	{ "PROXY TCP4 1.2.3.4 5.6.7.8 1\r", 0, "v1: missing fields" },
	{ "PROXY\r\n", 0, "v1: missing fields" },
	{ "PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255 "
	    "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255 1", 0,
	    "v1: line too long" },
	{ SIG2 "\x21\x11\x00\x08" "\x0a\x00\x00\x01" "\x0a\x00\x00\x02",
	    24, "v2: length below the address block" },
	{ SIG2 "\x21\x21\x00\x0c", 16, "v2: length below the address block" },
	{ SIG2 "\x21\x31\x00\x24", 16, "v2: length below the address block" },
	{ SIG2 "\x21\x11\x00\x0e" "\x0a\x00\x00\x01" "\x0a\x00\x00\x02"
	    "\x01\x02" "\x00\x50" "\x04\x00", 30, "v2: truncated TLV" },
	{ SIG2 "\x21\x11\x00\x11" "\x0a\x00\x00\x01" "\x0a\x00\x00\x02"
	    "\x01\x02" "\x00\x50" "\x02\x00\x0a" "ab", 33,
	    "v2: TLV past the header" },
	{ SIG2 "\x20\x00\x00\x03" "\x02\xff\xff", 19,
	    "v2: TLV past the header" },
	{ SIG2 "\x11", 13, "v2: bad version" },
	{ SIG2 "\x22", 13, "v2: bad command" },
	{ SIG2 "\x21\x41", 14, "v2: bad family" },
	{ SIG2 "\x21\x13", 14, "v2: bad family" },
	{ SIG2 "\x21\x12", 14, "v2: datagram over a stream" },
	{ SIG2 "\x21\x11\x10\x00", 16, "v2: header too long" },
	{ "\r\n\r\nX", 5, "v2: bad signature" },
	{ "\r\r", 2, "v2: bad signature" },
	{ NULL, 0, NULL }
};

TEST(pp_parse_bad)
{
	const struct bad	*b;
	struct pp_info		 pi;
	size_t			 n, k;
	int			 r;

	for (b = bad; b->s != NULL; b++) {
		n = b->n != 0 ? b->n : strlen(b->s);
		if ((r = pp_parse(b->s, n, &pi)) != PP_BAD)
			T_FAIL("\"%s\": %d, not refused", b->s, r);
		T_STREQ(pi.why, b->why);
		/* Refused at the first byte that shows it, not later. */
		for (k = 0; k + 1 < n; k++)
			if (pp_parse(b->s, k, &pi) == PP_BAD &&
			    strcmp(pi.why, b->why) != 0)
				T_FAIL("\"%s\" cut at %zu: %s", b->s, k,
				    pi.why);
	}
}

/* No CRLF in the first 107 bytes, however the line goes on. */
TEST(pp_parse_v1_long)
{
	struct pp_info	 pi;
	char		 buf[300];
	size_t		 k;

	memset(buf, 'a', sizeof(buf));
	memcpy(buf, "PROXY UNKNOWN ", 14);
	/* Refused once no CRLF can end by byte 107: at 106 bytes. */
	for (k = 0; k < 106; k++) {
		T_EQ(pp_parse(buf, k, &pi), PP_MORE);
		T_LE(k + pi.want, 107);
	}
	for (k = 106; k < sizeof(buf); k++) {
		T_EQ(pp_parse(buf, k, &pi), PP_BAD);
		T_STREQ(pi.why, "v1: no CRLF in 107 bytes");
	}
	/* CRLF ending at byte 107 is the longest line; at 108, too long. */
	memcpy(buf + 105, "\r\n", 2);
	T_EQ(pp_parse(buf, 106, &pi), PP_MORE);
	T_EQ(pi.want, 1);
	T_EQ(pp_parse(buf, 200, &pi), PP_DONE);
	T_UEQ(pi.len, 107);
	memcpy(buf + 105, "a\r\n", 3);
	T_EQ(pp_parse(buf, 107, &pi), PP_BAD);
	T_STREQ(pi.why, "v1: no CRLF in 107 bytes");
	T_EQ(pp_parse(buf, 108, &pi), PP_BAD);
}

/* The addresses parsed are the ones the header carries. */
TEST(pp_parse_addrs)
{
	const char		*v1 = "PROXY TCP4 192.168.0.1 10.0.0.2 56324 "
				    "443\r\n";
	const struct sockaddr_in *s4;
	struct pp_info		 pi;
	char			 a[INET6_ADDRSTRLEN];

	T_EQ(pp_parse(v1, strlen(v1), &pi), PP_DONE);
	s4 = (const struct sockaddr_in *)&pi.src;
	T_EQ(s4->sin_family, AF_INET);
	T_EQ(ntohs(s4->sin_port), 56324);
	T_STREQ(inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a)),
	    "192.168.0.1");
	s4 = (const struct sockaddr_in *)&pi.dst;
	T_EQ(ntohs(s4->sin_port), 443);
	T_STREQ(inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a)), "10.0.0.2");

	T_EQ(pp_parse(good[10].s, good[10].n, &pi), PP_DONE);
	T_EQ(pi.src.sin6_family, AF_INET6);
	T_EQ(ntohs(pi.src.sin6_port), 1);
	T_EQ(ntohs(pi.dst.sin6_port), 2);
	T_STREQ(inet_ntop(AF_INET6, &pi.dst.sin6_addr, a, sizeof(a)), "::2");
}

/* pp_header()'s output, for a peer and a socket bound to local. */
static void
round_trip(int fam, const char *peer, int pport, const char *local)
{
	struct sockaddr_in6	 p, l, got;
	struct sockaddr_in	*p4 = (struct sockaddr_in *)&p;
	struct sockaddr_in	*l4 = (struct sockaddr_in *)&l;
	struct pp_info		 pi;
	socklen_t		 sl = sizeof(got);
	char			 buf[PP_MAXLEN];
	int			 fd, v, n;

	memset(&p, 0, sizeof(p));
	memset(&l, 0, sizeof(l));
	if (fam == AF_INET) {
		p4->sin_family = l4->sin_family = AF_INET;
		p4->sin_port = htons((uint16_t)pport);
		T_EQ(inet_pton(AF_INET, peer, &p4->sin_addr), 1);
		T_EQ(inet_pton(AF_INET, local, &l4->sin_addr), 1);
	} else {
		p.sin6_family = l.sin6_family = AF_INET6;
		p.sin6_port = htons((uint16_t)pport);
		T_EQ(inet_pton(AF_INET6, peer, &p.sin6_addr), 1);
		T_EQ(inet_pton(AF_INET6, local, &l.sin6_addr), 1);
	}
	T_SYS(fd = socket(fam, SOCK_DGRAM, 0));
	if (bind(fd, (struct sockaddr *)&l, fam == AF_INET ?
	    sizeof(*l4) : sizeof(l)) == -1) {
		close(fd);
		T_SKIP("no such local address");
	}
	T_SYS(getsockname(fd, (struct sockaddr *)&got, &sl));
	for (v = 1; v <= 2; v++) {
		n = pp_header(v, &p, fd, buf, sizeof(buf));
		T_GT(n, 0);
		T_EQ(pp_parse(buf, (size_t)n, &pi), PP_DONE);
		T_UEQ(pi.len, n);
		T_EQ(pi.version, v);
		T_EQ(pi.family, fam);
		if (fam == AF_INET) {
			T_OK(memcmp(&pi.src, p4, sizeof(*p4)) == 0);
			T_OK(memcmp(&pi.dst, &got, sizeof(*p4)) == 0);
		} else {
			T_OK(memcmp(&pi.src, &p, sizeof(p)) == 0);
			T_OK(memcmp(&pi.dst, &got, sizeof(p)) == 0);
		}
	}
	close(fd);
}

/*
 * A client of one family at a socket of the other (--accept-proxy
 * behind a balancer): the IPv4 side goes IPv4-mapped, as TCP6; want
 * and want_dst are the addresses the header carries.
 */
static void
mixed(int fam, const char *peer, const char *local, const char *want,
    const char *want_dst)
{
	struct sockaddr_in6	 p, l;
	struct sockaddr_in	*p4 = (struct sockaddr_in *)&p;
	struct sockaddr_in	*l4 = (struct sockaddr_in *)&l;
	struct pp_info		 pi;
	char			 buf[PP_MAXLEN], a[INET6_ADDRSTRLEN];
	int			 fd, v, n;

	memset(&p, 0, sizeof(p));
	memset(&l, 0, sizeof(l));
	if (fam == AF_INET) {
		p4->sin_family = AF_INET;
		p4->sin_port = htons(1234);
		T_EQ(inet_pton(AF_INET, peer, &p4->sin_addr), 1);
		l.sin6_family = AF_INET6;
		T_EQ(inet_pton(AF_INET6, local, &l.sin6_addr), 1);
	} else {
		p.sin6_family = AF_INET6;
		p.sin6_port = htons(1234);
		T_EQ(inet_pton(AF_INET6, peer, &p.sin6_addr), 1);
		l4->sin_family = AF_INET;
		T_EQ(inet_pton(AF_INET, local, &l4->sin_addr), 1);
	}
	T_SYS(fd = socket(fam == AF_INET ? AF_INET6 : AF_INET, SOCK_DGRAM,
	    0));
	if (bind(fd, (struct sockaddr *)&l, fam == AF_INET ? sizeof(l) :
	    sizeof(*l4)) == -1) {
		close(fd);
		T_SKIP("no such local address");
	}
	for (v = 1; v <= 2; v++) {
		n = pp_header(v, &p, fd, buf, sizeof(buf));
		T_GT(n, 0);
		if (v == 1)
			T_OK(strncmp(buf, "PROXY TCP6 ", 11) == 0);
		T_EQ(pp_parse(buf, (size_t)n, &pi), PP_DONE);
		T_EQ(pi.family, AF_INET6);
		T_EQ(ntohs(pi.src.sin6_port), 1234);
		T_STREQ(inet_ntop(AF_INET6, &pi.src.sin6_addr, a, sizeof(a)),
		    want);
		T_STREQ(inet_ntop(AF_INET6, &pi.dst.sin6_addr, a, sizeof(a)),
		    want_dst);
	}
	close(fd);
}

TEST(pp_header_mixed)
{
	mixed(AF_INET, "10.1.2.3", "::1", "::ffff:10.1.2.3", "::1");
	mixed(AF_INET6, "2001:db8::17", "127.0.0.1", "2001:db8::17",
	    "::ffff:127.0.0.1");
}

TEST(pp_parse_round_trip)
{
	round_trip(AF_INET, "10.1.2.3", 4567, "127.0.0.1");
	round_trip(AF_INET, "0.0.0.0", 0, "127.0.0.1");
	round_trip(AF_INET6, "2001:db8::17", 65535, "::1");
}
