/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tenkload's reply framings (loadgen/frame_*.c through framing.c):
 * every framing parses valid replies split at every byte boundary,
 * byte by byte, in chunks of a seeded random size and back to back in
 * one chunk (a window of pipelined replies); invalid replies are a
 * mismatch at the exact first bad byte however they are split; the
 * limits hold; --reply specs parse or fail with their phrase.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../loadgen/framing.h"
#include "../t.h"

/* A reply, the request it answers (NULL: none), and its close flag. */
struct sample {
	const char	*req;
	const char	*rep;
	int		 close;
	size_t		 len;		/* 0: strlen(rep) */
};

/* A reply that is a mismatch at byte "at". */
struct bad {
	const char	*req;
	const char	*rep;
	size_t		 at;
	size_t		 len;		/* 0: strlen(rep) */
};

enum split {
	SPLIT_ONE = 0,		/* the whole stream in one chunk */
	SPLIT_BYTE,		/* one byte per chunk */
	SPLIT_RAND,		/* seeded random sizes */
	SPLIT_AT		/* two chunks, cut at a given offset */
};

static size_t
slen(const char *s, size_t len)
{
	return len > 0 ? len : strlen(s);
}

static void
fr_setup(struct framing *fr, const char *spec)
{
	const char	*err = NULL;

	if (framing_parse(fr, spec, &err) == -1)
		T_FAIL("\"%s\": %s", spec, err);
}

static void
req_of(struct fr_req *q, const char *req)
{
	memset(q, 0, sizeof(*q));
	if (req == NULL)
		return;
	q->base = (const unsigned char *)req;
	q->len = q->period = strlen(req);
}

static void
begin(const struct framing *fr, struct fr_state *st, const char *req)
{
	struct fr_req	 q;

	req_of(&q, req);
	framing_begin(fr, st, req != NULL ? &q : NULL);
}

static size_t
chunk(enum split how, size_t at, size_t off, size_t left)
{
	size_t	 n;

	switch (how) {
	case SPLIT_ONE:
		return left;
	case SPLIT_BYTE:
		return 1;
	case SPLIT_AT:
		return off < at ? at - off : left;
	default:
		/* Mostly short chunks, now and then a long one. */
		if (t_rand() % 8 == 0)
			n = 1 + t_rand() % 200;
		else
			n = 1 + t_rand() % 13;
		return n < left ? n : left;
	}
}

/*
 * Feed the replies of s[0..ns) back to back, cut as "how" says, and
 * check that each ends exactly where it should, with its close flag.
 */
static void
run_stream(const char *spec, const struct sample *s, size_t ns,
    enum split how, size_t at)
{
	struct framing	 fr;
	struct fr_state	 st;
	unsigned char	*buf;
	size_t		*ends, total = 0, off = 0, i, k, n, used;
	enum fr_res	 r;

	fr_setup(&fr, spec);
	T_PTR(ends = calloc(ns, sizeof(*ends)));
	for (i = 0; i < ns; i++) {
		total += slen(s[i].rep, s[i].len);
		ends[i] = total;
	}
	T_PTR(buf = malloc(total));
	for (i = 0, k = 0; i < ns; i++) {
		memcpy(buf + k, s[i].rep, slen(s[i].rep, s[i].len));
		k = ends[i];
	}

	i = 0;
	begin(&fr, &st, s[0].req);
	while (off < total) {
		n = chunk(how, at, off, total - off);
		while (n > 0) {
			r = framing_feed(&fr, &st, buf + off, n, &used);
			if (r == FR_MISMATCH)
				T_FAIL("%s: reply %zu (\"%s\"): mismatch at "
				    "%zu: %s", spec, i, s[i].rep,
				    off + used - (i > 0 ? ends[i - 1] : 0),
				    st.why);
			off += used;
			n -= used;
			if (r == FR_MORE) {
				T_UEQ(n, 0);
				T_LT(off, ends[i]);
				continue;
			}
			if (off != ends[i])
				T_FAIL("%s: reply %zu (\"%s\") ended at %zu, "
				    "not %zu", spec, i, s[i].rep, off, ends[i]);
			if (st.close != (unsigned int)s[i].close)
				T_FAIL("%s: reply %zu: close %u", spec, i,
				    st.close);
			if (++i < ns)
				begin(&fr, &st, s[i].req);
		}
	}
	T_UEQ(i, ns);
	free(buf);
	free(ends);
}

