/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Private to loadgen: reply framings, which say where a reply ends in
 * the byte stream of a connection, the request templates of --message,
 * and their C escapes.
 *
 * A framing is a parser module behind one table of operations, as the
 * loop's backends are (src/loop/backend.h): frame_bytes.c (echo,
 * bytes:N), frame_until.c (line, until:TEXT), frame_prefix.c
 * (prefix:u16be|u32be), frame_redis.c (redis), frame_http.c (http),
 * frame_memcache.c (memcache).
 * framing.c parses a --reply spec into a struct framing, adds the
 * --reply-check test, and dispatches.
 *
 * How the engine uses it:
 *
 *	struct framing	fr;			at start-up, one per run
 *	framing_parse(&fr, "redis", &errstr)	--reply; -1: usage error
 *	framing_check(&fr, "+PONG", &errstr)	--reply-check, optional
 *
 * fr is read-only afterwards and shared by every connection and thread.
 * Each connection embeds one struct fr_state (sizeof(struct fr_state),
 * about 120 bytes; nothing is allocated, ever).  Replies come in the
 * order of the requests, so the engine walks its ring of requests in
 * flight, oldest first:
 *
 *	framing_begin(&fr, &st, &req)	before the first byte of each reply;
 *					req is the request it answers
 *	r = framing_feed(&fr, &st, buf, n, &used)
 *	FR_MORE		all n bytes belong to the reply, which is not
 *			complete yet (used == n): recv more.
 *	FR_DONE		the reply ended after used bytes (1 <= used <= n):
 *			retire the request; if st.close, the server will
 *			close after it.  buf + used, n - used hold the next
 *			replies (pipelining): begin the next request and
 *			feed the rest.  Bytes with no request in flight are
 *			the engine's mismatch, not the framing's.
 *	FR_MISMATCH	buf[used] is the first byte that no valid reply of
 *			this framing can hold (used < n), byte st.pos of the
 *			reply; st.why is a short phrase saying why.  The
 *			state is dead: close the connection, count a
 *			mismatch, log the bytes once through log_escape().
 *
 * A reply may arrive split at any byte and several may arrive in one
 * chunk; the parsers keep everything they need in fr_state and never
 * look back at earlier chunks, so buf is the engine's to reuse as soon
 * as framing_feed() returns.  At EOF with a request in flight,
 * framing_eof() says whether EOF completes its reply (an HTTP body
 * delimited by the close: 1) or cuts it short (0, ERR_CLOSED).
 * framing_feed() must not be called again after FR_MISMATCH, nor after
 * FR_DONE before the next framing_begin().
 *
 * For echo, the engine's verified pattern stream becomes one request
 * per message: base = the pattern, period = PATLEN, off = the phase of
 * the message's first byte, len = its size.
 *
 * Nothing here takes locks or keeps global state: any thread may call
 * any function on its own fr_state.
 */
#ifndef TENK_LOADGEN_FRAMING_H
#define TENK_LOADGEN_FRAMING_H

#include <sys/types.h>

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Limits: beyond them a reply is a mismatch, or a spec an error. */
#define FR_MAXTEXT	128		/* until:TEXT, --reply-check TEXT */
#define FR_MAXBYTES	(1ULL << 30)	/* bytes:N */
#define FR_MAXLINE	(1U << 20)	/* line, until: bytes per reply */
#define FR_REDIS_DEPTH	16		/* nested aggregates */
#define FR_REDIS_MAXLINE 65536		/* a simple string or error */
#define FR_REDIS_MAXBULK (512ULL << 20)	/* redis' proto-max-bulk-len */
#define FR_REDIS_MAXAGG	(1U << 30)	/* elements of one aggregate */
#define FR_HTTP_MAXLINE	8192		/* status, header or chunk line */
#define FR_HTTP_MAXHDRS	128		/* header (and trailer) lines */
#define FR_MC_MAXLINE	8192		/* memcache: bytes of a line */
#define FR_MC_MAXVALUE	(1ULL << 30)	/* memcache: bytes of a value */

enum fr_res {
	FR_MORE = 0,		/* every byte taken, reply not complete */
	FR_DONE,		/* reply complete after *used bytes */
	FR_MISMATCH		/* buf[*used] cannot be part of a reply */
};

/*
 * The request a reply answers.  Byte i (i < len) of the request is
 * base[(off + i) % period], so that the engine's repeating pattern
 * (sent from any phase, any length) is described without a copy; a
 * plain message is { msg, len, 0, len }.  base NULL: the bytes are
 * not known (echo then checks only the length, http assumes no HEAD).
 * The bytes must stay valid until the reply is complete: echo keeps
 * the pointer in the state.  Echo needs len >= 1; the other framings
 * also take a NULL request.
 */
struct fr_req {
	const unsigned char	*base;
	size_t			 period;
	size_t			 off;
	uint64_t		 len;
};

