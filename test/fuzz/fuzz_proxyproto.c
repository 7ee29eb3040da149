/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pp_parse() on any bytes: a result always, a reason with every
 * refusal, never a request to read past the header, and the same
 * answer for the header alone as for the header and what follows.
 */
#include <string.h>

#include "../../src/server/tenkd.h"
#include "fuzz.h"

static void
fuzz_proxyproto(const uint8_t *data, size_t size)
{
	static const struct fuzz_results rs = { PP_BAD, PP_MORE, PP_DONE };
	struct pp_info	 pi, pj;
	size_t		 k;
	int		 r;

	r = pp_parse(data, size, &pi);
	if (!fuzz_parsed(&rs, r, pi.why, pi.want, size,
	    pi.version == 1 ? 107 : PP_IN_MAXLEN))
		return;
	FUZZ_CHECK(pi.len >= 15 && pi.len <= size);
	FUZZ_CHECK(pi.version == 1 || pi.version == 2);
	FUZZ_CHECK(pi.family == AF_UNSPEC || pi.family == AF_INET ||
	    pi.family == AF_INET6);
	FUZZ_CHECK(pi.family == AF_UNSPEC || pi.src.sin6_family == pi.family);
	/* The header alone, and every cut of it, agree. */
	FUZZ_CHECK(pp_parse(data, pi.len, &pj) == PP_DONE);
	FUZZ_CHECK(pj.len == pi.len && pj.family == pi.family);
	FUZZ_CHECK(memcmp(&pi.src, &pj.src, sizeof(pi.src)) == 0);
	FUZZ_CHECK(memcmp(&pi.dst, &pj.dst, sizeof(pi.dst)) == 0);
	for (k = 0; k < pi.len; k++) {
		FUZZ_CHECK(pp_parse(data, k, &pj) == PP_MORE);
		FUZZ_CHECK(pj.want >= 1 && k + pj.want <= pi.len);
	}
}

FUZZ_TARGET(proxyproto)