/* Every way of cutting: each reply alone at every byte, then all. */
static void
check_good(const char *spec, const struct sample *s, size_t ns)
{
	size_t	 i, k, len;
	int	 round;

	for (i = 0; i < ns; i++) {
		len = slen(s[i].rep, s[i].len);
		for (k = 1; k < len; k++)
			run_stream(spec, s + i, 1, SPLIT_AT, k);
	}
	run_stream(spec, s, ns, SPLIT_ONE, 0);
	run_stream(spec, s, ns, SPLIT_BYTE, 0);
	t_srand(0x5eed + ns);
	for (round = 0; round < 50; round++)
		run_stream(spec, s, ns, SPLIT_RAND, 0);
}

/* Feed one bad reply cut as "how" says; the mismatch is at b->at. */
static void
run_bad(const char *spec, const struct bad *b, enum split how, size_t at)
{
	struct framing	 fr;
	struct fr_state	 st;
	const unsigned char *p = (const unsigned char *)b->rep;
	size_t		 total = slen(b->rep, b->len), off = 0, n, used;
	enum fr_res	 r;

	fr_setup(&fr, spec);
	begin(&fr, &st, b->req);
	while (off < total) {
		n = chunk(how, at, off, total - off);
		while (n > 0) {
			r = framing_feed(&fr, &st, p + off, n, &used);
			if (r == FR_DONE)
				T_FAIL("%s: \"%s\": complete after %zu bytes",
				    spec, b->rep, off + used);
			if (r == FR_MISMATCH) {
				/* pos names the bad byte, for the log. */
				if (off + used != b->at || st.pos != b->at ||
				    st.why == NULL)
					T_FAIL("%s: \"%s\": mismatch at %zu "
					    "(pos %llu, %s), not %zu", spec,
					    b->rep, off + used,
					    (unsigned long long)st.pos, st.why,
					    b->at);
				return;
			}
			off += used;
			n -= used;
		}
	}
	T_FAIL("%s: \"%s\": no mismatch", spec, b->rep);
}

static void
check_bad(const char *spec, const struct bad *b, size_t nb)
{
	size_t	 i, k;

	for (i = 0; i < nb; i++) {
		run_bad(spec, b + i, SPLIT_ONE, 0);
		run_bad(spec, b + i, SPLIT_BYTE, 0);
		for (k = 1; k <= b[i].at; k++)
			run_bad(spec, b + i, SPLIT_AT, k);
	}
}

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

TEST(framing_spec)
{
	static const struct {
		const char	*spec;
		const char	*err;
	} bad[] = {
		{ "",			"unknown framing" },
		{ "ech",		"unknown framing" },
		{ "echoes",		"unknown framing" },
		{ "Redis",		"unknown framing" },
		{ "echo:",		"echo takes no argument" },
		{ "bytes",		"bytes needs a size" },
		{ "bytes:",		"empty" },
		{ "bytes:0",		"too small" },
		{ "bytes:x",		"invalid" },
		{ "bytes:2g",		"too large" },
		{ "line:x",		"line takes no argument" },
		{ "until",		"until needs a text" },
		{ "until:",		"until needs a text" },
		{ "until:\\q",		"unknown escape" },
		{ "until:\\x4",		"\\x needs two hex digits" },
		{ "prefix",		"prefix needs u16be or u32be" },
		{ "prefix:u8",		"prefix is u16be or u32be" },
		{ "prefix:u16le",	"prefix is u16be or u32be" },
		{ "redis:3",		"redis takes no argument" },
		{ "http:1.1",		"http takes no argument" },
		{ "memcache:1",		"memcache takes no argument" },
	};
	struct framing	 fr;
	const char	*err;
	char		 longer[FR_MAXTEXT + 16];
	size_t		 i;

	for (i = 0; i < NELEM(bad); i++) {
		err = NULL;
		if (framing_parse(&fr, bad[i].spec, &err) != -1)
			T_FAIL("\"%s\" accepted", bad[i].spec);
		T_STREQ(err, bad[i].err);
	}

	fr_setup(&fr, "bytes:4k");
	T_UEQ(fr.n, 4096);
	fr_setup(&fr, "prefix:u32be");
	T_UEQ(fr.n, 4);
	fr_setup(&fr, "until:\\r\\n.\\r\\n");
	T_UEQ(fr.dlen, 5);
	T_OK(memcmp(fr.delim, "\r\n.\r\n", 5) == 0);
	fr_setup(&fr, "until:ab:c");	/* the first ':' ends the name */
	T_UEQ(fr.dlen, 4);

	memset(longer, 'a', sizeof(longer));
	memcpy(longer, "until:", 6);
	longer[6 + FR_MAXTEXT] = '\0';
	fr_setup(&fr, longer);
	longer[6 + FR_MAXTEXT] = 'a';
	longer[6 + FR_MAXTEXT + 1] = '\0';
	T_EQ(framing_parse(&fr, longer, &err), -1);
	T_STREQ(err, "too long");

	fr_setup(&fr, "line");
	T_EQ(framing_check(&fr, "", &err), -1);
	T_STREQ(err, "empty");
	T_EQ(framing_check(&fr, "a\\", &err), -1);
	T_STREQ(err, "trailing backslash");
}

