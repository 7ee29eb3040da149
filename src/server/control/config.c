/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The configuration as a value: struct config, built by config_load()
 * from the command line (read once, cmdline_read) and the -f file, one
 * option a line by its long name,
 *
 *	# the front end
 *	listen 127.0.0.1:8000
 *	upstream 10.0.0.1:80 weight=2
 *	idle-timeout 5m
 *	syslog
 *
 * with blank lines, and comments from a '#' that starts a line or
 * follows a blank to the end of the line.  Both go through one table of
 * options (opts[]) and one function that applies an option to a config
 * (opt_apply), so an option means the same in both places, and the
 * command line's take precedence: for a list (--listen, --upstream,
 * --source, --accept-proxy-from, --tls-cert, --tls-key, --sni-route) one
 * given on the command line replaces all of the file's.  An option that
 * is not a list given twice in the file is said, naming both lines, and
 * the last one used, as on the command line, where getopt(3) gives each
 * in turn, and as HAProxy does with most of its keywords.
 *
 * Building a config has no side effect but on the config: nothing is
 * opened, bound or set, and an error is one line in a struct
 * tk_cli_err, never an exit, so that a reload (master.c) builds a new
 * config in the serving process and keeps the old one when anything is
 * wrong.  config_check() is what needs the system (the --source
 * addresses bound once), config_fixed() what a reload may not change.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/cli.h"
#include "tenk/log.h"
#include "tenk/loop.h"
#include "tenk/sock.h"
#include "tenk/timer.h"
#include "tenk/xmalloc.h"
#include "../tenkd.h"

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
#define MAXSOURCES		256		/* --source addresses */
#define CONF_REPEATS		10		/* repeated options said */
#define DEFAULT_TLS_HS		(10 * TK_SEC)	/* --tls-handshake-timeout */
#define DEFAULT_TLS_TICKETS	(3600 * TK_SEC)	/* --tls-ticket-period */

/* How an option's value is read, and into what. */
enum okind {
	K_FLAG = 0,		/* int, set to 1 */
	K_INT,			/* int in [min, max] */
	K_LL,			/* long long in [min, max] */
	K_DUR,			/* uint64_t ns in [min, max], range said */
	K_SIZE,			/* size_t in [min, max] */
	K_STR,			/* char *, a path: not empty */
	K_CHOICE,		/* int: vals[i] for words[i] */
	K_FN,			/* fn() */
	K_NONE,			/* the command line's own: -f, -h, -V */
};

typedef int	 opt_fn(struct config *, const char *, const char *,
		    struct tk_cli_err *);

struct optdef {
	const char	*name;
	int		 ch;		/* its letter, or 0 */
	unsigned int	 flags;
#define O_ARG		0x01		/* takes a value */
#define O_PROXY		0x02		/* tenkd proxy only */
#define O_LIST		0x04		/* adds to a list each time */
#define O_CMDLINE	0x08		/* not in a file */
	enum okind	 kind;
	size_t		 off;		/* of the field in struct config */
	long long	 min;
	long long	 max;
	const char	*range;		/* K_DUR: as said; K_CHOICE: why */
	const char	*words[5];	/* K_CHOICE */
	int		 vals[4];
	opt_fn		*fn;		/* K_FN */
};

static opt_fn	opt_accept_from, opt_backend, opt_check_interval,
		opt_check_expect, opt_check_send, opt_group, opt_hash_key,
		opt_idle, opt_listen, opt_log_level, opt_max_memory,
		opt_metrics, opt_ring_buffers, opt_sni_route, opt_source,
		opt_facility, opt_tls_cert, opt_tls_ciphers, opt_tls_key,
		opt_tls_tickets, opt_tls_version, opt_upstream, opt_user;

#define F(f)		offsetof(struct config, f)
#define INT(f, a, b)	.kind = K_INT, .off = F(f), .min = (a), .max = (b)
#define DUR(f, a, b, r)	.kind = K_DUR, .off = F(f), .min = (long long)(a), \
			.max = (long long)(b), .range = (r)
#define FN(f)		.kind = K_FN, .fn = (f)
#define ARG		O_ARG
#define PX		(O_ARG | O_PROXY)

