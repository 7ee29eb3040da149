/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The command-line kit: each bad option or value is the exact line
 * "PROG: OPTION [VALUE]: WHY" and exit status 2, the option named as
 * typed, long or short, whether getopt or a range check found it; "list"
 * for backends; the names' table against the registry; the open-file
 * limit raised to the hard one.  Code that exits runs in a child whose
 * stderr comes back through a pipe.
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/cli.h"
#include "tenk/loop.h"
#include "tenk/timer.h"
#include "../t.h"

#define MAXARGS	8

static const struct option longopts[] = {
	{ "backend",	required_argument,	NULL, 'b' },
	{ "quiet",	no_argument,		NULL, 'q' },
	{ "threads",	required_argument,	NULL, 't' },
	{ "trace",	no_argument,		NULL, 256 },
	{ NULL,		0,			NULL, 0 }
};

/* A little program: -b NAME, -q, -t 1..9, --trace; exits 0 when happy. */
static void
prog(const char *const *args)
{
	char	*argv[MAXARGS + 2];
	int	 argc = 0, ch;

	argv[argc++] = strdup("prog");
	for (; *args != NULL && argc <= MAXARGS; args++)
		argv[argc++] = strdup(*args);
	argv[argc] = NULL;
	optind = 1;
	while ((ch = tk_cli_getopt(argc, argv, ":b:qt:", longopts)) != -1) {
		switch (ch) {
		case 'b':
			if (tk_cli_backend(tk_cli_opt(), optarg) == NULL)
				tk_cli_backend_list();
			break;
		case 't':
			(void)tk_cli_num(tk_cli_opt(), optarg, 1, 9);
			break;
		}
	}
	exit(0);
}

/*
 * Run fn(arg) in a child with stderr into a pipe and stdout to
 * /dev/null; return its exit status, its stderr in buf.
 */
