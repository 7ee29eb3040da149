/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tenkd: the command line and its -f file (cut into lines by
 * conffile.c, applied here as options), start-up (limits, listeners,
 * privileges, pidfile, workers) and the main thread, which owns every
 * signal and steers the workers with posted messages: SIGTERM/SIGINT
 * drain, a second one or the drain deadline forces, SIGUSR1 and SIGHUP
 * reopen the logs (reopen.c; a reload is the master's, master.c, which
 * runs with --workers and whenever -f is given); statistics are on the
 * metrics listener (metrics.c).  Serving is in worker.c, conn.c and the
 * protocol files; the main thread's loop also runs upstream.c's health
 * checks.  A reload or an upgrade reads the command line again, so it
 * is kept here as it was typed, and the path of the binary with it.
 */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/cli.h"
#include "tenk/log.h"
#include "tenk/parse.h"
#include "tenk/signal.h"
#include "tenk/sock.h"
#include "tenk/xmalloc.h"
#include "tenkd.h"

#define DEFAULT_LISTEN		"127.0.0.1:7777"
#define DEFAULT_PORT		7777
#define DEFAULT_IDLE		(300 * TK_SEC)
#define DEFAULT_DRAIN		(10 * TK_SEC)
#define DEFAULT_READY		(30 * TK_SEC)	/* --ready-timeout */
#define DEFAULT_METRICS_CLIENTS	16		/* --metrics-max-clients */
#define DEFAULT_ALOG_BUFFER	(4 << 20)	/* --access-log-buffer */
#define DEFAULT_BUFLIMIT	(64 * 1024)
/*
 * --buffer-limit's default in proxy mode, per direction: the 16k of
 * haproxy's tune.bufsize and nginx's proxy_buffer_size.
 */
#define DEFAULT_PX_BUFLIMIT	(16 * 1024)
#define DEFAULT_PIPES		64		/* --splice-pipes */
#define MAXPIPES		4096

enum {
	OPT_ACCESS_LOG = 256,
	OPT_BACKLOG,
	OPT_BUFLIMIT,
	OPT_RINGBUFS,
	OPT_CHECK,
	OPT_DRAIN,
	OPT_GROUP,
	OPT_IDLE,
	OPT_LOGLEVEL,
	OPT_MAXCONNS,
	OPT_MAXMEM,
	OPT_PIDFILE,
	OPT_SYSLOG,
	/* issue 14: operations */
	OPT_SYSLOG_FACILITY,
	OPT_METRICS,
	OPT_USER,
	OPT_WORKERS,
	OPT_ACCESS_FORMAT,
	/* issue 15: PROXY protocol in (pin.c) */
	OPT_ACCEPT_PROXY,
	OPT_ACCEPT_PROXY_TIMEOUT,
	OPT_ACCEPT_PROXY_FROM,		/* issue 22 */
	OPT_ACCESS_BUFFER,
	OPT_METRICS_CLIENTS,
	OPT_READY_TIMEOUT,
	/* issue 24: TLS (tlsterm.c), in enum tls_opt's order */
	OPT_TLS_CERT,
	OPT_TLS_CIPHERS,
	OPT_TLS_HS_TIMEOUT,
	OPT_TLS_KEY,
	OPT_TLS_TICKETS,
	OPT_TLS_VERSION,
	/* proxy mode only, from here on */
	OPT_PROXY,
	OPT_BALANCE = OPT_PROXY,
	OPT_CHECK_EXPECT,
	OPT_CHECK_FALL,
	OPT_CHECK_INTERVAL,
	OPT_CHECK_RISE,
	OPT_CHECK_SEND,
	OPT_CHECK_TIMEOUT,
	OPT_CONNECT_TIMEOUT,
	OPT_FAIL_MAX,
	OPT_FAIL_TIMEOUT,
	OPT_FASTPATH,
	OPT_FIN_TIMEOUT,
	OPT_HASH_KEY,
	OPT_MAXPERIP,
	OPT_RETRIES,
	OPT_SEND_PROXY,
	OPT_SOURCE,
	OPT_SPLICE,
	OPT_SPLICE_PIPES,
	OPT_SNI_ROUTE,
};

_Static_assert(OPT_TLS_VERSION - OPT_TLS_CERT == TLSOPT_VERSION &&
    OPT_TLS_KEY - OPT_TLS_CERT == TLSOPT_KEY, "TLS options in order");

static const struct option longopts[] = {
	{ "accept-proxy",	no_argument,	   NULL, OPT_ACCEPT_PROXY },
	{ "accept-proxy-from",	required_argument, NULL,
	    OPT_ACCEPT_PROXY_FROM },
	{ "accept-proxy-timeout", required_argument, NULL,
	    OPT_ACCEPT_PROXY_TIMEOUT },
	{ "access-log",		required_argument, NULL, OPT_ACCESS_LOG },
	{ "access-log-buffer",	required_argument, NULL, OPT_ACCESS_BUFFER },
	{ "access-log-format",	required_argument, NULL, OPT_ACCESS_FORMAT },
	{ "backend",		required_argument, NULL, 'b' },
	{ "backlog",		required_argument, NULL, OPT_BACKLOG },
	{ "balance",		required_argument, NULL, OPT_BALANCE },
	{ "buffer-limit",	required_argument, NULL, OPT_BUFLIMIT },
	{ "ring-buffers",	required_argument, NULL, OPT_RINGBUFS },
	{ "check",		no_argument,	   NULL, OPT_CHECK },
	{ "check-expect",	required_argument, NULL, OPT_CHECK_EXPECT },
	{ "check-fall",		required_argument, NULL, OPT_CHECK_FALL },
	{ "check-interval",	required_argument, NULL, OPT_CHECK_INTERVAL },
	{ "check-rise",		required_argument, NULL, OPT_CHECK_RISE },
	{ "check-send",		required_argument, NULL, OPT_CHECK_SEND },
	{ "check-timeout",	required_argument, NULL, OPT_CHECK_TIMEOUT },
	{ "config",		required_argument, NULL, 'f' },
	{ "connect-timeout",	required_argument, NULL, OPT_CONNECT_TIMEOUT },
	{ "drain-timeout",	required_argument, NULL, OPT_DRAIN },
	{ "fail-max",		required_argument, NULL, OPT_FAIL_MAX },
	{ "fail-timeout",	required_argument, NULL, OPT_FAIL_TIMEOUT },
	{ "fastpath",		required_argument, NULL, OPT_FASTPATH },
	{ "fin-timeout",	required_argument, NULL, OPT_FIN_TIMEOUT },
	{ "group",		required_argument, NULL, OPT_GROUP },
	{ "hash-key",		required_argument, NULL, OPT_HASH_KEY },
	{ "help",		no_argument,	   NULL, 'h' },
	{ "idle-timeout",	required_argument, NULL, OPT_IDLE },
	{ "listen",		required_argument, NULL, 'l' },
	{ "log-level",		required_argument, NULL, OPT_LOGLEVEL },
	{ "max-conns",		required_argument, NULL, OPT_MAXCONNS },
	{ "max-memory",		required_argument, NULL, OPT_MAXMEM },
	{ "max-conns-per-ip",	required_argument, NULL, OPT_MAXPERIP },
	{ "metrics",		required_argument, NULL, OPT_METRICS },
	{ "metrics-max-clients", required_argument, NULL,
	    OPT_METRICS_CLIENTS },
	{ "pidfile",		required_argument, NULL, OPT_PIDFILE },
	{ "ready-timeout",	required_argument, NULL, OPT_READY_TIMEOUT },
	{ "retries",		required_argument, NULL, OPT_RETRIES },
	{ "send-proxy",		required_argument, NULL, OPT_SEND_PROXY },
	{ "sni-route",		required_argument, NULL, OPT_SNI_ROUTE },
	{ "source",		required_argument, NULL, OPT_SOURCE },
	{ "splice",		required_argument, NULL, OPT_SPLICE },
	{ "splice-pipes",	required_argument, NULL, OPT_SPLICE_PIPES },
	{ "syslog",		no_argument,	   NULL, OPT_SYSLOG },
	{ "syslog-facility",	required_argument, NULL, OPT_SYSLOG_FACILITY },
	{ "threads",		required_argument, NULL, 't' },
	{ "tls-cert",		required_argument, NULL, OPT_TLS_CERT },
	{ "tls-ciphers",	required_argument, NULL, OPT_TLS_CIPHERS },
	{ "tls-handshake-timeout", required_argument, NULL,
	    OPT_TLS_HS_TIMEOUT },
	{ "tls-key",		required_argument, NULL, OPT_TLS_KEY },
	{ "tls-ticket-period",	required_argument, NULL, OPT_TLS_TICKETS },
	{ "tls-version",	required_argument, NULL, OPT_TLS_VERSION },
	{ "upstream",		required_argument, NULL, 'u' },
	{ "user",		required_argument, NULL, OPT_USER },
	{ "version",		no_argument,	   NULL, 'V' },
	{ "workers",		required_argument, NULL, OPT_WORKERS },
	{ NULL,			0,		   NULL, 0 }
};

struct server	 srv;

static char		*proxy_opt;	/* first proxy option seen */
static int		 listen_given;	/* --listen on the command line */