/* Sorted by name, as --help and tenkd.8 list them. */
static const struct optdef opts[] = {
	{ "accept-proxy", 0, 0, .kind = K_FLAG, .off = F(pin.on) },
	{ "accept-proxy-from", 0, ARG | O_LIST, FN(opt_accept_from) },
	{ "accept-proxy-timeout", 0, ARG,
	    DUR(pin.timeout, 10 * TK_MSEC, 3600 * TK_SEC, "10ms to 1h") },
	{ "access-log", 0, ARG, .kind = K_STR, .off = F(access_log) },
	{ "access-log-buffer", 0, ARG, .kind = K_SIZE, .off = F(access_buffer),
	    .min = ACCESS_BUFSIZE, .max = 1LL << 30 },
	{ "access-log-format", 0, ARG, .kind = K_CHOICE, .off = F(access_json),
	    .words = { "text", "json" }, .vals = { 0, 1 },
	    .range = "text or json" },
	{ "backend", 'b', ARG, FN(opt_backend) },
	{ "backlog", 0, ARG, INT(backlog, 1, 1000000) },
	{ "balance", 0, PX, .kind = K_CHOICE, .off = F(px.balance),
	    .words = { "rr", "leastconn", "hash", "source" },
	    .vals = { BALANCE_RR, BALANCE_LEASTCONN, BALANCE_HASH,
	    BALANCE_HASH }, .range = "not a method (rr, leastconn, hash, "
	    "source)" },
	{ "buffer-limit", 0, ARG, .kind = K_SIZE, .off = F(buffer_limit),
	    .min = 512, .max = 256LL << 20 },
	{ "check", 0, O_CMDLINE, .kind = K_FLAG, .off = F(check) },
	{ "check-expect", 0, PX, FN(opt_check_expect) },
	{ "check-fall", 0, PX, INT(hc.fall, 1, 1000) },
	{ "check-interval", 0, PX, FN(opt_check_interval) },
	{ "check-rise", 0, PX, INT(hc.rise, 1, 1000) },
	{ "check-send", 0, PX, FN(opt_check_send) },
	{ "check-timeout", 0, PX,
	    DUR(hc.timeout, 10 * TK_MSEC, 3600 * TK_SEC, "10ms to 1h") },
	{ "config", 'f', ARG | O_CMDLINE, .kind = K_NONE },
	{ "connect-timeout", 0, PX,
	    DUR(px.connect_timeout, 10 * TK_MSEC, 3600 * TK_SEC,
	    "10ms to 1h") },
	{ "drain-timeout", 0, ARG, DUR(drain_timeout, 0, 3600 * TK_SEC,
	    NULL) },
	{ "fail-max", 0, PX, INT(px.fail_max, 1, 1000) },
	{ "fail-timeout", 0, PX,
	    DUR(px.fail_timeout, 0, 3600 * TK_SEC, "0 to 1h") },
	{ "fastpath", 0, PX, .kind = K_CHOICE, .off = F(fastpath),
	    .words = { "sockmap", "off" }, .vals = { 1, 0 },
	    .range = "not a choice (sockmap, off)" },
	{ "fin-timeout", 0, PX,
	    DUR(px.fin_timeout, 0, 24 * 3600 * TK_SEC, "0 to 24h") },
	{ "group", 0, ARG, FN(opt_group) },
	{ "hash-key", 0, PX, FN(opt_hash_key) },
	{ "help", 'h', O_CMDLINE, .kind = K_NONE },
	{ "idle-timeout", 0, ARG, FN(opt_idle) },
	{ "listen", 'l', ARG | O_LIST, FN(opt_listen) },
	{ "log-level", 0, ARG, FN(opt_log_level) },
	{ "max-conns", 0, ARG, .kind = K_LL, .off = F(max_conns), .min = 0,
	    .max = CONNCAP_MAX },
	{ "max-conns-per-ip", 0, PX, .kind = K_LL, .off = F(px.max_per_ip),
	    .min = 0, .max = CONNCAP_MAX },
	{ "max-memory", 0, ARG, FN(opt_max_memory) },
	{ "metrics", 0, ARG, FN(opt_metrics) },
	{ "metrics-max-clients", 0, ARG,
	    INT(metrics_clients, 1, METRICS_MAXCLIENTS) },
	{ "pidfile", 0, ARG, .kind = K_STR, .off = F(pidfile) },
	{ "ready-timeout", 0, ARG,
	    DUR(ready_timeout, TK_SEC, 3600 * TK_SEC, "1s to 1h") },
	{ "retries", 0, PX, INT(px.retries, 0, 100) },
	{ "ring-buffers", 0, ARG, FN(opt_ring_buffers) },
	{ "send-proxy", 0, PX, .kind = K_CHOICE, .off = F(px.send_proxy),
	    .words = { "v1", "v2" }, .vals = { 1, 2 },
	    .range = "not a version (v1, v2)" },
	{ "sni-route", 0, PX | O_LIST, FN(opt_sni_route) },
	{ "source", 0, PX | O_LIST, FN(opt_source) },
	{ "splice", 0, PX, .kind = K_CHOICE, .off = F(splice),
	    .words = { "auto", "off" }, .vals = { 1, 0 },
	    .range = "not a choice (auto, off)" },
	{ "splice-pipes", 0, PX, INT(splice_pipes, 0, MAXPIPES) },
	{ "syslog", 0, 0, .kind = K_FLAG, .off = F(syslog) },
	{ "syslog-facility", 0, ARG, FN(opt_facility) },
	{ "threads", 't', ARG, INT(threads, 1, MAXTHREADS) },
	{ "tls-cert", 0, ARG | O_LIST, FN(opt_tls_cert) },
	{ "tls-ciphers", 0, ARG, FN(opt_tls_ciphers) },
	{ "tls-handshake-timeout", 0, ARG,
	    DUR(tls.hs_timeout, 10 * TK_MSEC, 3600 * TK_SEC, "10ms to 1h") },
	{ "tls-key", 0, ARG | O_LIST, FN(opt_tls_key) },
	{ "tls-ticket-period", 0, ARG, FN(opt_tls_tickets) },
	{ "tls-version", 0, ARG, FN(opt_tls_version) },
	{ "upstream", 'u', PX | O_LIST, FN(opt_upstream) },
	{ "user", 0, ARG, FN(opt_user) },
	{ "version", 'V', O_CMDLINE, .kind = K_NONE },
	{ "workers", 0, ARG, INT(workers, 1, MAXWORKERS) },
};

