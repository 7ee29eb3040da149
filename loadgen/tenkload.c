/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tenkload: the command line, the open-file limit, and the split of a
 * run over several processes when the connections do not fit in one.
 * Each child runs the engine on its share and writes its JSON report to
 * an unlinked temporary file; the parent prints the summed progress
 * from shared memory once a second and merges the reports exactly.
 * "tenkload merge" merges reports written earlier.  The engine and the
 * report live in the other files of this directory; tenkbench links
 * the report's.
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdnoreturn.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "tenk/cli.h"
#include "tenk/clock.h"
#include "tenk/log.h"
#include "tenk/loop.h"
#include "tenk/parse.h"
#include "tenk/sock.h"
#include "tenk/timer.h"
#include "tenk/tls.h"
#include "tenk/xmalloc.h"
#include "framing.h"
#include "loadgen.h"

#define MAXCONNS	10000000ULL
#define MAXSOURCES	65536
#define MAXSIZE		(64ULL * 1024 * 1024)
#define MAXTHREADS	1024
#define MAXWINDOW	65536
#define MAXRATE		100000000ULL	/* messages per second */
#define MAXCONNECTRATE	10000000ULL	/* connects per second */
#define MAXDURATION	(30ULL * 24 * 3600 * TK_SEC)
#define MAXMSGFILE	(16 * 1024 * 1024)	/* --message-file, bytes */
#define MAXMSGS		1000000		/* --message-file, requests */
#define MAXLIFE		(1ULL << 40)	/* --conn-lifetime, requests */
#define MAXREQUESTS	(1ULL << 48)	/* -n */
#define MAXCONNRATE	1000000.0	/* --conn-rate, per connection */
#define MAXRINGS	(1ULL << 30)	/* templates: bytes of all rings */
#define MAXHEADERS	128		/* -H */
#define MAXSTARTAT	(24ULL * 3600 * TK_SEC)	/* --start-at, ahead */

/* The options of requests, URLs, limits and outputs. */
enum {
	OPT_BODY = 512,
	OPT_BODY_FILE,
	OPT_CONN_RATE,
	OPT_CSV,
	OPT_METHOD,
	OPT_PLOT,
	OPT_SEED,
	OPT_START_AT
};

enum {
	OPT_CONNECT_RATE = 256,
	OPT_CONNECT_TIMEOUT,
	OPT_REPLY_TIMEOUT,
	OPT_WARMUP,
	OPT_BACKEND,
	OPT_WINDOW,
	OPT_IDLE,
	OPT_NO_VERIFY,
	OPT_SOURCE,
	OPT_PROCS,
	OPT_JSON,
	OPT_PERCENTILES,
	OPT_MAX_ERRORS,
	OPT_MAX_UNSERVED,
	OPT_HGRM,
	OPT_MESSAGE_FILE,
	OPT_FIRST_MESSAGE,
	OPT_REPLY,
	OPT_REPLY_CHECK,
	OPT_CONN_LIFETIME,
	OPT_TLS				/* --tls and every --tls-* */
};

static const struct option longopts[] = {
	{ "backend",		required_argument, NULL, OPT_BACKEND },
	{ "body",		required_argument, NULL, OPT_BODY },
	{ "body-file",		required_argument, NULL, OPT_BODY_FILE },
	{ "connect-rate",	required_argument, NULL, OPT_CONNECT_RATE },
	{ "conn-lifetime",	required_argument, NULL, OPT_CONN_LIFETIME },
	{ "conn-rate",		required_argument, NULL, OPT_CONN_RATE },
	{ "connect-timeout",	required_argument, NULL, OPT_CONNECT_TIMEOUT },
	{ "connections",	required_argument, NULL, 'c' },
	{ "csv",		required_argument, NULL, OPT_CSV },
	{ "duration",		required_argument, NULL, 'd' },
	{ "first-message",	required_argument, NULL, OPT_FIRST_MESSAGE },
	{ "header",		required_argument, NULL, 'H' },
	{ "help",		no_argument,	   NULL, 'h' },
	{ "hgrm",		required_argument, NULL, OPT_HGRM },
	{ "idle",		required_argument, NULL, OPT_IDLE },
	{ "json",		required_argument, NULL, OPT_JSON },
	{ "max-errors",		required_argument, NULL, OPT_MAX_ERRORS },
	{ "max-unserved",	required_argument, NULL, OPT_MAX_UNSERVED },
	{ "message",		required_argument, NULL, 'm' },
	{ "message-file",	required_argument, NULL, OPT_MESSAGE_FILE },
	{ "method",		required_argument, NULL, OPT_METHOD },
	{ "mode",		required_argument, NULL, 'M' },
	{ "no-verify",		no_argument,	   NULL, OPT_NO_VERIFY },
	{ "percentiles",	required_argument, NULL, OPT_PERCENTILES },
	{ "plot",		required_argument, NULL, OPT_PLOT },
	{ "procs",		required_argument, NULL, OPT_PROCS },
	{ "quiet",		no_argument,	   NULL, 'q' },
	{ "rate",		required_argument, NULL, 'R' },
	{ "reply",		required_argument, NULL, OPT_REPLY },
	{ "reply-check",	required_argument, NULL, OPT_REPLY_CHECK },
	{ "reply-timeout",	required_argument, NULL, OPT_REPLY_TIMEOUT },
	{ "requests",		required_argument, NULL, 'n' },
	{ "seed",		required_argument, NULL, OPT_SEED },
	{ "size",		required_argument, NULL, 's' },
	{ "source",		required_argument, NULL, OPT_SOURCE },
	{ "start-at",		required_argument, NULL, OPT_START_AT },
	{ "threads",		required_argument, NULL, 't' },
	{ "tls",		no_argument,	   NULL, OPT_TLS },
	{ "tls-alpn",		required_argument, NULL, OPT_TLS },
	{ "tls-ca",		required_argument, NULL, OPT_TLS },
	{ "tls-ciphers",	required_argument, NULL, OPT_TLS },
	{ "tls-resume",		no_argument,	   NULL, OPT_TLS },
	{ "tls-sni",		required_argument, NULL, OPT_TLS },
	{ "tls-verify",		no_argument,	   NULL, OPT_TLS },
	{ "tls-version",	required_argument, NULL, OPT_TLS },
	{ "version",		no_argument,	   NULL, 'V' },
	{ "warmup",		required_argument, NULL, OPT_WARMUP },
	{ "window",		required_argument, NULL, OPT_WINDOW },
	{ NULL,			0,		   NULL, 0 }
};

static volatile sig_atomic_t	got_signal;
static struct framing		framing;	/* --reply, --reply-check */
static struct tmpl_set		reqs;		/* -m, --message-file, URL */

