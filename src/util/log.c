/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Logging: one line per event to stderr, as "progname: message" for the
 * command-line tools or "2026-11-24T02:32:27.373Z tenkd[812] warn:
 * message" for the daemon (RFC 3339 UTC with milliseconds, the form
 * journald, logrotate'd files and grep all read), or to syslog(3) with a
 * chosen facility.  This file owns the sink, the level and
 * the escaping that keeps one event on one line: whatever the message
 * says (a host name or path from the command line, later a PROXY TLV),
 * control and non-ASCII bytes go out as C escapes, so nobody outside can
 * forge a line or send a terminal escape sequence.  Rate limiting of
 * repeated warnings is left to the callers, which know what "the same
 * warning" means.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "tenk/log.h"

/*
 * Longest line we build.  Longer messages are cut and end in "...": a
 * log line that long is a bug in the caller, not something to allocate
 * for on a path that must not fail.
 */
#define LOG_LINEMAX	1024

/*
 * The level is read by every thread on every call and written rarely
 * (start-up, SIGHUP), so it is atomic with relaxed ordering: a reader
 * may see a new level one line late, which is harmless, and tsan stays
 * quiet.  progname and use_syslog are set once by log_init() before any
 * thread starts, and log_worker() after a fork before any thread.
 */
static atomic_int	log_level = LOG_LVL_INFO;
static int		log_syslog;
static int		log_stamp;
static int		log_fac = LOG_DAEMON;
static int		log_wk = -1;
static char		log_name[64];

/*
 * log_hold(): the info lines held back, each a level byte, a banner byte
 * and the message with its NUL, in the order they came.
 */
#define LOG_HOLDMAX	8192
static char		*log_held;
static size_t		 log_heldlen;

static const char *const log_lvlnames[] = { "error", "warn", "info",
    "debug" };

static const struct {
	const char	*name;
	int		 fac;
} log_facs[] = {
	{ "auth",	LOG_AUTH },
	{ "authpriv",	LOG_AUTHPRIV },
	{ "cron",	LOG_CRON },
	{ "daemon",	LOG_DAEMON },
	{ "ftp",	LOG_FTP },
	{ "kern",	LOG_KERN },
	{ "local0",	LOG_LOCAL0 },
	{ "local1",	LOG_LOCAL1 },
	{ "local2",	LOG_LOCAL2 },
	{ "local3",	LOG_LOCAL3 },
	{ "local4",	LOG_LOCAL4 },
	{ "local5",	LOG_LOCAL5 },
	{ "local6",	LOG_LOCAL6 },
	{ "local7",	LOG_LOCAL7 },
	{ "lpr",	LOG_LPR },
	{ "mail",	LOG_MAIL },
	{ "news",	LOG_NEWS },
	{ "syslog",	LOG_SYSLOG },
	{ "user",	LOG_USER },
	{ "uucp",	LOG_UUCP },
};

static const struct {
	const char	*name;
	int		 level;
} log_levels[] = {
	{ "error",	LOG_LVL_ERR },
	{ "err",	LOG_LVL_ERR },
	{ "warn",	LOG_LVL_WARN },
	{ "warning",	LOG_LVL_WARN },
	{ "info",	LOG_LVL_INFO },
	{ "debug",	LOG_LVL_DEBUG },
};

static void	log_emit(int, int, int, const char *, va_list)
		    __attribute__((format(printf, 4, 0)));

/*
 * Whether syslogd listens: openlog(3) and syslog(3) say nothing when
 * _PATH_LOG is missing (a container, a minimal chroot) and every line
 * would be lost, so connect once ourselves, as syslog(3) does (a
 * datagram socket, then a stream one).  Returns 0 or -1 with errno set.
 */
static int
syslog_probe(void)
{
	struct sockaddr_un	 sun;
	int			 fd, r, saved;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strlcpy(sun.sun_path, _PATH_LOG, sizeof(sun.sun_path));
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	r = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	if (r == -1 && errno == EPROTOTYPE) {
		close(fd);
		if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) ==
		    -1)
			return -1;
		r = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	}
	saved = errno;
	close(fd);
	errno = saved;
	return r;
}