#define NOPTS		(sizeof(opts) / sizeof(opts[0]))
#define OPTVAL(i)	(256 + (int)(i))	/* getopt's value of opts[i] */

/* What a config is built from, while it is. */
struct build {
	struct config		*c;
	const struct cmdline	*cl;
	config_warn_fn		*warn;
	const char		*proxy_opt;	/* the first one, as typed */
	unsigned char		 cmdline[NOPTS];	/* gave it */
	struct cmdopt		*v;		/* the file's */
	size_t			 n, cap;
	size_t			 last[NOPTS];	/* its index in v, + 1 */
	int			 repeats;	/* options given twice */
};

static int	 opt_apply(struct build *, size_t, const char *, const char *,
		    struct tk_cli_err *);
static int	 file_option(void *, const char *, const char *,
		    const char *, struct tk_cli_err *);
static int	 finish(struct build *, struct tk_cli_err *);
static int	 finish_proxy(struct config *, struct tk_cli_err *);
static int	 finish_tls(const struct config *, struct tk_cli_err *);

/* The getopt table of opts[], built once.  Start-up. */
static const struct option *
longopts(void)
{
	static struct option	 lo[NOPTS + 1];
	size_t			 i;

	for (i = 0; lo[NOPTS - 1].name == NULL && i < NOPTS; i++) {
		lo[i].name = opts[i].name;
		lo[i].has_arg = opts[i].flags & O_ARG ? required_argument :
		    no_argument;
		lo[i].val = opts[i].ch != 0 ? opts[i].ch : OPTVAL(i);
	}
	return lo;
}

/* The index in opts[] of getopt's value ch. */
static size_t
opt_index(int ch)
{
	size_t	i;

	if (ch >= 256)
		return (size_t)(ch - 256);
	for (i = 0; i < NOPTS && opts[i].ch != ch; i++)
		;
	return i;
}

static void
cmdline_add(struct cmdline *cl, size_t idx, const char *opt, const char *arg)
{
	struct cmdopt	*co;

	cl->v = xreallocarray(cl->v, cl->n + 1, sizeof(*cl->v));
	co = &cl->v[cl->n++];
	co->idx = (int)idx;
	co->opt = xstrdup(opt);
	co->arg = arg != NULL ? xstrdup(arg) : NULL;
}

/*
 * Read the command line into cl: its options as typed, in order, for
 * config_load(), and the operands; a copy of argv as typed (getopt
 * permutes it, setproctitle() may write over its strings), for an
 * upgrade.  An unknown option, a value missing or one too many, and -f
 * given twice end the program as tk_cli_bad() does.  Start-up.
 */
