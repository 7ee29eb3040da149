/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The option values of config.c that have a syntax of their own: an
 * upstream ("HOST:PORT[,weight=N][,backup][,name=NAME]", and over TLS
 * ",tls,sni=NAME,ca=FILE,noverify"), the networks of
 * --accept-proxy-from, a --listen address, the --metrics address
 * against the listeners, and the routes of --sni-route.  Each adds to
 * a struct config or checks one, and says what is wrong in a struct
 * tk_cli_err; none has a side effect but on the config it is given.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/cli.h"
#include "tenk/sock.h"
#include "tenk/xmalloc.h"
#include "../tenkd.h"

#define MAXWEIGHT	100
#define NAME_CHARS	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" \
			"0123456789._-:"
#define DEFAULT_PORT	7777		/* --listen HOST */
#define MAXROUTES	256		/* --sni-route names */

/* An owned copy of w[0..n). */
static char *
strndup_x(const char *w, size_t n)
{
	char	*s = xmalloc(n + 1);

	memcpy(s, w, n);
	s[n] = '\0';
	return s;
}

/*
 * A TLS parameter of an upstream (tlsorig.c's), the n bytes at w, into
 * u: 0 when it is one, 1 when not, -1 with *why when it is one and
 * bad.  Any of them marks the upstream "tls".
 */
static int
up_tls(struct upconf *u, const char *w, size_t n, const char **why)
{
	if (n == 3 && strncmp(w, "tls", 3) == 0)
		u->tls = 1;
	else if (n == 8 && strncmp(w, "noverify", 8) == 0)
		u->tls = u->noverify = 1;
	else if (n >= 4 && strncmp(w, "sni=", 4) == 0) {
		if (n == 4 || n - 4 > 255) {
			*why = "bad sni= (a name of 1 to 255 bytes)";
			return -1;
		}
		free(u->sni);
		u->sni = strndup_x(w + 4, n - 4);
		u->tls = 1;
	} else if (n >= 3 && strncmp(w, "ca=", 3) == 0) {
		if (n == 3) {
			*why = "bad ca= (a file of PEM certificates)";
			return -1;
		}
		free(u->ca);
		u->ca = strndup_x(w + 3, n - 3);
		u->tls = 1;
	} else
		return 1;
	return 0;
}

/*
 * One parameter of an upstream, the n bytes at w, into u.  Returns
 * NULL, or what is wrong.
 */
static const char *
up_param(struct upconf *u, const char *w, size_t n)
{
	const char	*e;
	char		 num[16];
	int		 r;

	if (n > 0 && (r = up_tls(u, w, n, &e)) != 1)
		return r == -1 ? e : NULL;
	if (n == 6 && strncmp(w, "backup", 6) == 0) {
		u->backup = 1;
		return NULL;
	}
	if (strncmp(w, "name=", 5) == 0) {
		if (n == 5 || n - 5 >= sizeof(u->hname) ||
		    strspn(w + 5, NAME_CHARS) < n - 5)
			return "bad name (1 to 63 of A-Z a-z 0-9 . _ - :)";
		memcpy(u->hname, w + 5, n - 5);
		u->hname[n - 5] = '\0';
		return NULL;
	}
	if (n == 0 || strncmp(w, "weight=", 7) != 0)
		return "unknown parameter (weight=N, backup, name=NAME, tls, "
		    "sni=NAME, ca=FILE, noverify)";
	if (n - 7 >= sizeof(num))
		return "bad weight (1 to 100)";
	memcpy(num, w + 7, n - 7);
	num[n - 7] = '\0';
	u->weight = (int)strtonum(num, 1, MAXWEIGHT, &e);
	return e != NULL ? "bad weight (1 to 100)" : NULL;
}

/*
 * -u arg (opt as typed): "HOST:PORT[,weight=N][,backup][,name=NAME]"
 * and the TLS parameters,
 * where blanks may separate the parameters as well as the comma, for
 * the -f file's "upstream HOST:PORT weight=N backup".
 */
int
cfgval_upstream(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	struct upconf	*u;
	const char	*w, *why;
	char		 host[300];
	size_t		 len, n;

	if (c->nups == MAXUPSTREAMS)
		return tk_cli_errf_addr(e, opt, arg, "too many upstreams (at "
		    "most 64)");
	u = &c->ups[c->nups];
	memset(u, 0, sizeof(*u));
	u->weight = 1;
	len = strcspn(arg, ", \t");
	for (w = arg + len; *w != '\0'; w += n) {
		w += strspn(w, ", \t");
		n = strcspn(w, ", \t");
		if ((why = up_param(u, w, n)) != NULL)
			return tk_cli_errf_addr(e, opt, arg, why);
	}
	if (len == 0 || len >= sizeof(host))
		return tk_cli_errf_addr(e, opt, arg, "bad address");
	memcpy(host, arg, len);
	host[len] = '\0';
	if (tk_addr_parse(host, -1, &u->addr, &why) == -1)
		return tk_cli_errf_addr(e, opt, arg, why);
	if (tk_addr_port(&u->addr) == 0)
		return tk_cli_errf_addr(e, opt, arg, "port 0");
	tk_addr_fmt(&u->addr, u->name, sizeof(u->name));
	if (u->hname[0] == '\0')
		strlcpy(u->hname, u->name, sizeof(u->hname));
	c->nups++;
	return 0;
}