/* --help: the synopsis, then every option with its default; exit 0. */
static noreturn void
usage(void)
{
	printf("usage: tenkload [-hqV] [-c connections] [-d duration] "
	    "[-M mode]\n"
	    "\t\t[-m message | --message-file file] [-n requests] "
	    "[-R rate]\n"
	    "\t\t[-s size | min:max] [-t threads] [--backend name]\n"
	    "\t\t[--conn-lifetime requests] [--conn-rate rate]\n"
	    "\t\t[--connect-rate rate] [--connect-timeout duration]\n"
	    "\t\t[--csv file | -] [--first-message message]\n"
	    "\t\t[--hgrm file | -] [--idle connections] [--json file | -]\n"
	    "\t\t[--max-errors count] [--max-unserved count] [--no-verify]\n"
	    "\t\t[--percentiles list] [--plot dir] [--procs count]\n"
	    "\t\t[--reply framing] [--reply-check text]\n"
	    "\t\t[--reply-timeout duration] [--seed number] "
	    "[--source list]\n"
	    "\t\t[--start-at time] [--warmup duration] "
	    "[--window messages]\n"
	    "\t\t[--tls] [--tls-alpn list] [--tls-ca file] "
	    "[--tls-ciphers list]\n"
	    "\t\t[--tls-resume] [--tls-sni name] [--tls-verify]\n"
	    "\t\t[--tls-version 1.2 | 1.3] host:port | unix:path ...\n"
	    "       tenkload [options] [-H header] [--method method]\n"
	    "\t\t[--body text | --body-file file] "
	    "http[s]://host[:port][/path]\n"
	    "       tenkload merge [-q] [--csv file | -] [--hgrm file | -] "
	    "[--json file | -]\n"
	    "\t\t[--max-errors count] [--max-unserved count] "
	    "[--percentiles list]\n"
	    "\t\t[--plot dir] file ...\n"
	    "\n"
	    "  -c, --connections N      active connections (default 1)\n"
	    "  -d, --duration DUR       measured time, after the ramp and "
	    "the warm-up\n"
	    "                           (default 10s; with -n, none)\n"
	    "  -H, --header TEXT        a header line of a URL's request, "
	    "\"Name: value\"\n"
	    "  -h, --help               this help\n"
	    "  -M, --mode MODE          pingpong (default), rate, stream, "
	    "idle or connect\n"
	    "  -m, --message TEXT       each request, with C escapes "
	    "\\r \\n \\t \\\\ \\0 \\xHH \\{\n"
	    "                           and placeholders {seq} {rand:LO-HI} "
	    "{zipf:N:S} {conn}\n"
	    "                           {bytes:N} {line:FILE} (default: the "
	    "verified echo\n"
	    "                           pattern, --size bytes)\n"
	    "  -n, --requests N         stop after N replies in all "
	    "(default: no limit)\n"
	    "  -q, --quiet              no progress lines\n"
	    "  -R, --rate N/s           messages per second in all, for "
	    "--mode rate,\n"
	    "                           which it implies (no default)\n"
	    "  -s, --size SIZE|MIN:MAX  message size in bytes, or a range "
	    "(default 64)\n"
	    "  -t, --threads N          threads in all (default: online "
	    "CPUs)\n"
	    "  -V, --version            print the version\n"
	    "      --backend NAME       epoll, poll, select or io_uring "
	    "(default: the best one);\n"
	    "                           \"list\" prints them\n"
	    "      --body TEXT          a URL's request body, as -m "
	    "(default: none)\n"
	    "      --body-file FILE     a URL's request body, the file's "
	    "bytes (default: none)\n"
	    "      --conn-lifetime N    requests per connection, then "
	    "close and connect\n"
	    "                           again (default 0: no end)\n"
	    "      --conn-rate N/s      messages per second on each "
	    "connection, for --mode\n"
	    "                           rate, which it implies (no "
	    "default)\n"
	    "      --connect-rate N/s   connects per second "
	    "(default 2000)\n"
	    "      --connect-timeout DUR  a connect's time limit "
	    "(default 5s)\n"
	    "      --csv FILE|-         the report as CSV, \"-\" for "
	    "stdout (default: none)\n"
	    "      --first-message TEXT sent once after each connect, "
	    "its reply not counted\n"
	    "                           (default: none)\n"
	    "      --hgrm FILE|-        the latency spectrum in "
	    "HdrHistogram's .hgrm format\n"
	    "                           (default: none)\n"
	    "      --idle N             idle connections, opened first "
	    "(default 0)\n"
	    "      --json FILE|-        the report as JSON, \"-\" for "
	    "stdout (default: none)\n"
	    "      --max-errors N       errors that still exit 0 "
	    "(default 0)\n"
	    "      --max-unserved N     active connections without a "
	    "reply that still exit 0\n"
	    "                           (default 0)\n"
	    "      --message-file FILE  requests, one a line written as "
	    "for -m, used in turn;\n"
	    "                           at most 16 MiB (default: none)\n"
	    "      --method NAME        a URL's request method (default "
	    "GET, POST with a body)\n"
	    "      --no-verify          count the echoed bytes, do not "
	    "compare them\n"
	    "      --percentiles LIST   latency percentiles "
	    "(default 50,90,99,99.9,99.99)\n"
	    "      --plot DIR           latency charts (PNG by gnuplot) "
	    "and their data in DIR\n"
	    "                           (default: none)\n"
	    "      --procs N            processes (default: as many as "
	    "RLIMIT_NOFILE needs)\n"
	    "      --reply FRAMING      how a reply ends: echo, bytes:N, "
	    "line, until:TEXT,\n"
	    "                           prefix:u16be|u32be, redis, http, "
	    "memcache (default echo)\n"
	    "      --reply-check TEXT   each reply begins with TEXT "
	    "(default: none)\n"
	    "      --reply-timeout DUR  a reply's time limit "
	    "(default 10s, 0 = none)\n"
	    "      --seed N             the random source of placeholders "
	    "and sizes\n"
	    "                           (default: from the clock)\n"
	    "      --source LIST        source addresses and IPv4 ranges "
	    "A-B, comma-separated\n"
	    "                           (default: chosen by the kernel)\n"
	    "      --start-at TIME      measure from TIME: epoch seconds, "
	    "+DURATION or\n"
	    "                           YYYY-MM-DDTHH:MM:SSZ (default: "
	    "after the warm-up)\n"
	    "      --tls                over TLS (any --tls-* option "
	    "implies it)\n"
	    "      --tls-alpn LIST      ALPN protocols to offer, "
	    "comma-separated\n"
	    "                           (default: none)\n"
	    "      --tls-ca FILE        trusted CA certificates, PEM; "
	    "implies --tls-verify\n"
	    "                           (default: the system's)\n"
	    "      --tls-ciphers LIST   TLS 1.2 ciphers and TLS 1.3 "
	    "suites (TLS_*), colon-\n"
	    "                           separated (default: OpenSSL's)\n"
	    "      --tls-resume         resume sessions (tickets); the "
	    "report counts new and\n"
	    "                           resumed handshakes\n"
	    "      --tls-sni NAME       the server name to ask for and "
	    "verify (default: the\n"
	    "                           target's host)\n"
	    "      --tls-verify         verify the server's certificate "
	    "(default: not)\n"
	    "      --tls-version VER    1.2 or 1.3 only (default: "
	    "either)\n"
	    "      --warmup DUR         unmeasured time after the ramp "
	    "(default 0)\n"
	    "      --window N           requests in flight per connection "
	    "(default 1,\n"
	    "                           8 in stream mode)\n"
	    "merge takes -q, --csv, --hgrm, --json, --max-errors, "
	    "--max-unserved,\n--percentiles and --plot as above.\n");
	exit(0);
}