TEST(framing_echo)
{
	static const struct sample good[] = {
		{ "hello", "hello", 0, 0 },
		{ "x", "x", 0, 0 },
		{ "\r\n", "\r\n", 0, 0 },
		{ "PING\r\n", "PING\r\n", 0, 0 },
	};
	static const struct bad bad[] = {
		{ "hello", "hellx", 4, 0 },
		{ "hello", "Hello", 0, 0 },
	};
	static const unsigned char pat[] = "0123456789";
	struct framing	 fr;
	struct fr_state	 st;
	struct fr_req	 q = { pat, 10, 7, 25 };
	const char	*rep = "7890123456789012345678901";
	size_t		 used;

	check_good("echo", good, NELEM(good));
	check_bad("echo", bad, NELEM(bad));

	/* The engine's pattern: 25 bytes from phase 7 of a 10-byte one. */
	fr_setup(&fr, "echo");
	framing_begin(&fr, &st, &q);
	T_EQ(framing_feed(&fr, &st, rep, 11, &used), FR_MORE);
	T_EQ(framing_feed(&fr, &st, rep + 11, 14, &used), FR_DONE);
	T_UEQ(used, 14);
	framing_begin(&fr, &st, &q);
	T_EQ(framing_feed(&fr, &st, "78901234X6", 10, &used), FR_MISMATCH);
	T_UEQ(used, 8);

	/* Without the bytes, echo counts them. */
	q.base = NULL;
	framing_begin(&fr, &st, &q);
	T_EQ(framing_feed(&fr, &st, "abcdefghijklmnopqrstuvwxyz", 26, &used),
	    FR_DONE);
	T_UEQ(used, 25);
}

TEST(framing_bytes)
{
	static const struct sample good[] = {
		{ NULL, "12345", 0, 0 },
		{ NULL, "\0\0\0\0\0", 0, 5 },
		{ NULL, "\r\n\r\n\n", 0, 0 },
	};

	check_good("bytes:5", good, NELEM(good));
}

TEST(framing_line)
{
	static const struct sample good[] = {
		{ NULL, "OK\n", 0, 0 },
		{ NULL, "+PONG\r\n", 0, 0 },
		{ NULL, "\n", 0, 0 },
		{ NULL, "\0\r\0\n", 0, 4 },
		{ NULL, "a longer line, with spaces and \t tabs\n", 0, 0 },
	};

	check_good("line", good, NELEM(good));
}

TEST(framing_until)
{
	static const struct sample memc[] = {
		{ NULL, "VALUE k 0 1\r\nx\r\nEND\r\n", 0, 0 },
		{ NULL, "\r\nEND\r\n", 0, 0 },
		{ NULL, "\r\nEN\r\nEND\r\n", 0, 0 },
		{ NULL, "\r\n\r\nEND\r\n", 0, 0 },
		{ NULL, "END\r\n\r\nE\r\nEND\r\n", 0, 0 },
		{ NULL, "\r\r\n\r\nEND\r\n", 0, 0 },
	};
	/* Where a broken match must fall back to a shorter one. */
	static const struct sample kmp[] = {
		{ NULL, "aab", 0, 0 },
		{ NULL, "aaab", 0, 0 },
		{ NULL, "abaab", 0, 0 },
		{ NULL, "aaaaaab", 0, 0 },
		{ NULL, "babaab", 0, 0 },
	};
	static const struct sample abab[] = {
		{ NULL, "abab", 0, 0 },
		{ NULL, "abaabab", 0, 0 },
		{ NULL, "aabab", 0, 0 },
		{ NULL, "abaaabab", 0, 0 },
		{ NULL, "bbabaabab", 0, 0 },
	};

	check_good("until:\\r\\nEND\\r\\n", memc, NELEM(memc));
	check_good("until:aab", kmp, NELEM(kmp));
	check_good("until:abab", abab, NELEM(abab));
}