/*
 * One network of --accept-proxy-from: "ADDR" or "ADDR/BITS", IPv4 or
 * IPv6, into n.  Returns NULL, or what is wrong.
 */
static const char *
net_parse(const char *s, struct pinnet *n)
{
	struct in_addr	 a4;
	const char	*errstr, *slash;
	char		 host[INET6_ADDRSTRLEN];
	int		 bits, max, i, v4;

	slash = strchr(s, '/');
	if (*s == '\0' || slash == s)
		return "empty address";
	if (snprintf(host, sizeof(host), "%.*s", slash != NULL ?
	    (int)(slash - s) : (int)strlen(s), s) >= (int)sizeof(host))
		return "not an IPv4 or IPv6 address";
	memset(n, 0, sizeof(*n));
	if ((v4 = inet_pton(AF_INET, host, &a4) == 1)) {
		/* As an IPv4-mapped IPv6 address, ::ffff:a.b.c.d. */
		n->addr[10] = n->addr[11] = 0xff;
		memcpy(n->addr + 12, &a4, 4);
	} else if (inet_pton(AF_INET6, host, n->addr) != 1)
		return "not an IPv4 or IPv6 address";
	max = v4 ? 32 : 128;
	bits = max;
	if (slash != NULL) {
		bits = (int)strtonum(slash + 1, 0, max, &errstr);
		if (errstr != NULL || slash[1] == '\0')
			return v4 ? "bad prefix length (0 to 32)" :
			    "bad prefix length (0 to 128)";
	}
	n->bits = (uint8_t)(v4 ? 96 + bits : bits);
	/* 10.1.2.3/8 is a typo for a host or for 10.0.0.0/8: refused. */
	for (i = n->bits; i < 128; i++)
		if (n->addr[i / 8] & (0x80 >> (i % 8)))
			return "address bits set past the prefix length";
	return NULL;
}

/* --accept-proxy-from LIST: each comma-separated network added. */
int
cfgval_nets(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	const char	*why = NULL;
	char		*copy, *p, *s;

	if ((copy = strdup(arg)) == NULL)
		return tk_cli_errf(e, opt, arg, "out of memory");
	for (p = copy; why == NULL && (s = strsep(&p, ",")) != NULL;) {
		if (c->pin.nfrom == PIN_MAXFROM)
			why = "too many networks (at most 64)";
		else if ((why = net_parse(s, &c->pin.from[c->pin.nfrom])) ==
		    NULL)
			c->pin.nfrom++;
	}
	free(copy);
	return why != NULL ? tk_cli_errf(e, opt, arg, "%s", why) : 0;
}

