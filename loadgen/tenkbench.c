/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tenkbench: event backends measured against each other through real
 * TCP, on loopback.  For every idle-connection count and every backend
 * (a cell) it starts tenkd, holds the idle connections open with
 * tenkload, and measures an active ping-pong load with tenkload once per
 * repeat: messages per second, latency, and the server's CPU time per
 * message from /proc.
 *
 * This file owns the command line: main reads it, checks what the sweep
 * needs, and hands over to the sweep (bench_sweep.c, one cell in
 * bench_cell.c), the children (bench_child.c), the measurements
 * (bench_proc.c) and the outputs (bench_out.c).  Generating load and the
 * JSON report format belong to tenkload (engine.c, report.c).
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/cli.h"
#include "tenk/log.h"
#include "tenk/loop.h"
#include "tenk/parse.h"
#include "loadgen.h"
#include "bench.h"

#define MAXIDLECONNS	1000000		/* idle connections, a cell */
#define MAXACTIVE	100000
#define MAXTHREADS	256		/* tenkd --threads */
#define MAXLOADTHREADS	64		/* tenkload --threads */

struct bconf		 conf;

static const uint64_t default_idle[] = {
	0, 500, 1000, 2000, 5000, 10000, 15000
};

static noreturn void
usage(FILE *f, int status)
{
	fprintf(f,
	    "usage: tenkbench [-hpqV] [-a active] [-b backends] [-d duration]\n"
	    "\t\t [-i idle] [-o dir] [-r repeat] [-s size] [-t threads]\n"
	    "\t\t [-w warmup] [--connect-rate rate] [--load-threads n]\n"
	    "\t\t [--syscalls] [--syscall-time duration] [--tenkd path]\n"
	    "\t\t [--tenkload path] [--tls-cert file --tls-key file]\n");
	if (f == stdout)
		fprintf(f, "\n"
		    "  -a, --active N          active ping-pong connections "
		    "(default 100)\n"
		    "  -b, --backends LIST     backends to compare (default: "
		    "all compiled in);\n"
		    "                          \"list\" prints them\n"
		    "      --connect-rate N/s  connects per second (default "
		    "10000)\n"
		    "  -d, --duration DUR      measured time of each run "
		    "(default 3s)\n"
		    "  -h, --help              this help\n"
		    "  -i, --idle LIST         idle connection counts (default "
		    "0,500,1000,2000,5000,10000,15000)\n"
		    "      --load-threads N    tenkload threads (default 1)\n"
		    "  -o, --out DIR           CSV, JSON, plots and logs "
		    "(default bench-out)\n"
		    "  -p, --plot              draw PNG charts with gnuplot\n"
		    "  -q, --quiet             no progress lines\n"
		    "  -r, --repeat N          runs per cell (default 3)\n"
		    "  -s, --size BYTES        message size (default 64)\n"
		    "      --syscalls          count syscalls per message with "
		    "strace\n"
		    "      --syscall-time DUR  length of the strace run "
		    "(default 2s)\n"
		    "  -t, --threads N         tenkd threads (default 1)\n"
		    "      --tenkd PATH        the server (default: next to "
		    "tenkbench)\n"
		    "      --tenkload PATH     the load generator (default: "
		    "next to tenkbench)\n"
		    "      --tls-cert FILE     over TLS: tenkd's certificate "
		    "(PEM)\n"
		    "      --tls-key FILE      and its key\n"
		    "  -V, --version           print the version\n"
		    "  -w, --warmup DUR        unmeasured time before each run "
		    "(default 1s)\n");
	exit(status);
}

/* NAME[,NAME...] given to opt; "list" prints the backends. */
static void
parse_backends(const char *opt, char *s)
{
	const char	*be;
	char		*p, *tok;
	int		 i;

	conf.nbackends = 0;
	for (p = s; (tok = strsep(&p, ",")) != NULL; ) {
		if ((be = tk_cli_backend(opt, tok)) == NULL)
			tk_cli_backend_list();
		for (i = 0; i < conf.nbackends; i++)
			if (conf.backends[i] == be)
				tk_cli_bad(opt, tok, "given twice");
		if (conf.nbackends == MAXBACKENDS)
			tk_cli_bad(opt, NULL, "more than %d backends",
			    MAXBACKENDS);
		conf.backends[conf.nbackends++] = be;
	}
}