TEST(framing_line_limit)
{
	struct framing	 fr;
	struct fr_state	 st;
	char		*big;
	size_t		 used, off, n;
	enum fr_res	 r;

	T_PTR(big = malloc(FR_MAXLINE + 1));
	memset(big, 'x', FR_MAXLINE + 1);
	big[FR_MAXLINE - 1] = '\n';
	fr_setup(&fr, "line");

	/* Exactly the limit, newline included, is a reply. */
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, big, FR_MAXLINE, &used), FR_DONE);
	T_UEQ(used, FR_MAXLINE);

	/* One more byte without a newline is not, however it arrives. */
	big[FR_MAXLINE - 1] = 'x';
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, big, FR_MAXLINE + 1, &used),
	    FR_MISMATCH);
	T_UEQ(used, FR_MAXLINE);
	framing_begin(&fr, &st, NULL);
	for (off = 0;; off += used) {
		n = 4000 < FR_MAXLINE + 1 - off ? 4000 : FR_MAXLINE + 1 - off;
		if ((r = framing_feed(&fr, &st, big + off, n, &used)) !=
		    FR_MORE)
			break;
	}
	T_EQ(r, FR_MISMATCH);
	T_UEQ(off + used, FR_MAXLINE);
	free(big);
}

TEST(framing_prefix)
{
	static const struct sample u16[] = {
		{ NULL, "\0\0", 0, 2 },
		{ NULL, "\0\3abc", 0, 5 },
		{ NULL, "\0\1\0", 0, 3 },
		{ NULL, "\0\5\0\5\0\5\0", 0, 7 },
	};
	static const struct sample u32[] = {
		{ NULL, "\0\0\0\0", 0, 4 },
		{ NULL, "\0\0\0\5hello", 0, 9 },
	};
	struct framing	 fr;
	struct fr_state	 st;
	unsigned char	*big;
	size_t		 used, len = 0x10203;

	check_good("prefix:u16be", u16, NELEM(u16));
	check_good("prefix:u32be", u32, NELEM(u32));

	/* Every byte of the length counts, in network order. */
	T_PTR(big = calloc(1, len + 4 + 1));
	big[1] = 0x01;
	big[2] = 0x02;
	big[3] = 0x03;
	fr_setup(&fr, "prefix:u32be");
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, big, 3, &used), FR_MORE);
	T_EQ(framing_feed(&fr, &st, big + 3, len + 2, &used), FR_DONE);
	T_UEQ(used, len + 1);
	free(big);
}