/* opt arg: one more address to listen on ("*:PORT": every IPv4 one). */
int
cfgval_listen(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	struct tk_addr	 a;
	const char	*err, *s = arg;
	char		 buf[300];
	int		 i;

	if (c->nlisten == MAXLISTEN)
		return tk_cli_errf(e, opt, arg, "too many addresses (at most "
		    "%d)", MAXLISTEN);
	if (strncmp(arg, "*:", 2) == 0) {
		snprintf(buf, sizeof(buf), "0.0.0.0:%s", arg + 2);
		s = buf;
	}
	if (tk_addr_parse(s, DEFAULT_PORT, &a, &err) == -1)
		return tk_cli_errf_addr(e, opt, arg, err);
	for (i = 0; i < c->nlisten; i++)
		if (tk_addr_port(&a) != 0 && tk_addr_eq(&a, &c->listen[i]))
			return tk_cli_errf(e, opt, arg, "given twice");
	c->listen[c->nlisten++] = a;
	return 0;
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
 * refused as a repeated --listen is.
 */
int
cfgval_metrics(const struct config *c, struct tk_cli_err *e)
{
	const struct tk_addr	*m = &c->metrics;
	char			 hm[TK_ADDRSTRLEN], hl[TK_ADDRSTRLEN];
	char			 name[TK_ADDRSTRLEN];
	int			 i;

	if (!c->metrics_on || tk_addr_port(m) == 0)
		return 0;
	tk_addr_fmt(m, name, sizeof(name));
	tk_addr_fmt_host(m, hm, sizeof(hm));
	for (i = 0; i < c->nlisten; i++) {
		if (tk_addr_eq(m, &c->listen[i]))
			return tk_cli_errf(e, "--metrics", name, "given twice "
			    "(also a --listen address)");
		tk_addr_fmt_host(&c->listen[i], hl, sizeof(hl));
		/* A wildcard and an address of its family, one port. */
		if (tk_addr_port(m) == tk_addr_port(&c->listen[i]) &&
		    m->ss.ss_family == c->listen[i].ss.ss_family &&
		    (wildcard(hm) || wildcard(hl)))
			return tk_cli_errf(e, "--metrics", name, "overlaps "
			    "--listen %s", tk_addr_fmt(&c->listen[i], hl,
			    sizeof(hl)));
	}
	return 0;
}

/*
 * --sni-route NAME=HOST:PORT[,NAME=HOST:PORT...], repeatable.  Names
 * are host names (lowercased), "*.suffix" or "*"; each HOST:PORT is
 * found among the upstreams once all are given (cfgval_tls).
 */
int
cfgval_sniroute(struct config *c, const char *opt, const char *arg,
    struct tk_cli_err *e)
{
	struct sniroute	*r;
	char		*copy, *p, *tok, *eq;
	size_t		 i;
	int		 k, ret = 0;

	copy = xstrdup(arg);
	for (p = copy; ret == 0 && (tok = strsep(&p, ",")) != NULL; ) {
		if ((eq = strchr(tok, '=')) == NULL || eq == tok ||
		    eq[1] == '\0') {
			ret = tk_cli_errf(e, opt, arg, "%s is not "
			    "NAME=HOST:PORT", tok);
			break;
		}
		*eq = '\0';
		if (eq - tok > 255) {
			ret = tk_cli_errf(e, opt, arg, "a name over 255 bytes");
			break;
		}
		for (i = 0; tok[i] != '\0'; i++)
			tok[i] = (char)(tok[i] >= 'A' && tok[i] <= 'Z' ?
			    tok[i] - 'A' + 'a' : tok[i]);
		if (strchr(tok + 1, '*') != NULL || (tok[0] == '*' &&
		    tok[1] != '\0' && tok[1] != '.')) {
			ret = tk_cli_errf(e, opt, arg, "%s: a wildcard is "
			    "\"*\" or \"*.suffix\"", tok);
			break;
		}
		for (k = 0; k < c->nroutes; k++)
			if (strcmp(c->routes[k].name, tok) == 0)
				break;
		if (k < c->nroutes)
			ret = tk_cli_errf(e, opt, arg, "%s routed twice", tok);
		else if (c->nroutes == MAXROUTES)
			ret = tk_cli_errf(e, opt, arg, "more than %d routes",
			    MAXROUTES);
		else {
			c->routes = xreallocarray(c->routes,
			    (size_t)c->nroutes + 1, sizeof(*c->routes));
			r = &c->routes[c->nroutes++];
			r->name = xstrdup(tok);
			r->to = xstrdup(eq + 1);
			r->up = -1;
		}
	}
	free(copy);
	return ret;
}

/*
 * After the proxy's options: each TLS upstream's name to ask for and
 * verify (sni=, else its host, checked as an address and not sent),
 * and each route's upstream, given with -u, and plain.
 */
int
cfgval_tls(struct config *c, struct tk_cli_err *e)
{
	struct upconf	*u;
	struct tk_addr	 a;
	const char	*err;
	char		 name[TK_ADDRSTRLEN];
	int		 i, k;

	for (i = 0; i < c->nups; i++) {
		u = &c->ups[i];
		if (!u->tls || u->sni != NULL)
			continue;
		strlcpy(name, u->name, sizeof(name));
		name[strcspn(name, "]")] = '\0';
		if (name[0] == '[')
			memmove(name, name + 1, strlen(name));
		else
			name[strcspn(name, ":")] = '\0';
		u->sni = xstrdup(name);
	}
	for (i = 0; i < c->nroutes; i++) {
		if (tk_addr_parse(c->routes[i].to, -1, &a, &err) == -1)
			return tk_cli_errf(e, "--sni-route", c->routes[i].to,
			    "%s", err);
		tk_addr_fmt(&a, name, sizeof(name));
		for (k = 0; k < c->nups; k++)
			if (strcmp(c->ups[k].name, name) == 0)
				break;
		if (k == c->nups)
			return tk_cli_errf(e, "--sni-route", c->routes[i].to,
			    "not an upstream (give it with -u too)");
		if (c->ups[k].tls)
			return tk_cli_errf(e, "--sni-route", c->routes[i].to,
			    "a \"tls\" upstream: routing passes the client's "
			    "TLS on");
		c->routes[i].up = k;
	}
	return 0;
}