/*
 * -f/--config: the file's options, applied after the command line's
 * except those the command line gives (next_option).  The list grows by
 * doubling: a file may hold 100,000 lines and more.  An option that is
 * not repeatable given twice is said (conf_option), with both lines;
 * the last one is used, as on the command line, where getopt(3) gives
 * each in turn, and as HAProxy does with most of its keywords.
 */
#define OPTVAL_MAX	512		/* option values: 'a' to OPT_* */
#define CONF_REPEATS	10		/* repeated options said */
struct confopt {
	int		 ch;
	char		*opt;		/* "FILE:LINE: NAME", for messages */
	char		*arg;
};
static char		*conf_path;
static struct {
	struct confopt	*v;
	size_t		 n, cap, next;
	size_t		 last[OPTVAL_MAX];	/* its index + 1, by value */
	int		 repeats;		/* options given twice */
	int		 quiet;			/* said by the reload's check */
} confl;
static unsigned char	 cmdline_gave[OPTVAL_MAX];	/* by option value */
static int		 cmdline_done;

/*
 * For a reload (main_reparse) and an upgrade (master.c): the command
 * line as typed, the binary's absolute path, the file's text to read in
 * place of the file, and the options as first parsed (before the
 * listeners changed port 0 into a port), to find what a reload changes.
 */
static int		 saved_argc;
static char		**saved_argv;
static char		 self_path[PATH_MAX];
static const char	*conf_text;
static size_t		 conf_len;
static struct config	 parsed_cfg;
static struct pxconf	 pxcf0;
static struct hcconf	 hccf0;
static struct pinconf	 pincf0;
static int		 upgraded;	/* started by an old master's SIGUSR2 */

static noreturn void	usage(int);
static void	parse_args(int, char *[]);
static int	next_option(int, char *[], const char **);
static void	conf_option(void *, const char *, const char *, const char *);
static void	proxy_option(int, const char *, const char *);
static void	mode_config(void);
static void	add_listen(const char *, const char *);
static void	set_limits(void);
static int	*open_listeners(void);
static int	*inherit_listeners(void);
static void	probe_owner(const struct tk_addr *);
static void	check_path(const char *, const char *, int);
static void	drop_privileges(void);
static uint64_t	sessions_now(void);
static void	on_signal(struct tk_loop *, int, void *);
static void	drain_deadline(struct tk_loop *, struct tk_timer *);
static void	force_all(void);
static void	worker_done(struct tk_loop *, struct tk_msg *);
static void	save_args(int, char *[]);
static void	confopts_free(void);
static int	repeatable(int);
static const char *changed(const struct config *, const struct config *);
static int	upgrade_fd(void);

static noreturn void
usage(int full)
{
	FILE	*f = full ? stdout : stderr;

	fprintf(f, "usage: tenkd echo [-l addr:port] [-t threads] "
	    "[-b backend] [--max-conns n]\n"
	    "\t[--backlog n] [--idle-timeout dur] [--drain-timeout dur]\n"
	    "\t[--buffer-limit size] [--max-memory size] [--log-level level]\n"
	    "\t[--syslog] [--syslog-facility name] [--access-log path]\n"
	    "\t[--access-log-format text|json] [--access-log-buffer size]\n"
	    "\t[--ring-buffers n] [--pidfile path] [--user user] "
	    "[--group group]\n"
	    "\t[--workers n] [--ready-timeout dur] [--metrics addr:port]\n"
	    "\t[--metrics-max-clients n] [--accept-proxy] "
	    "[--accept-proxy-timeout dur]\n"
	    "\t[--accept-proxy-from cidr,...]\n"
	    "\t[--tls-cert file --tls-key file ...] [--tls-ciphers list]\n"
	    "\t[--tls-handshake-timeout dur] [--tls-ticket-period dur]\n"
	    "\t[--tls-version 1.2|1.3] [--check] [-f file]\n"
	    "       tenkd proxy -u host:port[,weight=n][,backup][,name=name]"
	    "[,tls\n"
	    "\t[,sni=name][,ca=file][,noverify]] ... "
	    "[--sni-route name=host:port,...]\n"
	    "\t[--balance rr|leastconn|hash|source] [--connect-timeout dur]\n"
	    "\t[--hash-key source|source-port]\n"
	    "\t[--fin-timeout dur] [--retries n] [--fail-max n]\n"
	    "\t[--fail-timeout dur] [--max-conns-per-ip n] "
	    "[--send-proxy v1|v2]\n"
	    "\t[--source addr,...] [--splice auto|off] [--splice-pipes n]\n"
	    "\t[--fastpath sockmap|off]\n"
	    "\t[--check-interval dur] [--check-rise n] [--check-fall n]\n"
	    "\t[--check-send text] [--check-expect text] "
	    "[--check-timeout dur]\n"
	    "\t[echo's options]\n"
	    "       tenkd --help | --version\n");
	if (!full)
		exit(2);
	fprintf(f, "\n"
	    "  -l, --listen ADDR:PORT   listen address, repeatable "
	    "(default " DEFAULT_LISTEN ")\n"
	    "  -t, --threads N          worker threads (default: online "
	    "CPUs)\n"
	    "  -b, --backend NAME       epoll, poll, select or io_uring; "
	    "\"list\" prints them\n"
	    "      --max-conns N        connections per process, 0 = up "
	    "to the fd limit\n"
	    "      --backlog N          listen backlog (default: "
	    "net.core.somaxconn)\n"
	    "      --idle-timeout DUR   close idle connections (default "
	    "300s, 0 = never)\n"
	    "      --drain-timeout DUR  force-close after SIGTERM "
	    "(default 10s)\n"
	    "      --buffer-limit SIZE  queued bytes per connection "
	    "(default 64k)\n"
	    "      --ring-buffers N     io_uring: 16k receive buffers per "
	    "thread (default 256)\n"
	    "      --max-memory SIZE    queued bytes in all, 0 = no cap "
	    "(default:\n"
	    "                           half the cgroup limit or physical "
	    "memory)\n"
	    "      --log-level LEVEL    error, warn, info or debug "
	    "(default info)\n"
	    "      --syslog             log to syslog instead of stderr\n"
	    "      --syslog-facility NAME  daemon (default), local0-7, ...; "
	    "implies --syslog\n"
	    "      --access-log PATH    one line per connection at close\n"
	    "      --access-log-format text|json  its lines (default text)\n"
	    "      --access-log-buffer SIZE  records waiting to be written; "
	    "past it\n"
	    "                           they are dropped, counted (default "
	    "4m)\n"
	    "      --pidfile PATH       write and lock a pid file\n"
	    "      --user USER          drop to this user after binding\n"
	    "      --group GROUP        drop to this group after binding\n"
	    "      --workers N          worker processes under a master "
	    "(default 1: no\n"
	    "                           master, unless -f)\n"
	    "      --ready-timeout DUR  for a reload's workers or an "
	    "upgrade's master to\n"
	    "                           start (default 30s)\n"
	    "      --metrics ADDR:PORT  serve /metrics (Prometheus) and "
	    "/stats over HTTP\n"
	    "      --metrics-max-clients N  its clients at once; more are "
	    "refused (default\n"
	    "                           16)\n"
	    "      --accept-proxy       read a PROXY protocol header (v1 "
	    "or v2) first;\n"
	    "                           its client is the peer\n"
	    "      --accept-proxy-timeout DUR  for the whole header "
	    "(default 5s)\n"
	    "      --accept-proxy-from CIDR,...  only from these peers "
	    "(implies\n"
	    "                           --accept-proxy; others are "
	    "closed)\n"
	    "      --tls-cert FILE      serve TLS with this certificate "
	    "chain (PEM),\n"
	    "                           repeatable: chosen by the name "
	    "asked (SNI)\n"
	    "      --tls-key FILE       its private key (PEM), one per "
	    "--tls-cert, in order\n"
	    "      --tls-ciphers LIST   TLS 1.2 ciphers, TLS 1.3 suites "
	    "(default OpenSSL's)\n"
	    "      --tls-handshake-timeout DUR  a client's whole handshake "
	    "(default 10s)\n"
	    "      --tls-ticket-period DUR  session ticket keys rotate "
	    "this often\n"
	    "                           (default 1h, 0 = no tickets)\n"
	    "      --tls-version VER    1.2 or 1.3 only (default: both)\n"
	    "      --check              check the configuration and exit\n"
	    "  -f, --config FILE        options from FILE, one a line; "
	    "the command\n"
	    "                           line's take precedence\n"
	    "proxy:\n"
	    "  -u, --upstream H:P[,weight=N][,backup][,name=NAME]  an "
	    "upstream,\n"
	    "                           repeatable; a backup only while "
	    "every other one\n"
	    "                           is down; NAME for --balance hash "
	    "(default H:P);\n"
	    "                           ,tls[,sni=NAME][,ca=FILE][,noverify]:"
	    " over TLS,\n"
	    "                           verified (default: system CAs, its "
	    "address)\n"
	    "      --sni-route LIST     NAME=H:P,... (\"*.suffix\", \"*\"):"
	    " route by the name\n"
	    "                           in the ClientHello, TLS passed on "
	    "untouched\n"
	    "      --balance METHOD     rr (weighted, default), leastconn "
	    "or hash\n"
	    "                           (consistent; source is the same)\n"
	    "      --hash-key KEY       hash: source (address, default) or "
	    "source-port\n"
	    "      --connect-timeout DUR  per connect attempt (default 5s)\n"
	    "      --fin-timeout DUR    close a silent half-closed session "
	    "(default 30s)\n"
	    "      --retries N          connect attempts after the first "
	    "(default 2)\n"
	    "      --fail-max N         failed connects in a row to take "
	    "one out (default 3)\n"
	    "      --fail-timeout DUR   for how long (default 10s)\n"
	    "      --check-interval DUR  connect to each upstream this often "
	    "(default 0: off)\n"
	    "      --check-fall N       failed checks in a row to take one "
	    "out (default 3)\n"
	    "      --check-rise N       passed checks in a row to bring it "
	    "back (default 2)\n"
	    "      --check-send TEXT    after connecting, send TEXT and "
	    "CRLF\n"
	    "      --check-expect TEXT  the reply must begin with TEXT\n"
	    "      --check-timeout DUR  for a whole check (default: the "
	    "interval, or\n"
	    "                           --connect-timeout if shorter)\n"
	    "      --max-conns-per-ip N  sessions per client address "
	    "(default 0: no cap)\n"
	    "      --send-proxy VER     PROXY protocol header v1 or v2\n"
	    "      --source LIST        local addresses for upstream "
	    "connects, in turn\n"
	    "      --splice auto|off    move bulk streams with splice(2) "
	    "(default auto)\n"
	    "      --splice-pipes N     pipes per thread for it (default "
	    "64)\n"
	    "      --fastpath sockmap|off  let the kernel forward established "
	    "sessions\n"
	    "                           (BPF sockmap; default off)\n"
	    "  (--buffer-limit is per direction in proxy mode, default 16k;\n"
	    "   --max-conns counts both sockets of a session)\n"
	    "  -h, --help               this help\n"
	    "  -V, --version            print the version\n");
	exit(0);
}

