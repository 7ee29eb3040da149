/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The value parsers of every command line (tk_parse_duration, _size,
 * _rate; tk_addr_parse on bracketed, numeric addresses only, since a
 * name would go to the resolver) on any text: an accepted value is in
 * the range asked for, a refusal has a reason, and a duration printed
 * by tk_fmt_duration() parses back to no more than it was.
 *
 * The first byte picks the range, the rest (up to a NUL) is the text.
 */
#include <string.h>

#include "tenk/parse.h"
#include "tenk/sock.h"
#include "fuzz.h"

#define TEXTMAX		256

static const uint64_t	 lims[][2] = {
	{ 0, UINT64_MAX },
	{ 1, 1000 },
	{ 10000000ULL, 3600ULL * 1000000000ULL },
	{ 512, 256ULL << 20 },
	{ 0, 0 },
	{ UINT64_MAX, UINT64_MAX },
};

static void
fuzz_parse(const uint8_t *data, size_t size)
{
	struct tk_addr	 a;
	const uint64_t	*lim;
	const char	*err;
	char		 s[TEXTMAX + 3], buf[64], back[64];
	uint64_t	 v, w;
	size_t		 n;

	if (size < 1)
		return;
	lim = lims[data[0] % (sizeof(lims) / sizeof(lims[0]))];
	n = size - 1 < TEXTMAX ? size - 1 : TEXTMAX;
	memcpy(s, data + 1, n);
	s[n] = '\0';

	err = NULL;
	if (tk_parse_duration(s, lim[0], lim[1], &v, &err) == 0) {
		FUZZ_CHECK(err == NULL && v >= lim[0] && v <= lim[1]);
		tk_fmt_duration(v, buf, sizeof(buf));
		FUZZ_CHECK(memchr(buf, '\0', sizeof(buf)) != NULL);
		/* The format truncates: it never reads back as more. */
		err = NULL;
		FUZZ_CHECK(tk_parse_duration(buf, 0, UINT64_MAX, &w,
		    &err) == 0);
		FUZZ_CHECK(w <= v);
	} else
		FUZZ_CHECK(err != NULL);
	err = NULL;
	if (tk_parse_size(s, lim[0], lim[1], &v, &err) == 0)
		FUZZ_CHECK(err == NULL && v >= lim[0] && v <= lim[1]);
	else
		FUZZ_CHECK(err != NULL);
	err = NULL;
	if (tk_parse_rate(s, lim[0], lim[1], &v, &err) == 0)
		FUZZ_CHECK(err == NULL && v >= lim[0] && v <= lim[1]);
	else
		FUZZ_CHECK(err != NULL);

	/* "[" + text: AI_NUMERICHOST, so no resolver. */
	s[0] = '[';
	memcpy(s + 1, data + 1, n);
	s[n + 1] = '\0';
	if (strlen(s) == n + 1) {
		err = NULL;
		if (tk_addr_parse(s, data[0] & 1 ? 80 : -1, &a, &err) == 0) {
			FUZZ_CHECK(a.ss.ss_family == AF_INET ||
			    a.ss.ss_family == AF_INET6);
			tk_addr_fmt(&a, back, sizeof(back));
			FUZZ_CHECK(memchr(back, '\0', sizeof(back)) != NULL);
		} else
			FUZZ_CHECK(err != NULL);
	}
}

FUZZ_TARGET(parse)
