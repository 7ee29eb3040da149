/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Command-line values: durations, sizes and rates, good and bad, with the
 * exact error phrase for each bad one; the duration formatter and its
 * round trip through the parser.
 */
#include <stdint.h>
#include <string.h>

#include "tenk/parse.h"
#include "../t.h"

#define SEC	1000000000ULL
#define MAXV	UINT64_MAX

typedef int parse_fn(const char *, uint64_t, uint64_t, uint64_t *,
    const char **);

struct good {
	const char	*s;
	uint64_t	 want;
};

struct bad {
	const char	*s;
	uint64_t	 min, max;
	const char	*err;
};

static void
check_good(parse_fn *fn, const struct good *g)
{
	const char	*err = "unset";
	uint64_t	 v = 12345;

	for (; g->s != NULL; g++) {
		if (fn(g->s, 0, MAXV, &v, &err) != 0)
			T_FAIL("\"%s\": refused: %s", g->s, err);
		if (err != NULL)
			T_FAIL("\"%s\": errstr %s on success", g->s, err);
		if (v != g->want)
			T_FAIL("\"%s\": got %ju, want %ju", g->s,
			    (uintmax_t)v, (uintmax_t)g->want);
	}
}

static void
check_bad(parse_fn *fn, const struct bad *b)
{
	const char	*err;
	uint64_t	 v;

	for (; b->s != NULL; b++) {
		err = NULL;
		v = 12345;
		if (fn(b->s, b->min, b->max, &v, &err) != -1)
			T_FAIL("\"%s\": accepted as %ju", b->s, (uintmax_t)v);
		if (err == NULL || strcmp(err, b->err) != 0)
			T_FAIL("\"%s\": errstr \"%s\", want \"%s\"", b->s,
			    err ? err : "(null)", b->err);
		/* The result is untouched on failure. */
		T_UEQ(v, 12345);
	}
}

TEST(parse_duration)
{
	static const struct good good[] = {
		{ "250ms",	250000000ULL },
		{ "10s",	10 * SEC },
		{ "10",		10 * SEC },
		{ "0",		0 },
		{ "5m",		300 * SEC },
		{ "1h",		3600 * SEC },
		{ "100us",	100000ULL },
		{ "50ns",	50 },
		{ "1.5s",	1500000000ULL },
		{ "0.5ms",	500000ULL },
		{ "1.25",	1250000000ULL },
		{ "0.000000001s", 1 },
		{ "1.0000000019s", SEC + 1 },	/* cut below 1 ns */
		{ "10MS",	10000000ULL },
		{ "2H",		7200 * SEC },
		{ "007s",	7 * SEC },
		{ "5124095h",	5124095ULL * 3600 * SEC },
		{ NULL,		0 }
	};
	static const struct bad bad[] = {
		{ "",		0, MAXV, "empty" },
		{ "-1",		0, MAXV, "invalid" },
		{ "+1",		0, MAXV, "invalid" },
		{ " 1",		0, MAXV, "invalid" },
		{ "s",		0, MAXV, "invalid" },
		{ ".5s",	0, MAXV, "invalid" },
		{ "1.s",	0, MAXV, "invalid" },
		{ "1.5ns",	0, MAXV, "invalid" },
		{ "1 s",	0, MAXV, "bad unit" },
		{ "10x",	0, MAXV, "bad unit" },
		{ "10sec",	0, MAXV, "bad unit" },
		{ "1e3",	0, MAXV, "bad unit" },
		{ "10s ",	0, MAXV, "bad unit" },
		{ "1.5.2s",	0, MAXV, "bad unit" },
		{ "99999999999999999999", 0, MAXV, "too large" },
		/* Just above 2^64 ns. */
		{ "5124096h",	0, MAXV, "too large" },
		{ "1ms",	SEC, MAXV, "too small" },
		{ "2h",		0, 3600 * SEC, "too large" },
		{ "0",		1, MAXV, "too small" },
		{ NULL,		0, 0, NULL }
	};
	uint64_t	 v;
	const char	*err;

	check_good(tk_parse_duration, good);
	check_bad(tk_parse_duration, bad);
	/* Bounds are inclusive. */
	T_EQ(tk_parse_duration("1s", SEC, SEC, &v, &err), 0);
	T_UEQ(v, SEC);
}