/* opt ARG (as typed, for messages): one more address to listen on. */
static void
add_listen(const char *opt, const char *arg)
{
	struct tk_addr	 a;
	const char	*err, *s = arg;
	char		 buf[300];
	int		 i;

	if (srv.cfg.nlisten == MAXLISTEN)
		tk_cli_bad(opt, arg, "too many addresses (at most %d)",
		    MAXLISTEN);
	/* "*:port" is every IPv4 address. */
	if (strncmp(arg, "*:", 2) == 0) {
		snprintf(buf, sizeof(buf), "0.0.0.0:%s", arg + 2);
		s = buf;
	}
	if (tk_addr_parse(s, DEFAULT_PORT, &a, &err) == -1)
		tk_cli_bad_addr(opt, arg, err);
	for (i = 0; i < srv.cfg.nlisten; i++)
		if (tk_addr_port(&a) != 0 && tk_addr_eq(&a, &srv.cfg.listen[i]))
			tk_cli_bad(opt, arg, "given twice");
	srv.cfg.listen[srv.cfg.nlisten++] = a;
}

/* Whether host (as tk_addr_fmt_host writes it) is every address. */
static int
wildcard(const char *host)
{
	return strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0;
}

/*
 * The --metrics address on a listener's, which would meet tenkd's own
 * socket there and fail as "address in use (by another process)":
 * refused as a repeated --listen is, exit 2.
 */
static void
metrics_clash(void)
{
	const struct tk_addr	*m;
	char			 hm[TK_ADDRSTRLEN], hl[TK_ADDRSTRLEN];
	char			 name[TK_ADDRSTRLEN];
	int			 i;

	if ((m = metrics_addr()) == NULL || tk_addr_port(m) == 0)
		return;
	tk_addr_fmt(m, name, sizeof(name));
	tk_addr_fmt_host(m, hm, sizeof(hm));
	for (i = 0; i < srv.cfg.nlisten; i++) {
		if (tk_addr_eq(m, &srv.cfg.listen[i]))
			tk_cli_bad("--metrics", name, "given twice (also a "
			    "--listen address)");
		tk_addr_fmt_host(&srv.cfg.listen[i], hl, sizeof(hl));
		/* A wildcard and an address of its family, one port. */
		if (tk_addr_port(m) == tk_addr_port(&srv.cfg.listen[i]) &&
		    m->ss.ss_family == srv.cfg.listen[i].ss.ss_family &&
		    (wildcard(hm) || wildcard(hl)))
			tk_cli_bad("--metrics", name, "overlaps --listen %s",
			    tk_addr_fmt(&srv.cfg.listen[i], hl, sizeof(hl)));
	}
}

/*
 * Read the command line, then the -f file, into srv.cfg; anything wrong
 * is one line on stderr and exit 2.  Strings are copied, since
 * setproctitle() may reuse the memory of argv.
 */
static void
parse_args(int argc, char *argv[])
{
	struct config		*cfg = &srv.cfg;
	struct passwd		*pw;
	struct group		*gr;
	const char		*opt, *err;
	int			 ch, lvl, help = 0, version = 0, list = 0;

	cfg->threads = 0;
	cfg->max_conns = -1;
	cfg->idle_timeout = DEFAULT_IDLE;
	cfg->drain_timeout = DEFAULT_DRAIN;
	cfg->ready_timeout = DEFAULT_READY;
	cfg->metrics_clients = DEFAULT_METRICS_CLIENTS;
	cfg->access_buffer = DEFAULT_ALOG_BUFFER;
	cfg->buffer_limit = 0;		/* by mode, after parsing */
	cfg->max_memory = -1;		/* mem_init() decides */
	cfg->log_level = LOG_LVL_INFO;
	cfg->splice = 1;
	cfg->splice_pipes = DEFAULT_PIPES;

	while ((ch = next_option(argc, argv, &opt)) != -1) {
		switch (ch) {
		case 'b':
			if ((cfg->backend = tk_cli_backend(opt, optarg)) ==
			    NULL)
				list = 1;
			break;
		case 'h':
			help = 1;
			break;
		case 'l':
			add_listen(opt, optarg);
			listen_given = 1;
			break;
		case 't':
			cfg->threads = tk_cli_num(opt, optarg, 1, MAXTHREADS);
			break;
		case 'V':
			version = 1;
			break;
		case OPT_ACCEPT_PROXY:
			pincf.on = 1;
			break;
		case OPT_ACCEPT_PROXY_FROM:
			if (pin_from_add(optarg, &err) == -1)
				tk_cli_bad(opt, optarg, "%s", err);
			pincf.on = 1;
			break;
		case OPT_ACCEPT_PROXY_TIMEOUT:
			pincf.timeout = tk_cli_duration(opt, optarg,
			    10 * TK_MSEC, 3600 * TK_SEC, "10ms to 1h");
			break;
		case OPT_ACCESS_LOG:
			if (*optarg == '\0')
				tk_cli_bad(opt, NULL, "empty path");
			free(cfg->access_log);
			cfg->access_log = xstrdup(optarg);
			break;
		case OPT_ACCESS_FORMAT:
			if (strcmp(optarg, "json") == 0)
				cfg->access_json = 1;
			else if (strcmp(optarg, "text") == 0)
				cfg->access_json = 0;
			else
				tk_cli_bad(opt, optarg, "text or json");
			break;
		case OPT_ACCESS_BUFFER:
			cfg->access_buffer = tk_cli_size(opt, optarg,
			    ACCESS_BUFSIZE, 1ULL << 30);
			break;
		case OPT_BACKLOG:
			cfg->backlog = tk_cli_num(opt, optarg, 1, 1000000);
			break;
		case OPT_BUFLIMIT:
			cfg->buffer_limit = tk_cli_size(opt, optarg, 512,
			    256ULL << 20);
			break;
		case OPT_RINGBUFS:
			cfg->ring_bufs = (unsigned int)tk_cli_num(opt, optarg,
			    1, 32768);
			if ((cfg->ring_bufs & (cfg->ring_bufs - 1)) != 0)
				fatalx("--ring-buffers %s: not a power of two",
				    optarg);
			break;
		case OPT_MAXMEM:
			cfg->max_memory = (long long)tk_cli_size(opt, optarg,
			    0, 1ULL << 50);
			/*
			 * Below a few pool buffers the marks (90%, 80%)
			 * round to nothing and an episode could never end.
			 */
			if (cfg->max_memory > 0 &&
			    cfg->max_memory < MEM_MIN_BUDGET)
				tk_cli_bad(opt, optarg, "too small (0 for no "
				    "budget, else at least 64k)");
			break;
		case OPT_CHECK:
			cfg->check = 1;
			break;
		case OPT_DRAIN:
			cfg->drain_timeout = tk_cli_duration(opt, optarg, 0,
			    3600 * TK_SEC, NULL);
			break;
		case OPT_GROUP:
			if ((gr = getgrnam(optarg)) == NULL)
				tk_cli_bad(opt, optarg, "no such group");
			free(cfg->group);
			cfg->group = xstrdup(optarg);
			cfg->gid = gr->gr_gid;
			break;
		case OPT_IDLE:
			cfg->idle_timeout = tk_cli_duration(opt, optarg, 0,
			    24 * 3600 * TK_SEC, "0, or 10ms to 24h");
			if (cfg->idle_timeout != 0 &&
			    cfg->idle_timeout < 10 * TK_MSEC)
				tk_cli_bad(opt, optarg, "too small (0, or 10ms "
				    "to 24h; units ms, s, m, h)");
			break;
		case OPT_LOGLEVEL:
			if ((lvl = log_level_parse(optarg)) == -1)
				tk_cli_bad(opt, optarg, "not a level (error, "
				    "warn, info, debug)");
			cfg->log_level = lvl;
			break;
		case OPT_MAXCONNS:
			cfg->max_conns = tk_cli_num(opt, optarg, 0,
			    CONNCAP_MAX);
			break;
		case OPT_PIDFILE:
			if (*optarg == '\0')
				tk_cli_bad(opt, NULL, "empty path");
			free(cfg->pidfile);
			cfg->pidfile = xstrdup(optarg);
			break;
		case OPT_SYSLOG:
			cfg->syslog = 1;
			break;
		case OPT_METRICS:
			metrics_option(opt, optarg);
			break;
		case OPT_METRICS_CLIENTS:
			cfg->metrics_clients = (int)tk_cli_num(opt, optarg, 1,
			    METRICS_MAXCLIENTS);
			break;
		case OPT_READY_TIMEOUT:
			cfg->ready_timeout = tk_cli_duration(opt, optarg,
			    TK_SEC, 3600 * TK_SEC, "1s to 1h");
			break;
		case OPT_SYSLOG_FACILITY:
			if ((lvl = log_facility_parse(optarg)) == -1)
				tk_cli_bad(opt, optarg, "not a facility "
				    "(daemon, local0 to local7, user, ...)");
			log_facility(lvl);
			cfg->syslog = 1;
			break;
		case OPT_USER:
			if ((pw = getpwnam(optarg)) == NULL)
				tk_cli_bad(opt, optarg, "no such user");
			free(cfg->user);
			cfg->user = xstrdup(optarg);
			cfg->uid = pw->pw_uid;
			if (cfg->group == NULL)
				cfg->gid = pw->pw_gid;
			break;
		case OPT_WORKERS:
			cfg->workers = (int)tk_cli_num(opt, optarg, 1,
			    MAXWORKERS);
			break;
		case OPT_TLS_CERT:
		case OPT_TLS_CIPHERS:
		case OPT_TLS_HS_TIMEOUT:
		case OPT_TLS_KEY:
		case OPT_TLS_TICKETS:
		case OPT_TLS_VERSION:
			tlsterm_option(ch - OPT_TLS_CERT, opt, optarg);
			break;
		default:	/* -u and OPT_PROXY up */
			proxy_option(ch, opt, optarg);
			break;
		}
	}
	if (help)
		usage(1);
	if (version) {
		printf("tenkd %s\n", TENK_VERSION);
		exit(0);
	}
	if (list)
		tk_cli_backend_list();
	argc -= optind;
	argv += optind;
	if (argc == 0)
		tk_cli_bad(NULL, NULL, "no mode given (tenkd echo [options]; "
		    "tenkd --help)");
	if (argc > 1)
		tk_cli_bad(argv[1], NULL, "unexpected argument");
	if (strcmp(argv[0], "proxy") == 0) {
		cfg->mode = "proxy";
		srv.proto = &proto_proxy;
	} else if (strcmp(argv[0], "echo") == 0) {
		cfg->mode = "echo";
		srv.proto = &proto_echo;
	} else
		tk_cli_bad(argv[0], NULL, "unknown mode (echo, proxy)");
	mode_config();
	tlsterm_apply();
	/* Applied: what named and held the options is no longer needed. */
	confopts_free();
	free(proxy_opt);
	proxy_opt = NULL;
	if (cfg->user != NULL && cfg->group != NULL) {
		/* --group given before --user: keep the group. */
		if ((gr = getgrnam(cfg->group)) != NULL)
			cfg->gid = gr->gr_gid;
	}
	if (cfg->nlisten == 0)
		add_listen("--listen", DEFAULT_LISTEN);
	metrics_clash();
	if (cfg->threads == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		cfg->threads = n < 1 ? 1 : n > MAXTHREADS ? MAXTHREADS : n;
	}
}