/* frame_redis.c: where in one RESP reply the parser is. */
struct fr_redis {
	int64_t		 num;		/* the number of a header line */
	uint64_t	 left;		/* bulk bytes and CRLF to come */
	uint32_t	 linelen;
	uint32_t	 rem[FR_REDIS_DEPTH];	/* elements left per level */
	uint16_t	 attr;		/* bit per level: a RESP3 attribute */
	uint8_t		 phase;
	uint8_t		 kind;		/* what the header line holds */
	uint8_t		 depth;
	uint8_t		 ndig;
	uint8_t		 neg;
};

/* frame_http.c: where in one HTTP/1.x response the parser is. */
struct fr_http {
	uint64_t	 left;		/* body or chunk bytes to come */
	uint64_t	 clen;		/* Content-Length */
	uint64_t	 num;		/* the number being read */
	uint32_t	 linelen;
	uint16_t	 status;
	uint16_t	 max;		/* framing's maxstatus */
	uint16_t	 nhdrs;
	uint8_t		 phase;
	uint8_t		 sub;		/* step within the phase */
	uint8_t		 hdr;		/* which header this line is */
	uint8_t		 ntok;		/* bytes in tok; 0xff: too long */
	char		 tok[20];	/* header name or value token */
	unsigned int	 head:1;	/* the request was HEAD */
	unsigned int	 cr:1;		/* a CR that needs its LF */
	unsigned int	 minor:1;	/* HTTP/1.1 rather than 1.0 */
	unsigned int	 has_clen:1;
	unsigned int	 te:1;		/* Transfer-Encoding seen */
	unsigned int	 chunked:1;	/* ... and its last coding */
	unsigned int	 close:1;	/* Connection: close */
	unsigned int	 keep:1;	/* Connection: keep-alive */
	unsigned int	 tokend:1;	/* the token ended, parameters follow */
};

/* frame_memcache.c: where in one memcached reply the parser is. */
struct fr_mc {
	uint64_t	 left;		/* value bytes and CRLF to come */
	uint64_t	 num;		/* the size being read */
	uint32_t	 linelen;
	uint8_t		 phase;
	uint8_t		 kind;		/* what the line's word is */
	uint8_t		 ctx;		/* first line, in a get, in stats */
	uint8_t		 field;		/* arguments so far */
	uint8_t		 ntok;		/* bytes of the word or number */
	uint8_t		 inarg;		/* inside an argument */
	char		 tok[12];	/* the word so far */
};

/* One connection's place in the reply it is reading. */
struct fr_state {
	uint64_t	 pos;		/* bytes of the reply taken so far */
	const char	*why;		/* after FR_MISMATCH */
	unsigned int	 close:1;	/* after FR_DONE: server closes next */
	union {
		struct fr_req	 echo;		/* the bytes expected */
		uint32_t	 until;		/* delimiter bytes matched */
		struct {
			uint64_t len;		/* payload length */
			uint8_t	 have;		/* header bytes read */
		} prefix;
		struct fr_redis	 redis;
		struct fr_http	 http;
		struct fr_mc	 mc;
	} u;
};

struct framing;

/*
 * The operations of one framing.  noarg, when not NULL, is the phrase
 * that refuses an argument (a ':' after the name), so that parse() sees
 * none.  parse() reads the spec after its name and ':' (arg NULL when
 * there was no ':'); NULL: there is nothing to read.  begin() and
 * feed() act as framing_begin() and framing_feed() but leave st->pos,
 * and --reply-check, to framing.c; begin() may be NULL when the cleared
 * state is all a reply needs.  eof() may be NULL: EOF never ends a
 * reply.
 */
struct framing_ops {
	const char	*name;
	const char	*noarg;
	int		(*parse)(struct framing *, const char *arg,
			    const char **errstr);
	void		(*begin)(const struct framing *, struct fr_state *,
			    const struct fr_req *);
	enum fr_res	(*feed)(const struct framing *, struct fr_state *,
			    const unsigned char *, size_t, size_t *);
	int		(*eof)(const struct framing *,
			    const struct fr_state *);
};

/* A parsed --reply (and --reply-check): read-only while a run lasts. */
struct framing {
	const struct framing_ops *ops;
	uint64_t	 n;		/* bytes:N; prefix: 2 or 4 */
	size_t		 dlen;		/* line, until: the delimiter */
	unsigned char	 delim[FR_MAXTEXT];
	uint8_t		 fail[FR_MAXTEXT];	/* its KMP failure table */
	size_t		 clen;		/* --reply-check: 0 for none */
	unsigned char	 check[FR_MAXTEXT];
	uint16_t	 maxstatus;	/* http: above it a mismatch; 0 none */
};

extern const struct framing_ops	 framing_echo;
extern const struct framing_ops	 framing_bytes;
extern const struct framing_ops	 framing_line;
extern const struct framing_ops	 framing_until;
extern const struct framing_ops	 framing_prefix;
extern const struct framing_ops	 framing_redis;
extern const struct framing_ops	 framing_http;
extern const struct framing_ops	 framing_memcache;

/* framing.c */
int		 framing_parse(struct framing *, const char *,
		    const char **);
int		 framing_check(struct framing *, const char *,
		    const char **);
void		 framing_begin(const struct framing *, struct fr_state *,
		    const struct fr_req *);
enum fr_res	 framing_feed(const struct framing *, struct fr_state *,
		    const void *, size_t, size_t *);
