/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Logging to stderr or syslog, one line per event, with levels.  Safe to
 * call from any thread (each line is written with one write(2)).
 */
#ifndef TENK_LOG_H
#define TENK_LOG_H

#include <stddef.h>
#include <stdnoreturn.h>

#define LOG_LVL_ERR	0
#define LOG_LVL_WARN	1
#define LOG_LVL_INFO	2
#define LOG_LVL_DEBUG	3

/*
 * Set the program name shown on each line, the level and the sink:
 * use_syslog non-zero sends lines to syslog(3) with facility daemon.
 */
void	log_init(const char *progname, int level, int use_syslog);

/* Parse "error", "warn", "info" or "debug"; -1 if unknown. */
int	log_level_parse(const char *s);

/* Set and read the level; lines above it are dropped cheaply. */
void	log_setlevel(int level);
int	log_getlevel(void);

/* Reopen the sink (SIGHUP); a no-op for stderr. */
void	log_reopen(void);

/*
 * n bytes of buf as printable text in dst (always NUL-terminated):
 * backslash, CR, LF and tab as C escapes, any other byte outside
 * printable ASCII as "\xHH".  Stops before an escape that does not fit;
 * returns how many bytes of buf were written.  The access log and
 * tenkload's mismatch line use it.
 */
size_t	log_escape(char *dst, size_t dstlen, const void *buf, size_t n);

/*
 * The same with backslashes left as they are: what every log line and a
 * bad command line go through, so that text escaped by log_escape()
 * reads as written.  Control and non-ASCII bytes are escaped all the
 * same, so nothing can forge a line.
 */
size_t	log_escape_ctl(char *dst, size_t dstlen, const void *buf, size_t n);

/*
 * One line at each level; log_warn appends ": strerror(errno)".  All of
 * them leave errno as it was.
 */
void	log_warn(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));
void	log_info(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));
void	log_debug(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));

/* Start-up failures: log and exit(1); fatal() appends strerror(errno). */
noreturn void	fatal(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));
noreturn void	fatalx(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));

#endif /* TENK_LOG_H */