TEST(framing_redis)
{
	static const struct sample good[] = {
		{ NULL, "+PONG\r\n", 0, 0 },
		{ NULL, "+\r\n", 0, 0 },
		{ NULL, "-ERR unknown command 'x'\r\n", 0, 0 },
		{ NULL, ":42\r\n", 0, 0 },
		{ NULL, ":-7\r\n", 0, 0 },
		{ NULL, ":+7\r\n", 0, 0 },
		{ NULL, ":999999999999999999\r\n", 0, 0 },
		{ NULL, "$5\r\nhello\r\n", 0, 0 },
		{ NULL, "$0\r\n\r\n", 0, 0 },
		{ NULL, "$4\r\n\r\n\r\n\r\n", 0, 0 },
		{ NULL, "$-1\r\n", 0, 0 },
		{ NULL, "*-1\r\n", 0, 0 },
		{ NULL, "*0\r\n", 0, 0 },
		{ NULL, "*2\r\n$3\r\nfoo\r\n$-1\r\n", 0, 0 },
		{ NULL, "*3\r\n:1\r\n*2\r\n+a\r\n*1\r\n$1\r\nb\r\n*0\r\n",
		    0, 0 },
		{ NULL, "*2\r\n*1\r\n*1\r\n:1\r\n:2\r\n", 0, 0 },
		/* RESP3 */
		{ NULL, "_\r\n", 0, 0 },
		{ NULL, "#t\r\n", 0, 0 },
		{ NULL, ",3.14\r\n", 0, 0 },
		{ NULL, ",-inf\r\n", 0, 0 },
		{ NULL, "(3492890328409238509324850943850943825024385\r\n",
		    0, 0 },
		{ NULL, "!21\r\nSYNTAX invalid syntax\r\n", 0, 0 },
		{ NULL, "=15\r\ntxt:Some string\r\n", 0, 0 },
		{ NULL, "%2\r\n+first\r\n:1\r\n+second\r\n*1\r\n#f\r\n",
		    0, 0 },
		{ NULL, "~2\r\n:1\r\n_\r\n", 0, 0 },
		{ NULL, ">2\r\n+message\r\n+hi\r\n", 0, 0 },
		{ NULL, "%0\r\n", 0, 0 },
		/* An attribute is not one of its parent's elements. */
		{ NULL, "|1\r\n+ttl\r\n:3\r\n+OK\r\n", 0, 0 },
		{ NULL, "*2\r\n|1\r\n+a\r\n:1\r\n:2\r\n:3\r\n", 0, 0 },
		{ NULL, "|0\r\n:5\r\n", 0, 0 },
	};
	static const struct bad bad[] = {
		{ NULL, "PONG\r\n", 0, 0 },
		{ NULL, "\0", 0, 1 },
		{ NULL, ":12a\r\n", 3, 0 },
		{ NULL, ":\r\n", 1, 0 },
		{ NULL, ":1234567890123456789\r\n", 19, 0 },
		{ NULL, "$-2\r\n", 4, 0 },
		{ NULL, "$+2\r\n", 1, 0 },
		{ NULL, "$?\r\n", 1, 0 },
		{ NULL, "!-1\r\n", 4, 0 },
		{ NULL, "%-1\r\n", 4, 0 },
		{ NULL, "*1\r\n?\r\n", 4, 0 },
		{ NULL, "#x\r\n", 1, 0 },
		{ NULL, "#tt\r\n", 2, 0 },
		{ NULL, "#\r\n", 1, 0 },
		{ NULL, "_x\r\n", 1, 0 },
		{ NULL, "+OK\n", 3, 0 },
		{ NULL, "*1\r\r", 3, 0 },
		{ NULL, "$3\r\nabcd\r\n", 7, 0 },
		{ NULL, "$3\r\nabc\rX", 8, 0 },
		{ NULL, "(-\r\n", 2, 0 },
		{ NULL, "$536870913\r\n", 11, 0 },
		{ NULL, "*1073741825\r\n", 12, 0 },
	};
	struct framing	 fr;
	struct fr_state	 st;
	char		 deep[4 * (FR_REDIS_DEPTH + 1) + 8];
	size_t		 i, used, n;

	check_good("redis", good, NELEM(good));
	check_bad("redis", bad, NELEM(bad));

	/* FR_REDIS_DEPTH nested arrays parse, one more does not. */
	fr_setup(&fr, "redis");
	for (i = 0; i < FR_REDIS_DEPTH; i++)
		memcpy(deep + 4 * i, "*1\r\n", 4);
	memcpy(deep + 4 * i, ":1\r\n", 4);
	n = 4 * i + 4;
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, deep, n, &used), FR_DONE);
	T_UEQ(used, n);
	memcpy(deep + 4 * i, "*1\r\n:1\r\n", 8);
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, deep, n + 4, &used), FR_MISMATCH);
	T_UEQ(used, 4 * FR_REDIS_DEPTH + 3);
	T_STREQ(st.why, "aggregates nested too deep");
}

