/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Logging to stderr: the line format, levels, errno kept and appended,
 * long lines cut, fatal() exiting 1, lines held at start-up, and the
 * escaping that keeps a message with control bytes on one line.  stderr
 * is pointed at a temporary file and read back.
 */
#include <sys/wait.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * XXX ../t.h first: log.h pulls in <stdnoreturn.h>, whose "noreturn" macro
 * breaks the __attribute__((noreturn)) in t.h.  Goes when t.h spells it
 * __noreturn__.
 */
#include "../t.h"
#include "tenk/log.h"

static int	capfd = -1;

/* Send stderr to a fresh temporary file. */
static void
capture(void)
{
	char	path[] = "/tmp/tk-log.XXXXXX";

	if (capfd != -1)
		close(capfd);
	T_SYS(capfd = mkstemp(path));
	unlink(path);
	T_SYS(dup2(capfd, STDERR_FILENO));
}

/* What was written since capture(), NUL-terminated, in a static buffer. */
static const char *
captured(void)
{
	static char	buf[8192];
	ssize_t		n;

	T_SYS(lseek(capfd, 0, SEEK_SET));
	T_SYS(n = read(capfd, buf, sizeof(buf) - 1));
	buf[n] = '\0';
	return buf;
}

TEST(log_lines)
{
	log_init("tenkd", LOG_LVL_INFO, 0);
	capture();
	log_info("listening on %s:%d", "127.0.0.1", 7);
	log_warnx("slow %s", "peer");
	log_debug("%s: hidden", __func__);
	T_STREQ(captured(), "tenkd: listening on 127.0.0.1:7\n"
	    "tenkd: slow peer\n");

	capture();
	log_setlevel(LOG_LVL_DEBUG);
	T_EQ(log_getlevel(), LOG_LVL_DEBUG);
	log_debug("shown %d", 1);
	log_setlevel(LOG_LVL_ERR);
	log_info("hidden");
	log_warnx("hidden");
	log_setlevel(99);			/* clamped */
	T_EQ(log_getlevel(), LOG_LVL_DEBUG);
	log_setlevel(-5);
	T_EQ(log_getlevel(), LOG_LVL_ERR);
	T_STREQ(captured(), "tenkd: shown 1\n");
}

TEST(log_errno)
{
	char	want[256];

	log_init("tenkload", LOG_LVL_INFO, 0);
	capture();
	errno = ECONNREFUSED;
	log_warn("connect %s", "127.0.0.1:9");
	T_EQ(errno, ECONNREFUSED);
	errno = EMFILE;
	log_info("no errno here");
	T_EQ(errno, EMFILE);
	snprintf(want, sizeof(want), "tenkload: connect 127.0.0.1:9: %s\n"
	    "tenkload: no errno here\n", strerror(ECONNREFUSED));
	T_STREQ(captured(), want);
}

/* n bytes of c and a NUL, for a message too long for a log line. */
static char *
filled(int c, size_t n)
{
	char	*p;

	T_PTR(p = malloc(n + 1));
	memset(p, c, n);
	p[n] = '\0';
	return p;
}

/*
 * What was logged since capture() is one line cut with a mark: longer
 * than 500 bytes, beginning with head, ending in "...\n".  Returns its
 * length.
 */
static size_t
captured_cut(const char *head)
{
	const char	*out = captured();
	size_t		 len = strlen(out);

	T_GT(len, 500);
	T_OK(strncmp(out, head, strlen(head)) == 0);
	T_OK(strcmp(out + len - 4, "...\n") == 0);
	T_OK(strchr(out, '\n') == out + len - 1);
	return len;
}

TEST(log_long_line)
{
	char	*big = filled('x', 2999);

	log_init("tenkd", LOG_LVL_INFO, 0);
	capture();
	errno = EPIPE;
	log_warn("%s", big);
	T_LT(captured_cut("tenkd: xxx"), 3000);
	free(big);
}

/*
 * fn escapes the n bytes at in into a buffer of dstlen bytes (its own
 * allocation, so that ASan sees a write past it): it returns ret and
 * the buffer holds want.
 */
#define ESC_MAX	64

static void
esc_is(size_t (*fn)(char *, size_t, const void *, size_t), size_t dstlen,
    const char *in, size_t n, size_t ret, const char *want)
{
	char	*dst;

	dst = malloc(dstlen);
	T_PTR(dst);
	T_UEQ(fn(dst, dstlen, in, n), ret);
	T_STREQ(dst, want);
	free(dst);
}

TEST(log_escape)
{
	esc_is(log_escape, ESC_MAX, "evil\nFAKE", 9, 9, "evil\\nFAKE");
	esc_is(log_escape, ESC_MAX, "\x1b[31mred\r\t\\", 11, 11,
	    "\\x1b[31mred\\r\\t\\\\");
	esc_is(log_escape, ESC_MAX, "a\0b\x7f\x9b\xff ~", 8, 8,
	    "a\\x00b\\x7f\\x9b\\xff ~");
	esc_is(log_escape, ESC_MAX, "", 0, 0, "");
	/* Never half an escape, always terminated. */
	esc_is(log_escape, 4, "ab\n", 3, 2, "ab");
	esc_is(log_escape, 1, "a", 1, 0, "");
}

