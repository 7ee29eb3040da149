/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Command-line values: durations ("250ms", "10s", "5m", "1h", a bare
 * number is seconds) and sizes ("512", "64k", "4m", "1g"; powers of
 * 1024).  Built on strtonum(3).  On failure they return -1 and set
 * *errstr to a short phrase ("invalid", "too large", "bad unit", ...).
 */
#ifndef TENK_PARSE_H
#define TENK_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* Duration into ns, between min_ns and max_ns inclusive. */
int	tk_parse_duration(const char *s, uint64_t min_ns, uint64_t max_ns,
	    uint64_t *ns, const char **errstr);

/* Size into bytes, between min and max inclusive. */
int	tk_parse_size(const char *s, uint64_t min, uint64_t max,
	    uint64_t *n, const char **errstr);

/* Rate "N" or "N/s" per second, between min and max inclusive. */
int	tk_parse_rate(const char *s, uint64_t min, uint64_t max,
	    uint64_t *n, const char **errstr);

/* Format ns as a short human duration ("1.5ms", "2s") into buf. */
char	*tk_fmt_duration(uint64_t ns, char *buf, size_t len);

#endif /* TENK_PARSE_H */