TEST(framing_http)
{
	static const char	*head = "HEAD / HTTP/1.1\r\nHost: x\r\n\r\n";
	static const char	*get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	const struct sample good[] = {
		{ get, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		    0, 0 },
		{ get, "HTTP/1.1 204 No Content\r\n\r\n", 0, 0 },
		{ get, "HTTP/1.1 304 Not Modified\r\n"
		    "Content-Length: 100\r\n\r\n", 0, 0 },
		{ get, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "5\r\nhello\r\n0\r\n\r\n", 0, 0 },
		/*
		 * A chunk size in lower-case hex; bare LFs, so that a size
		 * one too large cannot pass by taking the CR.
		 */
		{ get, "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n"
		    "b\nhello world\n0\n\n", 0, 0 },
		{ get, "HTTP/1.1 200 OK\r\n"
		    "transfer-encoding: gzip, CHUNKED\r\n\r\n"
		    "3;name=value\r\nabc\r\nA \r\n0123456789\r\n"
		    "0\r\nX-Trailer: 1\r\nX-Other: 2\r\n\r\n", 0, 0 },
		{ get, "HTTP/1.1 100 Continue\r\n\r\n"
		    "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
		    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 0, 0 },
		{ head, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n",
		    0, 0 },
		{ head, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
		    0, 0 },
		{ get, "HTTP/1.1 200 OK\nContent-Length: 0\n\n", 0, 0 },
		{ get, "HTTP/1.1 200 OK\r\n"
		    "Connection: Keep-Alive, Close\r\n"
		    "Content-Length: 0\r\n\r\n", 1, 0 },
		{ get, "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", 1, 0 },
		{ get, "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n"
		    "Content-Length: 1\r\n\r\nx", 0, 0 },
		{ get, "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", 0, 0 },
		{ get, "HTTP/1.1 404 \r\nContent-Length: 3\r\n\r\nno\n", 0, 0 },
		{ get, "HTTP/1.1 101 Switching Protocols\r\n"
		    "Upgrade: websocket\r\n\r\n", 0, 0 },
		{ get, "HTTP/1.1 200 OK\r\nContent-Length:   3  \r\n"
		    "X-A-Very-Long-Header-Name-Indeed: HTTP/1.1 200 OK\r\n"
		    "Content-Length: 3\r\n\r\nabc", 0, 0 },
		{ get, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n\r\n\r\n",
		    0, 0 },
		{ NULL, "HTTP/1.1 500 Oops\r\nServer: nginx\r\n"
		    "Date: Tue, 24 Nov 2026 03:57:19 GMT\r\n"
		    "Content-Type: text/html\r\nContent-Length: 6\r\n\r\n"
		    "<p/>\r\n", 0, 0 },
	};
	static const struct bad bad[] = {
		{ NULL, "HTTP/2 200 OK\r\n", 5, 0 },
		{ NULL, "XTTP/1.1 200 OK\r\n", 0, 0 },
		{ NULL, "HTTP/1.1 20 OK\r\n", 11, 0 },
		{ NULL, "HTTP/1.1 600 X\r\n", 9, 0 },
		{ NULL, "HTTP/1.1 2000 X\r\n", 12, 0 },
		{ NULL, "HTTP/1.1\r\n", 9, 0 },
		{ NULL, "HTTP/1.1 200 OK\rX", 16, 0 },
		{ NULL, "HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\n",
		    34, 0 },
		{ NULL, "HTTP/1.1 200 OK\r\nContent-Length: 5 5\r\n\r\n",
		    35, 0 },
		{ NULL, "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n", 34, 0 },
		{ NULL, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n"
		    "Content-Length: 2\r\n\r\n", 54, 0 },
		{ NULL, "HTTP/1.1 200 OK\r\nContent-Length: "
		    "123456789012345678\r\n\r\n", 50, 0 },
		{ NULL, "HTTP/1.1 200 OK\r\nBad Header: x\r\n\r\n", 20, 0 },
		{ NULL, "HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n", 23, 0 },
		{ NULL, "HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", 25, 0 },
		{ NULL, "HTTP/1.1 200 OK\r\n: x\r\n\r\n", 17, 0 },
		{ NULL, "HTTP/1.1 200 OK\r\nA(b: x\r\n\r\n", 18, 0 },
		{ NULL, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "zz\r\n", 47, 0 },
		{ NULL, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "\r\n", 48, 0 },
		{ NULL, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "3\r\nabcd\r\n", 53, 0 },
		{ NULL, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "1000000000000000\r\n", 62, 0 },
	};

	check_good("http", good, NELEM(good));
	check_bad("http", bad, NELEM(bad));
}

/*
 * memcached's text protocol: classic and meta replies, a multi-get with
 * a value holding CRLF and "END", stats; bad ones at their first byte
 * that no reply can have there.
 */