/* SIZE or MIN:MAX, given to opt. */
static void
parse_sizes(struct lg_conf *conf, const char *opt, const char *s)
{
	char	 buf[64], *colon;

	if (strlcpy(buf, s, sizeof(buf)) >= sizeof(buf))
		tk_cli_bad(opt, s, "too long");
	if ((colon = strchr(buf, ':')) != NULL) {
		*colon = '\0';
		conf->size_min = tk_cli_size(opt, buf, 1, MAXSIZE);
		conf->size_max = tk_cli_size(opt, colon + 1, 1, MAXSIZE);
		if (conf->size_min > conf->size_max)
			tk_cli_bad(opt, s, "minimum above maximum");
	} else
		conf->size_min = conf->size_max = tk_cli_size(opt, buf, 1,
		    MAXSIZE);
}

static void
parse_percentiles(struct lg_conf *conf, const char *opt, const char *s)
{
	char	*copy, *p, *tok, *ep;
	double	 v;

	copy = xstrdup(s);
	conf->npct = 0;
	for (p = copy; (tok = strsep(&p, ",")) != NULL; ) {
		errno = 0;
		v = strtod(tok, &ep);
		if (*tok == '\0' || *ep != '\0' || errno != 0 ||
		    !(v > 0 && v <= 100))
			tk_cli_bad(opt, s, "%s is not a percentile in "
			    "(0, 100]", *tok == '\0' ? "\"\"" : tok);
		if (conf->npct == LG_MAXPCT)
			tk_cli_bad(opt, s, "more than %d percentiles",
			    LG_MAXPCT);
		conf->pct[conf->npct++] = v;
	}
	free(copy);
}

/*
 * -m TEXT, --first-message TEXT: the bytes its C escapes stand for, in
 * memory of the caller's from now on.
 */
static unsigned char *
parse_message(const char *opt, const char *text, size_t *len)
{
	const char	*errstr;
	unsigned char	*buf;
	ssize_t		 n;

	buf = xmalloc(strlen(text) + 1);
	if ((n = escape_parse(text, buf, strlen(text), &errstr)) <= 0) {
		free(buf);		/* LeakSanitizer checks at exit */
		if (n == 0)
			tk_cli_bad(opt, NULL, "empty message");
		tk_cli_bad(opt, text, "%s", errstr);
	}
	*len = (size_t)n;
	return buf;
}

/* A template refused: one line naming where, and exit 2. */
static noreturn void
bad_template(const char *opt, const char *arg, size_t line,
    const struct tp_err *err)
{
	char	 where[64] = "";

	if (line > 0 && err->col > 0)
		snprintf(where, sizeof(where), "line %zu, column %zu: ", line,
		    err->col);
	else if (line > 0)
		snprintf(where, sizeof(where), "line %zu: ", line);
	else if (err->col > 0)
		snprintf(where, sizeof(where), "column %zu: ", err->col);
	tk_cli_bad(opt, arg, "%s%s%s%s", where, err->why,
	    err->detail != NULL ? ": " : "",
	    err->detail != NULL ? err->detail : "");
}

/*
 * --message-file PATH: one request a line, written as -m takes it (C
 * escapes and placeholders; the line's own LF or CR LF is not part of
 * it), empty lines skipped; at most MAXMSGFILE bytes and MAXMSGS
 * requests.
 */
