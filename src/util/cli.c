/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The command-line kit shared by tenkd, tenkload, tenkbench and
 * loopbench: one message format for a bad option, whether getopt or a
 * value found it, the range checks, the backend name, source address
 * lists and the open-file limit.  What each option means stays in its program.
 */
#include <sys/resource.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/cli.h"
#include "tenk/log.h"
#include "tenk/loop.h"
#include "tenk/parse.h"
#include "tenk/sock.h"

/* RLIM_INFINITY as a count: the kernel's default fs.nr_open. */
#define NOFILE_INF	(1ULL << 20)
/* What to assume when getrlimit(2) fails: the usual soft limit. */
#define NOFILE_GUESS	1024

static char	optname[64];

static void	cli_fmt(struct tk_cli_err *, const char *, const char *,
		    const char *, va_list)
		    __attribute__((format(printf, 4, 0)));

/*
 * The one line of a bad command line: the option, its argument and the
 * reason, with control bytes and bytes outside printable ASCII escaped
 * as a log line's are (log_escape_ctl), so that an argument holding a
 * newline or a terminal escape cannot forge a second line.  Backslashes
 * stay as typed: a value such as --message 'PING\r\n' is shown as the
 * user wrote it.
 */
static void
cli_fmt(struct tk_cli_err *e, const char *opt, const char *arg,
    const char *fmt, va_list ap)
{
	char		 msg[TK_CLI_ERRMAX];
	int		 n = 0;

	if (opt != NULL && arg != NULL)
		n = snprintf(msg, sizeof(msg), "%s %s: ", opt,
		    *arg == '\0' ? "\"\"" : arg);
	else if (opt != NULL || arg != NULL)
		n = snprintf(msg, sizeof(msg), "%s: ", opt != NULL ? opt : arg);
	if (n < 0)
		n = 0;
	else if ((size_t)n >= sizeof(msg))
		n = sizeof(msg) - 1;
	msg[n] = '\0';
	(void)vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	(void)log_escape_ctl(e->msg, sizeof(e->msg), msg, strlen(msg));
}

int
tk_cli_errf(struct tk_cli_err *e, const char *opt, const char *arg,
    const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	cli_fmt(e, opt, arg, fmt, ap);
	va_end(ap);
	return -1;
}

noreturn void
tk_cli_die(const struct tk_cli_err *e)
{
	fprintf(stderr, "%s: %s\n", getprogname(), e->msg);
	exit(2);
}

noreturn void
tk_cli_bad(const char *opt, const char *arg, const char *fmt, ...)
{
	struct tk_cli_err	e;
	va_list			ap;

	va_start(ap, fmt);
	cli_fmt(&e, opt, arg, fmt, ap);
	va_end(ap);
	tk_cli_die(&e);
}

/*
 * A bad address (err from tk_addr_parse) the same way everywhere: a
 * port alone ("7777", also as "7777,..." where a list follows) gets the
 * example of what was meant.
 */
int
tk_cli_errf_addr(struct tk_cli_err *e, const char *opt, const char *arg,
    const char *err)
{
	size_t	n = strspn(arg, "0123456789");

	if (n > 0 && (arg[n] == '\0' || arg[n] == ','))
		return tk_cli_errf(e, opt, arg, "missing host (as in "
		    "127.0.0.1:%.*s)", (int)n, arg);
	return tk_cli_errf(e, opt, arg, "%s", err);
}

noreturn void
tk_cli_bad_addr(const char *opt, const char *arg, const char *err)
{
	struct tk_cli_err	e;

	(void)tk_cli_errf_addr(&e, opt, arg, err);
	tk_cli_die(&e);
}

/*
 * Name the long option typed as "--NAME[=VALUE]" in optname: NAME in
 * full when it is a long option's name or the prefix of exactly one with
 * value val (any value for val 0).  Returns how many options matched.
 */