TEST(framing_memcache)
{
	static const struct sample good[] = {
		{ NULL, "STORED\r\n", 0, 0 },
		{ NULL, "NOT_STORED\r\n", 0, 0 },
		{ NULL, "EXISTS\r\n", 0, 0 },
		{ NULL, "NOT_FOUND\r\n", 0, 0 },
		{ NULL, "DELETED\r\n", 0, 0 },
		{ NULL, "TOUCHED\r\n", 0, 0 },
		{ NULL, "OK\r\n", 0, 0 },
		{ NULL, "ERROR\r\n", 0, 0 },
		{ NULL, "END\r\n", 0, 0 },
		{ NULL, "CLIENT_ERROR bad data chunk\r\n", 0, 0 },
		{ NULL, "SERVER_ERROR out of memory storing object\r\n", 0,
		    0 },
		{ NULL, "VERSION 1.6.21\r\n", 0, 0 },
		{ NULL, "42\r\n", 0, 0 },
		{ NULL, "18446744073709551615  \r\n", 0, 0 },
		{ NULL, "VALUE k 0 5\r\nhello\r\nEND\r\n", 0, 0 },
		{ NULL, "VALUE k 0 0\r\n\r\nEND\r\n", 0, 0 },
		{ NULL, "VALUE a 3 12 99\r\nEND\r\nVALUE\r\n\r\n"
		    "VALUE b 0 1\r\n\0\r\nEND\r\n", 0, 52 },
		{ NULL, "STAT pid 1\r\nSTAT uptime 20\r\nEND\r\n", 0, 0 },
		{ NULL, "HD\r\n", 0, 0 },
		{ NULL, "HD c123 t-1\r\n", 0, 0 },
		{ NULL, "EN\r\n", 0, 0 },
		{ NULL, "EX\r\n", 0, 0 },
		{ NULL, "NF\r\n", 0, 0 },
		{ NULL, "NS\r\n", 0, 0 },
		{ NULL, "MN\r\n", 0, 0 },
		{ NULL, "VA 2 f0\r\nhi\r\n", 0, 0 },
		{ NULL, "VA 0\r\n\r\n", 0, 0 },
	};
	static const struct bad bad[] = {
		{ NULL, "STX\r\n", 2, 0 },
		{ NULL, "stored\r\n", 0, 0 },
		{ NULL, "STORED \r\n", 6, 0 },
		{ NULL, "STORED\n", 6, 0 },
		{ NULL, "STORED\rX", 7, 0 },
		{ NULL, "STOR\r\n", 4, 0 },
		{ NULL, "\r\n", 0, 0 },
		{ NULL, " OK\r\n", 0, 0 },
		{ NULL, "12a\r\n", 2, 0 },
		{ NULL, "12 x\r\n", 3, 0 },
		{ NULL, "VALUE k 0\r\n", 9, 0 },
		{ NULL, "VALUE k x 5\r\n", 8, 0 },
		{ NULL, "VALUE k 0 5 1 2\r\n", 14, 0 },
		{ NULL, "VALUE k 0 3\r\nabcd\r\nEND\r\n", 16, 0 },
		{ NULL, "VALUE k 0 3\r\nabc\r\nSTORED\r\n", 18, 0 },
		{ NULL, "VALUE k 0 3\r\nabc\r\nVALUES\r\n", 23, 0 },
		{ NULL, "VALUE k 0 2000000000\r\n", 19, 0 },
		{ NULL, "STAT a 1\r\nVALUE k 0 1\r\n", 10, 0 },
		{ NULL, "STAT\r\n", 4, 0 },
		{ NULL, "VA\r\n", 2, 0 },
		{ NULL, "HD c1\x01\r\n", 5, 0 },
	};

	check_good("memcache", good, NELEM(good));
	check_bad("memcache", bad, NELEM(bad));
}

/*
 * A URL's run: a final status above the framing's maxstatus is a
 * mismatch at its last digit, split anywhere; an interim 1xx and 3xx
 * pass.
 */
TEST(framing_http_status)
{
	static const struct {
		const char	*rep;
		size_t		 at;	/* 0: complete */
	} cases[] = {
		{ "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0 },
		{ "HTTP/1.1 399 X\r\nContent-Length: 0\r\n\r\n", 0 },
		{ "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
		    11 },
		{ "HTTP/1.1 500 Oops\r\n\r\n", 11 },
		{ "HTTP/1.1 100 Continue\r\n\r\n"
		    "HTTP/1.1 503 Busy\r\n\r\n", 36 },
	};
	struct framing	 fr;
	struct fr_state	 st;
	struct fr_req	 q;
	const char	*get = "GET / HTTP/1.1\r\n\r\n";
	size_t		 i, cut, len, used;
	enum fr_res	 r;

	for (i = 0; i < NELEM(cases); i++) {
		len = strlen(cases[i].rep);
		for (cut = 1; cut < len; cut++) {
			fr_setup(&fr, "http");
			fr.maxstatus = 399;
			req_of(&q, get);
			framing_begin(&fr, &st, &q);
			r = framing_feed(&fr, &st, cases[i].rep, cut, &used);
			if (r == FR_MORE)
				r = framing_feed(&fr, &st, cases[i].rep + cut,
				    len - cut, &used);
			if (cases[i].at == 0) {
				T_EQ(r, FR_DONE);
				continue;
			}
			T_EQ(r, FR_MISMATCH);
			T_UEQ(st.pos, cases[i].at);
		}
	}
}

TEST(framing_http_eof)
{
	struct framing	 fr;
	struct fr_state	 st;
	const char	*r1 = "HTTP/1.1 200 OK\r\nServer: x\r\n\r\nthe body";
	const char	*r2 = "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: gzip\r\n\r\n";
	const char	*r3 = "HTTP/1.1 200 OK\r\n"
	    "Content-Length: 9\r\n\r\nshort";
	size_t		 used;

	fr_setup(&fr, "http");

	/* No length: the body ends when the server closes. */
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, r1, strlen(r1), &used), FR_MORE);
	T_EQ(framing_feed(&fr, &st, "more", 4, &used), FR_MORE);
	T_EQ(framing_eof(&fr, &st), 1);
	T_UEQ(st.close, 1);

	/* Nor with a last coding other than chunked. */
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, r2, strlen(r2), &used), FR_MORE);
	T_EQ(framing_eof(&fr, &st), 1);

	/* Cut short: a body with a length, or inside the header. */
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, r3, strlen(r3), &used), FR_MORE);
	T_EQ(framing_eof(&fr, &st), 0);
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, r3, 20, &used), FR_MORE);
	T_EQ(framing_eof(&fr, &st), 0);

	/* Other framings never end at EOF. */
	fr_setup(&fr, "line");
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, "abc", 3, &used), FR_MORE);
	T_EQ(framing_eof(&fr, &st), 0);
}

