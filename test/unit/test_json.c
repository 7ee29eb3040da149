/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The JSON of tenkload's reports (loadgen/json.c, its strings by
 * src/util/json.c, as tenkd's access log's): strings are written
 * as valid UTF-8 whatever their bytes (valid sequences as they are,
 * control characters and every byte of an invalid sequence escaped) and
 * read back to the same bytes; the reader's \u escapes, and its
 * refusals.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/json.h"
#include "../../loadgen/loadgen.h"
#include "../t.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/* tk_json_str(s) into a malloc'ed string. */
static char *
quote(const char *s)
{
	char	*buf = NULL;
	size_t	 len = 0;
	FILE	*f;

	if ((f = open_memstream(&buf, &len)) == NULL)
		return NULL;
	tk_json_str(f, s);
	fclose(f);
	return buf;
}

/* The one string value of the JSON text in, or NULL. */
static char *
unquote(const char *in)
{
	struct jv	 v;
	char		 err[64], *s = NULL;

	if (json_parse(in, strlen(in), &v, err, sizeof(err)) == 0 &&
	    v.t == JV_STR)
		s = strdup(v.s);
	json_free(&v);
	return s;
}

/*
 * Valid UTF-8 as RFC 3629 has it, told apart by a decoder of its own:
 * every code point from its bytes, none overlong, no surrogate, none
 * above U+10FFFF.
 */
