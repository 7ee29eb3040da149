/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The names of TLS versions and of the kinds of failure (tls.h), which
 * need no library: built with OpenSSL (tls.c) or without (tlsnone.c).
 */
#include <string.h>

#include "tenk/tls.h"

const char *const tk_tls_fail_names[TK_TLS_F_MAX] = {
	"none", "eof", "not-tls", "no-shared", "verify", "alert",
	"protocol", "socket", "timeout"
};

int
tk_tls_version_parse(const char *s)
{
	if (strcmp(s, "1.2") == 0)
		return TK_TLS_1_2;
	if (strcmp(s, "1.3") == 0)
		return TK_TLS_1_3;
	return -1;
}

const char *
tk_tls_version_name(int v)
{
	return v == TK_TLS_1_3 ? "1.3" : v == TK_TLS_1_2 ? "1.2" : "?";
}