/* A message with a newline or an ESC is one line, its escapes visible. */
TEST(log_escaped_lines)
{
	char	want[256];

	log_init("tenkd", LOG_LVL_INFO, 0);
	capture();
	log_warnx("upstream %s is down", "evil\nFAKE LOG LINE:80");
	log_info("%s", "\x1b]0;title\x07\x1b[2J");
	errno = ENOENT;
	log_warn("pidfile %s", "/tmp/a\r\nb");
	snprintf(want, sizeof(want),
	    "tenkd: upstream evil\\nFAKE LOG LINE:80 is down\n"
	    "tenkd: \\x1b]0;title\\x07\\x1b[2J\n"
	    "tenkd: pidfile /tmp/a\\r\\nb: %s\n", strerror(ENOENT));
	T_STREQ(captured(), want);
}

/*
 * A log line keeps backslashes as they are (text escaped before it is
 * logged reads as written) and still escapes every control byte.
 */
TEST(log_escape_ctl)
{
	esc_is(log_escape_ctl, ESC_MAX, "a\\r\n\x1b", 5, 5, "a\\r\\n\\x1b");
	esc_is(log_escape_ctl, ESC_MAX, "\"+OK\\r\\n\"", 9, 9, "\"+OK\\r\\n\"");
	/* Bounded: never half an escape, always terminated. */
	esc_is(log_escape_ctl, 3, "\\\n", 2, 1, "\\");
	esc_is(log_escape_ctl, 1, "\\", 1, 0, "");

	log_init("tenkload", LOG_LVL_INFO, 0);
	capture();
	log_warnx("reply \"%s\"", "+OK\\r\\n");
	T_STREQ(captured(), "tenkload: reply \"+OK\\r\\n\"\n");
}

/* Escapes that would pass the line's end cut it with the mark. */
TEST(log_escaped_long)
{
	char	*big = filled('\n', 899);

	log_init("tenkd", LOG_LVL_INFO, 0);
	capture();
	log_info("%s", big);
	captured_cut("tenkd: \\n\\n");
	free(big);
}

TEST(log_level_parse)
{
	T_EQ(log_level_parse("error"), LOG_LVL_ERR);
	T_EQ(log_level_parse("warn"), LOG_LVL_WARN);
	T_EQ(log_level_parse("WARNING"), LOG_LVL_WARN);
	T_EQ(log_level_parse("info"), LOG_LVL_INFO);
	T_EQ(log_level_parse("debug"), LOG_LVL_DEBUG);
	T_EQ(log_level_parse("verbose"), -1);
	T_EQ(log_level_parse(""), -1);
}

TEST(log_fatal)
{
	pid_t	pid;
	int	status;
	char	want[256];

	log_init("tenkd", LOG_LVL_ERR, 0);
	capture();
	fflush(NULL);
	T_SYS(pid = fork());
	if (pid == 0) {
		errno = ENOMEM;
		fatal("setup %d", 3);
	}
	T_SYS(waitpid(pid, &status, 0));
	T_OK(WIFEXITED(status));
	T_EQ(WEXITSTATUS(status), 1);
	snprintf(want, sizeof(want), "tenkd: setup 3: %s\n", strerror(ENOMEM));
	T_STREQ(captured(), want);

	capture();
	T_SYS(pid = fork());
	if (pid == 0)
		fatalx("bad config");
	T_SYS(waitpid(pid, &status, 0));
	T_OK(WIFEXITED(status));
	T_EQ(WEXITSTATUS(status), 1);
	T_STREQ(captured(), "tenkd: bad config\n");
}

/*
 * log_hold: info lines (banners too) wait, in order, for log_hold(0);
 * warnings go out at once; an error goes out first, then what was held.
 */
TEST(log_hold)
{
	pid_t	pid;
	int	status;

	log_init("tenkd", LOG_LVL_INFO, 0);
	capture();
	log_hold(1);
	log_info("budget %d", 1);
	log_banner("listening on %s", "a");
	log_warnx("slow");
	T_STREQ(captured(), "tenkd: slow\n");
	log_hold(0);
	log_info("after");
	T_STREQ(captured(), "tenkd: slow\ntenkd: budget 1\n"
	    "tenkd: listening on a\ntenkd: after\n");

	capture();
	fflush(NULL);
	T_SYS(pid = fork());
	if (pid == 0) {
		log_hold(1);
		log_info("budget %d", 2);
		fatalx("listen on %s: refused", "b");
	}
	T_SYS(waitpid(pid, &status, 0));
	T_OK(WIFEXITED(status));
	T_EQ(WEXITSTATUS(status), 1);
	T_STREQ(captured(), "tenkd: listen on b: refused\ntenkd: budget 2\n");
}