static void
read_messages(const char *opt, const char *path)
{
	struct tp_err	 err;
	char		*buf, *line, *nl;
	size_t		 n = 0, no = 0, len;
	ssize_t		 r;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		tk_cli_bad(opt, path, "%s", strerror(errno));
	/* One byte more than allowed tells a file that is too long. */
	buf = xmalloc(MAXMSGFILE + 2);
	while (n < MAXMSGFILE + 1) {
		if ((r = read(fd, buf + n, MAXMSGFILE + 1 - n)) == -1) {
			if (errno == EINTR)
				continue;
			tk_cli_bad(opt, path, "%s", strerror(errno));
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (n > MAXMSGFILE)
		tk_cli_bad(opt, path, "larger than 16 MiB");
	buf[n] = '\0';
	for (line = buf; line < buf + n; line = nl + 1) {
		no++;
		if ((nl = memchr(line, '\n', (size_t)(buf + n - line))) ==
		    NULL)
			nl = buf + n;
		*nl = '\0';
		len = (size_t)(nl - line);
		if (len > 0 && line[len - 1] == '\r')
			line[--len] = '\0';
		if (strlen(line) != len)
			tk_cli_bad(opt, path, "line %zu: a NUL byte (write "
			    "\\0 or \\x00)", no);
		if (len == 0)
			continue;
		if (reqs.n == MAXMSGS)
			tk_cli_bad(opt, path, "more than %d requests",
			    MAXMSGS);
		memset(&err, 0, sizeof(err));
		if (tmpl_add(&reqs, line, &err) == -1)
			bad_template(opt, path, no, &err);
	}
	free(buf);
	if (reqs.n == 0)
		tk_cli_bad(opt, path, "no request in the file");
}

/* --conn-rate: messages per second on each connection, "2.5" or "2.5/s". */
static double
parse_conn_rate(const char *opt, const char *arg)
{
	char	*ep;
	double	 v;

	errno = 0;
	v = strtod(arg, &ep);
	if (ep != arg && strcmp(ep, "/s") == 0)
		ep += 2;
	if (*arg == '\0' || *ep != '\0' || errno != 0 || !(v >= 0.001) ||
	    v > MAXCONNRATE)
		tk_cli_bad(opt, arg, "not a rate from 0.001 to 1000000 a "
		    "second");
	return v;
}

/*
 * --start-at TIME: epoch seconds ("1767225600", a fraction allowed),
 * "+DURATION" from now, or "YYYY-MM-DDTHH:MM:SSZ" (UTC); within 24 hours
 * ahead.  Returns epoch ns.
 */
static uint64_t
parse_start_at(const char *opt, const char *arg)
{
	struct tm	 tm;
	const char	*errstr;
	char		*ep;
	uint64_t	 now = tk_clock_real(), at, d;
	double		 v;
	time_t		 t;

	if (*arg == '+') {
		if (tk_parse_duration(arg + 1, 0, MAXSTARTAT, &d, &errstr) ==
		    -1)
			tk_cli_bad(opt, arg, "%s (+DURATION, at most 24h)",
			    errstr);
		return now + d;
	}
	memset(&tm, 0, sizeof(tm));
	if ((ep = strptime(arg, "%Y-%m-%dT%H:%M:%S", &tm)) != NULL &&
	    (strcmp(ep, "Z") == 0 || *ep == '\0')) {
		if ((t = timegm(&tm)) == (time_t)-1 || t < 0)
			tk_cli_bad(opt, arg, "not a time");
		at = (uint64_t)t * TK_SEC;
	} else {
		errno = 0;
		v = strtod(arg, &ep);
		if (*arg < '0' || *arg > '9' || *ep != '\0' || errno != 0 ||
		    v > 1e11)
			tk_cli_bad(opt, arg, "not a time (epoch seconds, "
			    "+DURATION, or YYYY-MM-DDTHH:MM:SSZ)");
		at = (uint64_t)(v * 1e9);
	}
	if (at + TK_SEC < now)
		tk_cli_bad(opt, arg, "%.3f s in the past",
		    (double)(now - at) / 1e9);
	if (at > now + MAXSTARTAT)
		tk_cli_bad(opt, arg, "more than 24 hours ahead");
	return at;
}

/*
 * --reply and --reply-check (check may be NULL) into the framing, and
 * whether the run needs it: the pattern's own echo path serves only a
 * run with no message, no first message and no check.
 */
static void
set_framing(struct lg_conf *conf, const char *check)
{
	const char	*errstr;

	if (conf->reply == NULL &&
	    framing_parse(&framing, "echo", &errstr) == -1)
		fatalx("echo framing: %s", errstr);
	if (check != NULL && framing_check(&framing, check, &errstr) == -1)
		tk_cli_bad("--reply-check", check, "%s", errstr);
	if (conf->req != NULL || conf->first != NULL || check != NULL ||
	    framing.ops != &framing_echo)
		conf->fr = &framing;
}

/*
 * The command line for the report's header, each argument quoted as a
 * POSIX shell would need it ('...' with '\'' for a quote), so that the
 * line pastes back into a shell as it ran.
 */
static void
save_args(struct lg_conf *conf, int argc, char *argv[])
{
	static const char	 safe[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-";
	char			*o = conf->args;
	char			*end = o + sizeof(conf->args) - 4;
	const char		*p;
	int			 i;

	for (i = 0; i < argc && o < end; i++) {
		if (i > 0)
			*o++ = ' ';
		p = argv[i];
		if (*p != '\0' && strspn(p, safe) == strlen(p)) {
			while (*p != '\0' && o < end)
				*o++ = *p++;
			continue;
		}
		*o++ = '\'';
		for (; *p != '\0' && o < end; p++) {
			if (*p == '\'') {
				if (o + 4 > end)
					break;
				memcpy(o, "'\\''", 4);
				o += 4;
			} else
				*o++ = *p;
		}
		*o++ = '\'';
	}
	if (o >= end && i < argc)
		memcpy(end - 3, "...", 3);
	*o = '\0';
}

static void
on_signal(int signo)
{
	got_signal = signo;
}

/* Child k of p: its share of the connections and of the rates. */
static void
share(const struct lg_conf *conf, struct lg_conf *cc, int k, int p)
{
	uint64_t	 i, base = 0, total = conf->conns + conf->idle, mine;

	*cc = *conf;
	cc->conns = conf->conns / (uint64_t)p +
	    ((uint64_t)k < conf->conns % (uint64_t)p ? 1 : 0);
	cc->idle = conf->idle / (uint64_t)p +
	    ((uint64_t)k < conf->idle % (uint64_t)p ? 1 : 0);
	for (i = 0; i < (uint64_t)k; i++)
		base += conf->conns / (uint64_t)p +
		    (i < conf->conns % (uint64_t)p ? 1 : 0) +
		    conf->idle / (uint64_t)p +
		    (i < conf->idle % (uint64_t)p ? 1 : 0);
	cc->id_base = conf->id_base + base;
	mine = cc->conns + cc->idle;
	cc->connect_rate = conf->connect_rate * mine / (total ? total : 1);
	if (cc->connect_rate == 0)
		cc->connect_rate = 1;
	if (conf->mode == MODE_RATE && conf->conns > 0) {
		cc->rate = conf->rate * cc->conns / conf->conns;
		if (cc->rate == 0)
			cc->rate = 1;
	}
	cc->threads = conf->threads / p > 0 ? conf->threads / p : 1;
	if ((uint64_t)cc->threads > mine)
		cc->threads = (int)mine;
	cc->procs = 1;
	cc->quiet = 1;
	cc->json = NULL;
	cc->hgrm = NULL;
	cc->csv = NULL;
	cc->plot = NULL;
}

static noreturn void
child_main(const struct lg_conf *cc, struct lg_prog *slot, int fd)
{
	struct report	 r;
	FILE		*f;

	if (report_init(&r) == -1)
		_exit(3);
	report_header(&r, cc);
	engine_run(cc, &r, slot);
	if ((f = fdopen(fd, "w")) == NULL || report_json_write(f, &r) == -1)
		_exit(3);
	fclose(f);
	report_free(&r);
	_exit(0);
}

/*
 * Run conf over p processes and merge their reports into r (merged
 * from nothing).  A child that dies without a report leaves its share
 * counted as requested and failed ("other"), never silently missing.
 * SIGINT or SIGTERM here ends the children with SIGTERM, and r says
 * which signal the parent got, and when.
 */
static void
run_procs(const struct lg_conf *conf, int p, struct report *r)
{
	struct sigaction	 sa;
	struct lg_prog		*slots, sum, prev;
	struct lg_conf		 cc;
	struct report		 cr;
	struct timespec		 nap = { 0, 20 * 1000 * 1000 };
	pid_t			*pids;
	char			 path[] = "/tmp/tenkload.XXXXXX";
	double			 last = 0, now;
	uint64_t		 t0, t_signal = 0, printed = 0, lo, hi, sec;
	int			*fds, k, left = p, status, sent = 0;
	pid_t			 pid;

	slots = mmap(NULL, (size_t)p * sizeof(*slots), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED)
		fatal("mmap");
	memset(slots, 0, (size_t)p * sizeof(*slots));
	pids = xcalloc((size_t)p, sizeof(*pids));
	fds = xcalloc((size_t)p, sizeof(*fds));

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	for (k = 0; k < p; k++) {
		strlcpy(path, "/tmp/tenkload.XXXXXX", sizeof(path));
		if ((fds[k] = mkstemp(path)) == -1)
			fatal("mkstemp %s", path);
		unlink(path);
		share(conf, &cc, k, p);
		fflush(NULL);
		switch (pids[k] = fork()) {
		case -1:
			fatal("fork");
		case 0:
			child_main(&cc, &slots[k], fds[k]);
		default:
			break;
		}
	}

	t0 = tk_clock_mono();
	memset(&prev, 0, sizeof(prev));
	while (left > 0) {
		nanosleep(&nap, NULL);
		if (got_signal != 0 && !sent) {
			t_signal = report_epoch_us();
			for (k = 0; k < p; k++)
				if (pids[k] > 0)
					kill(pids[k], SIGTERM);
			sent = 1;
		}
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (k = 0; k < p; k++)
				if (pids[k] == pid) {
					pids[k] = -(status == 0 ? 1 : 2);
					left--;
				}
		}
		if (conf->quiet || left == 0)
			continue;
		/*
		 * A line once every live child has published a second
		 * newer than the last line's (they tick together on the
		 * wall clock's seconds), or a second later for a laggard.
		 */
		lo = UINT64_MAX;
		hi = 0;
		for (k = 0; k < p; k++) {
			if (pids[k] <= 0 || ctr_get(&slots[k].done) != 0)
				continue;
			sec = ctr_get(&slots[k].sec);
			lo = sec < lo ? sec : lo;
			hi = sec > hi ? sec : hi;
		}
		if (hi <= printed || (lo <= printed && hi < printed + 2))
			continue;
		printed = hi;
		now = (double)(tk_clock_mono() - t0) / 1e9;
		memset(&sum, 0, sizeof(sum));
		for (k = 0; k < p; k++)
			report_prog_sum(&sum, &slots[k]);
		report_progress(stderr, (uint64_t)(now + 0.5), &sum, &prev,
		    now - last);
		memcpy(&prev, &sum, sizeof(prev));
		last = now;
	}

	for (k = 0; k < p; k++) {
		share(conf, &cc, k, p);
		if (report_init(&cr) == -1)
			fatal("report");
		if (pids[k] != -1 || lseek(fds[k], 0, SEEK_SET) == -1 ||
		    report_json_fd(fds[k], &cr) == -1) {
			fprintf(stderr, "tenkload: process %d of %d failed; "
			    "its %llu connection%s count as failed\n", k + 1,
			    p, (unsigned long long)(cc.conns + cc.idle),
			    cc.conns + cc.idle == 1 ? "" : "s");
			report_header(&cr, &cc);
			cr.failed = cc.conns + cc.idle;
			cr.errs[ERR_OTHER] = cr.failed;
		}
		report_merge(r, &cr);
		report_free(&cr);
		close(fds[k]);
	}
	if (got_signal != 0) {
		r->interrupted = got_signal;
		r->interrupted_at_us = t_signal;
	}
	free(fds);
	free(pids);
	munmap(slots, (size_t)p * sizeof(*slots));
}

/*
 * An output file must be possible before the run, not a surprise after
 * it: a file is created beside path, as save() will, and removed again
 * at once, so that nothing is left behind and an existing path is not
 * touched.  "-" (standard output) may serve one option only.  A path
 * that fails is a usage error.
 */
static void
check_output(const char *opt, const char *path, const char *other)
{
	struct stat	 sb;
	char		 tmp[PATH_MAX];
	int		 fd;

	if (path == NULL)
		return;
	if (*path == '\0')
		tk_cli_bad(opt, NULL, "empty file name");
	if (strcmp(path, "-") == 0) {
		if (other != NULL)
			tk_cli_bad(opt, path, "standard output is taken by "
			    "%s", other);
		return;
	}
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		tk_cli_bad(opt, path, "is a directory");
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >=
	    sizeof(tmp))
		tk_cli_bad(opt, path, "%s", strerror(ENAMETOOLONG));
	if ((fd = mkstemp(tmp)) == -1)
		tk_cli_bad(opt, path, "%s", strerror(errno));
	(void)unlink(tmp);
	close(fd);
}

static void
check_outputs(const struct lg_conf *conf)
{
	struct stat	 sb;
	const char	*taken = NULL;
	char		 dir[PATH_MAX], *slash;

	check_output("--json", conf->json, NULL);
	if (conf->json != NULL && strcmp(conf->json, "-") == 0)
		taken = "--json";
	check_output("--hgrm", conf->hgrm, taken);
	if (conf->hgrm != NULL && strcmp(conf->hgrm, "-") == 0)
		taken = "--hgrm";
	check_output("--csv", conf->csv, taken);
	if (conf->plot == NULL)
		return;
	/* A directory to write in, or one to make it in. */
	if (*conf->plot == '\0')
		tk_cli_bad("--plot", NULL, "empty directory name");
	if (strlcpy(dir, conf->plot, sizeof(dir)) >= sizeof(dir))
		tk_cli_bad("--plot", conf->plot, "%s", strerror(ENAMETOOLONG));
	if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode))
		tk_cli_bad("--plot", conf->plot, "not a directory");
	if (stat(dir, &sb) == -1) {
		if ((slash = strrchr(dir, '/')) == NULL)
			strlcpy(dir, ".", sizeof(dir));
		else if (slash == dir)
			dir[1] = '\0';
		else
			*slash = '\0';
	}
	if (access(dir, W_OK | X_OK) == -1)
		tk_cli_bad("--plot", conf->plot, "%s: %s", dir,
		    strerror(errno));
}

