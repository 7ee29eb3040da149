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

/* The options into conf; a bad one exits 2 through tk_cli_bad. */
static void
parse_args(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "active", required_argument, NULL, 'a' },
		{ "backends", required_argument, NULL, 'b' },
		{ "connect-rate", required_argument, NULL, 'C' },
		{ "duration", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "idle", required_argument, NULL, 'i' },
		{ "load-threads", required_argument, NULL, 'L' },
		{ "out", required_argument, NULL, 'o' },
		{ "plot", no_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "size", required_argument, NULL, 's' },
		{ "syscalls", no_argument, NULL, 'S' },
		{ "syscall-time", required_argument, NULL, 'T' },
		{ "tenkd", required_argument, NULL, 'D' },
		{ "tenkload", required_argument, NULL, 'G' },
		{ "threads", required_argument, NULL, 't' },
		{ "tls-cert", required_argument, NULL, 'E' },
		{ "tls-key", required_argument, NULL, 'K' },
		{ "version", no_argument, NULL, 'V' },
		{ "warmup", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*opt;
	size_t		 len;
	int		 ch, have_d = 0, have_l = 0;

	while ((ch = tk_cli_getopt(argc, argv, ":a:b:d:hi:o:pqr:s:t:Vw:",
	    longopts)) != -1) {
		opt = tk_cli_opt();
		switch (ch) {
		case 'a':
			conf.active = tk_cli_num(opt, optarg, 1, MAXACTIVE);
			break;
		case 'b':
			parse_backends(opt, optarg);
			break;
		case 'C':
			conf.connect_rate = tk_cli_rate(opt, optarg, 1,
			    1000000);
			break;
		case 'd':
			conf.duration = tk_cli_duration(opt, optarg,
			    100 * TK_MSEC, 3600 * TK_SEC, NULL);
			break;
		case 'D':
			strlcpy(conf.tenkd, optarg, sizeof(conf.tenkd));
			have_d = 1;
			break;
		case 'G':
			strlcpy(conf.tenkload, optarg, sizeof(conf.tenkload));
			have_l = 1;
			break;
		case 'h':
			usage(stdout, 0);
			/* NOTREACHED */
		case 'i':
			parse_idle(opt, optarg);
			break;
		case 'L':
			conf.load_threads = (int)tk_cli_num(opt, optarg, 1,
			    MAXLOADTHREADS);
			break;
		case 'o':
			conf.out = optarg;
			break;
		case 'p':
			conf.plot = 1;
			break;
		case 'q':
			conf.quiet = 1;
			break;
		case 'r':
			conf.repeat = (int)tk_cli_num(opt, optarg, 1,
			    MAXREPEAT);
			break;
		case 's':
			conf.size = tk_cli_size(opt, optarg, 1, 1024 * 1024);
			break;
		case 'S':
			conf.syscalls = 1;
			break;
		case 't':
			conf.threads = (int)tk_cli_num(opt, optarg, 1,
			    MAXTHREADS);
			break;
		case 'T':
			conf.systime = tk_cli_duration(opt, optarg,
			    100 * TK_MSEC, 600 * TK_SEC, NULL);
			break;
		case 'E':
		case 'K':
			if (access(optarg, R_OK) == -1)
				tk_cli_bad(opt, optarg, "%s", strerror(errno));
			*(ch == 'E' ? &conf.tls_cert : &conf.tls_key) =
			    optarg;
			break;
		case 'V':
			printf("tenkbench %s\n", TENK_VERSION);
			exit(0);
		case 'w':
			conf.warmup = tk_cli_duration(opt, optarg, 0,
			    3600 * TK_SEC, NULL);
			break;
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