TEST(framing_http_limits)
{
	struct framing	 fr;
	struct fr_state	 st;
	char		*buf;
	size_t		 len, used, i;
	const char	*status = "HTTP/1.1 200 OK\r\n";

	fr_setup(&fr, "http");
	T_PTR(buf = malloc(FR_HTTP_MAXLINE * 2 + 64));

	/* A header line of FR_HTTP_MAXLINE bytes passes, one more not. */
	len = (size_t)snprintf(buf, 64, "%sX: ", status);
	memset(buf + len, 'v', FR_HTTP_MAXLINE - 3);
	len += FR_HTTP_MAXLINE - 3;
	memcpy(buf + len, "\r\n\r\n", 4);
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, buf, len + 4, &used), FR_MORE);
	T_EQ(framing_eof(&fr, &st), 1);
	buf[len] = 'v';
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, buf, len + 4, &used), FR_MISMATCH);
	T_UEQ(used, len);
	T_STREQ(st.why, "line too long");

	/* FR_HTTP_MAXHDRS header lines pass, one more not. */
	len = (size_t)snprintf(buf, 64, "%s", status);
	for (i = 0; i < FR_HTTP_MAXHDRS; i++) {
		memcpy(buf + len, "A: b\r\n", 6);
		len += 6;
	}
	memcpy(buf + len, "\r\n", 2);
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, buf, len + 2, &used), FR_MORE);
	memcpy(buf + len, "A: b\r\n", 6);
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, buf, len + 6, &used), FR_MISMATCH);
	T_UEQ(used, len + 5);
	T_STREQ(st.why, "too many header lines");
	free(buf);
}

TEST(framing_reply_check)
{
	static const struct sample good[] = {
		{ NULL, "+PONG\r\n", 0, 0 },
		{ NULL, "+PONG\r\n", 0, 0 },
	};
	static const struct sample http[] = {
		{ NULL, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0, 0 },
	};
	struct framing	 fr;
	struct fr_state	 st;
	const char	*err;
	size_t		 used;

	check_good("redis", good, NELEM(good));
	check_good("http", http, NELEM(http));

	fr_setup(&fr, "redis");
	T_EQ(framing_check(&fr, "+PONG\\r\\n", &err), 0);
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, "+PO", 3, &used), FR_MORE);
	T_EQ(framing_feed(&fr, &st, "NG\r\n+PONG\r\n", 11, &used), FR_DONE);
	T_UEQ(used, 4);

	/* The first byte that differs is the mismatch, split or not. */
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, "+PO", 3, &used), FR_MORE);
	T_EQ(framing_feed(&fr, &st, "NX\r\n", 4, &used), FR_MISMATCH);
	T_UEQ(used, 1);
	T_UEQ(st.pos, 4);
	T_STREQ(st.why, "reply does not begin with the check text");
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, "-ERR\r\n", 6, &used), FR_MISMATCH);
	T_UEQ(used, 0);

	/* A valid reply shorter than the text fails at its last byte. */
	T_EQ(framing_check(&fr, "+OK\\r\\n+", &err), 0);
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, "+OK\r\n+OK\r\n", 10, &used),
	    FR_MISMATCH);
	T_UEQ(used, 4);
	T_UEQ(st.pos, 4);
	T_STREQ(st.why, "reply shorter than the check text");

	/* The framing's own mismatch, if earlier, is reported. */
	T_EQ(framing_check(&fr, "+OK\\r\\n", &err), 0);
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, "+OK\n", 4, &used), FR_MISMATCH);
	T_UEQ(used, 3);
	T_STREQ(st.why, "LF without CR");

	/* Bytes after the reply are the next reply's, not checked here. */
	fr_setup(&fr, "bytes:2");
	T_EQ(framing_check(&fr, "ab", &err), 0);
	framing_begin(&fr, &st, NULL);
	T_EQ(framing_feed(&fr, &st, "abXY", 4, &used), FR_DONE);
	T_UEQ(used, 2);
}