void
cmdline_read(struct cmdline *cl, int argc, char *argv[])
{
	size_t	i;
	int	ch;

	memset(cl, 0, sizeof(*cl));
	cl->argc = argc;
	cl->argv = xcalloc((size_t)argc + 1, sizeof(*cl->argv));
	for (ch = 0; ch < argc; ch++)
		cl->argv[ch] = xstrdup(argv[ch]);
	while ((ch = tk_cli_getopt(argc, argv, ":b:f:hl:t:u:V",
	    longopts())) != -1) {
		i = opt_index(ch);
		if (ch == 'h')
			cl->help = 1;
		else if (ch == 'V')
			cl->version = 1;
		else if (ch == 'b' && strcmp(optarg, "list") == 0)
			cl->list = 1;
		else if (ch == 'f' && cl->conf != NULL)
			tk_cli_bad(tk_cli_opt(), optarg, "given twice");
		else if (ch == 'f')
			cl->conf = xstrdup(optarg);
		else
			cmdline_add(cl, i, tk_cli_opt(), optarg);
	}
	for (; optind < argc; optind++)
		if (cl->nmodes++ < 2)
			cl->modes[cl->nmodes - 1] = xstrdup(argv[optind]);
}

/* The defaults, before any option. */
static void
defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	c->max_conns = -1;
	c->idle_timeout = DEFAULT_IDLE;
	c->drain_timeout = DEFAULT_DRAIN;
	c->ready_timeout = DEFAULT_READY;
	c->metrics_clients = DEFAULT_METRICS_CLIENTS;
	c->access_buffer = DEFAULT_ALOG_BUFFER;
	c->max_memory = -1;		/* mem_init() decides */
	c->log_level = LOG_LVL_INFO;
	c->facility = -1;
	c->workers = 1;
	c->splice = 1;
	c->splice_pipes = DEFAULT_PIPES;
	c->px.balance = BALANCE_RR;
	c->px.connect_timeout = 5 * TK_SEC;
	c->px.fin_timeout = 30 * TK_SEC;
	c->px.retries = 2;
	c->px.fail_max = 3;
	c->px.fail_timeout = 10 * TK_SEC;
	c->hc.rise = 2;
	c->hc.fall = 3;
	c->pin.timeout = 5 * TK_SEC;
	c->tls.hs_timeout = DEFAULT_TLS_HS;
	c->tls.ticket_period = DEFAULT_TLS_TICKETS;
}

/*
 * Build c from the command line cl and the -f file it names, read now:
 * the command line's options first (so that its errors come first),
 * then those of the file that the command line does not give.  Warnings
 * (an option given twice in the file) go to warn.  Returns 0, or -1
 * with e saying what is wrong (the line tk_cli_bad() would print, after
 * "tenkd: "); c is then to be freed all the same (config_free).  Any
 * thread, no side effect but on c.
 */
int
config_load(struct config *c, const struct cmdline *cl, config_warn_fn *warn,
    struct tk_cli_err *e)
{
	struct build	 b;
	char		*text = NULL;
	size_t		 len = 0, i;
	int		 r = -1;

	defaults(c);
	memset(&b, 0, sizeof(b));
	b.c = c;
	b.cl = cl;
	b.warn = warn;
	for (i = 0; i < cl->n; i++) {
		b.cmdline[cl->v[i].idx] = 1;
		if (opt_apply(&b, (size_t)cl->v[i].idx, cl->v[i].opt,
		    cl->v[i].arg, e) == -1)
			goto out;
	}
	if (cl->conf != NULL) {
		c->conf = xstrdup(cl->conf);
		if (conf_load(cl->conf, &text, &len, e) == -1 ||
		    conf_parse(text, len, cl->conf, file_option, &b, e) == -1)
			goto out;
		if (b.repeats > CONF_REPEATS && warn != NULL) {
			(void)tk_cli_errf(e, cl->conf, NULL, "%d more options "
			    "given twice", b.repeats - CONF_REPEATS);
			warn(e->msg);
		}
		for (i = 0; i < b.n; i++)
			if (!b.cmdline[b.v[i].idx] &&
			    opt_apply(&b, (size_t)b.v[i].idx, b.v[i].opt,
			    b.v[i].arg, e) == -1)
				goto out;
	}
	r = finish(&b, e);
 out:
	for (i = 0; i < b.n; i++) {
		free(b.v[i].opt);
		free(b.v[i].arg);
	}
	free(b.v);
	free(text);
	return r;
}

/*
 * One line of the -f file (conf_parse): the option by its long name,
 * checked as getopt would, kept for config_load().  Fails naming
 * FILE:LINE on an unknown option, a missing value or one too many.  An
 * option given twice that is not a list is said, naming both lines.
 */
static int
file_option(void *arg, const char *where, const char *name, const char *value,
    struct tk_cli_err *e)
{
	struct build		*b = arg;
	const struct optdef	*o;
	struct cmdopt		*co;
	char			 opt[400];
	size_t			 i, k;