/* N[,N...] given to opt. */
static void
parse_idle(const char *opt, char *s)
{
	char		*p, *tok;
	uint64_t	 v;
	int		 i;

	conf.nidle = 0;
	for (p = s; (tok = strsep(&p, ",")) != NULL; ) {
		v = (uint64_t)tk_cli_num(opt, tok, 0, MAXIDLECONNS);
		for (i = 0; i < conf.nidle; i++)
			if (conf.idle[i] == v)
				tk_cli_bad(opt, tok, "given twice");
		if (conf.nidle == MAXIDLE)
			tk_cli_bad(opt, NULL, "more than %d counts", MAXIDLE);
		conf.idle[conf.nidle++] = v;
	}
}

/*
 * tenkd and tenkload sit next to our own binary (or tenkd in ../sbin,
 * installed) unless told otherwise.
 */
static void
find_peers(int have_d, int have_l)
{
	char	self[PATH_MAX], alt[PATH_MAX], *slash;
	ssize_t	n;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) == -1)
		fatal("/proc/self/exe");
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	if (!have_d && snprintf(conf.tenkd, sizeof(conf.tenkd), "%s/tenkd",
	    self) >= (int)sizeof(conf.tenkd))
		tk_cli_bad(self, NULL, "path too long");
	/* Installed, tenkd is a daemon in sbin beside our bin. */
	if (!have_d && access(conf.tenkd, X_OK) == -1 &&
	    snprintf(alt, sizeof(alt), "%s/../sbin/tenkd", self) <
	    (int)sizeof(alt) && access(alt, X_OK) == 0)
		strlcpy(conf.tenkd, alt, sizeof(conf.tenkd));
	if (!have_l && snprintf(conf.tenkload, sizeof(conf.tenkload),
	    "%s/tenkload", self) >= (int)sizeof(conf.tenkload))
		tk_cli_bad(self, NULL, "path too long");
	if (access(conf.tenkd, X_OK) == -1)
		tk_cli_bad(have_d ? "--tenkd" : NULL, conf.tenkd, "%s (build "
		    "it with make, or give --tenkd)", strerror(errno));
	if (access(conf.tenkload, X_OK) == -1)
		tk_cli_bad(have_l ? "--tenkload" : NULL, conf.tenkload, "%s "
		    "(build it with make, or give --tenkload)",
		    strerror(errno));
}

static void
mkdirs(const char *path)
{
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		fatal("mkdir %s", path);
}

/* Is there an executable called name in $PATH?  Fills path. */
static int
find_prog(const char *name, char *path, size_t len)
{
	const char	*env = getenv("PATH");
	char		 copy[4096], *p, *dir;

	strlcpy(copy, env != NULL ? env : "/usr/bin:/bin", sizeof(copy));
	for (p = copy; (dir = strsep(&p, ":")) != NULL; ) {
		snprintf(path, len, "%s/%s", *dir != '\0' ? dir : ".", name);
		if (access(path, X_OK) == 0)
			return 1;
	}
	return 0;
}

/* The sweep of the manual's defaults, and our command line as given. */
static void
conf_init(int argc, char *argv[])
{
	const char *const *be;
	size_t		 i;
	int		 k;

	for (be = tk_backend_names(); *be != NULL &&
	    conf.nbackends < MAXBACKENDS; be++)
		conf.backends[conf.nbackends++] = *be;
	for (i = 0; i < sizeof(default_idle) / sizeof(default_idle[0]); i++)
		conf.idle[conf.nidle++] = default_idle[i];
	conf.active = 100;
	conf.duration = 3 * TK_SEC;
	conf.warmup = TK_SEC;
	conf.systime = 2 * TK_SEC;
	conf.size = 64;
	conf.connect_rate = 10000;
	conf.repeat = 3;
	conf.threads = 1;
	conf.load_threads = 1;
	conf.out = "bench-out";
	strlcpy(conf.args, "tenkbench", sizeof(conf.args));
	for (k = 1; k < argc; k++) {
		strlcat(conf.args, " ", sizeof(conf.args));
		strlcat(conf.args, argv[k], sizeof(conf.args));
	}
}

/* getopt's values of the options with no short form. */
enum {
	OPT_CONNECT_RATE = 256,
	OPT_LOAD_THREADS,
	OPT_SYSCALLS,
	OPT_SYSCALL_TIME,
	OPT_TENKD,
	OPT_TENKLOAD,
	OPT_TLS_CERT,
	OPT_TLS_KEY
};

