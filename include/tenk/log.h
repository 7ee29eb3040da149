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

/* log_init() flags. */
#define LOG_F_SYSLOG	0x01	/* to syslog(3), stderr if it is missing */
#define LOG_F_STAMP	0x02	/* stderr: time, name[pid], level */

/*
 * Set the program name shown on each line, the level and the sink.
 * flags 0 gives "progname: message" on stderr (the command-line tools);
 * LOG_F_STAMP gives a daemon's "2026-11-24T02:32:27.373Z tenkd[812]
 * warn: message"; LOG_F_SYSLOG sends lines to syslog(3) with the
 * facility of log_facility(), falling back to stamped stderr lines with
 * one warning when the syslog socket cannot be reached.
 */
void	log_init(const char *progname, int level, int flags);

/*
 * Parse a syslog facility name as syslog.conf(5) and haproxy's "log"
 * line spell them ("daemon", "local0" to "local7", "user", ...); the
 * LOG_* value, or -1 if unknown.
 */
int	log_facility_parse(const char *s);

/* The facility for the next log_init() with LOG_F_SYSLOG (LOG_DAEMON). */
void	log_facility(int facility);

/*
 * Number the lines of this process as worker n ("tenkd[812] w1 info:"),
 * -1 for none.  Call it in a forked worker before it starts threads.
 */
void	log_worker(int n);

/* Parse "error", "warn", "info" or "debug"; -1 if unknown. */
int	log_level_parse(const char *s);

/* Set and read the level; lines above it are dropped cheaply. */
void	log_setlevel(int level);
int	log_getlevel(void);

/*
 * Start-up: with on, keep info lines (banners too) back from the sink,
 * in order, until log_hold(0) writes them out; warnings and errors go
 * out at once, and an error (fatal(), fatalx()) writes what was held
 * after its own line, so that the line that ended a failed start is its
 * first.  Past what it can hold (8 KiB), a line goes out at once.
 * Before any thread.
 */
void	log_hold(int on);

/* Reopen the sink (SIGUSR1, SIGHUP); a no-op for stderr. */
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

/*
 * An info line that ignores the level and goes to stderr even under
 * syslog (there as well): start-up facts that a supervisor or a test
 * reads from stderr, such as "listening on ADDR:PORT".
 */
void	log_banner(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));

/* Start-up failures: log and exit(1); fatal() appends strerror(errno). */
noreturn void	fatal(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));
noreturn void	fatalx(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));

#endif /* TENK_LOG_H */
