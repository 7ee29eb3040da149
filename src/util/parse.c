/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Command-line values with units: durations, sizes and rates, and the
 * short duration format used in reports.  Numbers go through strtonum(3)
 * so that signs, spaces and overflow are refused the same way everywhere.
 * Addresses are parsed in src/net/sock.c.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tenk/parse.h"

struct unit {
	const char	*name;
	uint64_t	 mul;
};

/* "" is the unit of a bare number. */
static const struct unit dur_units[] = {
	{ "ns",	1ULL },
	{ "us",	1000ULL },
	{ "ms",	1000000ULL },
	{ "",	1000000000ULL },
	{ "s",	1000000000ULL },
	{ "m",	60ULL * 1000000000ULL },
	{ "h",	3600ULL * 1000000000ULL },
	{ NULL,	0 }
};

static const struct unit size_units[] = {
	{ "",	1ULL },
	{ "b",	1ULL },
	{ "k",	1ULL << 10 },
	{ "kb",	1ULL << 10 },
	{ "kib", 1ULL << 10 },
	{ "m",	1ULL << 20 },
	{ "mb",	1ULL << 20 },
	{ "mib", 1ULL << 20 },
	{ "g",	1ULL << 30 },
	{ "gb",	1ULL << 30 },
	{ "gib", 1ULL << 30 },
	{ NULL,	0 }
};

static const struct unit rate_units[] = {
	{ "",	1ULL },
	{ "/s",	1ULL },
	{ NULL,	0 }
};

/* Fraction digits kept; more are read and dropped (below 1 ns). */
#define FRAC_MAX	9

/*
 * Parse "DIGITS[.DIGITS]UNIT" against a unit table, unit names compared
 * without case.  A fraction is refused when the unit is 1 (half a byte
 * or a nanosecond makes no sense) or when frac is 0.  The result is
 * truncated towards zero.  Returns 0 or -1 with *errstr set.
 */
static int
parse_unit(const char *s, const struct unit *units, int frac,
    uint64_t min, uint64_t max, uint64_t *res, const char **errstr)
{
	char			 digits[32];
	const char		*p, *err;
	const struct unit	*u;
	uint64_t		 whole, part = 0, scale = 1, v, fv;
	size_t			 n;
	int			 nfrac = 0, hasfrac = 0;

	if (s == NULL || *s == '\0') {
		*errstr = "empty";
		return -1;
	}
	/* strtonum alone would accept " 5" and "+5". */
	n = strspn(s, "0123456789");
	if (n == 0) {
		*errstr = "invalid";
		return -1;
	}
	if (n >= sizeof(digits)) {
		*errstr = "too large";
		return -1;
	}
	memcpy(digits, s, n);
	digits[n] = '\0';
	whole = (uint64_t)strtonum(digits, 0, LLONG_MAX, &err);
	if (err != NULL) {
		*errstr = err;
		return -1;
	}
	p = s + n;
	if (*p == '.') {
		hasfrac = 1;
		p++;
		if (*p < '0' || *p > '9') {
			*errstr = "invalid";
			return -1;
		}
		for (; *p >= '0' && *p <= '9'; p++) {
			if (nfrac == FRAC_MAX)
				continue;
			part = part * 10 + (uint64_t)(*p - '0');
			scale *= 10;
			nfrac++;
		}
	}

	for (u = units; u->name != NULL; u++)
		if (strcasecmp(p, u->name) == 0)
			break;
	if (u->name == NULL) {
		*errstr = "bad unit";
		return -1;
	}
	if (hasfrac && (!frac || u->mul == 1)) {
		*errstr = "invalid";
		return -1;
	}

	if (whole > UINT64_MAX / u->mul) {
		*errstr = "too large";
		return -1;
	}
	v = whole * u->mul;
	/*
	 * part * mul / scale without overflow: split mul by scale, and
	 * part * (mul % scale) < scale^2 <= 10^18 fits.
	 */
	fv = part * (u->mul / scale) + part * (u->mul % scale) / scale;
	if (v > UINT64_MAX - fv) {
		*errstr = "too large";
		return -1;
	}
	v += fv;
	if (v < min) {
		*errstr = "too small";
		return -1;
	}
	if (v > max) {
		*errstr = "too large";
		return -1;
	}
	*res = v;
	*errstr = NULL;
	return 0;
}

/*
 * "250ms", "1.5s", "10" (seconds), "5m", "1h", "100us", "50ns" into ns,
 * within [min_ns, max_ns].  Returns 0, or -1 with *errstr set; *ns is
 * left alone on failure.
 */
int
tk_parse_duration(const char *s, uint64_t min_ns, uint64_t max_ns,
    uint64_t *ns, const char **errstr)
{
	return parse_unit(s, dur_units, 1, min_ns, max_ns, ns, errstr);
}

/* "512", "64k", "1.5m", "4MiB", "1g" into bytes; powers of 1024. */
int
tk_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *n,
    const char **errstr)
{
	return parse_unit(s, size_units, 1, min, max, n, errstr);
}

/* "1000" or "1000/s": whole events per second. */
int
tk_parse_rate(const char *s, uint64_t min, uint64_t max, uint64_t *n,
    const char **errstr)
{
	return parse_unit(s, rate_units, 0, min, max, n, errstr);
}

/*
 * The largest unit not above ns, with at most three decimals, truncated
 * (never rounded up into "1000ms"), trailing zeros dropped: "0ns",
 * "750ns", "1.5ms", "2s", "3600s".  Returns buf.
 */
char *
tk_fmt_duration(uint64_t ns, char *buf, size_t len)
{
	static const struct unit units[] = {
		{ "s",	1000000000ULL },
		{ "ms",	1000000ULL },
		{ "us",	1000ULL },
		{ "ns",	1ULL },
	};
	const struct unit	*u;
	unsigned int		 frac;
	int			 w;

	for (u = units; u->mul > ns && u->mul != 1; u++)
		;
	frac = (unsigned int)((ns % u->mul) * 1000 / u->mul);
	if (frac == 0) {
		snprintf(buf, len, "%llu%s",
		    (unsigned long long)(ns / u->mul), u->name);
		return buf;
	}
	w = 3;
	while (frac % 10 == 0) {
		frac /= 10;
		w--;
	}
	snprintf(buf, len, "%llu.%0*u%s", (unsigned long long)(ns / u->mul),
	    w, frac, u->name);
	return buf;
}