/*
 * The next option for parse_args(), its name as typed in *opt and its
 * value in optarg: the command line's (getopt), then those of the -f
 * file that the command line did not give, so that the command line
 * takes precedence; for a repeatable option (--listen, --upstream,
 * --source, --accept-proxy-from) one given on the command line replaces
 * all of the file's.
 * Returns -1 at the end.  Start-up; errors exit 2.
 */
static int
next_option(int argc, char *argv[], const char **opt)
{
	struct confopt	*co;
	char		 err[1024];
	int		 ch;

	while (!cmdline_done) {
		ch = tk_cli_getopt(argc, argv, ":b:f:hl:t:u:V", longopts);
		if (ch == -1) {
			cmdline_done = 1;
			if (conf_path != NULL && conf_text != NULL &&
			    conf_parse(conf_text, conf_len, conf_path,
			    conf_option, NULL, err, sizeof(err)) == -1)
				tk_cli_bad(NULL, NULL, "%s", err);
			else if (conf_path != NULL && conf_text == NULL &&
			    conf_read(conf_path, conf_option, NULL, err,
			    sizeof(err)) == -1)
				tk_cli_bad(NULL, NULL, "%s", err);
			if (confl.repeats > CONF_REPEATS && !confl.quiet)
				tk_cli_warn(conf_path, NULL, "%d more options "
				    "given twice", confl.repeats -
				    CONF_REPEATS);
			break;
		}
		*opt = tk_cli_opt();
		if (ch != 'f') {
			cmdline_gave[ch] = 1;
			return ch;
		}
		if (conf_path != NULL)
			tk_cli_bad(*opt, optarg, "given twice");
		conf_path = xstrdup(optarg);
	}
	while (confl.next < confl.n) {
		co = &confl.v[confl.next++];
		if (cmdline_gave[co->ch])
			continue;
		*opt = co->opt;
		optarg = co->arg;
		return co->ch;
	}
	return -1;
}

/*
 * One line of the -f file (conf_read): the option by its long name,
 * checked as getopt would, kept for next_option().  Exits 2 naming
 * FILE:LINE on an unknown option, a missing value or one too many.  An
 * option given twice that is not a list (listen, upstream, source,
 * accept-proxy-from) is said on stderr, naming both lines.
 */
static void
conf_option(void *arg, const char *where, const char *name,
    const char *value)
{
	const struct option	*o;
	struct confopt		*co;
	char			 opt[400];
	size_t			 k;

	(void)arg;
	snprintf(opt, sizeof(opt), "%s: %s", where, name);
	for (o = longopts; o->name != NULL; o++)
		if (strcmp(o->name, name) == 0)
			break;
	if (o->name == NULL)
		tk_cli_bad(opt, NULL, "unknown option");
	if (o->val == 'f' || o->val == 'h' || o->val == 'V' ||
	    o->val == OPT_CHECK)
		tk_cli_bad(opt, NULL, "only on the command line");
	if (o->has_arg == no_argument && value != NULL)
		tk_cli_bad(opt, value, "takes no value");
	if (o->has_arg == required_argument && value == NULL)
		tk_cli_bad(opt, NULL, "needs a value");
	if ((k = confl.last[o->val]) != 0 && !repeatable(o->val) &&
	    ++confl.repeats <= CONF_REPEATS && !confl.quiet) {
		/* Its "FILE:LINE", without the ": NAME" that follows. */
		co = &confl.v[k - 1];
		tk_cli_warn(opt, NULL, "given before, at %.*s; the last one "
		    "is used", (int)(strlen(co->opt) - strlen(name) - 2),
		    co->opt);
	}
	if (confl.n == confl.cap) {
		confl.cap = confl.cap == 0 ? 64 : confl.cap * 2;
		confl.v = xreallocarray(confl.v, confl.cap, sizeof(*confl.v));
	}
	co = &confl.v[confl.n++];
	co->ch = o->val;
	co->opt = xstrdup(opt);
	co->arg = value != NULL ? xstrdup(value) : NULL;
	confl.last[o->val] = confl.n;
}

/* Whether option ch adds to a list, each time it is given. */
static int
repeatable(int ch)
{
	return ch == 'l' || ch == 'u' || ch == OPT_SOURCE ||
	    ch == OPT_ACCEPT_PROXY_FROM;
}

/* The -f file's options, once parse_args() applied them. */
static void
confopts_free(void)
{
	size_t	i;
	int	quiet = confl.quiet;

	for (i = 0; i < confl.n; i++) {
		free(confl.v[i].opt);
		free(confl.v[i].arg);
	}
	free(confl.v);
	memset(&confl, 0, sizeof(confl));
	confl.quiet = quiet;
}

/*
 * A proxy option (-u, or a value from OPT_PROXY up); opt is its name as
 * typed, kept for mode_config() to refuse in echo mode.  Start-up; a bad
 * value exits 2.
 */