static int
valid_utf8(const unsigned char *p)
{
	unsigned int	cp, min;
	int		n, k;

	while (*p != '\0') {
		if (*p < 0x80) {
			p++;
			continue;
		}
		if ((*p & 0xe0) == 0xc0) {
			n = 1;
			cp = *p & 0x1f;
			min = 0x80;
		} else if ((*p & 0xf0) == 0xe0) {
			n = 2;
			cp = *p & 0x0f;
			min = 0x800;
		} else if ((*p & 0xf8) == 0xf0) {
			n = 3;
			cp = *p & 0x07;
			min = 0x10000;
		} else
			return 0;
		for (k = 1; k <= n; k++) {
			if ((p[k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (p[k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		p += n + 1;
	}
	return 1;
}

/*
 * s goes out as valid UTF-8 and reads back as it was; returns its JSON
 * form, malloc'ed.
 */
static char *
round_trip(const char *s)
{
	char	*q, *back;

	T_PTR(q = quote(s));
	T_OK(valid_utf8((const unsigned char *)q));
	T_PTR(back = unquote(q));
	T_OK(strcmp(back, s) == 0);
	free(back);
	return q;
}

TEST(json_str_escapes)
{
	static const struct {
		const char	*in;
		const char	*want;
	} cases[] = {
		{ "",			"\"\"" },
		{ "plain text",		"\"plain text\"" },
		{ "a\"b\\c",		"\"a\\\"b\\\\c\"" },
		{ "\r\n\t",		"\"\\r\\n\\t\"" },
		{ "\x01\x1f\x7f",	"\"\\u0001\\u001f\\u007f\"" },
		/* valid UTF-8 goes out as it is: e acute, euro, G clef */
		{ "\xc3\xa9",		"\"\xc3\xa9\"" },
		{ "\xe2\x82\xac",	"\"\xe2\x82\xac\"" },
		{ "\xf0\x9d\x84\x9e",	"\"\xf0\x9d\x84\x9e\"" },
		/* invalid: every byte of it escaped */
		{ "\xff",		"\"\\u00ff\"" },
		{ "a\xe9z",		"\"a\\u00e9z\"" },
		{ "\xe2\x82",		"\"\\u00e2\\u0082\"" },
		{ "\xc0\xaf",		"\"\\u00c0\\u00af\"" },
		{ "\xed\xa0\x80",	"\"\\u00ed\\u00a0\\u0080\"" },
		{ "\xf4\x90\x80\x80",	"\"\\u00f4\\u0090\\u0080\\u0080\"" },
		{ "\x80",		"\"\\u0080\"" },
		{ "\xe2\x82\xac\xac",	"\"\xe2\x82\xac\\u00ac\"" },
	};
	char	*q;
	size_t	 i;

	for (i = 0; i < NELEM(cases); i++) {
		q = round_trip(cases[i].in);
		if (strcmp(q, cases[i].want) != 0)
			T_FAIL("case %zu: got %s", i, q);
		free(q);
	}
}

/*
 * The access log's form (tk_json_strbuf) writes what the reports' does,
 * after what the buffer holds, and refuses a buffer one byte short.
 */
TEST(json_strbuf)
{
	static const char *const	 in[] = { "", "a\"b\\c", "\r\x01",
	    "\xc3\xa9\xff", "127.0.0.1:8080" };
	char				 buf[64], *q;
	size_t				 i, n, want;

	for (i = 0; i < NELEM(in); i++) {
		T_PTR(q = quote(in[i]));
		want = 2 + strlen(q);
		n = 2;
		memcpy(buf, "x,", 2);
		T_EQ(tk_json_strbuf(buf, sizeof(buf), &n, in[i]), 0);
		T_EQ(n, want);
		T_EQ(memcmp(buf, "x,", 2), 0);
		T_STREQ(buf + 2, q);
		n = 2;
		T_EQ(tk_json_strbuf(buf, want, &n, in[i]), -1);
		n = 2;
		T_EQ(tk_json_strbuf(buf, want + 1, &n, in[i]), 0);
		T_EQ(n, want);
		free(q);
	}
}

/* Every byte string of up to 3 bytes from a set of awkward bytes. */
TEST(json_str_round_trip)
{
	static const unsigned char	 set[] = { 'a', '"', '\\', 0x01,
	    0x7f, 0x80, 0xbf, 0xc2, 0xc3, 0xe0, 0xed, 0xef, 0xf0, 0xf4,
	    0xff, 0xa0, 0x9f };
	unsigned char			 s[4];
	size_t				 n = NELEM(set), i, j, k;

	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			for (k = 0; k < n; k++) {
				s[0] = set[i];
				s[1] = set[j];
				s[2] = set[k];
				s[3] = '\0';
				free(round_trip((const char *)s));
			}
}

TEST(json_read_escapes)
{
	static const struct {
		const char	*in;
		const char	*want;
	} cases[] = {
		{ "\"\\u0041\\/\\b\\f\"",	"A/\b\f" },
		{ "\"\\u20ac\"",		"\xe2\x82\xac" },
		{ "\"\\u00e9\"",		"\xe9" },
		{ "\"\\u0100\"",		"\xc4\x80" },
		{ "\"\\ud834\\udd1e\"",		"\xf0\x9d\x84\x9e" },
		{ "\"\\ud834x\"",		"\xef\xbf\xbdx" },
		{ "\"\\udd1e\"",		"\xef\xbf\xbd" },
	};
	static const char *const bad[] = {
		"\"\\u12g4\"", "\"\\u12\"", "\"abc", "{\"a\" 1}", "[1,]",
		"1 2", "",
	};
	struct jv	 v;
	char		 err[64], *s;
	size_t		 i;

	for (i = 0; i < NELEM(cases); i++) {
		T_PTR(s = unquote(cases[i].in));
		if (strcmp(s, cases[i].want) != 0)
			T_FAIL("case %zu: %s", i, cases[i].in);
		free(s);
	}
	for (i = 0; i < NELEM(bad); i++) {
		T_EQ(json_parse(bad[i], strlen(bad[i]), &v, err,
		    sizeof(err)), -1);
		T_OK(strstr(err, " at byte ") != NULL);
		json_free(&v);
	}
}

TEST(json_members)
{
	static const char	 text[] = "{ \"a\": { \"n\": 42, \"x\": 1.5, "
	    "\"s\": \"hi\", \"t\": true }, \"b\": [1, 2] }";
	struct jv		 v;
	const struct jv		*a;
	char			 err[64], s[8];

	T_EQ(json_parse(text, strlen(text), &v, err, sizeof(err)), 0);
	T_PTR(a = json_get(&v, "a"));
	T_UEQ(json_get_u(a, "n"), 42);
	T_OK(json_get_d(a, "x") == 1.5);
	json_get_s(a, "s", s, sizeof(s));
	T_OK(strcmp(s, "hi") == 0);
	T_UEQ(json_get_u(a, "t"), 1);
	T_UEQ(json_get_u(a, "missing"), 0);
	T_OK(json_get(&v, "b") != NULL && json_get(&v, "b")->n == 2);
	T_OK(json_get(json_get(&v, "b"), "x") == NULL);
	json_free(&v);
}
