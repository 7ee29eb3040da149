/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * JSON strings as tenk writes them, for tenkload's reports and tenkd's
 * access log alike: valid UTF-8 whatever the bytes.  A valid UTF-8
 * sequence goes out as it is; '"', '\\' and the control characters
 * (below 0x20, and DEL) are escaped; every other byte, one that is not
 * part of a valid sequence (a reply's binary byte, a Latin-1 command
 * line), becomes "\u00XX", XX its value.  Any JSON reader then accepts
 * the text, and tenkload's (loadgen/json.c) turns "\u0080".."\u00ff"
 * back into those bytes, so a string comes back byte for byte.  Any
 * thread.
 */
#ifndef TENK_JSON_H
#define TENK_JSON_H

#include <stddef.h>
#include <stdio.h>

/* s as a JSON string, quoted and escaped as above, to f. */
void	tk_json_str(FILE *f, const char *s);

/*
 * The same into buf at *len, within size bytes, NUL-terminated; *len
 * grows by what was written.  Returns 0, or -1 when it does not fit
 * (buf then holds a part of it).
 */
int	tk_json_strbuf(char *buf, size_t size, size_t *len, const char *s);

#endif /* TENK_JSON_H */
