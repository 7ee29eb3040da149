/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The C escapes of -m/--message (loadgen/escape.c): each escape, each
 * refusal with its phrase, the output bound; and the log form of any
 * bytes (log_escape, in the library), bounded, which escape_parse()
 * reads back to the same bytes.
 */
#include <stdint.h>
#include <string.h>

#include "../../loadgen/framing.h"
#include "../t.h"
#include "tenk/log.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

TEST(escape_parse)
{
	static const struct {
		const char	*text;
		const char	*want;
		size_t		 len;
	} good[] = {
		{ "",			"",			0 },
		{ "PING\\r\\n",		"PING\r\n",		6 },
		{ "a\\tb\\nc",		"a\tb\nc",		5 },
		{ "\\\\",		"\\",			1 },
		{ "\\0",		"",			1 },
		{ "a\\0b",		"a\0b",			3 },
		{ "\\x41\\x7a\\xFF\\x00", "Az\xff",		4 },
		{ "\\x414",		"A4",			2 },
		{ "100%",		"100%",			4 },
	};
	static const struct {
		const char	*text;
		const char	*err;
	} bad[] = {
		{ "\\",			"trailing backslash" },
		{ "ab\\",		"trailing backslash" },
		{ "\\q",		"unknown escape" },
		{ "\\a",		"unknown escape" },
		{ "\\\"",		"unknown escape" },
		{ "\\x",		"\\x needs two hex digits" },
		{ "\\x4",		"\\x needs two hex digits" },
		{ "\\xg0",		"\\x needs two hex digits" },
		{ "\\x4g",		"\\x needs two hex digits" },
		{ "\\012",		"octal escapes are not supported, "
					"use \\xHH" },
	};
	unsigned char	 out[64];
	const char	*err;
	ssize_t		 n;
	size_t		 i;

	for (i = 0; i < NELEM(good); i++) {
		err = NULL;
		n = escape_parse(good[i].text, out, sizeof(out), &err);
		if (n == -1)
			T_FAIL("\"%s\": %s", good[i].text, err);
		T_EQ(n, good[i].len);
		T_OK(memcmp(out, good[i].want, good[i].len) == 0);
	}
	for (i = 0; i < NELEM(bad); i++) {
		err = NULL;
		if (escape_parse(bad[i].text, out, sizeof(out), &err) != -1)
			T_FAIL("\"%s\" accepted", bad[i].text);
		T_STREQ(err, bad[i].err);
	}

	/* The output bound counts decoded bytes. */
	T_EQ(escape_parse("\\x41\\x42", out, 2, &err), 2);
	T_EQ(escape_parse("\\x41\\x42", out, 1, &err), -1);
	T_STREQ(err, "too long");
}

/* Any bytes, escaped for a log, read back as the same bytes. */
TEST(escape_round_trip)
{
	unsigned char	 in[256], back[256];
	char		 text[256 * 4 + 1];
	const char	*err;
	size_t		 n, i;
	ssize_t		 m;
	int		 round;

	t_srand(11);
	for (round = 0; round < 2000; round++) {
		n = t_rand() % sizeof(in);
		for (i = 0; i < n; i++)
			in[i] = (unsigned char)t_rand();
		if (round % 2 == 0)	/* and some mostly printable */
			for (i = 0; i < n; i++)
				in[i] = (unsigned char)(' ' + in[i] % 96);
		T_UEQ(log_escape(text, sizeof(text), in, n), n);
		T_UEQ(strspn(text, " !\"#$%&'()*+,-./0123456789:;<=>?@"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`"
		    "abcdefghijklmnopqrstuvwxyz{|}~"), strlen(text));
		m = escape_parse(text, back, sizeof(back), &err);
		if (m == -1)
			T_FAIL("round %d: \"%s\": %s", round, text, err);
		T_UEQ(m, n);
		T_OK(memcmp(in, back, n) == 0);
	}
}
