/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The -f file's reader, conf_parse(), on any bytes: every option it
 * hands on has a name of [a-z][a-z0-9-]* and a value that is one line with no
 * blank at either end, no comment, no CR; a refusal names FILE:LINE.
 */
#include <string.h>

#include "../../src/server/tenkd.h"
#include "fuzz.h"

struct seen {
	int	 n;
	int	 lastline;
};

static void
check(void *arg, const char *where, const char *name, const char *value)
{
	struct seen	*sn = arg;
	size_t		 n;
	int		 line;

	FUZZ_CHECK(strncmp(where, "fuzz:", 5) == 0);
	line = atoi(where + 5);
	FUZZ_CHECK(line > sn->lastline);
	sn->lastline = line;
	sn->n++;
	FUZZ_CHECK(name[0] >= 'a' && name[0] <= 'z');
	FUZZ_CHECK(strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") ==
	    strlen(name));
	if (value == NULL)
		return;
	n = strlen(value);
	FUZZ_CHECK(n > 0);
	FUZZ_CHECK(value[0] != ' ' && value[0] != '\t');
	FUZZ_CHECK(value[n - 1] != ' ' && value[n - 1] != '\t' &&
	    value[n - 1] != '\r');
	FUZZ_CHECK(strchr(value, '\n') == NULL);
	FUZZ_CHECK(strstr(value, " #") == NULL &&
	    strstr(value, "\t#") == NULL);
}

static void
fuzz_conffile(const uint8_t *data, size_t size)
{
	struct seen	 sn = { 0, 0 };
	char		 err[400];

	err[0] = '\0';
	if (conf_parse((const char *)data, size, "fuzz", check, &sn, err,
	    sizeof(err)) == -1)
		FUZZ_CHECK(strncmp(err, "fuzz:", 5) == 0 &&
		    strlen(err) > 7);
}

FUZZ_TARGET(conffile)