static int
child(void (*fn)(const char *const *), const char *const *arg, char *buf,
    size_t len)
{
	pid_t	pid;
	size_t	n = 0;
	ssize_t	r;
	int	p[2], status;

	T_SYS(pipe(p));
	T_SYS(pid = fork());
	if (pid == 0) {
		close(p[0]);
		if (dup2(p[1], STDERR_FILENO) == -1 ||
		    freopen("/dev/null", "w", stdout) == NULL)
			_exit(99);
		fn(arg);
		_exit(98);
	}
	close(p[1]);
	while (n < len - 1 && (r = read(p[0], buf + n, len - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	close(p[0]);
	T_SYS(waitpid(pid, &status, 0));
	T_OK(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* args (NULL-terminated) exit 2 with "PROG: want\n" on stderr. */
static void
said(const char *want, const char *const *args)
{
	char	got[512], line[512];
	int	st;

	st = child(prog, args, got, sizeof(got));
	snprintf(line, sizeof(line), "%s: %s\n", getprogname(), want);
	T_STREQ(got, line);
	T_EQ(st, 2);
}

#define SAID(want, ...) do {						\
	const char *const t_args_[] = { __VA_ARGS__, NULL };		\
	said(want, t_args_);						\
} while (0)

#define FINE(...) do {							\
	const char *const t_args_[] = { __VA_ARGS__, NULL };		\
	char t_buf_[512];						\
	T_EQ(child(prog, t_args_, t_buf_, sizeof(t_buf_)), 0);		\
	T_STREQ(t_buf_, "");						\
} while (0)

TEST(cli_getopt_errors)
{
	SAID("--bogus: unknown option", "--bogus");
	SAID("--bogus: unknown option", "--bogus=1");
	SAID("--bogus: unknown option", "operand", "--bogus");
	SAID("-x: unknown option", "-x");
	SAID("-x: unknown option", "-qx");
	/* Mid-cluster, the element before is a long option. */
	SAID("-x: unknown option", "--quiet", "-xq");
	SAID("--quiet: takes no value", "--quiet=1");
	SAID("--quiet: takes no value", "--qu=1");
	SAID("--trace: takes no value", "--trace=yes");
	SAID("--threads: needs a value", "--threads");
	SAID("--threads: needs a value", "--thr");
	SAID("-t: needs a value", "-t");
	SAID("-t: needs a value", "-qt");
	SAID("--t: ambiguous option", "--t", "1");
	FINE("-q", "-t", "5", "--trace", "--threads=3", "--thr", "4");
	FINE("--", "--bogus");
}

TEST(cli_values)
{
	SAID("-t 0: too small (1 to 9)", "-t", "0");
	SAID("-t 10: too large (1 to 9)", "-t10");
	SAID("--threads 0: too small (1 to 9)", "--threads=0");
	SAID("--threads x: invalid (1 to 9)", "--thr", "x");
	SAID("-t x: invalid (1 to 9)", "-qt", "x");
	SAID("--threads \"\": invalid (1 to 9)", "--threads=");
}

TEST(cli_backend)
{
	const char *const	*be;
	char			 want[256], got[512];
	const char *const	 list[] = { "-b", "list", NULL };
	const char *const	 one[] = { "--backend", "", NULL };

	strlcpy(want, "-b nope: unknown backend (compiled in: ",
	    sizeof(want));
	for (be = tk_backend_names(); *be != NULL; be++) {
		FINE("-b", *be);
		if (be != tk_backend_names())
			strlcat(want, ", ", sizeof(want));
		strlcat(want, *be, sizeof(want));
	}
	strlcat(want, ")", sizeof(want));
	SAID(want, "-b", "nope");
	T_EQ(child(prog, one, got, sizeof(got)), 2);
	T_OK(strstr(got, ": --backend \"\": unknown backend") != NULL);
	T_EQ(child(prog, list, got, sizeof(got)), 0);
	T_STREQ(got, "");
	T_OK(tk_cli_backend("-b", "list") == NULL);
	T_OK(tk_cli_backend("-b", tk_backend_names()[0]) ==
	    tk_backend_names()[0]);
}

/* Each name opens a loop on the backend of that name. */
TEST(cli_backend_names)
{
	const char *const	*be, *const *other;
	struct tk_loop		*l;

	be = tk_backend_names();
	T_PTR(be[0]);
	for (; *be != NULL; be++) {
		for (other = be + 1; *other != NULL; other++)
			T_OK(strcmp(*be, *other) != 0);
		T_PTR(l = tk_loop_new(*be, 0));
		T_STREQ(tk_loop_backend(l), *be);
		tk_loop_free(l);
	}
	T_OK(tk_backend_names() == tk_backend_names());
}

static void
bad_duration(const char *const *a)
{
	(void)a;
	(void)tk_cli_duration("--d", "5x", TK_MSEC, 3600 * TK_SEC, NULL);
}

static void
bad_duration_zero(const char *const *a)
{
	(void)a;
	(void)tk_cli_duration("--d", "2h", 0, 90 * 60 * TK_SEC, NULL);
}

static void
bad_duration_range(const char *const *a)
{
	(void)a;
	(void)tk_cli_duration("-i", "2s", 0, TK_SEC, "0, or 10ms to 1s");
}

static void
bad_size(const char *const *a)
{
	(void)a;
	(void)tk_cli_size("--s", "1t", 512, 256ULL << 20);
}

static void
bad_rate(const char *const *a)
{
	(void)a;
	(void)tk_cli_rate("--r", "0/s", 1, 1000);
}

static void
bad_plain(const char *const *a)
{
	(void)a;
	tk_cli_bad(NULL, NULL, "no mode given (%d)", 1);
}

static void
bad_operand(const char *const *a)
{
	(void)a;
	tk_cli_bad(NULL, "host:1x", "bad port");
}

static void
bad_empty(const char *const *a)
{
	(void)a;
	tk_cli_bad("-o", "", "empty path");
}

TEST(cli_messages)
{
	static const struct {
		void		(*fn)(const char *const *);
		const char	*want;
	} cases[] = {
		{ bad_duration, "--d 5x: bad unit (1ms to 1h; units ms, s, m, "
		    "h)" },
		{ bad_duration_zero, "--d 2h: too large (0 to 90m; units ms, "
		    "s, m, h)" },
		{ bad_duration_range, "-i 2s: too large (0, or 10ms to 1s; "
		    "units ms, s, m, h)" },
		{ bad_size, "--s 1t: bad unit (512 to 256m; units k, m, g)" },
		{ bad_rate, "--r 0/s: too small (1 to 1000 per second)" },
		{ bad_plain, "no mode given (1)" },
		{ bad_operand, "host:1x: bad port" },
		{ bad_empty, "-o \"\": empty path" },
	};
	char	got[512], want[512];
	size_t	i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		T_EQ(child(cases[i].fn, NULL, got, sizeof(got)), 2);
		snprintf(want, sizeof(want), "%s: %s\n", getprogname(),
		    cases[i].want);
		T_STREQ(got, want);
	}
	T_EQ(tk_cli_num("-n", "7", 1, 9), 7);
	T_UEQ(tk_cli_duration("-d", "1.5s", 0, TK_SEC * 2, NULL),
	    TK_SEC + TK_SEC / 2);
	T_UEQ(tk_cli_size("-s", "64k", 1, 1 << 20), 64 << 10);
	T_UEQ(tk_cli_rate("-r", "10/s", 1, 100), 10);
}

/*
 * The forms that do not exit: the same line as tk_cli_bad() would print
 * after "PROG: ", control bytes escaped, and the value when good.
 */
TEST(cli_get_values)
{
	struct tk_cli_err	 e;
	struct tk_addr		*list = NULL;
	long long		 n;
	uint64_t		 u;
	size_t			 k = 0;

	T_EQ(tk_cli_get_num(&e, "-t", "0", 1, 9, &n), -1);
	T_STREQ(e.msg, "-t 0: too small (1 to 9)");
	T_EQ(tk_cli_get_num(&e, "-t", "7", 1, 9, &n), 0);
	T_EQ(n, 7);
	T_EQ(tk_cli_get_duration(&e, "--d", "5x", TK_MSEC, 3600 * TK_SEC,
	    NULL, &u), -1);
	T_STREQ(e.msg, "--d 5x: bad unit (1ms to 1h; units ms, s, m, h)");
	T_EQ(tk_cli_get_size(&e, "--s", "64k", 1, 1 << 20, &u), 0);
	T_UEQ(u, 64 << 10);
	T_EQ(tk_cli_get_sources(&e, "--source", "127.0.0.1-127.0.0.3", 8,
	    &list, &k), 0);
	T_UEQ(k, 3);
	T_EQ(tk_cli_get_sources(&e, "--source", "127.0.0.9:1", 8, &list,
	    &k), -1);
	T_STREQ(e.msg, "--source 127.0.0.9:1: no port allowed");
	free(list);
	T_EQ(tk_cli_errf_addr(&e, "-u", "7000", "bad"), -1);
	T_STREQ(e.msg, "-u 7000: missing host (as in 127.0.0.1:7000)");
	T_EQ(tk_cli_errf(&e, "-m", "a\nb", "bad"), -1);
	T_STREQ(e.msg, "-m a\\nb: bad");
}

/* The soft limit goes up to the hard one; the result says so. */
TEST(cli_nofile_raise)
{
	struct rlimit	rl;
	uint64_t	n = 0, want;

	T_SYS(getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 64)
		T_SKIP("hard RLIMIT_NOFILE below 64");
	want = rl.rlim_max == RLIM_INFINITY ? 1ULL << 20 : rl.rlim_max;
	rl.rlim_cur = 32;
	T_SYS(setrlimit(RLIMIT_NOFILE, &rl));
	T_EQ(tk_nofile_raise(&n), 0);
	T_UEQ(n, want);
	T_SYS(getrlimit(RLIMIT_NOFILE, &rl));
	T_UEQ(rl.rlim_cur, want);
	/* Already at the hard limit: nothing to do, same answer. */
	T_EQ(tk_nofile_raise(&n), 0);
	T_UEQ(n, want);
}