	snprintf(opt, sizeof(opt), "%s: %s", where, name);
	for (i = 0; i < NOPTS && strcmp(opts[i].name, name) != 0; i++)
		;
	if (i == NOPTS)
		return tk_cli_errf(e, opt, NULL, "unknown option");
	o = &opts[i];
	if (o->flags & O_CMDLINE)
		return tk_cli_errf(e, opt, NULL, "only on the command line");
	if (!(o->flags & O_ARG) && value != NULL)
		return tk_cli_errf(e, opt, value, "takes no value");
	if ((o->flags & O_ARG) && value == NULL)
		return tk_cli_errf(e, opt, NULL, "needs a value");
	if ((k = b->last[i]) != 0 && !(o->flags & O_LIST) &&
	    ++b->repeats <= CONF_REPEATS && b->warn != NULL) {
		/* Its "FILE:LINE", without the ": NAME" that follows. */
		co = &b->v[k - 1];
		(void)tk_cli_errf(e, opt, NULL, "given before, at %.*s; the "
		    "last one is used", (int)(strlen(co->opt) - strlen(name) -
		    2), co->opt);
		b->warn(e->msg);
	}
	/* Doubled: a file may hold 100,000 lines and more. */
	if (b->n == b->cap) {
		b->cap = b->cap == 0 ? 64 : b->cap * 2;
		b->v = xreallocarray(b->v, b->cap, sizeof(*b->v));
	}
	co = &b->v[b->n++];
	co->idx = (int)i;
	co->opt = xstrdup(opt);
	co->arg = value != NULL ? xstrdup(value) : NULL;
	b->last[i] = b->n;
	return 0;
}

/* Option opts[i], typed as opt, with its value arg, into b's config. */
static int
opt_apply(struct build *b, size_t i, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	const struct optdef	*o = &opts[i];
	char			*p = (char *)b->c + o->off;
	long long		 n;
	uint64_t		 u;
	int			 k;

	if ((o->flags & O_PROXY) && b->proxy_opt == NULL)
		b->proxy_opt = opt;
	switch (o->kind) {
	case K_FLAG:
		*(int *)p = 1;
		return 0;
	case K_INT:
	case K_LL:
		if (tk_cli_get_num(e, opt, arg, o->min, o->max, &n) == -1)
			return -1;
		if (o->kind == K_INT)
			*(int *)p = (int)n;
		else
			*(long long *)p = n;
		return 0;
	case K_DUR:
		return tk_cli_get_duration(e, opt, arg, (uint64_t)o->min,
		    (uint64_t)o->max, o->range, (uint64_t *)p);
	case K_SIZE:
		if (tk_cli_get_size(e, opt, arg, (uint64_t)o->min,
		    (uint64_t)o->max, &u) == -1)
			return -1;
		*(size_t *)p = (size_t)u;
		return 0;
	case K_STR:
		if (*arg == '\0')
			return tk_cli_errf(e, opt, NULL, "empty path");
		free(*(char **)p);
		*(char **)p = xstrdup(arg);
		return 0;
	case K_CHOICE:
		for (k = 0; o->words[k] != NULL; k++)
			if (strcmp(arg, o->words[k]) == 0) {
				*(int *)p = o->vals[k];
				return 0;
			}
		return tk_cli_errf(e, opt, arg, "%s", o->range);
	case K_FN:
		return o->fn(b->c, opt, arg, e);
	case K_NONE:
		break;
	}
	return 0;
}

static int
opt_listen(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	c->listen_given = 1;
	return cfgval_listen(c, opt, arg, e);
}

static int
opt_upstream(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	return cfgval_upstream(c, opt, arg, e);
}

static int
opt_accept_from(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	c->pin.on = 1;
	return cfgval_nets(c, opt, arg, e);
}

static int
opt_source(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	return tk_cli_get_sources(e, opt, arg, MAXSOURCES, &c->sources,
	    &c->nsources);
}

static int
opt_sni_route(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	return cfgval_sniroute(c, opt, arg, e);
}

/* --tls-cert and --tls-key: one more of the pairs, in order. */
static int
tls_file(char **v, int *n, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	if (*arg == '\0')
		return tk_cli_errf(e, opt, NULL, "empty file name");
	if (*n == TLS_MAXPAIRS)
		return tk_cli_errf(e, opt, arg, "more than %d", TLS_MAXPAIRS);
	v[(*n)++] = xstrdup(arg);
	return 0;
}

static int
opt_tls_cert(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	c->tls.given = 1;
	return tls_file(c->tls.cert, &c->tls.ncert, opt, arg, e);
}

static int
opt_tls_key(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	c->tls.given = 1;
	return tls_file(c->tls.key, &c->tls.nkey, opt, arg, e);
}

