/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tenkload's text options on any text: escape_parse() (C escapes of
 * -m, until:TEXT, --reply-check) never writes more than it is given
 * room for and says why it refuses; every --reply spec parses or is
 * refused with a reason, and so does a --reply-check text.
 */
#include <stdlib.h>
#include <string.h>

#include "../../loadgen/framing.h"
#include "fuzz.h"

#define TEXTMAX		512

static void
fuzz_escape(const uint8_t *data, size_t size)
{
	struct framing	 fr;
	const char	*err;
	char		 s[TEXTMAX + 1];
	unsigned char	*out;
	size_t		 n, room;
	ssize_t		 r;

	n = size < TEXTMAX ? size : TEXTMAX;
	memcpy(s, data, n);
	s[n] = '\0';

	/* Room for strlen(s) bytes always suffices; less may not. */
	for (room = 0; room <= strlen(s); room += room < 8 ? 1 : room) {
		FUZZ_CHECK((out = malloc(room > 0 ? room : 1)) != NULL);
		err = NULL;
		r = escape_parse(s, out, room, &err);
		FUZZ_CHECK(r == -1 ? err != NULL : (size_t)r <= room);
		free(out);
	}
	FUZZ_CHECK((out = malloc(strlen(s) + 1)) != NULL);
	err = NULL;
	r = escape_parse(s, out, strlen(s), &err);
	FUZZ_CHECK(r == -1 ? err != NULL : (size_t)r <= strlen(s));
	free(out);

	err = NULL;
	if (framing_parse(&fr, s, &err) == -1)
		FUZZ_CHECK(err != NULL);
	else {
		FUZZ_CHECK(fr.ops != NULL);
		FUZZ_CHECK(fr.dlen <= sizeof(fr.delim));
	}
	err = NULL;
	if (framing_check(&fr, s, &err) == -1)
		FUZZ_CHECK(err != NULL);
	else
		FUZZ_CHECK(fr.clen >= 1 && fr.clen <= sizeof(fr.check));
}

FUZZ_TARGET(escape)