/*
 * Set the program name, level and sink (LOG_F_* flags).  The name is
 * copied.  Without a syslog socket, LOG_F_SYSLOG falls back to stamped
 * stderr lines and says so once.  Call it from the main thread before
 * starting others.
 */
void
log_init(const char *progname, int level, int flags)
{
	int	fallback = 0;

	if (progname == NULL)
		progname = getprogname();
	strlcpy(log_name, progname, sizeof(log_name));
	log_setlevel(level);
	if (log_syslog)
		closelog();
	log_syslog = (flags & LOG_F_SYSLOG) != 0;
	log_stamp = (flags & (LOG_F_STAMP | LOG_F_SYSLOG)) != 0;
	if (log_syslog && syslog_probe() == -1) {
		log_syslog = 0;
		fallback = errno;
	}
	if (log_syslog)
		openlog(log_name, LOG_PID | LOG_NDELAY, log_fac);
	else if (fallback)
		log_warnx("syslog: %s: %s: logging to stderr instead",
		    _PATH_LOG, strerror(fallback));
}

int
log_facility_parse(const char *s)
{
	size_t	i;

	for (i = 0; i < sizeof(log_facs) / sizeof(log_facs[0]); i++)
		if (strcasecmp(s, log_facs[i].name) == 0)
			return log_facs[i].fac;
	return -1;
}

void
log_facility(int facility)
{
	log_fac = facility;
}

void
log_worker(int n)
{
	log_wk = n;
}

static void	log_out(int, int, const char *);

/* Write out what log_hold() kept, in order, and keep no more. */
static void
log_release(void)
{
	char	*held = log_held, *p;

	log_held = NULL;
	for (p = held; held != NULL && p < held + log_heldlen;
	    p += 2 + strlen(p + 2) + 1)
		log_out(p[0], p[1], p + 2);
	free(held);
	log_heldlen = 0;
}

void
log_hold(int on)
{
	if (on && log_held == NULL)
		log_held = malloc(LOG_HOLDMAX);
	else if (!on)
		log_release();
}

/* Keep one line for log_release(); 0, or -1 when it does not fit. */
static int
log_keep(int level, int banner, const char *msg)
{
	size_t	n = strlen(msg) + 1;

	if (log_heldlen + 2 + n > LOG_HOLDMAX)
		return -1;
	log_held[log_heldlen++] = (char)level;
	log_held[log_heldlen++] = (char)banner;
	memcpy(log_held + log_heldlen, msg, n);
	log_heldlen += n;
	return 0;
}

/* The level for a name (case-insensitive), or -1. */
int
log_level_parse(const char *s)
{
	size_t	i;

	for (i = 0; i < sizeof(log_levels) / sizeof(log_levels[0]); i++)
		if (strcasecmp(s, log_levels[i].name) == 0)
			return log_levels[i].level;
	return -1;
}

/* Out-of-range levels are clamped, so a bad value cannot hide errors. */
void
log_setlevel(int level)
{
	if (level < LOG_LVL_ERR)
		level = LOG_LVL_ERR;
	if (level > LOG_LVL_DEBUG)
		level = LOG_LVL_DEBUG;
	atomic_store_explicit(&log_level, level, memory_order_relaxed);
}

int
log_getlevel(void)
{
	return atomic_load_explicit(&log_level, memory_order_relaxed);
}

/*
 * Reopen the sink.  stderr is whatever the parent gave us and is never
 * reopened; syslog gets a fresh connection, which helps after syslogd
 * restarted.  Main thread only, as log_init().
 */
void
log_reopen(void)
{
	if (log_syslog) {
		closelog();
		openlog(log_name, LOG_PID | LOG_NDELAY, log_fac);
	}
}

/*
 * Copy s into line at len, keeping len below max so that a NUL still
 * fits; sets *cut when s did not fit whole.  Returns the new length.
 */
static size_t
append(char *line, size_t len, size_t max, const char *s, int *cut)
{
	size_t	n;

	n = strlen(s);
	if (n > max - 1 - len) {
		n = max - 1 - len;
		*cut = 1;
	}
	memcpy(line + len, s, n);
	return len + n;
}