typedef int	report_write_fn(FILE *, const struct report *);

/*
 * Write the report to path ("-": standard output) with fn.  A file is
 * written beside its final name and renamed into place, so that a
 * reader, or a second signal that kills us while writing, finds the
 * whole report or none, never a truncated one.
 */
static int
save(const char *path, report_write_fn *fn, const struct report *r)
{
	FILE	*f;
	char	 tmp[PATH_MAX];
	int	 fd;

	if (strcmp(path, "-") == 0) {
		if (fn(stdout, r) == -1 || fflush(stdout) == EOF)
			goto fail;
		return 0;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >=
	    sizeof(tmp)) {
		errno = ENAMETOOLONG;
		goto fail;
	}
	if ((fd = mkstemp(tmp)) == -1)
		goto fail;
	(void)fchmod(fd, 0644);
	if ((f = fdopen(fd, "w")) == NULL) {
		close(fd);
		goto fail_unlink;
	}
	if (fn(f, r) == -1) {
		fclose(f);
		goto fail_unlink;
	}
	if (fclose(f) == EOF || rename(tmp, path) == -1)
		goto fail_unlink;
	return 0;

 fail_unlink:
	(void)unlink(tmp);
 fail:
	fprintf(stderr, "tenkload: %s: %s\n", path, strerror(errno));
	return -1;
}

/*
 * Print the report and its result, save the files asked for, and
 * return the exit status: 0, 1 for a failed run or a file not saved,
 * 128 + the signal for an interrupted one.
 */
static int
finish(const struct lg_conf *conf, struct report *r)
{
	FILE	*out = stdout;
	char	 res[1024];
	int	 st;

	if ((conf->json != NULL && strcmp(conf->json, "-") == 0) ||
	    (conf->hgrm != NULL && strcmp(conf->hgrm, "-") == 0) ||
	    (conf->csv != NULL && strcmp(conf->csv, "-") == 0))
		out = stderr;
	report_print(out, r);
	st = report_result(r, conf->max_errors, conf->max_unserved, res,
	    sizeof(res));
	fprintf(out, "result: %s\n", res);
	fflush(out);
	if (conf->json != NULL && save(conf->json, report_json_write, r) ==
	    -1 && st == 0)
		st = 1;
	if (conf->hgrm != NULL && save(conf->hgrm, report_hgrm_write, r) ==
	    -1 && st == 0)
		st = 1;
	if (conf->csv != NULL && save(conf->csv, report_csv_write, r) ==
	    -1 && st == 0)
		st = 1;
	if (conf->plot != NULL && report_plot(conf->plot, r, conf->quiet) ==
	    -1 && st == 0)
		st = 1;
	return st;
}

/*
 * The options of the report, alike for a run and for merge: 1 when ch
 * is one of them, taken into conf.
 */