int		 framing_eof(const struct framing *, struct fr_state *);

/*
 * A counted stretch (a body, a chunk, a bulk string, a value) of which
 * *left bytes are still to come and avail are in the buffer: take what
 * is there of it; the bytes taken.  Each framing's feed skips its data
 * with it.
 */
static inline size_t
framing_take(uint64_t *left, size_t avail)
{
	size_t	k = avail;

	if (k > *left)
		k = (size_t)*left;
	*left -= k;
	return k;
}

/*
 * A counted stretch that ends in CRLF (a memcache value, a RESP bulk
 * string), of which *left bytes are still to come, the CRLF's two
 * among them: take what buf[*i..n) holds of it, *i left on the last
 * byte taken.  Returns 1 when its LF is taken, 0 when more is to come,
 * or -1 with *why set at the byte that should be the CR (longer, the
 * framing's words for a stretch longer than its count) or the LF.
 */
static inline int
framing_crlf(uint64_t *left, const unsigned char *buf, size_t n,
    size_t *i, const char *longer, const char **why)
{
	size_t	k = n - *i;

	if (*left > 2) {
		if (k > *left - 2)
			k = (size_t)(*left - 2);
		*left -= k;
		*i += k - 1;
		return 0;
	}
	if (buf[*i] != (*left == 2 ? '\r' : '\n')) {
		*why = *left == 2 ? longer : "CR without LF";
		return -1;
	}
	return --*left == 0;
}

/*
 * template.c: requests rendered from a template per request (see the
 * top of template.c for the placeholders).  At start-up:
 *
 *	struct tmpl_set	ts = { 0 };
 *	struct tp_err	err;
 *	tmpl_add(&ts, "GET /k/{rand:1-1000} ...", &err)	-1: err.why at
 *							err.col
 *
 * or tmpl_begin(), tmpl_text() and tmpl_lit() pieces, tmpl_end().  Per
 * request, from any thread, into a buffer of at least ts.maxlen bytes:
 *
 *	n = tmpl_render(ts.t[i], &ctx, out)
 *
 * or, for a template of a fixed layout, over its last rendering:
 *
 *	fn = tmpl_over(ts.t[i], &arg)		at start-up; NULL: none
 *	n = fn(arg, &rng, out)			per request
 */
#define TP_MAXLEN	(1024 * 1024)	/* bytes of one request */
#define TP_MAXFILE	(64 * 1024 * 1024)	/* {line:FILE} */
#define TP_CLENW	7		/* digits of a body's length */

struct tmpl;
struct tp_lines;
struct tp_part;
struct tp_zipf;

/* A fixed layout's placeholders, written over a rendering (tmpl_over). */
typedef size_t tp_over_fn(const struct tp_part *, uint64_t *,
    unsigned char *);

/* The requests of a run, used in turn. */
struct tmpl_set {
	struct tmpl	**t;
	size_t		 n;
	size_t		 maxlen;	/* of any request */
	size_t		 minlen;
	int		 fixed;		/* no placeholder in any */
	struct tmpl	*cur;		/* being built */
	struct tp_lines	*lines;		/* the files of {line:FILE} */
	struct tp_zipf	*zipfs;
	_Atomic uint64_t *ctrs;		/* shared by every process */
	size_t		 nctrs;
};

/* What one request is rendered from. */
struct tp_ctx {
	uint64_t	*rng;		/* the connection's random state */
	uint64_t	 seq;		/* its requests before this one */
	uint64_t	 conn;		/* its number */
};

/* Why a template was refused: a phrase, at a column from 1 (0: none). */
struct tp_err {
	const char	*why;
	const char	*detail;	/* strerror() of a {line:FILE} */
	size_t		 col;
};

size_t		 tmpl_render(const struct tmpl *, struct tp_ctx *,
		    unsigned char *);
tp_over_fn	*tmpl_over(const struct tmpl *, const struct tp_part **);
const unsigned char *tmpl_fixed(const struct tmpl *, size_t *);
int		 tmpl_begin(struct tmpl_set *, struct tp_err *);
int		 tmpl_text(struct tmpl_set *, const char *, size_t,
		    struct tp_err *);
int		 tmpl_lit(struct tmpl_set *, const void *, size_t,
		    struct tp_err *);
int		 tmpl_clen(struct tmpl_set *, struct tp_err *);
int		 tmpl_body(struct tmpl_set *, struct tp_err *);
int		 tmpl_end(struct tmpl_set *, struct tp_err *);
int		 tmpl_add(struct tmpl_set *, const char *, struct tp_err *);
void		 tmpl_free(struct tmpl_set *);

/* escape.c */
int		 escape_char(const char **, const char **);
ssize_t		 escape_parse(const char *, void *, size_t, const char **);
ssize_t		 escape_parse_some(const char *, void *, size_t, const char *,
		    const char **);

/*
 * The value of hex digit c (either case), or -1 if c is none: for "\xHH",
 * HTTP chunk sizes and JSON's "\uHHHH".  Inline, because json.c, which
 * tenkbench links without the framings, uses it too.
 */
static inline int
escape_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif /* TENK_LOADGEN_FRAMING_H */