/*
 * Write n bytes of buf into dst as one printable line: printable ASCII
 * as is, backslash, CR, LF and tab as "\\", "\r", "\n", "\t", every
 * other byte as "\xHH" (ESC is "\x1b").  dst (dstlen >= 1) is always
 * NUL-terminated; the output stops before an escape that would not fit
 * whole.  Returns how many bytes of buf were written, n unless dst was
 * too short.  Any thread.
 *
 * libbsd has strnvis(3), but only in octal ("\033"), with an strnvis
 * whose argument order differs between its NetBSD and OpenBSD forms,
 * and stravis(3) allocates; this is the form tenkload's --message reads
 * back (escape_parse), so what a log shows can be pasted into a command.
 */
size_t
log_escape(char *dst, size_t dstlen, const void *buf, size_t n)
{
	static const char	 hex[] = "0123456789abcdef";
	const unsigned char	*p = buf;
	char			 e[4];
	size_t			 i, o = 0, k;

	for (i = 0; i < n; i++) {
		k = 2;
		e[0] = '\\';
		switch (p[i]) {
		case '\\':
			e[1] = '\\';
			break;
		case '\r':
			e[1] = 'r';
			break;
		case '\n':
			e[1] = 'n';
			break;
		case '\t':
			e[1] = 't';
			break;
		default:
			if (p[i] >= 0x20 && p[i] < 0x7f) {
				e[0] = (char)p[i];
				k = 1;
			} else {
				e[1] = 'x';
				e[2] = hex[p[i] >> 4];
				e[3] = hex[p[i] & 0xf];
				k = 4;
			}
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

/*
 * As log_escape(), but a backslash stays as it is: what a log line and a
 * bad command line show.  A backslash cannot end a line or reach a
 * terminal, and a message escaped by log_escape() before it is logged
 * (a reply's bytes, say) then reads as it was written, not with every
 * backslash doubled.  Returns how many bytes of buf were written.
 */
size_t
log_escape_ctl(char *dst, size_t dstlen, const void *buf, size_t n)
{
	const char	*p = buf;
	size_t		 i = 0, o = 0, k, m;

	if (dstlen == 0)
		return 0;
	dst[0] = '\0';
	while (i < n) {
		if (p[i] == '\\') {
			if (o + 1 >= dstlen)
				break;
			dst[o++] = '\\';
			dst[o] = '\0';
			i++;
			continue;
		}
		for (k = i; k < n && p[k] != '\\'; k++)
			;
		m = log_escape(dst + o, dstlen - o, p + i, k - i);
		o += strlen(dst + o);
		i += m;
		if (i < k)
			break;		/* dst is full */
	}
	return i;
}

/*
 * The start of a stamped stderr line, "2026-11-24T02:32:27.373Z
 * tenkd[812] w1 warn: ", into line; returns its length.  The time is
 * CLOCK_REALTIME in UTC, so lines from several processes and hosts sort
 * together whatever their TZ.  getpid() each time: workers are forked
 * and glibc no longer caches it.
 */
static size_t
stamp(char *line, size_t max, int level, int *cut)
{
	struct timespec	 ts;
	struct tm	 tm;
	char		 buf[128], wk[16];
	size_t		 n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	wk[0] = '\0';
	if (log_wk != -1)
		snprintf(wk, sizeof(wk), " w%d", log_wk);
	snprintf(buf + n, sizeof(buf) - n, ".%03ldZ %s[%ld]%s %s: ",
	    ts.tv_nsec / 1000000, log_name, (long)getpid(), wk,
	    log_lvlnames[level]);
	return append(line, 0, max, buf, cut);
}

/*
 * Format one line and hand it to the sink (log_out), or keep it while
 * log_hold() holds info lines back.  The formatted message is
 * escaped (log_escape_ctl), so no argument can end the line early or reach
 * a terminal raw.  with_errno appends the text of errno as it was on
 * entry, and errno is left as it was.  banner writes to stderr even
 * under syslog.  The line is built on the stack and written with one
 * write(2): writes of up to PIPE_BUF bytes to a pipe are atomic, and to
 * a file or terminal one write is at least never split between two
 * lines.
 */
static void
log_emit(int level, int with_errno, int banner, const char *fmt,
    va_list ap)
{
	char		 msg[LOG_LINEMAX], raw[LOG_LINEMAX];
	char		 ebuf[128];
	const char	*etext;
	size_t		 len = 0, max = sizeof(msg), m;
	int		 saved_errno = errno, cut = 0, r;

	/* The message alone, as syslog wants it: it adds name and time. */
	msg[0] = '\0';
	r = vsnprintf(raw, sizeof(raw), fmt, ap);
	if (r > 0) {
		m = (size_t)r;
		if (m >= sizeof(raw)) {
			m = sizeof(raw) - 1;
			cut = 1;
		}
		if (log_escape_ctl(msg + len, max - len, raw, m) < m)
			cut = 1;
		len += strlen(msg + len);
	}
	if (with_errno) {
		/* The GNU strerror_r returns a pointer, maybe not to ebuf. */
		etext = strerror_r(saved_errno, ebuf, sizeof(ebuf));
		len = append(msg, len, max, ": ", &cut);
		len = append(msg, len, max, etext, &cut);
	}
	if (cut && len >= 3)
		memcpy(msg + len - 3, "...", 3);
	msg[len] = '\0';

	if (log_held == NULL || level < LOG_LVL_INFO) {
		log_out(level, banner, msg);
		/* A start-up error first, then what was held back. */
		if (level == LOG_LVL_ERR)
			log_release();
	} else if (log_keep(level, banner, msg) == -1) {
		/* No room: what was held, then this, and no more holding. */
		log_release();
		log_out(level, banner, msg);
	}
	errno = saved_errno;
}

/* One escaped message to the sink: syslog, stderr or both (banner). */
static void
log_out(int level, int banner, const char *msg)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
	char		 line[LOG_LINEMAX];
	size_t		 len, max;
	ssize_t		 n;
	int		 cut = 0;

	if (log_syslog && log_wk != -1)
		syslog(prio[level], "w%d %s", log_wk, msg);
	else if (log_syslog)
		syslog(prio[level], "%s", msg);
	if (log_syslog && !banner)
		return;
	/* stderr: the prefix, the message (cut again if need be), "\n". */
	max = sizeof(line) - 1;		/* + newline */
	if (log_stamp)
		len = stamp(line, max, level, &cut);
	else {
		len = append(line, 0, max, log_name[0] != '\0' ? log_name :
		    getprogname(), &cut);
		len = append(line, len, max, ": ", &cut);
	}
	len = append(line, len, max, msg, &cut);
	if (cut && len >= 3)
		memcpy(line + len - 3, "...", 3);
	line[len++] = '\n';
	/* Nothing to report to if stderr fails; retry signals only. */
	do {
		n = write(STDERR_FILENO, line, len);
	} while (n == -1 && errno == EINTR);
}

void
log_warn(const char *fmt, ...)
{
	va_list	ap;

	if (log_getlevel() < LOG_LVL_WARN)
		return;
	va_start(ap, fmt);
	log_emit(LOG_LVL_WARN, 1, 0, fmt, ap);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list	ap;

	if (log_getlevel() < LOG_LVL_WARN)
		return;
	va_start(ap, fmt);
	log_emit(LOG_LVL_WARN, 0, 0, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	ap;

	if (log_getlevel() < LOG_LVL_INFO)
		return;
	va_start(ap, fmt);
	log_emit(LOG_LVL_INFO, 0, 0, fmt, ap);
	va_end(ap);
}

/* Disabled debug lines cost one relaxed load and a compare. */
void
log_debug(const char *fmt, ...)
{
	va_list	ap;

	if (log_getlevel() < LOG_LVL_DEBUG)
		return;
	va_start(ap, fmt);
	log_emit(LOG_LVL_DEBUG, 0, 0, fmt, ap);
	va_end(ap);
}

void
log_banner(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_emit(LOG_LVL_INFO, 0, 1, fmt, ap);
	va_end(ap);
}

/* Errors are never filtered: the level cannot go below LOG_LVL_ERR. */
void
fatal(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_emit(LOG_LVL_ERR, 1, 0, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_emit(LOG_LVL_ERR, 0, 0, fmt, ap);
	va_end(ap);
	exit(1);
}