static int
opt_tls_ciphers(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	(void)opt;
	(void)e;
	c->tls.given = 1;
	free(c->tls.ciphers);
	c->tls.ciphers = xstrdup(arg);
	return 0;
}

static int
opt_tls_tickets(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	c->tls.given = 1;
	if (tk_cli_get_duration(e, opt, arg, 0, 7 * 24 * 3600 * TK_SEC,
	    "0, or 1s to 7d", &c->tls.ticket_period) == -1)
		return -1;
	if (c->tls.ticket_period != 0 && c->tls.ticket_period < TK_SEC)
		return tk_cli_errf(e, opt, arg, "too small (0, or 1s to 7d)");
	return 0;
}

static int
opt_tls_version(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	c->tls.given = 1;
	if ((c->tls.version = tk_tls_version_parse(arg)) == -1)
		return tk_cli_errf(e, opt, arg, "not 1.2 or 1.3");
	return 0;
}

/* A compiled-in backend, by its name in the registry's storage. */
static int
opt_backend(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	const char *const	*be;
	char			 have[128];

	have[0] = '\0';
	for (be = tk_backend_names(); *be != NULL; be++) {
		if (strcmp(*be, arg) == 0) {
			c->backend = *be;
			return 0;
		}
		if (have[0] != '\0')
			strlcat(have, ", ", sizeof(have));
		strlcat(have, *be, sizeof(have));
	}
	return tk_cli_errf(e, opt, arg, "unknown backend (compiled in: %s)",
	    have);
}

static int
opt_ring_buffers(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	long long	n;

	if (tk_cli_get_num(e, opt, arg, 1, 32768, &n) == -1)
		return -1;
	if ((n & (n - 1)) != 0)
		return tk_cli_errf(e, opt, arg, "not a power of two");
	c->ring_bufs = (unsigned int)n;
	return 0;
}

/*
 * Below a few pool buffers the marks (90%, 80%) round to nothing and an
 * episode could never end.
 */
static int
opt_max_memory(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	uint64_t	n;

	if (tk_cli_get_size(e, opt, arg, 0, 1ULL << 50, &n) == -1)
		return -1;
	if (n > 0 && n < MEM_MIN_BUDGET)
		return tk_cli_errf(e, opt, arg, "too small (0 for no budget, "
		    "else at least 64k)");
	c->max_memory = (long long)n;
	return 0;
}

/*
 * A duration that is 0 (off), or from 10 ms to max: range says so,
 * small too when what is given is below 10 ms.
 */
static int
dur_off(const char *opt, const char *arg, uint64_t max, const char *range,
    const char *small, uint64_t *v, struct tk_cli_err *e)
{
	if (tk_cli_get_duration(e, opt, arg, 0, max, range, v) == -1)
		return -1;
	if (*v != 0 && *v < 10 * TK_MSEC)
		return tk_cli_errf(e, opt, arg, "too small (%s)", small);
	return 0;
}

static int
opt_idle(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	return dur_off(opt, arg, 24 * 3600 * TK_SEC, "0, or 10ms to 24h",
	    "0, or 10ms to 24h; units ms, s, m, h", &c->idle_timeout, e);
}

static int
opt_check_interval(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	return dur_off(opt, arg, 3600 * TK_SEC, "0, or 10ms to 1h",
	    "0, or 10ms to 1h", &c->hc.interval, e);
}

static int
opt_check_send(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	char	*line;

	if (*arg == '\0')
		return tk_cli_errf(e, opt, NULL, "empty text");
	if (asprintf(&line, "%s\r\n", arg) == -1)
		return tk_cli_errf(e, opt, NULL, "%s", strerror(errno));
	free(c->hc.send);
	c->hc.send = line;
	return 0;
}

static int
opt_check_expect(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	if (*arg == '\0')
		return tk_cli_errf(e, opt, NULL, "empty text");
	free(c->hc.expect);
	c->hc.expect = xstrdup(arg);
	return 0;
}

static int
opt_hash_key(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	if (strcmp(arg, "source") == 0)
		c->px.hash_key = HKEY_SOURCE;
	else if (strcmp(arg, "source-port") == 0)
		c->px.hash_key = HKEY_SOURCE_PORT;
	else if (strcmp(arg, "sni") == 0)
		/* The name TLS routing will read: proxy.c hash_slot. */
		return tk_cli_errf(e, opt, arg, "needs TLS routing, which this "
		    "tenkd does not have yet");
	else
		return tk_cli_errf(e, opt, arg, "not a key (source, "
		    "source-port)");
	return 0;
}

static int
opt_log_level(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	if ((c->log_level = log_level_parse(arg)) == -1)
		return tk_cli_errf(e, opt, arg, "not a level (error, warn, "
		    "info, debug)");
	return 0;
}