static int
report_opt(struct lg_conf *conf, int ch, const char *opt, const char *arg)
{
	switch (ch) {
	case OPT_CSV:
		conf->csv = arg;
		break;
	case OPT_HGRM:
		conf->hgrm = arg;
		break;
	case OPT_JSON:
		if (*arg == '\0')
			tk_cli_bad(opt, NULL, "empty file name");
		conf->json = arg;
		break;
	case OPT_PLOT:
		conf->plot = arg;
		conf->series = 1;	/* a run records what the charts draw */
		break;
	case OPT_MAX_ERRORS:
		conf->max_errors = tk_cli_num(opt, arg, 0, UINT32_MAX);
		break;
	case OPT_MAX_UNSERVED:
		conf->max_unserved = tk_cli_num(opt, arg, 0, UINT32_MAX);
		break;
	case OPT_PERCENTILES:
		parse_percentiles(conf, opt, arg);
		break;
	default:
		return 0;
	}
	return 1;
}

/*
 * tenkload merge: reports of one question (framing and request) fold
 * into one; runs one after the other are rated over the union of their
 * windows, and said to be so.
 */
static int
merge_main(int argc, char *argv[])
{
	static const struct option mopts[] = {
		{ "csv",	  required_argument, NULL, OPT_CSV },
		{ "help",	  no_argument,	     NULL, 'h' },
		{ "hgrm",	  required_argument, NULL, OPT_HGRM },
		{ "json",	  required_argument, NULL, OPT_JSON },
		{ "max-errors",	  required_argument, NULL, OPT_MAX_ERRORS },
		{ "max-unserved", required_argument, NULL, OPT_MAX_UNSERVED },
		{ "percentiles",  required_argument, NULL, OPT_PERCENTILES },
		{ "plot",	  required_argument, NULL, OPT_PLOT },
		{ "quiet",	  no_argument,	     NULL, 'q' },
		{ NULL,		  0,		     NULL, 0 }
	};
	struct lg_conf		 conf;
	struct lg_window	*w;
	struct report		 r, one;
	char			 why[512];
	int			 ch, i, gaps;

	memset(&conf, 0, sizeof(conf));
	optind = 1;
	while ((ch = tk_cli_getopt(argc, argv, ":hq", mopts)) != -1) {
		if (report_opt(&conf, ch, tk_cli_opt(), optarg))
			continue;
		switch (ch) {
		case 'h':
			usage();
		case 'q':
			conf.quiet = 1;
			break;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0)
		tk_cli_bad("merge", NULL, "no report files given");
	check_outputs(&conf);
	if (report_init(&r) == -1)
		fatal("report");
	for (i = 0; i < conf.npct; i++)
		r.pct[i] = conf.pct[i];
	if (conf.npct > 0)
		r.npct = conf.npct;
	w = xcalloc((size_t)argc, sizeof(*w));
	for (i = 0; i < argc; i++) {
		if (report_init(&one) == -1)
			fatal("report");
		if (report_json_load(argv[i], &one) == -1)
			exit(2);
		if (report_mergeable(&r, &one, why, sizeof(why)) == -1)
			tk_cli_bad(NULL, argv[i], "%s in %s", why, argv[0]);
		report_window(&one, &w[i]);
		report_merge(&r, &one);
		report_free(&one);
	}
	if ((gaps = report_windows(&r, w, (size_t)argc)) > 0)
		fprintf(stderr, "tenkload: merge: the measured windows do not "
		    "overlap (%d gap%s): rates are over their union, %.3f s, "
		    "not summed\n", gaps, gaps == 1 ? "" : "s",
		    (double)report_measured(&r) / 1e6);
	free(w);
	i = finish(&conf, &r);
	report_free(&r);
	return i;
}

/* What the command line says beyond the configuration itself. */
struct cmdline {
	const char	*mode;		/* -M as typed, or NULL */
	const char	*check;		/* --reply-check */
	struct lg_http	 http;		/* a URL's -H, --method, --body */
	struct lg_url	 url;
	char		 what[600];	/* the report's message for a URL */
	unsigned int	 rate_set:1;
	unsigned int	 window_set:1;
	unsigned int	 size_set:1;
	unsigned int	 dur_set:1;
	unsigned int	 seed_set:1;
};

/*
 * The operands: targets of one kind, a URL alone; a URL's request and
 * framing.  https:// speaks TLS, as --tls (tlsopt.c).
 */
static void
set_targets(struct lg_conf *conf, struct cmdline *cl, int argc,
    char *argv[])
{
	enum lg_scheme	 sch, first = SCHEME_TCP;
	const char	*errstr;
	int		 i;

	if (argc == 0)
		tk_cli_bad("host:port", NULL, "no target given");
	conf->targets = xcalloc((size_t)argc, sizeof(*conf->targets));
	for (i = 0; i < argc; i++) {
		sch = target_parse(argv[i], &conf->targets[i], &cl->url);
		if (i == 0)
			first = sch;
		else if ((sch >= SCHEME_HTTP) != (first >= SCHEME_HTTP))
			tk_cli_bad(argv[i], NULL, "a URL is the only target "
			    "of a run");
		else if (sch >= SCHEME_HTTP)
			tk_cli_bad(argv[i], NULL, "one URL a run");
	}
	conf->ntargets = (size_t)argc;
	if (first == SCHEME_UNIX && conf->nsources > 0)
		tk_cli_bad("--source", NULL, "not with a unix: target");
	if (first < SCHEME_HTTP) {
		if (cl->http.nhdrs > 0 || cl->http.method != NULL ||
		    cl->http.body != NULL || cl->http.body_file != NULL)
			tk_cli_bad(cl->http.nhdrs > 0 ? "-H" :
			    cl->http.method != NULL ? "--method" :
			    cl->http.body != NULL ? "--body" : "--body-file",
			    NULL, "only with an http:// URL");
		return;
	}
	if (reqs.n > 0)
		tk_cli_bad("--message", NULL, "not with a URL, which makes "
		    "the request");
	if (conf->reply != NULL)
		tk_cli_bad("--reply", conf->reply, "not with a URL, whose "
		    "replies are HTTP");
	target_request(&reqs, &cl->url, &cl->http);
	if (framing_parse(&framing, "http", &errstr) == -1)
		fatalx("http framing: %s", errstr);
	framing.maxstatus = 399;
	conf->reply = "http";
	conf->url = &cl->url;
	/* What merge compares: the method and the URL. */
	snprintf(cl->what, sizeof(cl->what), "%s %s", cl->http.method !=
	    NULL ? cl->http.method : cl->http.body != NULL ||
	    cl->http.body_file != NULL ? "POST" : "GET", cl->url.text);
	conf->message = cl->what;
}

/* The options that only make sense together, or not at all. */
static void
check_conf(struct lg_conf *conf, struct cmdline *cl)
{
	if (cl->rate_set && conf->conn_rate > 0)
		tk_cli_bad("--conn-rate", NULL, "not with -R/--rate");
	if ((cl->rate_set || conf->conn_rate > 0) && cl->mode == NULL)
		conf->mode = MODE_RATE;
	if (cl->rate_set && conf->mode != MODE_RATE)
		tk_cli_bad("--rate", NULL, "only with --mode rate");
	if (conf->conn_rate > 0 && conf->mode != MODE_RATE)
		tk_cli_bad("--conn-rate", NULL, "only with --mode rate");
	if (conf->mode == MODE_RATE && !cl->rate_set && conf->conn_rate == 0)
		tk_cli_bad("--mode", "rate", "needs -R/--rate or --conn-rate");
	if (conf->conn_rate > 0) {
		conf->rate = (uint64_t)(conf->conn_rate *
		    (double)conf->conns + 0.5);
		if (conf->rate == 0)
			conf->rate = 1;
	}
	if (cl->window_set && (conf->mode == MODE_IDLE ||
	    conf->mode == MODE_CONNECT))
		tk_cli_bad("--window", NULL, "not with --mode %s",
		    mode_name(conf->mode));
	if (!cl->window_set)
		conf->window = conf->mode == MODE_STREAM ? 8 : 1;
	if (conf->conn_life != 0 && (conf->mode == MODE_IDLE ||
	    conf->mode == MODE_CONNECT))
		tk_cli_bad("--conn-lifetime", NULL, "not with --mode %s",
		    mode_name(conf->mode));
	if (cl->size_set && reqs.n > 0)
		tk_cli_bad("--size", NULL, "not with a message, whose length "
		    "is the size");
	if (conf->requests > 0 && (conf->mode == MODE_IDLE ||
	    (conf->mode == MODE_CONNECT && reqs.n == 0)))
		tk_cli_bad("--requests", NULL, "not with --mode %s%s",
		    mode_name(conf->mode), conf->mode == MODE_CONNECT ?
		    " without a message" : "");
	if (conf->requests > 0 && conf->warmup > 0)
		tk_cli_bad("--warmup", NULL, "not with -n, whose requests all "
		    "count");
	/* -n ends a run; -d, when given, is its limit. */
	if (conf->requests > 0 && !cl->dur_set)
		conf->duration = MAXDURATION;
	if (conf->mode == MODE_RATE && conf->conns == 0)
		tk_cli_bad("--connections", "0", "rate mode needs at least "
		    "one");
	if (conf->conns + conf->idle == 0)
		tk_cli_bad("--connections", NULL, "no connections to open");
	if (conf->conns + conf->idle > MAXCONNS)
		tk_cli_bad("--idle", NULL, "more than %llu connections in all",
		    (unsigned long long)MAXCONNS);
}

/* The requests, the framing, and what their memory needs. */
static void
set_requests(struct lg_conf *conf, struct cmdline *cl)
{
	uint64_t	rings;

	if (reqs.n > 0) {
		conf->req = &reqs;
		conf->size_min = reqs.minlen;
		conf->size_max = reqs.maxlen;
		rings = (uint64_t)engine_ring_size(conf) *
		    (conf->conns + conf->idle);
		if (rings > MAXRINGS)
			tk_cli_bad(conf->message, NULL, "requests with "
			    "placeholders need %llu MiB of rings for %llu "
			    "connections, more than 1024 MiB",
			    (unsigned long long)(rings >> 20),
			    (unsigned long long)(conf->conns + conf->idle));
	}
	set_framing(conf, cl->check);
	if (!cl->seed_set)
		conf->seed = tk_clock_real() ^ ((uint64_t)getpid() << 32);
	if (conf->requests > 0) {
		conf->tickets = mmap(NULL, sizeof(*conf->tickets),
		    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (conf->tickets == MAP_FAILED)
			fatal("mmap");
		atomic_store(conf->tickets, 0);
	}
}

int
main(int argc, char *argv[], char *envp[])
{
	struct lg_conf	 conf;
	struct cmdline	 cl;
	struct report	 r;
	struct lg_prog	 prog;
	struct tlsopt	 tlsopt;
	struct tp_err	 err;
	const char	*errstr, *opt;
	unsigned char	*first = NULL;
	char		*atpath = NULL;
	uint64_t	 nofile, need, cap;
	size_t		 len;
	long		 ncpu;
	int		 ch, i, procs;

	setproctitle_init(argc, argv, envp);
	log_init("tenkload", LOG_LVL_WARN, 0);
	/*
	 * Timers as punctual as the kernel allows: the default slack of
	 * 50 us would add to every late send in rate mode.  Threads and
	 * children inherit it.
	 */
	(void)prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
	if (argc > 1 && strcmp(argv[1], "merge") == 0)
		return merge_main(argc - 1, argv + 1);

	memset(&conf, 0, sizeof(conf));
	memset(&cl, 0, sizeof(cl));
	memset(&tlsopt, 0, sizeof(tlsopt));
	conf.conns = 1;
	conf.connect_rate = 2000;
	conf.connect_timeout = 5 * TK_SEC;
	conf.reply_timeout = 10 * TK_SEC;
	conf.duration = 10 * TK_SEC;
	conf.size_min = conf.size_max = 64;
	conf.verify = 1;
	conf.signals = 1;
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	conf.threads = ncpu > 0 ? (int)ncpu : 1;
	save_args(&conf, argc, argv);

	while ((ch = tk_cli_getopt(argc, argv, ":c:d:H:hM:m:n:qR:s:t:V",
	    longopts)) != -1) {
		opt = tk_cli_opt();
		if (report_opt(&conf, ch, opt, optarg))
			continue;
		switch (ch) {
		case 'c':
			conf.conns = tk_cli_num(opt, optarg, 0, MAXCONNS);
			break;
		case 'd':
			conf.duration = tk_cli_duration(opt, optarg, TK_MSEC,
			    MAXDURATION, NULL);
			cl.dur_set = 1;
			break;
		case 'h':
			usage();
		case 'M':
			cl.mode = optarg;
			if ((i = mode_parse(optarg)) == -1)
				tk_cli_bad(opt, optarg, "not a mode (pingpong, "
				    "rate, stream, idle, connect)");
			conf.mode = (enum lg_mode)i;
			break;
		case 'm':
			if (reqs.n > 0)
				tk_cli_bad(opt, NULL, "one message only "
				    "(-m/--message or --message-file)");
			memset(&err, 0, sizeof(err));
			if (tmpl_add(&reqs, optarg, &err) == -1)
				bad_template(opt, err.col > 0 ? optarg : NULL,
				    0, &err);
			conf.message = optarg;
			break;
		case OPT_MESSAGE_FILE:
			if (reqs.n > 0)
				tk_cli_bad(opt, NULL, "one message only "
				    "(-m/--message or --message-file)");
			read_messages(opt, optarg);
			len = strlen(optarg) + 2;
			atpath = xmalloc(len);
			(void)snprintf(atpath, len, "@%s", optarg);
			conf.message = atpath;
			break;
		case OPT_FIRST_MESSAGE:
			free(first);
			first = parse_message(opt, optarg, &conf.firstlen);
			break;
		case OPT_REPLY:
			if (framing_parse(&framing, optarg, &errstr) == -1)
				tk_cli_bad(opt, optarg, "%s", errstr);
			conf.reply = optarg;
			break;
		case OPT_REPLY_CHECK:
			cl.check = optarg;
			break;
		case OPT_CONN_LIFETIME:
			conf.conn_life = tk_cli_num(opt, optarg, 1, MAXLIFE);
			break;
		case 'H':
			if (cl.http.nhdrs == MAXHEADERS)
				tk_cli_bad(opt, NULL, "more than %d headers",
				    MAXHEADERS);
			cl.http.hdrs = xreallocarray(cl.http.hdrs,
			    cl.http.nhdrs + 1, sizeof(*cl.http.hdrs));
			cl.http.hdrs[cl.http.nhdrs++] = optarg;
			break;
		case 'n':
			conf.requests = tk_cli_num(opt, optarg, 1,
			    MAXREQUESTS);
			break;
		case OPT_BODY:
		case OPT_BODY_FILE:
			if (cl.http.body != NULL || cl.http.body_file != NULL)
				tk_cli_bad(opt, NULL, "one body only "
				    "(--body or --body-file)");
			if (ch == OPT_BODY)
				cl.http.body = optarg;
			else
				cl.http.body_file = optarg;
			break;
		case OPT_CONN_RATE:
			conf.conn_rate = parse_conn_rate(opt, optarg);
			break;
		case OPT_METHOD:
			cl.http.method = optarg;
			break;
		case OPT_SEED:
			conf.seed = (uint64_t)tk_cli_num(opt, optarg, 0,
			    LLONG_MAX);
			cl.seed_set = 1;
			break;
		case OPT_START_AT:
			conf.start_at = parse_start_at(opt, optarg);
			break;
		case 'q':
			conf.quiet = 1;
			break;
		case 'R':
			conf.rate = tk_cli_rate(opt, optarg, 1, MAXRATE);
			cl.rate_set = 1;
			break;
		case 's':
			parse_sizes(&conf, opt, optarg);
			cl.size_set = 1;
			break;
		case 't':
			conf.threads = (int)tk_cli_num(opt, optarg, 1,
			    MAXTHREADS);
			break;
		case 'V':
			printf("tenkload %s, TLS %s\n", TENK_VERSION,
			    tk_tls_library());
			exit(0);
		case OPT_BACKEND:
			if ((conf.backend = tk_cli_backend(opt, optarg)) ==
			    NULL)
				tk_cli_backend_list();
			break;
		case OPT_CONNECT_RATE:
			conf.connect_rate = tk_cli_rate(opt, optarg, 1,
			    MAXCONNECTRATE);
			break;
		case OPT_CONNECT_TIMEOUT:
			conf.connect_timeout = tk_cli_duration(opt, optarg,
			    TK_MSEC, 3600 * TK_SEC, NULL);
			break;
		case OPT_REPLY_TIMEOUT:
			conf.reply_timeout = tk_cli_duration(opt, optarg, 0,
			    3600 * TK_SEC, NULL);
			break;
		case OPT_WARMUP:
			conf.warmup = tk_cli_duration(opt, optarg, 0,
			    24 * 3600 * TK_SEC, NULL);
			break;
		case OPT_WINDOW:
			conf.window = tk_cli_num(opt, optarg, 1, MAXWINDOW);
			cl.window_set = 1;
			break;
		case OPT_IDLE:
			conf.idle = tk_cli_num(opt, optarg, 0, MAXCONNS);
			break;
		case OPT_NO_VERIFY:
			conf.verify = 0;
			break;
		case OPT_SOURCE:
			tk_cli_sources(opt, optarg, MAXSOURCES, &conf.sources,
			    &conf.nsources);
			break;
		case OPT_PROCS:
			conf.procs = (int)tk_cli_num(opt, optarg, 1,
			    LG_MAXPROCS);
			break;
		case OPT_TLS:
			tlsopt_set(&tlsopt, &conf, opt, optarg);
			break;
		}
	}
	argc -= optind;
	argv += optind;

	set_targets(&conf, &cl, argc, argv);
	if (conf.url != NULL && conf.url->scheme == SCHEME_HTTPS)
		tlsopt.on = 1;
	check_conf(&conf, &cl);
	conf.first = first;
	set_requests(&conf, &cl);
	for (i = 0; i < (int)conf.nsources; i++)
		if (conf.sources[i].ss.ss_family !=
		    conf.targets[0].ss.ss_family)
			tk_cli_bad("--source", NULL, "address family differs "
			    "from the target's");
	tk_cli_sources_check("--source", conf.sources, conf.nsources);
	check_outputs(&conf);
	tlsopt_apply(&tlsopt, &conf, argc, argv);

	/*
	 * One process holds what fits under RLIMIT_NOFILE (raised to the
	 * hard limit); beyond that, enough processes to hold the rest.
	 */
	(void)tk_nofile_raise(&nofile);
	need = engine_fds_needed(&conf);
	cap = nofile > need - conf.conns - conf.idle ?
	    nofile - (need - conf.conns - conf.idle) : 0;
	procs = conf.procs;
	if (procs == 0) {
		if (cap == 0)
			tk_cli_bad("--connections", NULL, "RLIMIT_NOFILE %llu "
			    "leaves no room for connections",
			    (unsigned long long)nofile);
		procs = (int)((conf.conns + conf.idle + cap - 1) / cap);
		if (procs > LG_MAXPROCS)
			tk_cli_bad("--connections", NULL, "%llu connections "
			    "need %d processes at RLIMIT_NOFILE %llu; at most "
			    "%d",
			    (unsigned long long)(conf.conns + conf.idle),
			    procs, (unsigned long long)nofile, LG_MAXPROCS);
		if (procs > 1 && !conf.quiet)
			fprintf(stderr, "tenkload: %llu connections do not "
			    "fit in one process (%llu each under "
			    "RLIMIT_NOFILE %llu): using %d processes\n",
			    (unsigned long long)(conf.conns + conf.idle),
			    (unsigned long long)cap,
			    (unsigned long long)nofile, procs);
	} else if ((conf.conns + conf.idle + (uint64_t)procs - 1) /
	    (uint64_t)procs > cap)
		fprintf(stderr, "tenkload: warning: %d process%s cannot "
		    "hold %llu connections under RLIMIT_NOFILE %llu\n",
		    procs, procs == 1 ? "" : "es",
		    (unsigned long long)(conf.conns + conf.idle),
		    (unsigned long long)nofile);
	if ((uint64_t)procs > conf.conns + conf.idle)
		procs = (int)(conf.conns + conf.idle);
	conf.procs = procs;
	/* A thread without a connection would only idle. */
	if ((uint64_t)conf.threads > conf.conns + conf.idle)
		conf.threads = (int)(conf.conns + conf.idle);

	if (report_init(&r) == -1)
		fatal("report");
	if (procs == 1) {
		memset(&prog, 0, sizeof(prog));
		report_header(&r, &conf);
		engine_run(&conf, &r, &prog);
	} else {
		for (i = 0; i < conf.npct; i++)
			r.pct[i] = conf.pct[i];
		if (conf.npct > 0)
			r.npct = conf.npct;
		run_procs(&conf, procs, &r);
	}
	i = finish(&conf, &r);
	report_free(&r);
	tlsopt_free(&conf);
	free(conf.targets);
	free(conf.sources);
	free(cl.http.hdrs);
	free(first);
	free(atpath);
	if (conf.tickets != NULL)
		munmap(conf.tickets, sizeof(*conf.tickets));
	tmpl_free(&reqs);
	return i;
}
