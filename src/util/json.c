/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * JSON strings (tenk/json.h): the one escaping of tenkload's reports and
 * tenkd's access log.  Reading JSON is tenkload's alone (loadgen/json.c).
 */
#include <stdio.h>
#include <string.h>

#include "tenk/json.h"

#define ESCMAX	8		/* "\u00XX" and its NUL */

static int
cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

/*
 * The length of the valid UTF-8 sequence at the start of the NUL-
 * terminated p (RFC 3629: no overlong forms, no surrogates, nothing
 * above U+10FFFF), or 0 when p[0] starts none.  A NUL is no
 * continuation byte, so nothing past the end is read.
 */
static size_t
utf8_seq(const unsigned char *p)
{
	unsigned char	lo = 0x80, hi = 0xbf;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		return cont(p[1]) ? 2 : 0;
	if (p[0] >= 0xe0 && p[0] <= 0xef) {
		if (p[0] == 0xe0)
			lo = 0xa0;
		if (p[0] == 0xed)
			hi = 0x9f;
		return p[1] >= lo && p[1] <= hi && cont(p[2]) ? 3 : 0;
	}
	if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		if (p[0] == 0xf0)
			lo = 0x90;
		if (p[0] == 0xf4)
			hi = 0x8f;
		return p[1] >= lo && p[1] <= hi && cont(p[2]) && cont(p[3]) ?
		    4 : 0;
	}
	return 0;
}

/*
 * The next character of the string at *pp (not at its NUL) as it is
 * written: *out points at its bytes, either in the string or an escape
 * in esc, and *pp moves past it.  Returns how many bytes *out holds.
 */
static size_t
piece(const unsigned char **pp, char esc[ESCMAX], const char **out)
{
	const unsigned char	*p = *pp;
	size_t			 n;

	*pp = p + 1;
	*out = esc;
	switch (*p) {
	case '"':
	case '\\':
		esc[0] = '\\';
		esc[1] = (char)*p;
		return 2;
	case '\n':
		memcpy(esc, "\\n", 2);
		return 2;
	case '\r':
		memcpy(esc, "\\r", 2);
		return 2;
	case '\t':
		memcpy(esc, "\\t", 2);
		return 2;
	}
	if (*p < 0x20 || *p == 0x7f || (n = utf8_seq(p)) == 0)
		return (size_t)snprintf(esc, ESCMAX, "\\u%04x", *p);
	*out = (const char *)p;
	*pp = p + n;
	return n;
}

void
tk_json_str(FILE *f, const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	const char		*out;
	char			 esc[ESCMAX];
	size_t			 n;

	fputc('"', f);
	while (*p != '\0') {
		n = piece(&p, esc, &out);
		fwrite(out, 1, n, f);
	}
	fputc('"', f);
}

int
tk_json_strbuf(char *buf, size_t size, size_t *len, const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	const char		*out;
	char			 esc[ESCMAX];
	size_t			 n;

	if (*len + 2 >= size)
		return -1;
	buf[(*len)++] = '"';
	while (*p != '\0') {
		n = piece(&p, esc, &out);
		if (*len + n + 1 >= size) {
			buf[*len] = '\0';
			return -1;
		}
		memcpy(buf + *len, out, n);
		*len += n;
	}
	buf[(*len)++] = '"';
	buf[*len] = '\0';
	return 0;
}
