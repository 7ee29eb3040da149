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

static int
check(void *arg, const char *where, const char *name, const char *value,
    struct tk_cli_err *e)
{
	struct seen	*sn = arg;
	size_t		 n;
	int		 line;

	(void)e;
	FUZZ_CHECK(strncmp(where, "fuzz:", 5) == 0);
	line = atoi(where + 5);
	FUZZ_CHECK(line > sn->lastline);
	sn->lastline = line;
	sn->n++;
	FUZZ_CHECK(name[0] >= 'a' && name[0] <= 'z');
	FUZZ_CHECK(strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") ==
	    strlen(name));
	if (value == NULL)
		return 0;
	n = strlen(value);
	FUZZ_CHECK(n > 0);
	FUZZ_CHECK(value[0] != ' ' && value[0] != '\t');
	FUZZ_CHECK(value[n - 1] != ' ' && value[n - 1] != '\t' &&
	    value[n - 1] != '\r');
	FUZZ_CHECK(strchr(value, '\n') == NULL);
	FUZZ_CHECK(strstr(value, " #") == NULL &&
	    strstr(value, "\t#") == NULL);
	return 0;
}

static void
fuzz_conffile(const uint8_t *data, size_t size)
{
	struct seen		 sn = { 0, 0 };
	struct tk_cli_err	 e;

	e.msg[0] = '\0';
	if (conf_parse((const char *)data, size, "fuzz", check, &sn,
	    &e) == -1)
		FUZZ_CHECK(strncmp(e.msg, "fuzz:", 5) == 0 &&
		    strlen(e.msg) > 7);
}

FUZZ_TARGET(conffile)