static void
proxy_option(int ch, const char *opt, const char *arg)
{
	const char	*err;
	char		*line;

	if (proxy_opt == NULL)
		proxy_opt = xstrdup(opt);
	switch (ch) {
	case 'u':
		if (upstream_add(arg, &err) == -1)
			tk_cli_bad_addr(opt, arg, err);
		break;
	case OPT_BALANCE:
		if (strcmp(arg, "rr") == 0)
			pxcf.balance = BALANCE_RR;
		else if (strcmp(arg, "leastconn") == 0)
			pxcf.balance = BALANCE_LEASTCONN;
		else if (strcmp(arg, "hash") == 0 ||
		    strcmp(arg, "source") == 0)
			pxcf.balance = BALANCE_HASH;
		else
			tk_cli_bad(opt, arg,
			    "not a method (rr, leastconn, hash, source)");
		break;
	case OPT_CHECK_EXPECT:
		if (*arg == '\0')
			tk_cli_bad(opt, NULL, "empty text");
		free(hccf.expect);
		hccf.expect = xstrdup(arg);
		break;
	case OPT_CHECK_FALL:
		hccf.fall = (int)tk_cli_num(opt, arg, 1, 1000);
		break;
	case OPT_CHECK_INTERVAL:
		hccf.interval = tk_cli_duration(opt, arg, 0, 3600 * TK_SEC,
		    "0, or 10ms to 1h");
		if (hccf.interval != 0 && hccf.interval < 10 * TK_MSEC)
			tk_cli_bad(opt, arg, "too small (0, or 10ms to 1h)");
		break;
	case OPT_CHECK_RISE:
		hccf.rise = (int)tk_cli_num(opt, arg, 1, 1000);
		break;
	case OPT_CHECK_SEND:
		if (*arg == '\0')
			tk_cli_bad(opt, NULL, "empty text");
		if (asprintf(&line, "%s\r\n", arg) == -1)
			fatal("asprintf");
		free(hccf.send);
		hccf.send = line;
		break;
	case OPT_CHECK_TIMEOUT:
		hccf.timeout = tk_cli_duration(opt, arg, 10 * TK_MSEC,
		    3600 * TK_SEC, "10ms to 1h");
		break;
	case OPT_CONNECT_TIMEOUT:
		pxcf.connect_timeout = tk_cli_duration(opt, arg, 10 * TK_MSEC,
		    3600 * TK_SEC, "10ms to 1h");
		break;
	case OPT_FAIL_MAX:
		pxcf.fail_max = (int)tk_cli_num(opt, arg, 1, 1000);
		break;
	case OPT_FAIL_TIMEOUT:
		pxcf.fail_timeout = tk_cli_duration(opt, arg, 0, 3600 * TK_SEC,
		    "0 to 1h");
		break;
	case OPT_FIN_TIMEOUT:
		pxcf.fin_timeout = tk_cli_duration(opt, arg, 0,
		    24 * 3600 * TK_SEC, "0 to 24h");
		break;
	case OPT_HASH_KEY:
		if (strcmp(arg, "source") == 0)
			pxcf.hash_key = HKEY_SOURCE;
		else if (strcmp(arg, "source-port") == 0)
			pxcf.hash_key = HKEY_SOURCE_PORT;
		else if (strcmp(arg, "sni") == 0)
			/* The name TLS routing will read: proxy.c hash_slot. */
			tk_cli_bad(opt, arg, "needs TLS routing, which this "
			    "tenkd does not have yet");
		else
			tk_cli_bad(opt, arg,
			    "not a key (source, source-port)");
		break;
	case OPT_MAXPERIP:
		pxcf.max_per_ip = tk_cli_num(opt, arg, 0, CONNCAP_MAX);
		break;
	case OPT_RETRIES:
		pxcf.retries = (int)tk_cli_num(opt, arg, 0, 100);
		break;
	case OPT_SEND_PROXY:
		if (strcmp(arg, "v1") == 0)
			pxcf.send_proxy = 1;
		else if (strcmp(arg, "v2") == 0)
			pxcf.send_proxy = 2;
		else
			tk_cli_bad(opt, arg, "not a version (v1, v2)");
		break;
	case OPT_SOURCE:
		upstream_source_add(opt, arg);
		break;
	case OPT_SPLICE:
		if (strcmp(arg, "auto") == 0)
			srv.cfg.splice = 1;
		else if (strcmp(arg, "off") == 0)
			srv.cfg.splice = 0;
		else
			tk_cli_bad(opt, arg, "not a choice (auto, off)");
		break;
	case OPT_SPLICE_PIPES:
		srv.cfg.splice_pipes = (int)tk_cli_num(opt, arg, 0,
		    MAXPIPES);
		break;
	case OPT_SNI_ROUTE:
		sniroute_option(opt, arg);
		break;
	case OPT_FASTPATH:
		if (strcmp(arg, "sockmap") == 0)
			srv.cfg.fastpath = 1;
		else if (strcmp(arg, "off") == 0)
			srv.cfg.fastpath = 0;
		else
			tk_cli_bad(opt, arg, "not a choice (sockmap, off)");
		break;
	}
}

/*
 * After the command line, the mode's defaults: refuse proxy options in
 * echo mode, require an upstream in proxy mode, size --buffer-limit.
 * Exits 2 on error.
 */
static void
mode_config(void)
{
	if (srv.proto != &proto_proxy) {
		if (proxy_opt != NULL)
			tk_cli_bad(proxy_opt, NULL, "only with tenkd proxy");
		if (srv.cfg.buffer_limit == 0)
			srv.cfg.buffer_limit = DEFAULT_BUFLIMIT;
		srv.cfg.splice = 0;
		return;
	}
	if (upstream_count() == 0)
		tk_cli_bad("proxy", NULL, "needs at least one upstream "
		    "(-u HOST:PORT)");
	if (srv.cfg.buffer_limit == 0)
		srv.cfg.buffer_limit = DEFAULT_PX_BUFLIMIT;
	if (srv.cfg.splice_pipes == 0)
		srv.cfg.splice = 0;
	upstream_init();
	dp_init();
}

/*
 * Raise the soft RLIMIT_NOFILE to the hard one and derive how many
 * connections fit: the limit minus the descriptors tenkd itself holds
 * (stdio, listeners, each loop's backend and wake-up fds, the signal
 * pipe, logs, pidfile) and a small slack.
 */
static void
set_limits(void)
{
	struct config	*cfg = &srv.cfg;
	uint64_t	 reserve, fit;

	if (tk_nofile_raise(&srv.nofile) == -1)
		log_warn("RLIMIT_NOFILE %llu not raised to the hard limit",
		    (unsigned long long)srv.nofile);
	reserve = 3 + 16 + (uint64_t)cfg->threads * (cfg->nlisten + 3) +
	    (cfg->access_log != NULL) + (cfg->pidfile != NULL);
	/* Under a master, the master serves the metrics, not a worker. */
	if (cfg->workers <= 1 && conf_path == NULL)
		reserve += metrics_fds();
	/* Two descriptors a splice pipe; pipes take at most a quarter. */
	if (cfg->splice) {
		fit = srv.nofile / 4 / (2 * (uint64_t)cfg->threads);
		if ((uint64_t)cfg->splice_pipes > fit) {
			log_warnx("--splice-pipes %d does not fit "
			    "RLIMIT_NOFILE %llu: using %llu", cfg->splice_pipes,
			    (unsigned long long)srv.nofile,
			    (unsigned long long)fit);
			cfg->splice_pipes = (int)fit;
			if (fit == 0)
				cfg->splice = 0;
		}
		reserve += (uint64_t)cfg->threads * cfg->splice_pipes * 2;
	}
	fit = srv.nofile > reserve ? srv.nofile - reserve : 1;
	if (cfg->max_conns == -1)
		srv.max_conns = fit;
	else if ((uint64_t)cfg->max_conns > fit) {
		log_warnx("--max-conns %lld does not fit RLIMIT_NOFILE %llu: "
		    "using %llu", cfg->max_conns,
		    (unsigned long long)srv.nofile, (unsigned long long)fit);
		srv.max_conns = fit;
	} else
		srv.max_conns = cfg->max_conns;
	log_info("RLIMIT_NOFILE %llu, max-conns %llu%s",
	    (unsigned long long)srv.nofile,
	    (unsigned long long)srv.max_conns,
	    srv.max_conns == 0 ? " (no cap: up to the fd limit)" : "");
}

/*
 * Exit 1 for a socket that could not be bound to a, errno saying why;
 * on EACCES for a port below net.ipv4.ip_unprivileged_port_start, with
 * the two ways to it.  what names the socket ("listen on", "--metrics").
 */
static noreturn void
bind_fail(const char *what, const struct tk_addr *a)
{
	char	name[TK_ADDRSTRLEN];
	int	low = tk_sock_unpriv_port();

	tk_addr_fmt(a, name, sizeof(name));
	if (errno == EACCES && tk_addr_port(a) > 0 && tk_addr_port(a) < low)
		fatalx("%s %s: %s: a port below %d needs CAP_NET_BIND_SERVICE, "
		    "or let tenkd.socket bind it", what, name, strerror(EACCES),
		    low);
	fatal("%s %s", what, name);
}

/*
 * --check, which binds nothing: exit 1 as bind_fail() if a's port needs
 * a capability this process lacks.
 */
