/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tenkload's reply framings on any byte stream: each chunk, copied to a
 * buffer of its exact size so that ASan sees a read past it, is taken
 * whole (FR_MORE), up to a reply's end with at least one byte
 * (FR_DONE), or refused at a byte inside it with a reason
 * (FR_MISMATCH); so every call makes progress and a stream always ends.
 *
 * Input: byte 0 picks the --reply spec, whether a --reply-check applies
 * and the request; byte 1 seeds the chunk sizes; the rest is the
 * server's byte stream.
 */
#include <stdlib.h>
#include <string.h>

#include "../../loadgen/framing.h"
#include "fuzz.h"

static const char *const specs[] = {
	"echo", "bytes:1", "bytes:7", "line", "until:\\r\\nEND\\r\\n",
	"until:abab", "until:\\x00", "prefix:u16be", "prefix:u32be",
	"redis", "http", "redis", "http", "http", "memcache", "echo"
};

/* Requests: echo's bytes, http's method (HEAD has no body). */
static const char *const reqs[] = {
	"ping\n", "HEAD / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\n\r\n", NULL
};

static void
fuzz_framing(const uint8_t *data, size_t size)
{
	struct framing	 fr;
	struct fr_state	 st;
	struct fr_req	 q;
	const char	*err, *r;
	unsigned char	*chunk, *p;
	size_t		 off, n, used, reply;
	unsigned int	 seed;
	enum fr_res	 res;

	if (size < 2)
		return;
	FUZZ_CHECK(framing_parse(&fr, specs[data[0] & 15], &err) == 0);
	if (data[0] & 16)
		FUZZ_CHECK(framing_check(&fr, data[0] & 32 ? "+" :
		    "HTTP/1.1 2", &err) == 0);
	memset(&q, 0, sizeof(q));
	r = reqs[data[0] >> 6];
	if (r == NULL && fr.ops == &framing_echo)
		r = reqs[0];
	if (r != NULL) {
		q.base = (const unsigned char *)r;
		q.len = q.period = strlen(r);
	}
	seed = data[1];
	framing_begin(&fr, &st, r != NULL ? &q : NULL);
	reply = 0;
	for (off = 2; off < size;) {
		/* Sizes 1 to 32 and now and then the whole rest. */
		seed = seed * 1103515245u + 12345u;
		n = (seed >> 16) % 40 + 1;
		if (n > 32 || n > size - off)
			n = size - off;
		FUZZ_CHECK((chunk = malloc(n)) != NULL);
		memcpy(chunk, data + off, n);
		off += n;
		for (p = chunk; n > 0; p += used, n -= used) {
			res = framing_feed(&fr, &st, p, n, &used);
			if (res == FR_MISMATCH) {
				FUZZ_CHECK(used < n && st.why != NULL);
				free(chunk);
				return;
			}
			if (res == FR_MORE) {
				FUZZ_CHECK(used == n);
				reply += used;
				FUZZ_CHECK(st.pos == reply);
				continue;
			}
			FUZZ_CHECK(res == FR_DONE && used >= 1 && used <= n);
			FUZZ_CHECK(st.pos == reply + used);
			reply = 0;
			framing_begin(&fr, &st, r != NULL ? &q : NULL);
		}
		free(chunk);
	}
	(void)framing_eof(&fr, &st);
}

FUZZ_TARGET(framing)