/* How an option's value goes into its field of conf. */
enum vkind {
	V_FLAG = 0,	/* int, set to 1; no value */
	V_INT,		/* int, a number */
	V_NUM,		/* uint64_t, a number */
	V_DUR,		/* uint64_t, a duration in ns */
	V_SIZE,		/* uint64_t, bytes */
	V_RATE,		/* uint64_t, per second */
	V_STR		/* const char *, as given */
};

/*
 * The options, a line each: the long name, getopt's value (below 256
 * the short option), the kind of value and the field of conf it sets
 * within [min, max].  An option without a field (NULL) is a case of
 * parse_args(); its kind says only whether it takes a value.
 */
static const struct bopt {
	const char	*name;
	int		 ch;
	enum vkind	 kind;
	void		*var;
	uint64_t	 min, max;
} bopts[] = {
	{ "active",	  'a', V_NUM, &conf.active, 1, MAXACTIVE },
	{ "backends",	  'b', V_STR, NULL, 0, 0 },
	{ "connect-rate", OPT_CONNECT_RATE, V_RATE, &conf.connect_rate, 1,
	    1000000 },
	{ "duration",	  'd', V_DUR, &conf.duration, 100 * TK_MSEC,
	    3600 * TK_SEC },
	{ "help",	  'h', V_FLAG, NULL, 0, 0 },
	{ "idle",	  'i', V_STR, NULL, 0, 0 },
	{ "load-threads", OPT_LOAD_THREADS, V_INT, &conf.load_threads, 1,
	    MAXLOADTHREADS },
	{ "out",	  'o', V_STR, &conf.out, 0, 0 },
	{ "plot",	  'p', V_FLAG, &conf.plot, 0, 0 },
	{ "quiet",	  'q', V_FLAG, &conf.quiet, 0, 0 },
	{ "repeat",	  'r', V_INT, &conf.repeat, 1, MAXREPEAT },
	{ "size",	  's', V_SIZE, &conf.size, 1, 1024 * 1024 },
	{ "syscalls",	  OPT_SYSCALLS, V_FLAG, &conf.syscalls, 0, 0 },
	{ "syscall-time", OPT_SYSCALL_TIME, V_DUR, &conf.systime,
	    100 * TK_MSEC, 600 * TK_SEC },
	{ "tenkd",	  OPT_TENKD, V_STR, NULL, 0, 0 },
	{ "tenkload",	  OPT_TENKLOAD, V_STR, NULL, 0, 0 },
	{ "threads",	  't', V_INT, &conf.threads, 1, MAXTHREADS },
	{ "tls-cert",	  OPT_TLS_CERT, V_STR, NULL, 0, 0 },
	{ "tls-key",	  OPT_TLS_KEY, V_STR, NULL, 0, 0 },
	{ "version",	  'V', V_FLAG, NULL, 0, 0 },
	{ "warmup",	  'w', V_DUR, &conf.warmup, 0, 3600 * TK_SEC }
};
#define NBOPTS		(sizeof(bopts) / sizeof(bopts[0]))

/* o's field of conf from arg, the value given to opt (a flag: none). */
static void
bopt_set(const struct bopt *o, const char *opt, const char *arg)
{
	long long	min = (long long)o->min, max = (long long)o->max;

	switch (o->kind) {
	case V_FLAG:
		*(int *)o->var = 1;
		break;
	case V_INT:
		*(int *)o->var = (int)tk_cli_num(opt, arg, min, max);
		break;
	case V_NUM:
		*(uint64_t *)o->var = (uint64_t)tk_cli_num(opt, arg, min, max);
		break;
	case V_DUR:
		*(uint64_t *)o->var = tk_cli_duration(opt, arg, o->min,
		    o->max, NULL);
		break;
	case V_SIZE:
		*(uint64_t *)o->var = tk_cli_size(opt, arg, o->min, o->max);
		break;
	case V_RATE:
		*(uint64_t *)o->var = tk_cli_rate(opt, arg, o->min, o->max);
		break;
	case V_STR:
		*(const char **)o->var = arg;
		break;
	}
}