static void
check_bind(const char *what, const struct tk_addr *a)
{
	if (a == NULL || tk_addr_port(a) <= 0 ||
	    tk_addr_port(a) >= tk_sock_unpriv_port() || tk_sock_cap_bind())
		return;
	errno = EACCES;
	bind_fail(what, a);
}

/*
 * Refuse an address another process listens on, before binding our own
 * SO_REUSEPORT sockets there, which the kernel would let us add to a
 * group another tenkd (any process of the same user with SO_REUSEPORT)
 * already has, taking half its connections.  A socket bound without
 * SO_REUSEPORT (not listening, so no client can reach it) conflicts
 * with any listener on the address, ours included, so the probe goes
 * first and is closed before our binds.  Two tenkd started in the same
 * microsecond could both pass; reading /proc/net/tcp would have the
 * same window and more parsing, and the kernel offers no atomic "join
 * only a group of my own".  Port 0 needs no probe: the kernel picks a
 * free port.  Exits 1 with "address in use".
 *
 * The probe's bind also fails on connections that hold the port, such
 * as those in TIME_WAIT after a server that closed first stopped, when
 * they were bound without SO_REUSEADDR (or with SO_REUSEPORT alone): not
 * an owner, and our own binds (SO_REUSEADDR and SO_REUSEPORT) may well
 * pass them.  So a refused probe asks the kernel whether a listener is
 * there (tk_sock_listener), and only a listener, or no answer, is "in
 * use by another process"; otherwise our binds decide.
 */
static void
probe_owner(const struct tk_addr *a)
{
	char	name[TK_ADDRSTRLEN];
	int	fd, one = 1, err;

	if (tk_addr_port(a) == 0)
		return;
	if ((fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) ==
	    -1)
		fatal("socket");
	/* SO_REUSEADDR: connections in TIME_WAIT are no owner. */
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (a->ss.ss_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof(one));
	if (bind(fd, (const struct sockaddr *)&a->ss, a->len) == -1) {
		err = errno;
		close(fd);
		tk_addr_fmt(a, name, sizeof(name));
		if (err == EADDRINUSE && tk_sock_listener(a) == 0) {
			log_debug("%s: %s held, by no listener", __func__,
			    name);
			return;
		}
		errno = err;
		if (err == EADDRINUSE)
			fatalx("listen on %s: address in use (by another "
			    "process)", name);
		bind_fail("listen on", a);
	}
	close(fd);
}

/*
 * The sockets systemd passed (socket activation) as our listeners, in
 * place of --listen: each thread of each worker gets its own descriptor
 * of the one socket (a dup), as it would get its own socket otherwise.
 * An upgrade (master.c) passes the same way every socket the old master
 * held, several per address: they are grouped by address and kept as
 * they were, one a thread, so that their backlogs go on being served.
 * If the threads or workers changed, a socket left over is closed (the
 * connections in its backlog are lost, and said so) and a missing one
 * is a dup.  Returns lfds, or NULL when systemd passed none.
 */
static int *
inherit_listeners(void)
{
	struct config	*cfg = &srv.cfg;
	struct tk_addr	 a;
	char		**names, name[TK_ADDRSTRLEN];
	int		*fds, *grp, *lfds, n, i, j, t, k, per, lost = 0;

	if ((n = systemd_listen_fds(&fds, &names)) == 0)
		return NULL;
	if (listen_given && strcmp(names[0], UPGRADE_FDNAME) != 0)
		log_warnx("--listen ignored: listening on the %d socket%s "
		    "systemd passed", n, n == 1 ? "" : "s");
	cfg->nlisten = 0;
	grp = xcalloc(n, sizeof(*grp));
	for (i = 0; i < n; i++) {
		if (tk_sock_local(fds[i], &a) == -1)
			fatal("socket %d from systemd", fds[i]);
		for (j = 0; j < cfg->nlisten; j++)
			if (tk_addr_eq(&a, &cfg->listen[j]))
				break;
		if (j == cfg->nlisten) {
			if (j == MAXLISTEN)
				fatalx("sockets from systemd: more than %d "
				    "addresses", MAXLISTEN);
			cfg->listen[cfg->nlisten++] = a;
		}
		grp[i] = j;
	}
	per = LISTEN_FDS(cfg);
	lfds = xcalloc((size_t)cfg->nlisten * per, sizeof(*lfds));
	for (j = 0; j < cfg->nlisten; j++) {
		k = 0;
		for (i = 0; i < n; i++) {
			if (grp[i] != j)
				continue;
			if (k < per)
				lfds[j * per + k++] = fds[i];
			else {
				close(fds[i]);
				lost++;
			}
		}
		for (t = k; t < per; t++)
			if ((lfds[j * per + t] = fcntl(lfds[j * per + t % k],
			    F_DUPFD_CLOEXEC, 0)) == -1)
				fatal("dup of a socket from systemd");
		for (i = 0; i < n && grp[i] != j; i++)
			;
		tk_addr_fmt(&cfg->listen[j], name, sizeof(name));
		if (strcmp(names[i], UPGRADE_FDNAME) == 0)
			log_banner("listening on %s (%d socket%s from the old "
			    "master)", name, k, k == 1 ? "" : "s");
		else
			log_banner("listening on %s (from systemd%s%s)", name,
			    names[i][0] != '\0' ? ": " : "", names[i]);
	}
	if (lost > 0)
		log_warnx("%d passed socket%s closed, fewer threads or "
		    "workers now: connections waiting in %s backlog are lost",
		    lost, lost == 1 ? "" : "s", lost == 1 ? "its" : "their");
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(fds);
	free(grp);
	return lfds;
}

/*
 * Bind every address once per thread (of every --workers process) with
 * SO_REUSEPORT; lfds is [address][worker][thread].  Port 0 is bound
 * once, read back and reused for the other threads, so all threads share
 * one port per address, and
 * "listening on ADDR:PORT" is printed once per address (tests read it).
 * Sockets from systemd take the place of all of it.  Returns lfds.
 */
static int *
open_listeners(void)
{
	struct config	*cfg = &srv.cfg;
	struct tk_addr	 a;
	char		 name[TK_ADDRSTRLEN];
	int		 i, t, fd, somax, backlog, *lfds;

	if ((lfds = inherit_listeners()) != NULL)
		return lfds;
	lfds = xcalloc((size_t)cfg->nlisten * LISTEN_FDS(cfg), sizeof(*lfds));
	somax = tk_sock_somaxconn();
	backlog = cfg->backlog == 0 || cfg->backlog > somax ? somax :
	    cfg->backlog;
	if (cfg->backlog > somax)
		log_info("backlog %d capped by net.core.somaxconn to %d",
		    cfg->backlog, somax);
	else
		log_info("backlog %d", backlog);
	for (i = 0; i < cfg->nlisten; i++) {
		probe_owner(&cfg->listen[i]);
		for (t = 0; t < LISTEN_FDS(cfg); t++) {
			fd = tk_sock_listen(&cfg->listen[i], backlog,
			    TK_SOCK_REUSEPORT | TK_SOCK_V6ONLY);
			if (fd == -1 && errno == EADDRINUSE)
				fatalx("listen on %s: address in use, though "
				    "no listener holds it: by connections (in "
				    "TIME_WAIT, for up to a minute) of a "
				    "server that set neither SO_REUSEADDR nor "
				    "SO_REUSEPORT", tk_addr_fmt(
				    &cfg->listen[i], name, sizeof(name)));
			if (fd == -1)
				bind_fail("listen on", &cfg->listen[i]);
			if (t == 0 && tk_addr_port(&cfg->listen[i]) == 0) {
				if (tk_sock_local(fd, &a) == -1)
					fatal("getsockname");
				tk_addr_set_port(&cfg->listen[i],
				    tk_addr_port(&a));
			}
			lfds[i * LISTEN_FDS(cfg) + t] = fd;
		}
		tk_addr_fmt(&cfg->listen[i], name, sizeof(name));
		log_banner("listening on %s", name);
	}
	return lfds;
}

/*
 * --check: whether path (NULL: not asked for) can be opened for writing
 * as tenkd will open it (safefile_check), before any privilege is
 * dropped.  Dies with one line otherwise.
 */
static void
check_path(const char *what, const char *path, int log)
{
	struct fowner	o;
	char		err[256];

	if (path == NULL)
		return;
	safefile_owner(&srv.cfg, &o);
	if (safefile_check(path, &o, log, err, sizeof(err)) == -1)
		fatalx("%s %s: %s", what, path, err);
}

/*
 * --user/--group, after binding: supplementary groups (only the target
 * group: none of root's stay), then the group, then the user (the other
 * way round the group could no longer be changed), then check that none
 * can be taken back.  PR_SET_NO_NEW_PRIVS (Linux 3.5) last: no execve(2)
 * of a set-user-ID or file-capability binary can give any back either.
 */