static int
long_name(const struct option *longopts, const char *typed, int val)
{
	const struct option	*o, *match = NULL;
	size_t			 len;
	int			 n = 0;

	typed += 2;
	len = strcspn(typed, "=");
	for (o = longopts; o->name != NULL; o++) {
		if (strncmp(o->name, typed, len) != 0)
			continue;
		if (o->name[len] == '\0') {
			match = o;
			n = 1;
			break;
		}
		if (val == 0 || o->val == val) {
			match = o;
			n++;
		}
	}
	if (n == 1)
		snprintf(optname, sizeof(optname), "--%s", match->name);
	else
		snprintf(optname, sizeof(optname), "--%.*s", (int)len, typed);
	return n;
}

/*
 * getopt_long with opterr off, so that its messages (which name "-p" for
 * "--plot=1") never show; its errors become ours.  What the user typed
 * is recovered from argv: a long option always moves optind past its own
 * element, while a short one in the middle of a cluster ("-qx") leaves
 * optind where it was, so argv[optind - 1] names the option only when
 * optind moved and it starts with "--".
 */
int
tk_cli_getopt(int argc, char *argv[], const char *optstring,
    const struct option *longopts)
{
	const char	*typed;
	int		 ch, li = -1, before = optind;

	assert(optstring[0] == ':');
	opterr = 0;
	if ((ch = getopt_long(argc, argv, optstring, longopts, &li)) == -1)
		return -1;
	if (ch != '?' && ch != ':') {
		if (li >= 0)
			snprintf(optname, sizeof(optname), "--%s",
			    longopts[li].name);
		else
			snprintf(optname, sizeof(optname), "-%c", ch);
		return ch;
	}

	typed = optind > before && optind <= argc &&
	    strncmp(argv[optind - 1], "--", 2) == 0 ? argv[optind - 1] : NULL;
	if (typed == NULL) {
		snprintf(optname, sizeof(optname), "-%c", optopt);
		tk_cli_bad(optname, NULL, ch == ':' ? "needs a value" :
		    "unknown option");
	}
	if (long_name(longopts, typed, optopt) > 1 && optopt == 0)
		tk_cli_bad(optname, NULL, "ambiguous option");
	if (ch == ':')
		tk_cli_bad(optname, NULL, "needs a value");
	if (optopt != 0)
		tk_cli_bad(optname, NULL, "takes no value");
	tk_cli_bad(optname, NULL, "unknown option");
}

const char *
tk_cli_opt(void)
{
	return optname;
}

int
tk_cli_get_num(struct tk_cli_err *e, const char *opt, const char *arg,
    long long min, long long max, long long *v)
{
	const char	*err;

	*v = strtonum(arg, min, max, &err);
	if (err != NULL)
		return tk_cli_errf(e, opt, arg, "%s (%lld to %lld)", err, min,
		    max);
	return 0;
}

long long
tk_cli_num(const char *opt, const char *arg, long long min, long long max)
{
	struct tk_cli_err	e;
	long long		n;

	if (tk_cli_get_num(&e, opt, arg, min, max, &n) == -1)
		tk_cli_die(&e);
	return n;
}

/* ns in the largest unit that holds it whole: "0", "10ms", "1h". */
static const char *
fmt_dur(uint64_t ns, char *buf, size_t len)
{
	static const struct {
		const char	*name;
		uint64_t	 mul;
	} units[] = {
		{ "h",	3600000000000ULL },
		{ "m",	60000000000ULL },
		{ "s",	1000000000ULL },
		{ "ms",	1000000ULL },
		{ "us",	1000ULL },
		{ "ns",	1ULL },
	};
	size_t	i;

	if (ns == 0) {
		snprintf(buf, len, "0");
		return buf;
	}
	for (i = 0; ns % units[i].mul != 0; i++)
		;
	snprintf(buf, len, "%llu%s", (unsigned long long)(ns / units[i].mul),
	    units[i].name);
	return buf;
}