static int
opt_facility(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	if ((c->facility = log_facility_parse(arg)) == -1)
		return tk_cli_errf(e, opt, arg, "not a facility (daemon, "
		    "local0 to local7, user, ...)");
	c->syslog = 1;
	return 0;
}

static int
opt_metrics(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	const char	*err;

	if (tk_addr_parse(arg, -1, &c->metrics, &err) == -1)
		return tk_cli_errf_addr(e, opt, arg, err);
	c->metrics_on = 1;
	return 0;
}

static int
opt_user(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	struct passwd	*pw;

	if ((pw = getpwnam(arg)) == NULL)
		return tk_cli_errf(e, opt, arg, "no such user");
	free(c->user);
	c->user = xstrdup(arg);
	c->uid = pw->pw_uid;
	if (c->group == NULL)
		c->gid = pw->pw_gid;
	return 0;
}

static int
opt_group(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	struct group	*gr;

	if ((gr = getgrnam(arg)) == NULL)
		return tk_cli_errf(e, opt, arg, "no such group");
	free(c->group);
	c->group = xstrdup(arg);
	c->gid = gr->gr_gid;
	return 0;
}

/*
 * After the options: the mode, and what depends on it or on several
 * options (the defaults by mode, the thread count, the listener, the
 * --metrics address against it).  --group keeps its gid whichever of
 * it and --user comes first (opt_user).
 */
static int
finish(struct build *b, struct tk_cli_err *e)
{
	struct config	*c = b->c;
	long		 n;

	if (b->cl->nmodes == 0)
		return tk_cli_errf(e, NULL, NULL, "no mode given (tenkd echo "
		    "[options]; tenkd --help)");
	if (b->cl->nmodes > 1)
		return tk_cli_errf(e, b->cl->modes[1], NULL, "unexpected "
		    "argument");
	if (strcmp(b->cl->modes[0], "proxy") == 0)
		c->mode = "proxy";
	else if (strcmp(b->cl->modes[0], "echo") == 0)
		c->mode = "echo";
	else
		return tk_cli_errf(e, b->cl->modes[0], NULL, "unknown mode "
		    "(echo, proxy)");
	if (c->mode[0] == 'e') {
		if (b->proxy_opt != NULL)
			return tk_cli_errf(e, b->proxy_opt, NULL, "only with "
			    "tenkd proxy");
		if (c->buffer_limit == 0)
			c->buffer_limit = DEFAULT_BUFLIMIT;
		c->splice = 0;
	} else if (finish_proxy(c, e) == -1)
		return -1;
	if (finish_tls(c, e) == -1)
		return -1;
	if (c->nlisten == 0 && cfgval_listen(c, "--listen", DEFAULT_LISTEN,
	    e) == -1)
		return -1;
	if (cfgval_metrics(c, e) == -1)
		return -1;
	if (c->threads == 0) {
		n = sysconf(_SC_NPROCESSORS_ONLN);
		c->threads = n < 1 ? 1 : n > MAXTHREADS ? MAXTHREADS : (int)n;
	}
	return 0;
}

/* The proxy's: an upstream, the checks' and the hash's options agree. */
static int
finish_proxy(struct config *c, struct tk_cli_err *e)
{
	size_t	k;
	int	i, j, primary = 0;

	if (c->nups == 0)
		return tk_cli_errf(e, "proxy", NULL, "needs at least one "
		    "upstream (-u HOST:PORT)");
	if (c->buffer_limit == 0)
		c->buffer_limit = DEFAULT_PX_BUFLIMIT;
	if (c->splice_pipes == 0)
		c->splice = 0;
	for (i = 0; i < c->nups; i++)
		primary += !c->ups[i].backup;
	if (primary == 0)
		return tk_cli_errf(e, "--upstream", NULL, "every upstream is "
		    "a backup");
	if (c->hc.expect != NULL && c->hc.send == NULL)
		return tk_cli_errf(e, "--check-expect", NULL, "needs "
		    "--check-send");
	if (c->px.hash_key != HKEY_SOURCE && c->px.balance != BALANCE_HASH)
		return tk_cli_errf(e, "--hash-key", NULL, "only with --balance "
		    "hash");
	/* Two of one name would split its slots by chance. */
	for (i = 0; c->px.balance == BALANCE_HASH && i < c->nups; i++)
		for (j = 0; j < i; j++)
			if (strcmp(c->ups[j].hname, c->ups[i].hname) == 0)
				return tk_cli_errf(e, "--upstream",
				    c->ups[i].hname, "named twice (with "
				    "--balance hash each needs a name of its "
				    "own: name=)");
	for (i = 0; c->nsources > 0 && i < c->nups; i++) {
		for (k = 0; k < c->nsources; k++)
			if (c->sources[k].ss.ss_family ==
			    c->ups[i].addr.ss.ss_family)
				break;
		if (k == c->nsources)
			return tk_cli_errf(e, "--source", NULL, "no address of "
			    "the family of upstream %s", c->ups[i].name);
	}
	/* By default the interval, so that a check ends before the next. */
	if (c->hc.timeout == 0)
		c->hc.timeout = c->hc.interval < c->px.connect_timeout ?
		    c->hc.interval : c->px.connect_timeout;
	return cfgval_tls(c, e);
}

