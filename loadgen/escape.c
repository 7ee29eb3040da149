/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * C escapes: escape_parse() turns the text of -m/--message, until:TEXT
 * and --reply-check into bytes.  The other way, any bytes into one
 * printable line in the same escapes, is log_escape() in the library,
 * which tenkd's logs use too: what a log shows can be pasted back into
 * a command line.
 */
#include <sys/types.h>

#include "framing.h"

/*
 * The byte that the escape at *sp stands for, *sp pointing at its
 * backslash: "\r", "\n", "\t", "\\", "\{" (a brace that no template
 * placeholder opens), "\0" (one NUL byte) and "\xHH" (exactly two hex
 * digits).  Octal escapes are refused rather than misread ("\012" is a
 * newline in C, it would be NUL '1' '2' here), as are unknown escapes, a
 * "\x" without two hex digits and a trailing backslash.  Leaves *sp on
 * the escape's last character.  Returns the byte, or -1 with *errstr a
 * short phrase.
 */
int
escape_char(const char **sp, const char **errstr)
{
	const char	*s = *sp;
	int		 hi, lo, c;

	switch (*++s) {
	case 'r':
		c = '\r';
		break;
	case 'n':
		c = '\n';
		break;
	case 't':
		c = '\t';
		break;
	case '\\':
	case '{':
		c = (unsigned char)*s;
		break;
	case '0':
		if (s[1] >= '0' && s[1] <= '7') {
			*errstr = "octal escapes are not supported, use \\xHH";
			return -1;
		}
		c = '\0';
		break;
	case 'x':
		if ((hi = escape_hexval(s[1])) == -1 ||
		    (lo = escape_hexval(s[2])) == -1) {
			*errstr = "\\x needs two hex digits";
			return -1;
		}
		c = hi << 4 | lo;
		s += 2;
		break;
	case '\0':
		*errstr = "trailing backslash";
		return -1;
	default:
		*errstr = "unknown escape";
		return -1;
	}
	*sp = s;
	return c;
}

/*
 * Decode text into out, at most outlen bytes: each escape of
 * escape_char() stands for its byte, any other byte for itself.  Since
 * every escape is longer than its byte, strlen(text) bytes of out
 * always suffice.  Returns the number of bytes, or -1 with *errstr a
 * short phrase.
 */
ssize_t
escape_parse(const char *text, void *out, size_t outlen, const char **errstr)
{
	unsigned char	*o = out;
	const char	*s;
	size_t		 n = 0;
	int		 c;

	for (s = text; *s != '\0'; s++) {
		c = (unsigned char)*s;
		if (c == '\\' && (c = escape_char(&s, errstr)) == -1)
			return -1;
		if (n == outlen) {
			*errstr = "too long";
			return -1;
		}
		o[n++] = (unsigned char)c;
	}
	return (ssize_t)n;
}

/*
 * As escape_parse(), and an empty result is refused too, with *errstr
 * the phrase empty: for the texts that must hold a byte (until:TEXT,
 * --reply-check).  Returns the number of bytes, at least 1, or -1.
 */
ssize_t
escape_parse_some(const char *text, void *out, size_t outlen,
    const char *empty, const char **errstr)
{
	ssize_t	 n;

	if ((n = escape_parse(text, out, outlen, errstr)) == 0) {
		*errstr = empty;
		return -1;
	}
	return n;
}