/* Bytes in the largest power of 1024 that holds them whole: "64k". */
static const char *
fmt_size(uint64_t n, char *buf, size_t len)
{
	static const char	units[] = "kmg";
	int			i;

	for (i = 0; i < 3 && n != 0 && n % 1024 == 0; i++)
		n /= 1024;
	if (i == 0)
		snprintf(buf, len, "%llu", (unsigned long long)n);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)n,
		    units[i - 1]);
	return buf;
}

int
tk_cli_get_duration(struct tk_cli_err *e, const char *opt, const char *arg,
    uint64_t min, uint64_t max, const char *range, uint64_t *v)
{
	const char	*err;
	char		 lo[32], hi[32], buf[80];

	if (tk_parse_duration(arg, min, max, v, &err) == 0)
		return 0;
	if (range == NULL) {
		snprintf(buf, sizeof(buf), "%s to %s",
		    fmt_dur(min, lo, sizeof(lo)), fmt_dur(max, hi, sizeof(hi)));
		range = buf;
	}
	return tk_cli_errf(e, opt, arg, "%s (%s; units ms, s, m, h)", err,
	    range);
}

uint64_t
tk_cli_duration(const char *opt, const char *arg, uint64_t min,
    uint64_t max, const char *range)
{
	struct tk_cli_err	e;
	uint64_t		ns;

	if (tk_cli_get_duration(&e, opt, arg, min, max, range, &ns) == -1)
		tk_cli_die(&e);
	return ns;
}

int
tk_cli_get_size(struct tk_cli_err *e, const char *opt, const char *arg,
    uint64_t min, uint64_t max, uint64_t *v)
{
	const char	*err;
	char		 lo[32], hi[32];

	if (tk_parse_size(arg, min, max, v, &err) == 0)
		return 0;
	return tk_cli_errf(e, opt, arg, "%s (%s to %s; units k, m, g)", err,
	    fmt_size(min, lo, sizeof(lo)), fmt_size(max, hi, sizeof(hi)));
}

uint64_t
tk_cli_size(const char *opt, const char *arg, uint64_t min, uint64_t max)
{
	struct tk_cli_err	e;
	uint64_t		n;

	if (tk_cli_get_size(&e, opt, arg, min, max, &n) == -1)
		tk_cli_die(&e);
	return n;
}

uint64_t
tk_cli_rate(const char *opt, const char *arg, uint64_t min, uint64_t max)
{
	const char	*err;
	uint64_t	 n;

	if (tk_parse_rate(arg, min, max, &n, &err) == -1)
		tk_cli_bad(opt, arg, "%s (%llu to %llu per second)", err,
		    (unsigned long long)min, (unsigned long long)max);
	return n;
}

const char *
tk_cli_backend(const char *opt, const char *arg)
{
	const char *const	*be;
	char			 have[128];

	if (strcmp(arg, "list") == 0)
		return NULL;
	have[0] = '\0';
	for (be = tk_backend_names(); *be != NULL; be++) {
		if (strcmp(*be, arg) == 0) {
			/* Compiled in, but the kernel may refuse it. */
			if (tk_backend_probe(*be) == -1) {
				fprintf(stderr, "%s: %s %s: the kernel refuses "
				    "it: %s\n", getprogname(), opt, arg,
				    strerror(errno));
				exit(1);
			}
			return *be;
		}
		if (have[0] != '\0')
			strlcat(have, ", ", sizeof(have));
		strlcat(have, *be, sizeof(have));
	}
	tk_cli_bad(opt, arg, "unknown backend (compiled in: %s)", have);
}

noreturn void
tk_cli_backend_list(void)
{
	const char *const	*be;

	for (be = tk_backend_names(); *be != NULL; be++)
		printf("%s\n", *be);
	exit(0);
}

int
tk_nofile_raise(uint64_t *nofile)
{
	struct rlimit	rl, want;
	int		rv = 0;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1) {
		*nofile = NOFILE_GUESS;
		return -1;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		want = rl;
		/* Linux refuses more than fs.nr_open, and so infinity. */
		if (want.rlim_max == RLIM_INFINITY)
			want.rlim_cur = NOFILE_INF;
		else
			want.rlim_cur = want.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &want) == -1)
			rv = -1;
		else
			rl = want;
	}
	*nofile = rl.rlim_cur == RLIM_INFINITY ? NOFILE_INF : rl.rlim_cur;
	return rv;
}