TEST(parse_size)
{
	static const struct good good[] = {
		{ "0",		0 },
		{ "512",	512 },
		{ "512b",	512 },
		{ "64k",	65536 },
		{ "64K",	65536 },
		{ "2kb",	2048 },
		{ "4m",		4 << 20 },
		{ "4MiB",	4 << 20 },
		{ "1g",		1ULL << 30 },
		{ "1G",		1ULL << 30 },
		{ "1.5k",	1536 },
		{ "0.5g",	1ULL << 29 },
		{ "17179869183g", 17179869183ULL << 30 },
		{ NULL,		0 }
	};
	static const struct bad bad[] = {
		{ "",		0, MAXV, "empty" },
		{ "-1",		0, MAXV, "invalid" },
		{ "k",		0, MAXV, "invalid" },
		{ "1.5",	0, MAXV, "invalid" },	/* half a byte */
		{ "1t",		0, MAXV, "bad unit" },
		{ "1kk",	0, MAXV, "bad unit" },
		{ "12 k",	0, MAXV, "bad unit" },
		{ "17179869184g", 0, MAXV, "too large" },	/* 2^64 */
		{ "1k",		2048, MAXV, "too small" },
		{ "2m",		0, 1 << 20, "too large" },
		{ NULL,		0, 0, NULL }
	};

	check_good(tk_parse_size, good);
	check_bad(tk_parse_size, bad);
}

TEST(parse_rate)
{
	static const struct good good[] = {
		{ "1000",	1000 },
		{ "1000/s",	1000 },
		{ "1000/S",	1000 },
		{ "0",		0 },
		{ NULL,		0 }
	};
	static const struct bad bad[] = {
		{ "",		0, MAXV, "empty" },
		{ "-5",		0, MAXV, "invalid" },
		{ "/s",		0, MAXV, "invalid" },
		{ "1.5",	0, MAXV, "invalid" },
		{ "1.5/s",	0, MAXV, "invalid" },
		{ "1000/m",	0, MAXV, "bad unit" },
		{ "1000s",	0, MAXV, "bad unit" },
		{ "1k",		0, MAXV, "bad unit" },
		{ "0",		1, MAXV, "too small" },
		{ "1000001",	1, 1000000, "too large" },
		{ NULL,		0, 0, NULL }
	};

	check_good(tk_parse_rate, good);
	check_bad(tk_parse_rate, bad);
}

TEST(parse_fmt_duration)
{
	static const struct {
		uint64_t	 ns;
		const char	*s;
	} t[] = {
		{ 0,			"0ns" },
		{ 750,			"750ns" },
		{ 1000,			"1us" },
		{ 1001,			"1.001us" },
		{ 1500000,		"1.5ms" },
		{ 1234567,		"1.234ms" },	/* truncated */
		{ 999999999,		"999.999ms" },	/* no carry */
		{ 2 * SEC,		"2s" },
		{ 3600 * SEC,		"3600s" },
		{ 10 * SEC + 50000000,	"10.05s" },
	};
	char		 buf[32], small[4];
	const char	*err;
	uint64_t	 v;
	size_t		 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		T_OK(tk_fmt_duration(t[i].ns, buf, sizeof(buf)) == buf);
		T_STREQ(buf, t[i].s);
		/* What it prints, the parser reads back (when exact). */
		if (strcmp(t[i].s, "1.234ms") == 0 ||
		    strcmp(t[i].s, "999.999ms") == 0)
			continue;
		if (tk_parse_duration(buf, 0, MAXV, &v, &err) != 0)
			T_FAIL("\"%s\": %s", buf, err);
		T_UEQ(v, t[i].ns);
	}
	/* A short buffer is cut, not overrun. */
	memset(small, 'x', sizeof(small));
	tk_fmt_duration(1500000, small, sizeof(small));
	T_STREQ(small, "1.5");
}
