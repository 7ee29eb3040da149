/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Replies of a length known before they arrive: "echo", as long as the
 * request and equal to it byte for byte, and "bytes:N", any N bytes.
 * One file for both because they are one parser (count down st->pos to
 * a length) that differs only in where the length comes from and in
 * echo's comparison.
 */
#include <assert.h>
#include <string.h>

#include "tenk/parse.h"
#include "framing.h"

static void
fb_echo_begin(const struct framing *fr, struct fr_state *st,
    const struct fr_req *req)
{
	(void)fr;
	assert(req->len > 0 && (req->base == NULL || req->period > 0));
	st->u.echo = *req;
}

/*
 * Compare in runs up to the pattern's wrap, one memcmp() each: the
 * engine's repeating pattern gives a period of 64 KiB, so a run is
 * usually the whole chunk.
 */
static enum fr_res
fb_echo_feed(const struct framing *fr, struct fr_state *st,
    const unsigned char *buf, size_t n, size_t *used)
{
	const struct fr_req	*q = &st->u.echo;
	uint64_t		 left = q->len - st->pos;
	size_t			 take, i, at, run;

	(void)fr;
	take = left < n ? (size_t)left : n;
	for (i = 0; q->base != NULL && i < take; i += run) {
		at = (size_t)((q->off + st->pos + i) % q->period);
		run = q->period - at;
		if (run > take - i)
			run = take - i;
		if (memcmp(buf + i, q->base + at, run) == 0)
			continue;
		while (buf[i] == q->base[at]) {
			i++;
			at++;
		}
		*used = i;
		st->why = "reply differs from the request";
		return FR_MISMATCH;
	}
	*used = take;
	return take == left ? FR_DONE : FR_MORE;
}

static int
fb_bytes_parse(struct framing *fr, const char *arg, const char **errstr)
{
	if (arg == NULL) {
		*errstr = "bytes needs a size";
		return -1;
	}
	return tk_parse_size(arg, 1, FR_MAXBYTES, &fr->n, errstr);
}

static enum fr_res
fb_bytes_feed(const struct framing *fr, struct fr_state *st,
    const unsigned char *buf, size_t n, size_t *used)
{
	uint64_t	 left = fr->n - st->pos;

	(void)buf;
	if (left > n) {
		*used = n;
		return FR_MORE;
	}
	*used = (size_t)left;
	return FR_DONE;
}

const struct framing_ops framing_echo = {
	"echo",
	"echo takes no argument",
	NULL,
	fb_echo_begin,
	fb_echo_feed,
	NULL
};

const struct framing_ops framing_bytes = {
	"bytes",
	NULL,
	fb_bytes_parse,
	NULL,
	fb_bytes_feed,
	NULL
};