static int
source_add(struct tk_cli_err *e, const char *opt, size_t max,
    struct tk_addr **list, size_t *n, const struct tk_addr *a)
{
	struct tk_addr	*nl;

	if (*n >= max)
		return tk_cli_errf(e, opt, NULL, "more than %zu addresses",
		    max);
	if ((nl = reallocarray(*list, *n + 1, sizeof(**list))) == NULL)
		return tk_cli_errf(e, opt, NULL, "%s", strerror(errno));
	*list = nl;
	nl[(*n)++] = *a;
	return 0;
}

/* One "ADDR" or "A-B" of a source list into *list. */
static int
source_range(struct tk_cli_err *e, const char *opt, char *tok, size_t max,
    struct tk_addr **list, size_t *n)
{
	struct tk_addr	 a, b;
	const char	*errstr;
	char		*dash;
	uint32_t	 lo, hi, x;

	if ((dash = strchr(tok, '-')) != NULL)
		*dash = '\0';
	if (tk_addr_parse(tok, 0, &a, &errstr) == -1)
		return tk_cli_errf(e, opt, tok, "%s", errstr);
	if (tk_addr_port(&a) != 0)
		return tk_cli_errf(e, opt, tok, "no port allowed");
	if (dash == NULL)
		return source_add(e, opt, max, list, n, &a);
	if (tk_addr_parse(dash + 1, 0, &b, &errstr) == -1)
		return tk_cli_errf(e, opt, dash + 1, "%s", errstr);
	*dash = '-';
	if (a.ss.ss_family != AF_INET || b.ss.ss_family != AF_INET)
		return tk_cli_errf(e, opt, tok, "ranges are IPv4 only");
	lo = ntohl(((struct sockaddr_in *)&a.ss)->sin_addr.s_addr);
	hi = ntohl(((struct sockaddr_in *)&b.ss)->sin_addr.s_addr);
	if (lo > hi || hi - lo >= max)
		return tk_cli_errf(e, opt, tok, "bad range (lowest first, at "
		    "most %zu addresses)", max);
	for (x = lo;; x++) {
		((struct sockaddr_in *)&a.ss)->sin_addr.s_addr = htonl(x);
		if (source_add(e, opt, max, list, n, &a) == -1)
			return -1;
		if (x == hi)
			return 0;
	}
}

int
tk_cli_get_sources(struct tk_cli_err *e, const char *opt, const char *arg,
    size_t max, struct tk_addr **list, size_t *n)
{
	char	*copy, *p, *tok;
	int	 r = 0;

	if ((copy = strdup(arg)) == NULL)
		return tk_cli_errf(e, opt, NULL, "%s", strerror(errno));
	for (p = copy; r == 0 && (tok = strsep(&p, ",")) != NULL; )
		r = source_range(e, opt, tok, max, list, n);
	free(copy);
	return r;
}

void
tk_cli_sources(const char *opt, const char *arg, size_t max,
    struct tk_addr **list, size_t *n)
{
	struct tk_cli_err	e;

	if (tk_cli_get_sources(&e, opt, arg, max, list, n) == -1)
		tk_cli_die(&e);
}

void
tk_cli_sources_check(const char *opt, const struct tk_addr *list, size_t n)
{
	char	 a[TK_ADDRSTRLEN];
	size_t	 i;
	int	 fd, e;

	for (i = 0; i < n; i++) {
		if ((fd = socket(list[i].ss.ss_family,
		    SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
			fatal("%s: socket", opt);
		if (bind(fd, (const struct sockaddr *)&list[i].ss,
		    list[i].len) == -1) {
			e = errno;	/* tk_addr_fmt_host may move it */
			tk_cli_bad(opt, tk_addr_fmt_host(&list[i], a,
			    sizeof(a)), "%s", strerror(e));
		}
		close(fd);
	}
}