/* The options into conf; a bad one exits 2 through tk_cli_bad. */
static void
parse_args(int argc, char *argv[])
{
	struct option	 longopts[NBOPTS + 1];
	char		 optstr[2 * NBOPTS + 2], *p = optstr;
	const char	*opt;
	size_t		 i, len;
	int		 ch, have_d = 0, have_l = 0;

	/* getopt's tables, from ours. */
	*p++ = ':';
	for (i = 0; i < NBOPTS; i++) {
		longopts[i] = (struct option){ bopts[i].name,
		    bopts[i].kind == V_FLAG ? no_argument : required_argument,
		    NULL, bopts[i].ch };
		if (bopts[i].ch < 256) {
			*p++ = (char)bopts[i].ch;
			if (bopts[i].kind != V_FLAG)
				*p++ = ':';
		}
	}
	longopts[i] = (struct option){ NULL, 0, NULL, 0 };
	*p = '\0';

	while ((ch = tk_cli_getopt(argc, argv, optstr, longopts)) != -1) {
		opt = tk_cli_opt();
		for (i = 0; i < NBOPTS && bopts[i].ch != ch; i++)
			;
		if (i < NBOPTS && bopts[i].var != NULL) {
			bopt_set(&bopts[i], opt, optarg);
			continue;
		}
		switch (ch) {
		case 'b':
			parse_backends(opt, optarg);
			break;
		case 'h':
			usage(stdout, 0);
			/* NOTREACHED */
		case 'i':
			parse_idle(opt, optarg);
			break;
		case OPT_TENKD:
			strlcpy(conf.tenkd, optarg, sizeof(conf.tenkd));
			have_d = 1;
			break;
		case OPT_TENKLOAD:
			strlcpy(conf.tenkload, optarg, sizeof(conf.tenkload));
			have_l = 1;
			break;
		case OPT_TLS_CERT:
		case OPT_TLS_KEY:
			if (access(optarg, R_OK) == -1)
				tk_cli_bad(opt, optarg, "%s", strerror(errno));
			*(ch == OPT_TLS_CERT ? &conf.tls_cert :
			    &conf.tls_key) = optarg;
			break;
		case 'V':
			printf("tenkbench %s\n", TENK_VERSION);
			exit(0);
		}
	}
	if (optind != argc)
		tk_cli_bad(argv[optind], NULL, "unexpected argument");
	if ((conf.tls_cert == NULL) != (conf.tls_key == NULL))
		tk_cli_bad(conf.tls_cert == NULL ? "--tls-key" : "--tls-cert",
		    NULL, "--tls-cert and --tls-key go together");
	len = strlen(conf.out);
	while (len > 1 && conf.out[len - 1] == '/')
		len--;
	if (len == 0 || len + 32 >= PATH_MAX)
		tk_cli_bad("--out", conf.out, "bad directory name");
	find_peers(have_d, have_l);
}

/*
 * The program called name for what, if $PATH has it (in buf); else
 * NULL, after a line saying what is lost and which package brings it.
 */
static const char *
find_tool(const char *name, const char *lost, const char *pkg, char *buf,
    size_t len)
{
	if (find_prog(name, buf, len))
		return buf;
	fprintf(stderr, "tenkbench: %s not found, no %s (apt install %s)\n",
	    name, lost, pkg);
	return NULL;
}

int
main(int argc, char *argv[])
{
	const char	*strace = NULL, *gnuplot = NULL;
	char		 logs[PATH_MAX], sbuf[PATH_MAX], gbuf[PATH_MAX];

	setproctitle_init(argc, argv, environ);
	conf_init(argc, argv);
	parse_args(argc, argv);

	/* Children inherit the hard limit as their soft one. */
	(void)tk_nofile_raise(&conf.nofile);
	conf.nports = proc_ports();
	child_init();
	mkdirs(conf.out);
	snprintf(logs, sizeof(logs), "%s/logs", conf.out);
	mkdirs(logs);
	if (conf.syscalls)
		strace = find_tool("strace", "syscall counts", "strace", sbuf,
		    sizeof(sbuf));
	if (conf.plot)
		gnuplot = find_tool("gnuplot", "plots", "gnuplot-nox", gbuf,
		    sizeof(gbuf));

	sweep_plan();
	sweep_run(strace);

	out_table(stdout);
	out_csv();
	out_json();
	if (gnuplot != NULL)
		out_plot(gnuplot);
	if (!conf.quiet)
		fprintf(stderr, "tenkbench: results in %s/results.csv and "
		    "%s/results.json\n", conf.out, conf.out);
	return sweep_failed() ? 1 : 0;
}