/*
 * The TLS options agree: with any, a certificate and a key for each;
 * none beside --sni-route, which passes the client's TLS on.
 */
static int
finish_tls(const struct config *c, struct tk_cli_err *e)
{
	const struct tlsconf	*t = &c->tls;

	if (!t->given)
		return 0;
	if (t->ncert == 0)
		return tk_cli_errf(e, "--tls-cert", NULL, "the TLS options "
		    "need a certificate and its key (--tls-cert FILE --tls-key "
		    "FILE)");
	if (t->nkey != t->ncert)
		return tk_cli_errf(e, "--tls-key", NULL, "%d certificate%s and "
		    "%d key%s: one --tls-key for each --tls-cert, in order",
		    t->ncert, t->ncert == 1 ? "" : "s", t->nkey,
		    t->nkey == 1 ? "" : "s");
	if (c->nroutes > 0)
		return tk_cli_errf(e, "--sni-route", NULL, "routes TLS without "
		    "decrypting it: not with --tls-cert");
	return 0;
}

/*
 * What c asks of the system, checked once: every --source address is
 * local (bound once: a typo is a usage error now, rather than a run of
 * EADDRNOTAVAIL connects that would read as exhausted ports); and the
 * TLS files, read into c's contexts (tlsterm_load), by the process that
 * checks: at start before privileges are dropped, at a reload by the
 * master as the user it runs as.  Returns 0, or -1 with e set (c is
 * then to be freed all the same).
 */
int
config_check(struct config *c, struct tk_cli_err *e)
{
	char	 a[TK_ADDRSTRLEN];
	size_t	 i;
	int	 fd, err;

	for (i = 0; i < c->nsources; i++) {
		if ((fd = socket(c->sources[i].ss.ss_family,
		    SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
			return tk_cli_errf(e, "--source", NULL, "socket: %s",
			    strerror(errno));
		if (bind(fd, (const struct sockaddr *)&c->sources[i].ss,
		    c->sources[i].len) == -1) {
			err = errno;
			close(fd);
			return tk_cli_errf(e, "--source", tk_addr_fmt_host(
			    &c->sources[i], a, sizeof(a)), "%s",
			    strerror(err));
		}
		close(fd);
	}
	return tlsterm_load(c, e);
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
 * of the first option that differs between was and now, or NULL.  The
 * --metrics listener is the master's and keeps its address (metrics.c).
 */
const char *
config_fixed(const struct config *was, const struct config *now)
{
	int	i;

	if (was->nlisten != now->nlisten)
		return "listen";
	for (i = 0; i < was->nlisten; i++)
		if (!tk_addr_eq(&was->listen[i], &now->listen[i]))
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
 * Whether c runs a master: with --workers, and whenever -f is given
 * (one worker then, so that a reload has a process to replace).
 */
int
config_master(const struct config *c)
{
	return c->workers > 1 || c->conf != NULL;
}

/* Free what c holds (not c). */
void
config_free(struct config *c)
{
	int	i;

	for (i = 0; i < c->tls.ncert; i++)
		free(c->tls.cert[i]);
	for (i = 0; i < c->tls.nkey; i++)
		free(c->tls.key[i]);
	free(c->tls.ciphers);
	tk_tls_ctx_free(c->tls.ctx);
	/* All: a list's last one may be half made (cfgval_upstream). */
	for (i = 0; i < MAXUPSTREAMS; i++) {
		free(c->ups[i].sni);
		free(c->ups[i].ca);
		tk_tls_ctx_free(c->ups[i].tctx);
	}
	for (i = 0; i < c->nroutes; i++) {
		free(c->routes[i].name);
		free(c->routes[i].to);
	}
	free(c->routes);
	free(c->conf);
	free(c->access_log);
	free(c->pidfile);
	free(c->user);
	free(c->group);
	free(c->sources);
	free(c->hc.send);
	free(c->hc.expect);
	memset(c, 0, sizeof(*c));
}
