/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tenkload's request templates (loadgen/template.c): every placeholder
 * rendered from a seeded random state and checked (ranges, padding,
 * distributions, order, sharing across a fork), the same seed giving
 * the same requests, the Content-Length of a rendered body, and broken
 * templates refused with their reason and column.
 */
#include <sys/wait.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../loadgen/framing.h"
#include "../t.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

static void
tp_setup(struct tmpl_set *ts, const char *text)
{
	struct tp_err	 err;

	memset(ts, 0, sizeof(*ts));
	memset(&err, 0, sizeof(err));
	if (tmpl_add(ts, text, &err) == -1)
		T_FAIL("\"%s\": %s at column %zu", text, err.why, err.col);
}

/* Render template 0 of ts into out as a C string; returns its length. */
static size_t
tp_render(const struct tmpl_set *ts, struct tp_ctx *x, char *out)
{
	size_t	 n;

	T_LE(ts->maxlen, 4096);
	n = tmpl_render(ts->t[0], x, (unsigned char *)out);
	T_LE(n, ts->maxlen);
	T_GE(n, ts->minlen);
	out[n] = '\0';
	return n;
}

/* A whole number that fills all of s, or fail. */
static uint64_t
tp_num(const char *s)
{
	char		*ep;
	uint64_t	 v;

	v = strtoull(s, &ep, 10);
	if (*s == '\0' || *ep != '\0')
		T_FAIL("\"%s\" is not a number", s);
	return v;
}

TEST(template_literal)
{
	struct tmpl_set	 ts;
	struct tp_ctx	 x = { NULL, 0, 0 };
	const unsigned char *p;
	char		 out[4096];
	size_t		 n;

	/* Escapes; a brace before anything but a lowercase letter. */
	tp_setup(&ts, "a\\r\\n\\{seq}\\x00{\"k\": 1} {1}");
	T_OK(ts.fixed);
	n = tp_render(&ts, &x, out);
	T_UEQ(n, 21);
	T_OK(memcmp(out, "a\r\n{seq}\0{\"k\": 1} {1}", 21) == 0);
	T_PTR(p = tmpl_fixed(ts.t[0], &n));
	T_UEQ(n, 21);
	T_OK(memcmp(p, out, n) == 0);
	tmpl_free(&ts);

	tp_setup(&ts, "GET /{seq} x");
	T_OK(!ts.fixed);
	T_OK(tmpl_fixed(ts.t[0], &n) == NULL);
	tmpl_free(&ts);
}

TEST(template_seq_conn)
{
	struct tmpl_set	 ts;
	uint64_t	 rng = 1;
	struct tp_ctx	 x = { &rng, 0, 0 };
	char		 out[4096];

	tp_setup(&ts, "{seq}/{seq:conn}/{conn}");
	T_UEQ(ts.minlen, 5);
	T_UEQ(ts.maxlen, 62);
	x.seq = 0;
	x.conn = 7;
	tp_render(&ts, &x, out);
	T_STREQ(out, "0/0/7");
	x.seq = 18446744073709551615ULL;
	x.conn = 1234567;
	tp_render(&ts, &x, out);
	T_STREQ(out, "18446744073709551615/18446744073709551615/1234567");
	tmpl_free(&ts);
}

/* {seq:global} counts in memory that a forked child shares. */
TEST(template_seq_global)
{
	struct tmpl_set	 ts;
	struct tp_ctx	 x = { NULL, 0, 0 };
	char		 out[4096];
	pid_t		 pid;
	int		 st, i;

	tp_setup(&ts, "{seq:global},{seq:global}");
	tp_render(&ts, &x, out);
	T_STREQ(out, "0,0");
	tp_render(&ts, &x, out);
	T_STREQ(out, "1,1");
	T_SYS(pid = fork());
	if (pid == 0) {
		for (i = 0; i < 10; i++)
			(void)tmpl_render(ts.t[0], &x, (unsigned char *)out);
		_exit(0);
	}
	T_SYS(waitpid(pid, &st, 0));
	T_EQ(st, 0);
	tp_render(&ts, &x, out);
	T_STREQ(out, "12,12");
	tmpl_free(&ts);
}

