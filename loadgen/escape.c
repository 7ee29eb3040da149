/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * C escapes both ways: escape_parse() turns the text of -m/--message,
 * until:TEXT and --reply-check into bytes; escape_bytes() turns any
 * bytes (a reply that did not match) into one printable line for a log
 * or a JSON string, in the same escapes, so that what a log shows can
 * be pasted back into a command line.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include "framing.h"

/*
 * Decode text into out, at most outlen bytes: "\r", "\n", "\t", "\\",
 * "\0" (one NUL byte) and "\xHH" (exactly two hex digits) stand for one
 * byte each; any other byte stands for itself.  Octal escapes are
 * refused rather than misread ("\012" is a newline in C, it would be
 * NUL '1' '2' here), as are unknown escapes, a "\x" without two hex
 * digits and a trailing backslash.  Since every escape is longer than
 * its byte, strlen(text) bytes of out always suffice.  Returns the
 * number of bytes, or -1 with *errstr a short phrase.
 */
ssize_t
escape_parse(const char *text, void *out, size_t outlen, const char **errstr)
{
	unsigned char	*o = out;
	const char	*s;
	size_t		 n = 0;
	int		 hi, lo, c;

	for (s = text; *s != '\0'; s++) {
		c = (unsigned char)*s;
		if (c == '\\') {
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
				c = '\\';
				break;
			case '0':
				if (s[1] >= '0' && s[1] <= '7') {
					*errstr = "octal escapes are not "
					    "supported, use \\xHH";
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
		}
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

/*
 * Write n bytes of buf into dst as one printable line: printable ASCII
 * as is, backslash, CR, LF and tab as "\\", "\r", "\n", "\t", every
 * other byte as "\xHH".  dst (dstlen >= 1) is always NUL-terminated;
 * the output stops before an escape that would not fit whole.  Returns
 * how many bytes of buf were written, n unless dst was too short.
 */
size_t
escape_bytes(char *dst, size_t dstlen, const void *buf, size_t n)
{
	const unsigned char	*p = buf;
	char			 e[5];
	size_t			 i, o = 0, k;

	for (i = 0; i < n; i++) {
		switch (p[i]) {
		case '\\':
			k = (size_t)snprintf(e, sizeof(e), "\\\\");
			break;
		case '\r':
			k = (size_t)snprintf(e, sizeof(e), "\\r");
			break;
		case '\n':
			k = (size_t)snprintf(e, sizeof(e), "\\n");
			break;
		case '\t':
			k = (size_t)snprintf(e, sizeof(e), "\\t");
			break;
		default:
			if (p[i] >= 0x20 && p[i] < 0x7f) {
				e[0] = (char)p[i];
				k = 1;
			} else
				k = (size_t)snprintf(e, sizeof(e), "\\x%02x",
				    p[i]);
			break;
		}
		if (o + k >= dstlen)
			break;
		memcpy(dst + o, e, k);
		o += k;
	}
	dst[o] = '\0';
	return i;
}
