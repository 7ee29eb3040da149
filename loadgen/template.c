/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Request templates: the text of -m, of each line of --message-file and
 * of a URL's request, compiled once at start-up into a list of parts
 * (literal bytes and placeholders) and rendered per request into a
 * buffer the caller owns.  Nothing is allocated while a run lasts, and
 * a request costs its literal bytes' memcpy() plus a few instructions a
 * placeholder.  A template whose every part has one length (a fixed
 * layout: literals, padded numbers, {bytes}) is also compiled into one
 * call that writes only its placeholders, and of a padded number only
 * the digits its range can change, over a rendering already in place
 * (tmpl_over): a random draw, a multiply and table look-ups, with no
 * test of what kind of placeholder it is.  The placeholders:
 *
 *	{seq}, {seq:conn}	the connection's requests so far, from 0,
 *				counting on across its reconnects
 *	{seq:global}		the run's requests so far, all connections,
 *				threads and processes (one atomic add)
 *	{rand:LO-HI}		a uniform number in [LO, HI]
 *	{zipf:N:S}		a number in [0, N), Zipf-distributed with
 *				exponent S: 0 the most frequent, as a
 *				cache's keys are
 *	{conn}			the connection's number
 *	{bytes:N}		N random letters and digits
 *	{line:FILE}		the lines of FILE in order, one a request
 *				(all connections share the order)
 *	{line:FILE:rand}	a line of FILE drawn at random
 *
 * A number written with leading zeros (LO of rand, N of zipf) pads every
 * value to its width, so that a length prefix written around it (RESP's
 * "$16\r\n") holds.  "{" followed by a lowercase letter opens a
 * placeholder; any other "{" is itself, and "\{" is a brace anywhere.
 * C escapes are read as escape_char() reads them.  A text that breaks
 * these rules is refused with the column (from 1) where it breaks.
 *
 * Random values come from the caller's state through tp_rand()
 * (wyrand), one state per connection, so that a seeded state
 * renders the same requests again.  {zipf} of up to TP_ZIPFTAB values
 * draws from a table made at start-up by Vose's alias method (M. D.
 * Vose, "A linear algorithm for generating random numbers with a given
 * distribution", IEEE TSE 17(9), 1991): one random number, a multiply
 * and a look-up a value, 8 bytes of table a value.  A larger N samples
 * by rejection-inversion (W. Hormann and G. Derflinger, "Rejection-
 * inversion to generate variates from monotone discrete
 * distributions", ACM TOMACS 6(3), 1996): O(1) per value with no
 * table, but about two logarithms and an exponential each, some ten
 * times the work.  The counters that all processes of a run
 * share ({seq:global}, {line:FILE} in order) live in one shared
 * anonymous mapping made here, before tenkload forks.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/parse.h"
#include "framing.h"

#define TP_MAXCTRS	512		/* shared counters per run */
#define TP_MAXZIPF	(1ULL << 53)	/* {zipf:N}: N exact in a double */
#define TP_ZIPFTAB	(1U << 20)	/* {zipf:N}: up to it, a table */
#define TP_MAXEXP	100.0		/* {zipf:N:S}: S */
#define TP_NAMELEN	16
#define TP_POOL		4093		/* prime: {bytes} offsets do not
					   line up with the lengths */

enum tp_kind {
	TP_LIT = 0,
	TP_SEQ,
	TP_GSEQ,
	TP_RAND,
	TP_ZIPF,
	TP_CONN,
	TP_BYTES,
	TP_LINE,
	TP_RLINE,
	TP_CLEN,
	TP_BODY			/* where the body TP_CLEN counts starts */
};

/*
 * One column of an alias table: value i when the draw's fraction is
 * below cut / 2^32, else alias.
 */
struct tz_cell {
	uint32_t	 cut;
	uint32_t	 alias;
};

/*
 * One {zipf:N:S}: its alias table (N up to TP_ZIPFTAB), else
 * rejection-inversion's constants.
 */
struct tp_zipf {
	uint64_t	 nn;
	struct tz_cell	*tab;
	double		 n;
	double		 s;
	double		 hx1;		/* H(1.5) - 1 */
	double		 hxn;		/* H(N + 0.5) */
	double		 sval;
	struct tp_zipf	*next;
};

/* A file of {line:FILE}: its bytes and where each line is. */
struct tp_lines {
	char		*path;
	unsigned char	*buf;
	uint32_t	*start;
	uint32_t	*len;
	size_t		 n;
	size_t		 maxlen;
	struct tp_lines	*next;
};

struct tp_part {
	uint8_t			 kind;
	uint8_t			 width;	/* zero padding, digits */
	uint8_t			 fixed;	/* every value fills width */
	uint32_t		 len;	/* TP_LIT, TP_BYTES, TP_CLEN width;
					   in vars[]: the bytes written */
	uint32_t		 off;	/* in vars[]: where they start */
	uint32_t		 tlen;	/* in vars[]: the template's length */
	tp_over_fn		*over;	/* in vars[]: what writes them */
	const unsigned char	*p;	/* TP_LIT */
	uint64_t		 lo;	/* TP_RAND */
	uint64_t		 span;	/* TP_RAND: HI - LO + 1, 0 for 2^64 */
	const struct tp_zipf	*z;
	const struct tp_lines	*lines;
	_Atomic uint64_t	*ctr;	/* TP_GSEQ, TP_LINE */
};

struct tmpl {
	struct tp_part	*parts;
	size_t		 nparts;
	unsigned char	*lit;		/* the literal bytes, all parts' */
	size_t		 nlit;
	size_t		 litcap;
	size_t		 maxlen;
	size_t		 minlen;
	/*
	 * A fixed layout: every part has one length, so each starts at
	 * its own offset, and the placeholders (vars[0..nvars), each
	 * with the function that writes the bytes it may change) can be
	 * rendered over a rendering of the same template in place, by
	 * over(vars).
	 */
	int		 layout;
	struct tp_part	*vars;		/* then one with over NULL */
	size_t		 nvars;
	tp_over_fn	*over;		/* vars[0]'s alone, else a list */
};

/* The random letters of {bytes}: 64 of them, TP_POOL long plus wrap. */
static const char	 tp_alpha[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
static unsigned char	 tp_pool[TP_POOL + TP_MAXLEN];
static int		 tp_pool_ready;
/* "0000" to "9999": four digits a division for padded numbers. */
static char		 tp_d4[10000][4];
static int		 tp_d4_ready;

static int	 tp_layout(struct tmpl *);
static void	 tp_over_op(struct tp_part *, const struct tp_part *, size_t);

static const uint64_t tp_pow10[20] = {
	1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL,
	10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL,
	100000000000ULL, 1000000000000ULL, 10000000000000ULL,
	100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
	100000000000000000ULL, 1000000000000000000ULL,
	10000000000000000000ULL
};

/*
 * The next value of a random state: wyrand (Wang Yi's wyhash), a
 * constant step and one 128-bit multiply that folds its halves, which
 * passes the BigCrush and PractRand batteries at a handful of
 * instructions; any seed, 0 included, gives a period of 2^64.
 */
static inline uint64_t
tp_rand(uint64_t *s)
{
	unsigned __int128	t;

	*s += 0xa0761d6478bd642fULL;
	t = (unsigned __int128)*s * (*s ^ 0xe7037ed1a0b428dbULL);
	return (uint64_t)(t >> 64) ^ (uint64_t)t;
}

/* A number below span, 1 or more, by a multiply, without division. */
static inline uint64_t
tp_below1(uint64_t *s, uint64_t span)
{
	return (uint64_t)(((unsigned __int128)tp_rand(s) * span) >> 64);
}

/* A number below span, 0 standing for 2^64. */
static inline uint64_t
tp_below(uint64_t *s, uint64_t span)
{
	if (span == 0)
		return tp_rand(s);
	return tp_below1(s, span);
}

/*
 * Digits of v in decimal: log10 of its bit length's power of two
 * (1233 / 4096 is log10(2) from below), then one comparison.  v | 1
 * has as many digits as v, and at least one.
 */
static inline unsigned int
tp_ndigits(uint64_t v)
{
	unsigned int	t;

	v |= 1;
	t = (unsigned int)(64 - __builtin_clzll(v)) * 1233 >> 12;
	return t + (v >= tp_pow10[t]);
}

/*
 * n bytes from p to o, n at most 32 inline in overlapping 8-byte moves
 * (the literal parts of a request are mostly that short), memcpy()
 * beyond.
 */
static inline void
tp_copy(unsigned char *o, const unsigned char *p, size_t n)
{
	uint64_t	a, b, c, d;
	uint32_t	x, y;

	if (n >= 16 && n <= 32) {
		memcpy(&a, p, 8);
		memcpy(&b, p + 8, 8);
		memcpy(&c, p + n - 16, 8);
		memcpy(&d, p + n - 8, 8);
		memcpy(o, &a, 8);
		memcpy(o + 8, &b, 8);
		memcpy(o + n - 16, &c, 8);
		memcpy(o + n - 8, &d, 8);
	} else if (n >= 8 && n < 16) {
		memcpy(&a, p, 8);
		memcpy(&b, p + n - 8, 8);
		memcpy(o, &a, 8);
		memcpy(o + n - 8, &b, 8);
	} else if (n >= 4 && n < 8) {
		memcpy(&x, p, 4);
		memcpy(&y, p + n - 4, 4);
		memcpy(o, &x, 4);
		memcpy(o + n - 4, &y, 4);
	} else if (n < 4) {
		while (n-- > 0)
			*o++ = *p++;
	} else
		memcpy(o, p, n);
}

/*
 * v in exactly w decimal digits at out, zeros in front, where v < 10^w
 * and w is 1 to 20: four digits a division from a table, from the
 * right, the leftmost group taking the one to four digits left.
 */
static inline void
tp_dw(unsigned char *out, uint64_t v, unsigned int w)
{
	unsigned char	*p = out + w;
	const char	*d;
	uint64_t	 q;
	uint32_t	 v32, q32;

	for (; w > 4 && v > UINT32_MAX; w -= 4) {
		q = v / 10000;
		p -= 4;
		memcpy(p, tp_d4[v - q * 10000], 4);
		v = q;
	}
	/* In 32 bits, whose division by a constant is the cheaper. */
	for (v32 = (uint32_t)v; w > 4; w -= 4) {
		q32 = v32 / 10000;
		p -= 4;
		memcpy(p, tp_d4[v32 - q32 * 10000], 4);
		v32 = q32;
	}
	d = tp_d4[v32];
	if (w == 4)
		memcpy(out, d, 4);
	else if (w >= 2) {
		/* Two overlapping pairs: digits 4 - w to 3 of the four. */
		memcpy(out, d + 4 - w, 2);
		memcpy(out + w - 2, d + 2, 2);
	} else
		*out = (unsigned char)d[3];
}

static void
tp_d4_init(void)
{
	int	i;

	if (tp_d4_ready)
		return;
	for (i = 0; i < 10000; i++) {
		tp_d4[i][0] = (char)('0' + i / 1000);
		tp_d4[i][1] = (char)('0' + i / 100 % 10);
		tp_d4[i][2] = (char)('0' + i / 10 % 10);
		tp_d4[i][3] = (char)('0' + i % 10);
	}
	tp_d4_ready = 1;
}

/*
 * Write v in decimal at out, at least width digits (zeros in front,
 * width at most 20); returns the number written.
 */
static inline size_t
tp_utoa(unsigned char *out, uint64_t v, unsigned int width)
{
	unsigned int	n = tp_ndigits(v);

	if (n < width)
		n = width;
	tp_dw(out, v, n);
	return n;
}

/* H(x) = (x^(1-s) - 1) / (1 - s), and its limit log(x) at s = 1. */
static double
tz_h(const struct tp_zipf *z, double x)
{
	double	lx = log(x), t = (1 - z->s) * lx;

	return fabs(t) > 1e-8 ? expm1(t) / t * lx : lx;
}

/* h(x) = x^-s, the density H integrates. */
static double
tz_hd(const struct tp_zipf *z, double x)
{
	return exp(-z->s * log(x));
}

/* The inverse of H. */
static double
tz_hinv(const struct tp_zipf *z, double x)
{
	double	t = x * (1 - z->s);

	if (t < -1)
		t = -1;		/* rounding past the support */
	return exp(fabs(t) > 1e-8 ? log1p(t) / t * x : x);
}

/*
 * z's alias table, by Vose's method: each value's probability times N
 * is its column's share; a column short of 1 is filled up from one
 * with more, which becomes its alias.  Returns 0, or -1 when out of
 * memory.
 */
static int
tz_table(struct tp_zipf *z)
{
	double		*q, sum = 0;
	uint32_t	*w, *sm, *lg, n = (uint32_t)z->nn, i, a, b;

	q = reallocarray(NULL, n, sizeof(*q));
	w = reallocarray(NULL, n, sizeof(*w));
	z->tab = reallocarray(NULL, n, sizeof(*z->tab));
	if (q == NULL || w == NULL || z->tab == NULL) {
		free(q);
		free(w);
		return -1;
	}
	for (i = 0; i < n; i++)
		sum += q[i] = exp(-z->s * log((double)i + 1));
	/* The short columns from the front of w, the others from its end. */
	sm = w;
	lg = w + n;
	for (i = 0; i < n; i++) {
		q[i] *= (double)n / sum;
		if (q[i] < 1)
			*sm++ = i;
		else
			*--lg = i;
	}
	while (sm > w && lg < w + n) {
		a = *--sm;
		b = *lg;
		/* Rounding may leave a column a hair below 0. */
		z->tab[a].cut = q[a] > 0 ? (uint32_t)(q[a] * 4294967296.0) :
		    0;
		z->tab[a].alias = b;
		q[b] -= 1 - q[a];
		if (q[b] < 1) {
			lg++;
			*sm++ = b;
		}
	}
	/* Full columns, and any that rounding left short: themselves. */
	while (sm > w) {
		a = *--sm;
		z->tab[a].alias = a;
	}
	for (; lg < w + n; lg++)
		z->tab[*lg].alias = *lg;
	free(q);
	free(w);
	return 0;
}

/*
 * The {zipf:N:S} of ts, made (or found, when another placeholder has
 * the same N and S) with its table or its constants.  NULL when out of
 * memory.
 */
static struct tp_zipf *
tz_new(struct tmpl_set *ts, uint64_t n, double s)
{
	struct tp_zipf	*z;

	for (z = ts->zipfs; z != NULL; z = z->next)
		if (z->nn == n && z->s == s)
			return z;
	if ((z = calloc(1, sizeof(*z))) == NULL)
		return NULL;
	z->nn = n;
	z->n = (double)n;
	z->s = s;
	if (n <= TP_ZIPFTAB) {
		if (tz_table(z) == -1) {
			free(z->tab);
			free(z);
			return NULL;
		}
	} else {
		z->hx1 = tz_h(z, 1.5) - 1;
		z->hxn = tz_h(z, z->n + 0.5);
		z->sval = 2 - tz_hinv(z, tz_h(z, 2.5) - tz_hd(z, 2));
	}
	z->next = ts->zipfs;
	ts->zipfs = z;
	return z;
}

/*
 * A value in [0, N) from z's table: the column from the high half of
 * a 128-bit product, the coin from the top of its low half.
 */
static inline uint64_t
tz_draw(const struct tp_zipf *z, uint64_t *s)
{
	unsigned __int128	 x = (unsigned __int128)tp_rand(s) * z->nn;
	uint64_t		 i = (uint64_t)(x >> 64);

	return (uint32_t)((uint64_t)x >> 32) < z->tab[i].cut ? i :
	    z->tab[i].alias;
}

/*
 * By rejection-inversion, a value in [0, N): rank k + 1 drawn with
 * probability (k + 1)^-s / sum.
 */
static uint64_t
tz_reject(const struct tp_zipf *z, uint64_t *s)
{
	double		 u, x, k;

	for (;;) {
		u = (double)(tp_rand(s) >> 11) * 0x1.0p-53;
		u = z->hxn + u * (z->hx1 - z->hxn);
		x = tz_hinv(z, u);
		k = floor(x + 0.5);
		if (k < 1)
			k = 1;
		else if (k > z->n)
			k = z->n;
		if (k - x <= z->sval || u >= tz_h(z, k + 0.5) - tz_hd(z, k))
			return (uint64_t)k - 1;
	}
}

/* A value of z in [0, N), each way. */
static inline uint64_t
tz_sample(const struct tp_zipf *z, uint64_t *s)
{
	return z->tab != NULL ? tz_draw(z, s) : tz_reject(z, s);
}

static void
tp_pool_init(void)
{
	uint64_t	s = 0x706f6f6c;		/* "pool" */
	size_t		i;

	if (tp_pool_ready)
		return;
	for (i = 0; i < TP_POOL; i++)
		tp_pool[i] = (unsigned char)tp_alpha[tp_rand(&s) & 63];
	for (; i < sizeof(tp_pool); i++)
		tp_pool[i] = tp_pool[i - TP_POOL];
	tp_pool_ready = 1;
}

/*
 * Placeholder p (neither literal nor a Content-Length's part) for the
 * request x describes, at o; returns its length.
 */
static inline size_t
tp_var(const struct tp_part *p, struct tp_ctx *x, unsigned char *o)
{
	const struct tp_lines	*ln;
	uint64_t		 v;

	switch (p->kind) {
	case TP_SEQ:
		return tp_utoa(o, x->seq, 0);
	case TP_GSEQ:
		v = atomic_fetch_add_explicit(p->ctr, 1, memory_order_relaxed);
		return tp_utoa(o, v, 0);
	case TP_RAND:
		v = p->lo + tp_below(x->rng, p->span);
		if (!p->fixed)
			return tp_utoa(o, v, p->width);
		tp_dw(o, v, p->width);
		return p->width;
	case TP_ZIPF:
		v = tz_sample(p->z, x->rng);
		if (!p->fixed)
			return tp_utoa(o, v, p->width);
		tp_dw(o, v, p->width);
		return p->width;
	case TP_CONN:
		return tp_utoa(o, x->conn, 0);
	case TP_BYTES:
		tp_copy(o, tp_pool + tp_below(x->rng, TP_POOL), p->len);
		return p->len;
	case TP_LINE:
	case TP_RLINE:
		ln = p->lines;
		if (p->kind == TP_LINE)
			v = atomic_fetch_add_explicit(p->ctr, 1,
			    memory_order_relaxed) % ln->n;
		else
			v = tp_below(x->rng, ln->n);
		tp_copy(o, ln->buf + ln->start[v], ln->len[v]);
		return ln->len[v];
	default:
		return 0;
	}
}

/*
 * Render t into out, which holds t's maxlen bytes at least, for the
 * request x describes.  Returns the request's length.  Any thread, each
 * with its own x; the shared counters are atomic.
 */
size_t
tmpl_render(const struct tmpl *t, struct tp_ctx *x, unsigned char *out)
{
	const struct tp_part	*p, *end = t->parts + t->nparts;
	unsigned char		*o = out, *clen = NULL, *body = NULL;
	uint64_t		 v;
	size_t			 n;

	for (p = t->parts; p < end; p++) {
		switch (p->kind) {
		case TP_LIT:
			tp_copy(o, p->p, p->len);
			o += p->len;
			break;
		case TP_CLEN:
			/* Filled in below, once the body is written. */
			clen = o;
			o += p->len;
			break;
		case TP_BODY:
			body = o;
			break;
		default:
			o += tp_var(p, x, o);
			break;
		}
	}
	if (clen != NULL) {
		/* Right-aligned: the spaces before are the header's OWS. */
		v = (uint64_t)(o - (body != NULL ? body : o));
		n = tp_ndigits(v);
		memset(clen, ' ', TP_CLENW - n);
		tp_dw(clen + TP_CLENW - n, v, (unsigned int)n);
	}
	return (size_t)(o - out);
}

/*
 * The placeholders of a fixed layout, over its last rendering: each
 * writes only the bytes that it may change (a padded number's digits
 * that some value in its range makes other than 0), at their offset.
 * tp_over_op() picks them.
 */
static size_t
tp_over_rand(const struct tp_part *p, uint64_t *rng, unsigned char *out)
{
	tp_dw(out + p->off, p->lo + tp_below(rng, p->span), p->len);
	return p->tlen;
}

/* Four digits: one entry of the table.  span is not 0 (2^64) here. */
static size_t
tp_over_rand4(const struct tp_part *p, uint64_t *rng, unsigned char *out)
{
	memcpy(out + p->off, tp_d4[p->lo + tp_below1(rng, p->span)], 4);
	return p->tlen;
}

/* Eight digits, in 32 bits: up to 10^8 keys, the common case. */
static size_t
tp_over_rand8(const struct tp_part *p, uint64_t *rng, unsigned char *out)
{
	tp_dw(out + p->off, (uint32_t)(p->lo + tp_below1(rng, p->span)), 8);
	return p->tlen;
}

static size_t
tp_over_zipf(const struct tp_part *p, uint64_t *rng, unsigned char *out)
{
	tp_dw(out + p->off, tz_reject(p->z, rng), p->len);
	return p->tlen;
}

static size_t
tp_over_ztab(const struct tp_part *p, uint64_t *rng, unsigned char *out)
{
	tp_dw(out + p->off, tz_draw(p->z, rng), p->len);
	return p->tlen;
}

static size_t
tp_over_ztab8(const struct tp_part *p, uint64_t *rng, unsigned char *out)
{
	tp_dw(out + p->off, (uint32_t)tz_draw(p->z, rng), 8);
	return p->tlen;
}

static size_t
tp_over_bytes(const struct tp_part *p, uint64_t *rng, unsigned char *out)
{
	tp_copy(out + p->off, tp_pool + tp_below(rng, TP_POOL), p->len);
	return p->tlen;
}

/* Several placeholders, up to the entry without a function. */
static size_t
tp_over_list(const struct tp_part *p, uint64_t *rng, unsigned char *out)
{
	for (; p->over != NULL; p++)
		(void)p->over(p, rng, out);
	return p->tlen;
}

/*
 * A template whose every rendering has one length, its literal bytes
 * in the same places (a fixed layout: literals, padded numbers,
 * {bytes}), as one call: fn(*arg, rng, out) writes its placeholders
 * over out, which holds a rendering of t already (tmpl_render), leaves
 * the literal bytes as they are and returns the length; random values
 * come from rng, the only input that a fixed layout reads (it has no
 * {seq}, {conn} or {line}).  Returns fn, or NULL for any other
 * template.  The engine's ring, where each request starts where one
 * did before, is what this is for.  fn may be called from any thread,
 * each with its own rng.
 */
tp_over_fn *
tmpl_over(const struct tmpl *t, const struct tp_part **arg)
{
	if (!t->layout)
		return NULL;
	*arg = t->vars;
	return t->over;
}

/* The bytes of a template without placeholders; NULL if it has some. */
const unsigned char *
tmpl_fixed(const struct tmpl *t, size_t *len)
{
	if (t->nparts > 1 || (t->nparts == 1 && t->parts[0].kind != TP_LIT))
		return NULL;
	*len = t->nparts == 1 ? t->parts[0].len : 0;
	return t->nparts == 1 ? t->parts[0].p : (const unsigned char *)"";
}

static int
tp_fail(struct tp_err *err, const char *why, size_t col)
{
	err->why = why;
	err->col = col;
	return -1;
}

/* Room for one more part; the literal bytes have their own array. */
static struct tp_part *
tp_part_new(struct tmpl *t)
{
	struct tp_part	*np;

	if ((np = reallocarray(t->parts, t->nparts + 1, sizeof(*np))) ==
	    NULL)
		return NULL;
	t->parts = np;
	np = &t->parts[t->nparts++];
	memset(np, 0, sizeof(*np));
	return np;
}

/* Append n literal bytes to t, to its last part if that is literal. */
static int
tp_lit(struct tmpl *t, const void *p, size_t n)
{
	struct tp_part	*pt;
	unsigned char	*nl;
	size_t		 cap;

	if (n == 0)
		return 0;
	if (t->nlit + n > t->litcap) {
		cap = t->litcap != 0 ? t->litcap : 64;
		while (cap < t->nlit + n)
			cap *= 2;
		if ((nl = realloc(t->lit, cap)) == NULL)
			return -1;
		t->lit = nl;
		t->litcap = cap;
	}
	memcpy(t->lit + t->nlit, p, n);
	if (t->nparts == 0 || t->parts[t->nparts - 1].kind != TP_LIT) {
		if ((pt = tp_part_new(t)) == NULL)
			return -1;
		pt->kind = TP_LIT;
		/* An offset for now: lit may move until the template ends. */
		pt->lo = t->nlit;
	}
	t->parts[t->nparts - 1].len += (uint32_t)n;
	t->nlit += n;
	t->maxlen += n;
	t->minlen += n;
	return 0;
}

/*
 * A decimal number of the argument at *sp, up to a byte of stop (or
 * the end); *width is its length when it has leading zeros, else 0.
 */
static int
tp_num(const char **sp, const char *stop, uint64_t *v, unsigned int *width)
{
	const char	*s = *sp;
	uint64_t	 n = 0;
	size_t		 k = 0;

	for (; *s >= '0' && *s <= '9'; s++, k++) {
		if (n > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		n = n * 10 + (uint64_t)(*s - '0');
	}
	if (k == 0 || (*s != '\0' && strchr(stop, *s) == NULL) || k > 20)
		return -1;
	*width = k > 1 && **sp == '0' ? (unsigned int)k : 0;
	*v = n;
	*sp = s;
	return 0;
}

static struct tp_lines *
tp_lines_load(struct tmpl_set *ts, const char *path, const char **why)
{
	struct tp_lines	*ln;
	struct stat	 sb;
	size_t		 i, n = 0, at = 0, len;
	ssize_t		 r;
	int		 fd;

	for (ln = ts->lines; ln != NULL; ln = ln->next)
		if (strcmp(ln->path, path) == 0)
			return ln;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 ||
	    fstat(fd, &sb) == -1) {
		*why = strerror(errno);
		if (fd != -1)
			close(fd);
		return NULL;
	}
	if (sb.st_size > TP_MAXFILE) {
		close(fd);
		*why = "file larger than 64 MiB";
		return NULL;
	}
	if ((ln = calloc(1, sizeof(*ln))) == NULL ||
	    (ln->path = strdup(path)) == NULL ||
	    (ln->buf = malloc((size_t)sb.st_size + 1)) == NULL)
		goto nomem;
	while (n < (size_t)sb.st_size) {
		if ((r = read(fd, ln->buf + n, (size_t)sb.st_size - n)) == -1) {
			if (errno == EINTR)
				continue;
			*why = strerror(errno);
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	fd = -1;
	/* Lines end in LF, CRLF, or the end of the file. */
	for (i = 0; i < n; i++)
		if (ln->buf[i] == '\n')
			ln->n++;
	if (n > 0 && ln->buf[n - 1] != '\n')
		ln->n++;
	if (ln->n == 0) {
		*why = "no line in the file";
		goto fail;
	}
	if ((ln->start = calloc(ln->n, sizeof(*ln->start))) == NULL ||
	    (ln->len = calloc(ln->n, sizeof(*ln->len))) == NULL)
		goto nomem;
	for (i = 0; i < ln->n; i++) {
		ln->start[i] = (uint32_t)at;
		while (at < n && ln->buf[at] != '\n')
			at++;
		len = at - ln->start[i];
		if (len > 0 && ln->buf[at - 1] == '\r')
			len--;
		ln->len[i] = (uint32_t)len;
		if (len > ln->maxlen)
			ln->maxlen = len;
		at++;
	}
	if (ln->maxlen > TP_MAXLEN) {
		*why = "a line longer than 1 MiB";
		goto fail;
	}
	ln->next = ts->lines;
	ts->lines = ln;
	return ln;

 nomem:
	*why = strerror(ENOMEM);
 fail:
	if (fd != -1)
		close(fd);
	if (ln != NULL) {
		free(ln->path);
		free(ln->buf);
		free(ln->start);
		free(ln->len);
		free(ln);
	}
	return NULL;
}

/* The next of the run's shared counters, 0 to begin with. */
static _Atomic uint64_t *
tp_counter(struct tmpl_set *ts)
{
	if (ts->ctrs == NULL) {
		ts->ctrs = mmap(NULL, TP_MAXCTRS * sizeof(*ts->ctrs),
		    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (ts->ctrs == MAP_FAILED) {
			ts->ctrs = NULL;
			return NULL;
		}
	}
	if (ts->nctrs == TP_MAXCTRS)
		return NULL;
	return &ts->ctrs[ts->nctrs++];
}

/*
 * The placeholder whose name starts at s (after its "{"), arg its
 * argument after ':' (NULL: none), up to the closing brace, which the
 * caller made a NUL.  col is the column of s.
 */
static int
tp_placeholder(struct tmpl_set *ts, struct tmpl *t, const char *s,
    size_t col, struct tp_err *err)
{
	struct tp_part	*p;
	struct tp_zipf	*z;
	const char	*arg, *a, *why = NULL, *colon;
	char		 name[TP_NAMELEN], *ep, path[PATH_MAX];
	uint64_t	 lo, hi, n;
	unsigned int	 w1, w2;
	double		 e;
	size_t		 nlen, acol;

	nlen = strcspn(s, ":");
	arg = s[nlen] == ':' ? s + nlen + 1 : NULL;
	acol = col + nlen + 1;
	if (nlen >= sizeof(name))
		return tp_fail(err, "unknown placeholder", col - 1);
	memcpy(name, s, nlen);
	name[nlen] = '\0';
	if ((p = tp_part_new(t)) == NULL)
		return tp_fail(err, strerror(ENOMEM), col);

	if (strcmp(name, "seq") == 0) {
		p->kind = TP_SEQ;
		if (arg != NULL && strcmp(arg, "global") == 0) {
			p->kind = TP_GSEQ;
			if ((p->ctr = tp_counter(ts)) == NULL)
				return tp_fail(err, "too many shared "
				    "counters (512)", col - 1);
		} else if (arg != NULL && strcmp(arg, "conn") != 0)
			return tp_fail(err, "seq takes conn or global", acol);
		t->maxlen += 20;
		t->minlen += 1;
	} else if (strcmp(name, "conn") == 0) {
		if (arg != NULL)
			return tp_fail(err, "conn takes no argument", acol);
		p->kind = TP_CONN;
		t->maxlen += 20;
		t->minlen += 1;
	} else if (strcmp(name, "rand") == 0) {
		a = arg;
		if (a == NULL || tp_num(&a, "-", &lo, &w1) == -1 ||
		    *a++ != '-' || tp_num(&a, "", &hi, &w2) == -1)
			return tp_fail(err, "rand takes LO-HI, two whole "
			    "numbers", acol);
		if (lo > hi)
			return tp_fail(err, "rand: LO above HI", acol);
		p->kind = TP_RAND;
		p->lo = lo;
		p->span = hi - lo + 1;
		p->width = (uint8_t)w1;
		p->fixed = w1 > 0 && w1 >= tp_ndigits(hi);
		t->maxlen += w1 > tp_ndigits(hi) ? w1 : tp_ndigits(hi);
		t->minlen += w1 > tp_ndigits(lo) ? w1 : tp_ndigits(lo);
	} else if (strcmp(name, "zipf") == 0) {
		a = arg;
		if (a == NULL || tp_num(&a, ":", &n, &w1) == -1 ||
		    *a++ != ':')
			return tp_fail(err, "zipf takes N:S, a count and an "
			    "exponent", acol);
		errno = 0;
		e = strtod(a, &ep);
		if (*a == '\0' || *ep != '\0' || errno != 0 || !(e > 0) ||
		    e > TP_MAXEXP)
			return tp_fail(err, "zipf: S is an exponent above 0, "
			    "at most 100", acol + (size_t)(a - arg));
		if (n == 0 || n > TP_MAXZIPF)
			return tp_fail(err, "zipf: N is 1 to 2^53", acol);
		if ((z = tz_new(ts, n, e)) == NULL)
			return tp_fail(err, strerror(ENOMEM), col);
		p->kind = TP_ZIPF;
		p->z = z;
		p->width = (uint8_t)w1;
		p->fixed = w1 > 0 && w1 >= tp_ndigits(n - 1);
		t->maxlen += w1 > tp_ndigits(n - 1) ? w1 : tp_ndigits(n - 1);
		t->minlen += w1 > 1 ? w1 : 1;
	} else if (strcmp(name, "bytes") == 0) {
		if (arg == NULL || tk_parse_size(arg, 1, TP_MAXLEN, &n,
		    &why) == -1)
			return tp_fail(err, "bytes takes N, 1 to 1m", acol);
		tp_pool_init();
		p->kind = TP_BYTES;
		p->len = (uint32_t)n;
		t->maxlen += n;
		t->minlen += n;
	} else if (strcmp(name, "line") == 0) {
		if (arg == NULL || *arg == '\0')
			return tp_fail(err, "line takes FILE", acol);
		p->kind = TP_LINE;
		nlen = strlen(arg);
		if ((colon = strrchr(arg, ':')) != NULL &&
		    strcmp(colon, ":rand") == 0) {
			p->kind = TP_RLINE;
			nlen = (size_t)(colon - arg);
		}
		if (nlen == 0 || nlen >= sizeof(path))
			return tp_fail(err, "line takes FILE", acol);
		memcpy(path, arg, nlen);
		path[nlen] = '\0';
		if ((p->lines = tp_lines_load(ts, path, &why)) == NULL) {
			err->detail = why;
			return tp_fail(err, "line: cannot read FILE", acol);
		}
		if (p->kind == TP_LINE && (p->ctr = tp_counter(ts)) == NULL)
			return tp_fail(err, "too many shared counters (512)",
			    col - 1);
		t->maxlen += p->lines->maxlen;
	} else
		return tp_fail(err, "unknown placeholder", col - 1);
	return 0;
}

/*
 * Append the template text to the template being built, read from the
 * column col0 + 1 on (the text may be the tail of a longer argument,
 * whose columns the errors count in).  Returns 0, or -1 with err set.
 */
int
tmpl_text(struct tmpl_set *ts, const char *text, size_t col0,
    struct tp_err *err)
{
	struct tmpl	*t = ts->cur;
	const char	*s, *close, *why;
	char		 buf[PATH_MAX + 64];
	unsigned char	 b;
	size_t		 col, n;
	int		 c;

	for (s = text; *s != '\0'; s++) {
		col = col0 + (size_t)(s - text) + 1;
		c = (unsigned char)*s;
		if (c == '\\') {
			if ((c = escape_char(&s, &why)) == -1)
				return tp_fail(err, why, col);
		} else if (c == '{' && s[1] >= 'a' && s[1] <= 'z') {
			if ((close = strchr(s, '}')) == NULL)
				return tp_fail(err, "placeholder without its "
				    "closing brace", col);
			n = (size_t)(close - s - 1);
			if (n >= sizeof(buf))
				return tp_fail(err, "placeholder too long",
				    col);
			memcpy(buf, s + 1, n);
			buf[n] = '\0';
			if (tp_placeholder(ts, t, buf, col + 1, err) == -1)
				return -1;
			s = close;
			continue;
		}
		b = (unsigned char)c;
		if (tp_lit(t, &b, 1) == -1)
			return tp_fail(err, strerror(ENOMEM), col);
	}
	if (t->maxlen > TP_MAXLEN)
		return tp_fail(err, "request longer than 1 MiB",
		    col0 + strlen(text));
	return 0;
}

/* Append n bytes as they are: a file's, or text built by the caller. */
int
tmpl_lit(struct tmpl_set *ts, const void *p, size_t n, struct tp_err *err)
{
	if (tp_lit(ts->cur, p, n) == -1)
		return tp_fail(err, strerror(ENOMEM), 0);
	if (ts->cur->maxlen > TP_MAXLEN)
		return tp_fail(err, "request longer than 1 MiB", 0);
	return 0;
}

/* A part of kind that renders to width bytes, appended to the request. */
static int
tp_mark(struct tmpl_set *ts, enum tp_kind kind, uint32_t width,
    struct tp_err *err)
{
	struct tp_part	*p;

	if ((p = tp_part_new(ts->cur)) == NULL)
		return tp_fail(err, strerror(ENOMEM), 0);
	p->kind = kind;
	p->len = width;
	ts->cur->maxlen += width;
	ts->cur->minlen += width;
	return 0;
}

/*
 * A Content-Length value, right-aligned in TP_CLENW columns: the length
 * of everything appended after the next tmpl_body().
 */
int
tmpl_clen(struct tmpl_set *ts, struct tp_err *err)
{
	return tp_mark(ts, TP_CLEN, TP_CLENW, err);
}

/* The body that tmpl_clen() counts starts here; it renders to nothing. */
int
tmpl_body(struct tmpl_set *ts, struct tp_err *err)
{
	return tp_mark(ts, TP_BODY, 0, err);
}

/* Start a new template at the end of ts. */
int
tmpl_begin(struct tmpl_set *ts, struct tp_err *err)
{
	struct tmpl	**nt;

	tp_d4_init();
	if ((ts->cur = calloc(1, sizeof(*ts->cur))) == NULL ||
	    (nt = reallocarray(ts->t, ts->n + 1, sizeof(*nt))) == NULL) {
		free(ts->cur);
		ts->cur = NULL;
		return tp_fail(err, strerror(ENOMEM), 0);
	}
	ts->t = nt;
	ts->t[ts->n++] = ts->cur;
	return 0;
}

/*
 * The template begun last is complete: its literal parts point into
 * its bytes from now on.  An empty one is refused.
 */
int
tmpl_end(struct tmpl_set *ts, struct tp_err *err)
{
	struct tmpl	*t = ts->cur;
	size_t		 i;
	int		 fixed = 1;

	if (t->maxlen == 0)
		return tp_fail(err, "empty message", 0);
	for (i = 0; i < t->nparts; i++) {
		if (t->parts[i].kind == TP_LIT)
			t->parts[i].p = t->lit + t->parts[i].lo;
		else if (t->parts[i].kind != TP_BODY)
			fixed = 0;
	}
	if (tp_layout(t) == -1)
		return tp_fail(err, strerror(ENOMEM), 0);
	if (t->maxlen > ts->maxlen)
		ts->maxlen = t->maxlen;
	if (ts->n == 1 || t->minlen < ts->minlen)
		ts->minlen = t->minlen;
	ts->fixed = ts->n == 1 ? fixed : ts->fixed && fixed;
	ts->cur = NULL;
	return 0;
}

/*
 * Whether every part of t has one length, and if so the offsets of its
 * placeholders, gathered in t->vars.  Returns 0, or -1 when out of
 * memory.
 */
static int
tp_layout(struct tmpl *t)
{
	struct tp_part	*p;
	size_t		 i, off = 0;

	t->layout = 0;
	for (i = 0; i < t->nparts; i++) {
		p = &t->parts[i];
		switch (p->kind) {
		case TP_LIT:
		case TP_BYTES:
			off += p->len;
			break;
		case TP_RAND:
		case TP_ZIPF:
			if (!p->fixed)
				return 0;
			off += p->width;
			break;
		default:
			return 0;
		}
	}
	if (off != t->maxlen || (t->vars = calloc(t->nparts + 1,
	    sizeof(*t->vars))) == NULL)
		return off != t->maxlen ? 0 : -1;
	for (i = 0, off = 0; i < t->nparts; i++) {
		p = &t->parts[i];
		if (p->kind != TP_LIT) {
			tp_over_op(&t->vars[t->nvars], p, off);
			t->vars[t->nvars++].tlen = (uint32_t)t->maxlen;
		}
		off += p->kind == TP_LIT || p->kind == TP_BYTES ? p->len :
		    p->width;
	}
	t->vars[t->nvars].tlen = (uint32_t)t->maxlen;
	t->over = t->nvars == 1 ? t->vars[0].over : tp_over_list;
	t->layout = 1;
	return 0;
}

/*
 * Placeholder p of a fixed layout, starting at off, as an entry of
 * vars[]: the bytes it writes over the last rendering and the function
 * that writes them.  Of a padded number, the digits that some value in
 * its range sets, in groups of four up to its width: those before stay
 * 0 whatever is drawn.
 */
static void
tp_over_op(struct tp_part *v, const struct tp_part *p, size_t off)
{
	uint64_t	hi;
	unsigned int	w;

	*v = *p;
	v->off = (uint32_t)off;
	if (p->kind == TP_BYTES) {
		v->over = tp_over_bytes;
		return;
	}
	if (p->kind == TP_RAND)
		hi = p->lo + (p->span - 1);	/* span 0: 2^64 - 1 */
	else
		hi = p->z->nn - 1;
	w = (tp_ndigits(hi) + 3) / 4 * 4;
	v->len = w < p->width ? w : p->width;
	v->off += p->width - v->len;
	if (p->kind == TP_ZIPF && p->z->tab == NULL)
		v->over = tp_over_zipf;
	else if (p->kind == TP_ZIPF)
		v->over = v->len == 8 ? tp_over_ztab8 : tp_over_ztab;
	else if (v->len == 4)
		v->over = tp_over_rand4;
	else if (v->len == 8)
		v->over = tp_over_rand8;
	else
		v->over = tp_over_rand;
}

/* One whole template from text: begin, text, end. */
int
tmpl_add(struct tmpl_set *ts, const char *text, struct tp_err *err)
{
	if (tmpl_begin(ts, err) == -1 || tmpl_text(ts, text, 0, err) == -1)
		return -1;
	return tmpl_end(ts, err);
}

/* Free what ts holds; it may be used again from scratch. */
void
tmpl_free(struct tmpl_set *ts)
{
	struct tp_lines	*ln, *nln;
	struct tp_zipf	*z, *nz;
	size_t		 i;

	for (i = 0; i < ts->n; i++) {
		free(ts->t[i]->parts);
		free(ts->t[i]->vars);
		free(ts->t[i]->lit);
		free(ts->t[i]);
	}
	free(ts->t);
	for (ln = ts->lines; ln != NULL; ln = nln) {
		nln = ln->next;
		free(ln->path);
		free(ln->buf);
		free(ln->start);
		free(ln->len);
		free(ln);
	}
	for (z = ts->zipfs; z != NULL; z = nz) {
		nz = z->next;
		free(z->tab);
		free(z);
	}
	if (ts->ctrs != NULL)
		munmap(ts->ctrs, TP_MAXCTRS * sizeof(*ts->ctrs));
	memset(ts, 0, sizeof(*ts));
}
