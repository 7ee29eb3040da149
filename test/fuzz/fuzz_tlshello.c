/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tk_hello_parse() on any bytes: a result always, a reason with every
 * refusal, never a request to read past TK_HELLO_INMAX, and for a whole
 * ClientHello the same answer from its bytes alone as from them and
 * what follows, reached by a reader that reads only what it is told,
 * which so never passes the ClientHello's last record.
 */
#include <string.h>

#include "tenk/tlshello.h"
#include "fuzz.h"

static void
fuzz_tlshello(const uint8_t *data, size_t size)
{
	static const struct fuzz_results rs = {
		TK_HELLO_BAD, TK_HELLO_MORE, TK_HELLO_DONE
	};
	struct tk_hello	 h, g;
	size_t		 have = 0;
	int		 r;

	r = tk_hello_parse(data, size, &h);
	if (!fuzz_parsed(&rs, r, h.why, h.want, size, TK_HELLO_INMAX))
		return;
	FUZZ_CHECK(h.len >= 5 + 4 + 38 && h.len <= size);
	FUZZ_CHECK(strlen(h.sni) < sizeof(h.sni));
	FUZZ_CHECK(h.version >= 0x0300 && h.version <= 0x03ff);
	FUZZ_CHECK(tk_hello_parse(data, h.len, &g) == TK_HELLO_DONE);
	FUZZ_CHECK(g.len == h.len && g.version == h.version);
	FUZZ_CHECK(strcmp(g.sni, h.sni) == 0);
	while ((r = tk_hello_parse(data, have, &g)) == TK_HELLO_MORE) {
		FUZZ_CHECK(g.want >= 1 && have + g.want <= h.len);
		have += g.want;
	}
	FUZZ_CHECK(r == TK_HELLO_DONE && have == h.len);
}

FUZZ_TARGET(tlshello)