TEST(template_rand)
{
	struct tmpl_set	 ts;
	uint64_t	 rng = 42, seen[3] = { 0, 0, 0 }, v, lo = UINT64_MAX;
	uint64_t	 hi = 0;
	struct tp_ctx	 x = { &rng, 0, 0 };
	char		 out[4096];
	int		 i;

	tp_setup(&ts, "{rand:1-3}");
	for (i = 0; i < 30000; i++) {
		tp_render(&ts, &x, out);
		v = tp_num(out);
		T_OK(v >= 1 && v <= 3);
		seen[v - 1]++;
	}
	/* Uniform: each about 10000, 5 standard deviations (410) apart. */
	for (i = 0; i < 3; i++)
		T_OK(seen[i] > 9590 && seen[i] < 10410);
	tmpl_free(&ts);

	/* Padded to LO's width, the ends reached. */
	tp_setup(&ts, "key:{rand:000000-000099}");
	T_UEQ(ts.minlen, 10);
	T_UEQ(ts.maxlen, 10);
	for (i = 0; i < 5000; i++) {
		T_UEQ(tp_render(&ts, &x, out), 10);
		T_OK(strncmp(out, "key:0000", 8) == 0);
		v = tp_num(out + 4);
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	T_UEQ(lo, 0);
	T_UEQ(hi, 99);
	tmpl_free(&ts);

	/* The whole range, and one value. */
	tp_setup(&ts, "{rand:0-18446744073709551615}");
	tp_render(&ts, &x, out);
	(void)tp_num(out);
	tmpl_free(&ts);
	tp_setup(&ts, "{rand:5-5}");
	tp_render(&ts, &x, out);
	T_STREQ(out, "5");
	tmpl_free(&ts);
}

/*
 * Padded numbers of every width and range come out at the width, in
 * range; and the placeholders of a fixed layout written over its last
 * rendering in place (the engine's ring, tmpl_over) give what a whole
 * rendering from the same state does.  A template of another layout
 * has no such call.
 */
TEST(template_padded_over)
{
	static const char *const texts[] = {
		"k{rand:00-99}", "k{rand:000-999}",
		"k{rand:0000-9999}", "k{rand:00000-99999}",
		"k{rand:0000000-0099999}", "k{rand:00000000-99999999}",
		"*3\\r\\n$3\\r\\nSET\\r\\n$16\\r\\nkey:"
		    "{rand:000000000000-000000099999}\\r\\n",
		"{rand:00000000000000000000-18446744073709551615}",
		"{rand:0000000000-4294967296}x{zipf:00000100:0.9}"
		    "{bytes:5}{rand:007-9}",
		"k{rand:000000-999999}", "k{rand:0000000000-9999999999}",
		"k{rand:000120-000123}", "k{zipf:000100000:0.99}",
		"k{zipf:0000000002000000:1.1}", "<{bytes:40}>",
	};
	static const char *const other[] = {
		"{seq} {rand:1-100} {zipf:1000:1}", "k{rand:0-9}",
		"k{rand:0-99}", "k{rand:01-100}", "{zipf:1000:1}", "{conn}",
	};
	static const struct {
		const char	*text;
		size_t		 len;
	} widths[] = {
		{ "{rand:0-9}", 1 }, { "{rand:00-99}", 2 },
		{ "{rand:000-999}", 3 }, { "{rand:0000-9999}", 4 },
		{ "{rand:00000-99999}", 5 }, { "{rand:0000000-0099999}", 7 },
		{ "{rand:00000000-99999999}", 8 },
	};
	struct tmpl_set	 ts;
	uint64_t	 a, b, c;
	struct tp_ctx	 xa = { &a, 0, 0 }, xc = { &c, 0, 0 };
	const struct tp_part *arg;
	tp_over_fn	*fn;
	unsigned char	 whole[4096], over[4096];
	size_t		 i, k, n;

	for (i = 0; i < NELEM(texts); i++) {
		tp_setup(&ts, texts[i]);
		T_UEQ(ts.minlen, ts.maxlen);
		if ((fn = tmpl_over(ts.t[0], &arg)) == NULL)
			T_FAIL("%s: no fixed layout", texts[i]);
		a = b = 77 + i;
		c = 1;
		(void)tmpl_render(ts.t[0], &xc, over);
		for (k = 0; k < 2000; k++) {
			n = tmpl_render(ts.t[0], &xa, whole);
			if (fn(arg, &b, over) != n || n != ts.maxlen ||
			    memcmp(whole, over, n) != 0)
				T_FAIL("%s: over \"%.*s\", whole \"%.*s\"",
				    texts[i], (int)n, over, (int)n, whole);
		}
		T_UEQ(a, b);
		tmpl_free(&ts);
	}
	for (i = 0; i < NELEM(other); i++) {
		tp_setup(&ts, other[i]);
		T_OK(tmpl_over(ts.t[0], &arg) == NULL);
		tmpl_free(&ts);
	}

	/* Each width: the value in range, zeros in front, nothing else. */
	for (i = 0; i < NELEM(widths); i++) {
		char	out[64];

		tp_setup(&ts, widths[i].text);
		a = 5;
		for (k = 0; k < 3000; k++) {
			n = tp_render(&ts, &xa, out);
			T_UEQ(n, widths[i].len);
			T_OK(strspn(out, "0123456789") == n);
		}
		tmpl_free(&ts);
	}
}

/* The same seed renders the same requests; another seed others. */
TEST(template_seeded)
{
	struct tmpl_set	 ts;
	uint64_t	 rng;
	struct tp_ctx	 x = { &rng, 0, 0 };
	char		 a[4096], b[4096];
	int		 i, same = 0;

	tp_setup(&ts, "{rand:0-1000000}/{zipf:1000:0.99}/{bytes:16}");
	rng = 7;
	for (i = 0; i < 100; i++)
		tp_render(&ts, &x, a + i * 40);
	rng = 7;
	for (i = 0; i < 100; i++) {
		tp_render(&ts, &x, b);
		T_STREQ(a + i * 40, b);
	}
	rng = 8;
	for (i = 0; i < 100; i++) {
		tp_render(&ts, &x, b);
		same += strcmp(a + i * 40, b) == 0;
	}
	T_LT(same, 2);
	tmpl_free(&ts);
}

/*
 * {zipf:N:S}: value k - 1 for rank k, with probability k^-S / H(N,S);
 * 200,000 draws from a seeded state, each of the first 16 ranks and
 * the rest together within 5 standard deviations of its expectation.
 * N up to 2^20 draws from a table, a larger one by rejection.
 */
static void
zipf_check(uint64_t n, double s)
{
	struct tmpl_set	 ts;
	uint64_t	 rng = 99, cnt[17] = { 0 }, k, draws = 200000;
	struct tp_ctx	 x = { &rng, 0, 0 };
	char		 text[64], out[64];
	double		 h = 0, p, e[17] = { 0 }, sd;
	uint64_t	 i;

	snprintf(text, sizeof(text), "{zipf:%llu:%g}", (unsigned long long)n,
	    s);
	tp_setup(&ts, text);
	for (i = 0; i < draws; i++) {
		tp_render(&ts, &x, out);
		k = tp_num(out);
		T_LT(k, n);
		cnt[k < 16 ? k : 16]++;
	}
	for (k = n; k >= 1; k--)
		h += pow((double)k, -s);
	for (k = 1; k <= n; k++)
		e[k <= 16 ? k - 1 : 16] += pow((double)k, -s) / h;
	for (k = 0; k < 17; k++) {
		p = e[k];
		sd = sqrt((double)draws * p * (1 - p));
		if (fabs((double)cnt[k] - (double)draws * p) > 5 * sd + 1)
			T_FAIL("zipf %llu %g: value %llu%s drawn %llu times, "
			    "expected %.0f", (unsigned long long)n, s,
			    (unsigned long long)k, k == 16 ? " or more" : "",
			    (unsigned long long)cnt[k], (double)draws * p);
	}
	tmpl_free(&ts);
}

TEST(template_zipf)
{
	struct tmpl_set	 ts;
	uint64_t	 rng = 3, v;
	struct tp_ctx	 x = { &rng, 0, 0 };
	char		 out[64];
	int		 i;

	zipf_check(10, 1);
	zipf_check(10, 0.5);
	zipf_check(16, 0.99);
	zipf_check(5, 2.5);
	zipf_check(1, 1);
	zipf_check(100000, 0.99);
	zipf_check(1 << 20, 1.2);
	zipf_check((1 << 20) + 1, 0.99);
	zipf_check((1 << 20) + 1, 1.5);

	/* A billion keys: in range, padded, most draws small. */
	tp_setup(&ts, "{zipf:01000000000:1.1}");
	T_UEQ(ts.maxlen, 11);
	for (i = 0; i < 1000; i++) {
		T_UEQ(tp_render(&ts, &x, out), 11);
		v = tp_num(out);
		T_LT(v, 1000000000ULL);
	}
	tmpl_free(&ts);
}

TEST(template_bytes)
{
	struct tmpl_set	 ts;
	uint64_t	 rng = 5;
	struct tp_ctx	 x = { &rng, 0, 0 };
	char		 a[4096], b[4096];
	size_t		 i;

	tp_setup(&ts, "<{bytes:1k}>");
	T_UEQ(ts.maxlen, 1026);
	T_UEQ(ts.minlen, 1026);
	T_UEQ(tp_render(&ts, &x, a), 1026);
	T_UEQ(tp_render(&ts, &x, b), 1026);
	T_OK(a[0] == '<' && a[1025] == '>');
	for (i = 1; i < 1025; i++)
		if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789-_", a[i]) == NULL)
			T_FAIL("byte %zu: 0x%02x", i, (unsigned char)a[i]);
	T_OK(strcmp(a, b) != 0);
	tmpl_free(&ts);
}

TEST(template_line)
{
	static const char *const want[] = { "<a>", "<bb>", "<ccc>" };
	struct tmpl_set	 ts;
	uint64_t	 rng = 11, seen[3] = { 0, 0, 0 };
	struct tp_ctx	 x = { &rng, 0, 0 };
	struct tp_err	 err;
	char		 path[] = "/tmp/tk-tmpl.XXXXXX", text[128], out[4096];
	FILE		*f;
	int		 fd, i;

	T_SYS(fd = mkstemp(path));
	T_PTR(f = fdopen(fd, "w"));
	fputs("a\nbb\r\nccc", f);
	fclose(f);

	/* In order, CR LF and the missing last newline dropped. */
	snprintf(text, sizeof(text), "<{line:%s}>", path);
	tp_setup(&ts, text);
	T_UEQ(ts.maxlen, 5);
	T_UEQ(ts.minlen, 2);
	for (i = 0; i < 7; i++) {
		tp_render(&ts, &x, out);
		T_STREQ(out, want[i % 3]);
	}
	tmpl_free(&ts);

	/* At random: each line about a third of the time. */
	snprintf(text, sizeof(text), "{line:%s:rand}", path);
	tp_setup(&ts, text);
	for (i = 0; i < 30000; i++) {
		tp_render(&ts, &x, out);
		seen[strlen(out) - 1]++;
	}
	for (i = 0; i < 3; i++)
		T_OK(seen[i] > 9590 && seen[i] < 10410);
	tmpl_free(&ts);

	/* An empty file has no line. */
	T_PTR(f = fopen(path, "w"));
	fclose(f);
	memset(&ts, 0, sizeof(ts));
	snprintf(text, sizeof(text), "{line:%s}", path);
	T_EQ(tmpl_add(&ts, text, &err), -1);
	T_STREQ(err.detail, "no line in the file");
	T_UEQ(err.col, 7);
	tmpl_free(&ts);
	unlink(path);
}

/* A body's length, written right-aligned into the head. */
TEST(template_clen)
{
	struct tmpl_set	 ts;
	struct tp_err	 err;
	uint64_t	 rng = 1;
	struct tp_ctx	 x = { &rng, 0, 0 };
	char		 out[4096], *body, *cl;
	int		 i;

	memset(&ts, 0, sizeof(ts));
	T_EQ(tmpl_begin(&ts, &err), 0);
	T_EQ(tmpl_text(&ts, "POST / HTTP/1.1\\r\\nContent-Length:", 0, &err),
	    0);
	T_EQ(tmpl_clen(&ts, &err), 0);
	T_EQ(tmpl_lit(&ts, "\r\n\r\n", 4, &err), 0);
	T_EQ(tmpl_body(&ts, &err), 0);
	T_EQ(tmpl_text(&ts, "{\"id\":{rand:1-1000000}}", 0, &err), 0);
	T_EQ(tmpl_end(&ts, &err), 0);
	for (i = 0; i < 100; i++) {
		tp_render(&ts, &x, out);
		T_PTR(body = strstr(out, "\r\n\r\n"));
		body += 4;
		T_PTR(cl = strstr(out, "Content-Length:"));
		cl += strlen("Content-Length:");
		T_UEQ(strspn(cl, " ") + strcspn(cl + strspn(cl, " "), "\r"),
		    TP_CLENW);
		T_UEQ(strtoul(cl, NULL, 10), strlen(body));
	}
	tmpl_free(&ts);
}

TEST(template_refused)
{
	static const struct {
		const char	*text;
		const char	*why;
		size_t		 col;
	} bad[] = {
		{ "",			"empty message", 0 },
		{ "a{rand:5-}",		"rand takes LO-HI, two whole numbers",
		    8 },
		{ "{rand:9-1}",		"rand: LO above HI", 7 },
		{ "{rand:1-99999999999999999999}", "rand takes LO-HI, two "
		    "whole numbers", 7 },
		{ "GET {nope}",		"unknown placeholder", 5 },
		{ "GET {seq",		"placeholder without its closing brace",
		    5 },
		{ "{seq:x}",		"seq takes conn or global", 6 },
		{ "{conn:1}",		"conn takes no argument", 7 },
		{ "{zipf:10}",		"zipf takes N:S, a count and an "
		    "exponent", 7 },
		{ "{zipf:10:0}",	"zipf: S is an exponent above 0, at "
		    "most 100", 10 },
		{ "{zipf:0:1}",		"zipf: N is 1 to 2^53", 7 },
		{ "{bytes:0}",		"bytes takes N, 1 to 1m", 8 },
		{ "{bytes:2m}",		"bytes takes N, 1 to 1m", 8 },
		{ "{line:}",		"line takes FILE", 7 },
		{ "{line:/nonexistent/x}", "line: cannot read FILE", 7 },
		{ "ab\\q",		"unknown escape", 3 },
		{ "\\x4",		"\\x needs two hex digits", 1 },
	};
	struct tmpl_set	 ts;
	struct tp_err	 err;
	size_t		 i;

	for (i = 0; i < NELEM(bad); i++) {
		memset(&ts, 0, sizeof(ts));
		memset(&err, 0, sizeof(err));
		if (tmpl_add(&ts, bad[i].text, &err) != -1)
			T_FAIL("\"%s\" accepted", bad[i].text);
		T_STREQ(err.why, bad[i].why);
		if (err.col != bad[i].col)
			T_FAIL("\"%s\": column %zu, not %zu", bad[i].text,
			    err.col, bad[i].col);
		tmpl_free(&ts);
	}
}