static void
drop_privileges(void)
{
	struct config	*cfg = &srv.cfg;
	uid_t		 ru, eu, su;
	gid_t		 rg, eg, sg;

	if (cfg->user == NULL && cfg->group == NULL)
		return;
	/*
	 * An upgrade's new master runs as the old one did after dropping
	 * them, with no way back: nothing left to drop.
	 */
	if (upgraded && getuid() != 0 && geteuid() != 0 &&
	    (cfg->user == NULL || getuid() == cfg->uid) &&
	    getgid() == cfg->gid) {
		log_info("running as user %s group %u (as the old master)",
		    cfg->user != NULL ? cfg->user : "(unchanged)",
		    (unsigned int)cfg->gid);
		return;
	}
	if (setgroups(1, &cfg->gid) == -1)
		fatal("setgroups");
	if (setresgid(cfg->gid, cfg->gid, cfg->gid) == -1)
		fatal("setresgid %u", (unsigned int)cfg->gid);
	if (cfg->user != NULL && setresuid(cfg->uid, cfg->uid, cfg->uid) == -1)
		fatal("setresuid %u", (unsigned int)cfg->uid);
	if (getresgid(&rg, &eg, &sg) == -1 || rg != cfg->gid ||
	    eg != cfg->gid || sg != cfg->gid)
		fatalx("group %u was not dropped", (unsigned int)cfg->gid);
	if (cfg->user != NULL) {
		if (getresuid(&ru, &eu, &su) == -1 || ru != cfg->uid ||
		    eu != cfg->uid || su != cfg->uid)
			fatalx("user %u was not dropped",
			    (unsigned int)cfg->uid);
		if (cfg->uid != 0 && setuid(0) != -1)
			fatalx("could regain root after dropping it");
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		fatal("prctl PR_SET_NO_NEW_PRIVS");
	log_info("running as user %s group %u",
	    cfg->user != NULL ? cfg->user : "(unchanged)",
	    (unsigned int)cfg->gid);
}

/*
 * Sessions open now, for messages, from the --max-conns count (the one
 * figure main may read while workers run): a proxy session holds two
 * units, its client's and its upstream's, an echo connection one.  A
 * worker between its reservation and the session's start holds one unit
 * more for a moment, which the halving mostly absorbs.
 */
static uint64_t
sessions_now(void)
{
	uint64_t	n = atomic_load(&srv.nconns);

	return srv.proto == &proto_proxy ? n / 2 : n;
}

static void
on_signal(struct tk_loop *l, int signo, void *arg)
{
	uint64_t	n;
	char		dur[32];
	int		i;

	(void)arg;
	switch (signo) {
	case SIGHUP:
	case SIGUSR1:
		/*
		 * A worker's SIGHUP comes from its master, which reloads;
		 * without a master there is no file to read again.
		 */
		if (reopen_logs() == 0)
			log_info("SIG%s: logs reopened", sigabbrev_np(signo));
		break;
	case SIGUSR2:
		log_warnx("SIGUSR2 ignored: a binary upgrade is the "
		    "master's (-f or --workers)%s", master_role() == 2 ?
		    "; send it to the master" : "");
		break;
	case SIGINT:
	case SIGTERM:
		if (srv.draining) {
			log_info("SIG%s again: closing all %s now",
			    sigabbrev_np(signo), worker_sessions(2));
			force_all();
			break;
		}
		srv.draining = 1;
		n = sessions_now();
		systemd_notify("STOPPING=1\nSTATUS=draining %llu %s",
		    (unsigned long long)n, worker_sessions(n));
		log_info("SIG%s: no longer accepting, draining %llu %s for "
		    "up to %s", sigabbrev_np(signo), (unsigned long long)n,
		    worker_sessions(n),
		    tk_fmt_duration(srv.cfg.drain_timeout, dur, sizeof(dur)));
		setproctitle("%s: draining", srv.cfg.mode);
		for (i = 0; i < srv.nworkers; i++)
			tk_loop_post(srv.workers[i].l, &srv.workers[i].m_drain);
		if (srv.cfg.drain_timeout == 0)
			force_all();
		else if (tk_timer_arm(l, &srv.drain_timer,
		    srv.cfg.drain_timeout) == -1)
			force_all();
		break;
	}
}

static void
drain_deadline(struct tk_loop *l, struct tk_timer *t)
{
	uint64_t	n = sessions_now();

	(void)l;
	(void)t;
	log_info("drain timeout: closing %llu %s", (unsigned long long)n,
	    worker_sessions(n));
	force_all();
}

static void
force_all(void)
{
	int	i;

	if (srv.forcing)
		return;
	srv.forcing = 1;
	for (i = 0; i < srv.nworkers; i++)
		tk_loop_post(srv.workers[i].l, &srv.workers[i].m_force);
}

/* A worker drained; when all have, stop them and the main loop. */
static void
worker_done(struct tk_loop *l, struct tk_msg *m)
{
	int	i;

	(void)m;
	if (++srv.ndone < srv.nworkers)
		return;
	srv.stopping = 1;
	tk_timer_cancel(l, &srv.drain_timer);
	for (i = 0; i < srv.nworkers; i++)
		tk_loop_post(srv.workers[i].l, &srv.workers[i].m_stop);
	tk_loop_stop(l);
}

/*
 * Keep the command line as typed (setproctitle() may write over argv's
 * strings, getopt permutes the array) and the binary's absolute path:
 * argv[0] made absolute when it names a path, so that an upgrade runs
 * whatever file is at that path then (a package manager replaces it),
 * else the file we run from now.  Start-up.
 */
static void
save_args(int argc, char *argv[])
{
	char	cwd[PATH_MAX];
	ssize_t	n;
	int	i;

	saved_argc = argc;
	saved_argv = xcalloc((size_t)argc + 1, sizeof(*saved_argv));
	for (i = 0; i < argc; i++)
		saved_argv[i] = xstrdup(argv[i]);
	if (argv[0] != NULL && argv[0][0] == '/')
		strlcpy(self_path, argv[0], sizeof(self_path));
	else if (argv[0] != NULL && strchr(argv[0], '/') != NULL &&
	    getcwd(cwd, sizeof(cwd)) != NULL &&
	    strlen(cwd) + 1 + strlen(argv[0]) < sizeof(self_path)) {
		strlcpy(self_path, cwd, sizeof(self_path));
		strlcat(self_path, "/", sizeof(self_path));
		strlcat(self_path, argv[0], sizeof(self_path));
	} else if ((n = readlink("/proc/self/exe", self_path,
	    sizeof(self_path) - 1)) > 0)
		self_path[n] = '\0';
	else
		self_path[0] = '\0';
}

/*
 * In a new master started by an upgrade: the descriptor on which to
 * tell the old one we are ready ($TENKD_UPGRADE_FD), or -1.  The
 * variable is removed, so that nothing we start takes it for its own.
 */
static int
upgrade_fd(void)
{
	const char	*s, *errstr;
	int		 fd;

	if ((s = getenv(UPGRADE_ENV)) == NULL)
		return -1;
	fd = (int)strtonum(s, 3, INT_MAX, &errstr);
	unsetenv(UPGRADE_ENV);
	if (errstr != NULL || fcntl(fd, F_SETFD, FD_CLOEXEC) == -1)
		return -1;
	return fd;
}

static int
str_differ(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a != b;
	return strcmp(a, b) != 0;
}

/*
 * What a reload cannot apply, as it would have to close or bind
 * listening sockets, or needs privileges the master gave up: the name
 * of the first option that differs between was and now, or NULL.
 */
static const char *
changed(const struct config *was, const struct config *now)
{
	int	i;

	if (was->nlisten != now->nlisten)
		return "listen";
	for (i = 0; i < was->nlisten; i++)
		if (!tk_addr_eq(&was->listen[i], &now->listen[i]) ||
		    tk_addr_port(&was->listen[i]) !=
		    tk_addr_port(&now->listen[i]))
			return "listen";
	if (was->threads != now->threads)
		return "threads";
	if (was->workers != now->workers)
		return "workers";
	if (str_differ(was->backend, now->backend))
		return "backend";
	if (was->backlog != now->backlog)
		return "backlog";
	if (str_differ(was->user, now->user))
		return "user";
	if (str_differ(was->group, now->group))
		return "group";
	if (str_differ(was->pidfile, now->pidfile))
		return "pidfile";
	if (str_differ(was->access_log, now->access_log))
		return "access-log";
	if (was->syslog != now->syslog)
		return "syslog";
	return NULL;
}

/*
 * In a process forked by the master for a reload: read the options
 * again from scratch, the command line's over the len bytes at text (the
 * -f file as the master read it).  A bad option exits 2 with one line on
 * stderr, as at start-up; an option a reload cannot change exits 3 with
 * one line naming it.  With check, that is all (the master's checker);
 * otherwise the worker of the new generation takes the new options on:
 * limits, memory budget, log level, a fresh access log descriptor.
 */
void
main_reparse(const char *text, size_t len, int check)
{
	struct config	 was = srv.cfg;
	const char	*what;
	char		**argv;
	int		 i;

	/*
	 * Start afresh, freeing what the previous parse allocated and the
	 * new one makes again; srv.cfg's strings are the first parse's,
	 * which parsed_cfg keeps.
	 */
	memset(&srv.cfg, 0, sizeof(srv.cfg));
	pxcf = pxcf0;
	free(hccf.send);
	free(hccf.expect);
	hccf = hccf0;
	pincf = pincf0;
	upstream_reset();
	tlsterm_reset();
	listen_given = 0;
	memset(cmdline_gave, 0, sizeof(cmdline_gave));
	cmdline_done = 0;
	/* The check says what the file repeats; each new worker, not. */
	confl.quiet = !check;
	free(conf_path);
	conf_path = NULL;
	conf_text = text;
	conf_len = len;
	/* A copy: getopt permutes it, and saved_argv stays as typed. */
	argv = xcalloc((size_t)saved_argc + 1, sizeof(*argv));
	for (i = 0; i < saved_argc; i++)
		argv[i] = saved_argv[i];
	optind = 0;		/* glibc: start getopt afresh */
	parse_args(saved_argc, argv);
	free(argv);
	if ((what = changed(&parsed_cfg, &srv.cfg)) != NULL) {
		fprintf(stderr, "%s: '%s' changed: needs a restart or an "
		    "upgrade (SIGUSR2)\n", getprogname(), what);
		exit(3);
	}
	/* changed() found them equal: the first parse's, not a copy. */
	free(srv.cfg.access_log);
	free(srv.cfg.pidfile);
	free(srv.cfg.user);
	free(srv.cfg.group);
	srv.cfg.access_log = parsed_cfg.access_log;
	srv.cfg.pidfile = parsed_cfg.pidfile;
	srv.cfg.user = parsed_cfg.user;
	srv.cfg.group = parsed_cfg.group;
	if (check)
		return;
	/* Where we listen, as bound (port 0 made a port, or systemd's). */
	srv.cfg.nlisten = was.nlisten;
	memcpy(srv.cfg.listen, was.listen, sizeof(was.listen));
	log_setlevel(srv.cfg.log_level);
	set_limits();
	mem_init();
	if (srv.cfg.access_log != NULL)
		(void)reopen_logs();
}

/* The -f file, or NULL. */
const char *
main_conf_path(void)
{
	return conf_path;
}

/* The command line as typed, for execv(2). */
char *const *
main_argv(void)
{
	return saved_argv;
}

/* The binary to run for an upgrade ("" when unknown). */
const char *
main_self(void)
{
	return self_path;
}

int
main(int argc, char *argv[], char *envp[])
{
	struct config	*cfg = &srv.cfg;
	struct fowner	 owner;
	struct tk_loop	*l;
	sigset_t	 all, old;
	int		*lfds, i, error, upfd, wk = 0;
	char		 name[TK_ADDRSTRLEN], idle[32], drain[32];

	save_args(argc, argv);
	setproctitle_init(argc, argv, envp);
	srv.access_fd = -1;
	pxcf0 = pxcf;
	pincf0 = pincf;
	hccf0 = hccf;
	parse_args(argc, argv);
	parsed_cfg = *cfg;
	upfd = upgrade_fd();
	upgraded = upfd != -1;
	log_init("tenkd", cfg->log_level, cfg->syslog ? LOG_F_SYSLOG :
	    LOG_F_STAMP);
	/*
	 * Start-up facts after what could still fail, or after its error;
	 * but not in an upgrade's new master, whose old one waits on it
	 * and reports its failure: there each step is told as it comes.
	 */
	if (!upgraded)
		log_hold(1);
	signal(SIGPIPE, SIG_IGN);
	set_limits();
	mem_init();

	if (cfg->check) {
		if ((l = tk_loop_new(cfg->backend, 0)) == NULL)
			fatal("backend %s", cfg->backend != NULL ?
			    cfg->backend : "default");
		check_path("pidfile", cfg->pidfile, 0);
		check_path("access log", cfg->access_log, 1);
		/* Sockets from systemd take the place of --listen. */
		for (i = 0; getenv("LISTEN_FDS") == NULL && i < cfg->nlisten;
		    i++)
			check_bind("listen on", &cfg->listen[i]);
		check_bind("--metrics", metrics_addr());
		log_hold(0);
		log_info("configuration OK: %s, %d thread%s, backend %s, "
		    "%d address%s", cfg->mode, cfg->threads,
		    cfg->threads == 1 ? "" : "s", tk_loop_backend(l),
		    cfg->nlisten, cfg->nlisten > 1 ? "es" : "");
		tk_loop_free(l);
		return 0;
	}

	safefile_owner(cfg, &owner);
	pidfile_start(cfg->pidfile, &owner, upfd != -1);
	if (upgraded)
		reopen_adopt();
	conn_access_open();
	if (metrics_open() == -1)
		bind_fail("--metrics", metrics_addr());
	lfds = open_listeners();
	reopen_init();
	pxfast_load();
	drop_privileges();
	if (pidfile_put(getpid()) == -1)
		fatal("pidfile %s", cfg->pidfile);
	log_hold(0);
	/* -f: an implicit master, so that SIGHUP can reload. */
	if (cfg->workers > 1 || conf_path != NULL) {
		/* The master returns -1 when its workers are gone. */
		if ((wk = master_run(lfds, cfg->nlisten * LISTEN_FDS(cfg),
		    upfd)) == -1) {
			for (i = 0; i < cfg->nlisten * LISTEN_FDS(cfg); i++)
				close(lfds[i]);
			free(lfds);
			pidfile_end(1);
			return 0;
		}
		pidfile_end(0);
		/* Keep this worker's slice of the listeners only. */
		for (i = 0; i < cfg->nlisten * LISTEN_FDS(cfg); i++)
			if (i % LISTEN_FDS(cfg) / cfg->threads != wk)
				close(lfds[i]);
	}

	if ((srv.l = tk_loop_new(cfg->backend, 0)) == NULL)
		fatal("main loop");
	tk_timer_init(&srv.drain_timer, drain_deadline, NULL);
	metrics_start(srv.l);
	tlsterm_start(srv.l);
	if (tk_signal_watch(srv.l, SIGTERM, on_signal, NULL) == -1 ||
	    tk_signal_watch(srv.l, SIGINT, on_signal, NULL) == -1 ||
	    tk_signal_watch(srv.l, SIGHUP, on_signal, NULL) == -1 ||
	    tk_signal_watch(srv.l, SIGUSR1, on_signal, NULL) == -1 ||
	    tk_signal_watch(srv.l, SIGUSR2, on_signal, NULL) == -1)
		fatal("signals");
	master_worker_signals();
	upstream_check_start(srv.l);

	srv.nworkers = cfg->threads;
	srv.workers = xcalloc(srv.nworkers, sizeof(*srv.workers));
	for (i = 0; i < srv.nworkers; i++) {
		int	 k, mine[MAXLISTEN];

		for (k = 0; k < cfg->nlisten; k++)
			mine[k] = lfds[k * LISTEN_FDS(cfg) +
			    wk * cfg->threads + i];
		worker_init(&srv.workers[i], i, mine);
		srv.workers[i].m_done.fn = worker_done;
	}
	free(lfds);

	alog_start();
	/* Threads start with every signal blocked; main unblocks after. */
	sigfillset(&all);
	if ((error = pthread_sigmask(SIG_BLOCK, &all, &old)) != 0) {
		errno = error;
		fatal("pthread_sigmask");
	}
	for (i = 0; i < srv.nworkers; i++)
		worker_start(&srv.workers[i]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	master_worker_ready();

	tk_addr_fmt(&cfg->listen[0], name, sizeof(name));
	setproctitle("%s: %d thread%s, %s, %s%s", cfg->mode, srv.nworkers,
	    srv.nworkers == 1 ? "" : "s", tk_loop_backend(srv.workers[0].l),
	    name, cfg->nlisten > 1 ? " ..." : "");
	log_info("%s: %d thread%s, backend %s%s, idle timeout %s, buffer "
	    "limit %zu, drain timeout %s", cfg->mode, srv.nworkers,
	    srv.nworkers == 1 ? "" : "s",
	    tk_loop_backend(srv.workers[0].l), srv.workers[0].cq ?
	    " (completions)" : "", cfg->idle_timeout == 0 ?
	    "off" : tk_fmt_duration(cfg->idle_timeout, idle, sizeof(idle)),
	    cfg->buffer_limit, tk_fmt_duration(cfg->drain_timeout, drain,
	    sizeof(drain)));
	tlsterm_log();

	systemd_notify("READY=1\nSTATUS=%s: %d thread%s, %s%s", cfg->mode,
	    srv.nworkers, srv.nworkers == 1 ? "" : "s", name,
	    cfg->nlisten > 1 ? " ..." : "");
	tk_loop_run(srv.l, 0);
	/*
	 * Drained.  tk_loop_free() gives the signals their default actions
	 * back, and a SIGUSR1 from logrotate, one the master passes on, or
	 * a second SIGTERM would kill us before the last figures, the
	 * access log and the pidfile are seen to: blocked, they are dropped
	 * at exit.  The worker threads block them all already.
	 */
	(void)tk_signal_block_all();

	for (i = 0; i < srv.nworkers; i++)
		pthread_join(srv.workers[i].thread, NULL);
	master_worker_final();
	for (i = 0; i < srv.nworkers; i++)
		worker_free(&srv.workers[i]);
	free(srv.workers);
	alog_stop();
	upstream_check_stop();
	tk_timer_cancel(srv.l, &srv.drain_timer);
	tlsterm_stop(srv.l);
	metrics_stop();
	tk_loop_free(srv.l);
	if (srv.access_fd != -1)
		close(srv.access_fd);
	pidfile_end(1);
	log_info("exiting");
	return 0;
}
