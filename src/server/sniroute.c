/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Routing by server name without decrypting (--sni-route NAME=HOST:PORT,
 * ..., as nginx's ssl_preread and HAProxy's req.ssl_sni): a session
 * first reads its client's ClientHello, exactly the records it takes and
 * never a byte past them (tk_hello_parse says how many more to read),
 * then goes to the upstream its name routes to, which gets the bytes
 * read untouched, followed by the rest of the stream.  A name routes by
 * an exact route, else the longest "*.suffix" route that matches, else
 * the "*" route; with none, the session is refused.  Each HOST:PORT is
 * an upstream given with -u (plain, since the TLS passes through), and
 * a routed session tries only its own.  A ClientHello that is no TLS,
 * malformed or over TK_HELLO_MAX closes the session, counted as a TLS
 * failure of its kind (not-tls, protocol; eof, timeout).
 */
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/cli.h"
#include "tenk/tlshello.h"
#include "tenk/xmalloc.h"
#include "tenkd.h"

#define MAXROUTES	256

struct route {
	char		*name;		/* "a.test", "*.a.test", "*" */
	char		*to;		/* HOST:PORT as given */
	struct upstream	*u;		/* once resolved */
};

static struct route	 routes[MAXROUTES];
static int		 nroutes;
static int		 resolved;

/*
 * --sni-route NAME=HOST:PORT[,NAME=HOST:PORT...], repeatable.  Names
 * are lowercase host names, "*.suffix" or "*".  A bad entry is a usage
 * error.
 */
void
sniroute_option(const char *opt, const char *arg)
{
	char	*copy, *p, *tok, *eq;
	size_t	 i;

	copy = xstrdup(arg);
	for (p = copy; (tok = strsep(&p, ",")) != NULL; ) {
		if ((eq = strchr(tok, '=')) == NULL || eq == tok ||
		    eq[1] == '\0')
			tk_cli_bad(opt, arg, "%s is not NAME=HOST:PORT", tok);
		*eq = '\0';
		if (eq - tok > 255)
			tk_cli_bad(opt, arg, "a name over 255 bytes");
		for (i = 0; tok[i] != '\0'; i++)
			tok[i] = (char)(tok[i] >= 'A' && tok[i] <= 'Z' ?
			    tok[i] - 'A' + 'a' : tok[i]);
		if (strchr(tok + 1, '*') != NULL || (tok[0] == '*' &&
		    tok[1] != '\0' && tok[1] != '.'))
			tk_cli_bad(opt, arg, "%s: a wildcard is \"*\" or "
			    "\"*.suffix\"", tok);
		for (i = 0; i < (size_t)nroutes; i++)
			if (strcmp(routes[i].name, tok) == 0)
				tk_cli_bad(opt, arg, "%s routed twice", tok);
		if (nroutes == MAXROUTES)
			tk_cli_bad(opt, arg, "more than %d routes", MAXROUTES);
		routes[nroutes].name = xstrdup(tok);
		routes[nroutes].to = xstrdup(eq + 1);
		nroutes++;
	}
	free(copy);
}

/* Whether sessions route by name; resolves the routes the first time. */
int
sniroute_on(void)
{
	struct tk_addr	 a;
	const char	*err;
	char		 name[TK_ADDRSTRLEN];
	int		 i, k;

	if (nroutes == 0 || resolved)
		return nroutes > 0;
	for (i = 0; i < nroutes; i++) {
		if (tk_addr_parse(routes[i].to, -1, &a, &err) == -1)
			tk_cli_bad("--sni-route", routes[i].to, "%s", err);
		tk_addr_fmt(&a, name, sizeof(name));
		for (k = 0; k < upstream_count(); k++)
			if (strcmp(upstream_name_at(k), name) == 0)
				break;
		if (k == upstream_count())
			tk_cli_bad("--sni-route", routes[i].to, "not an "
			    "upstream (give it with -u too)");
		if (tlsorig_on(upstream_at(k)))
			tk_cli_bad("--sni-route", routes[i].to, "a \"tls\" "
			    "upstream: routing passes the client's TLS on");
		routes[i].u = upstream_at(k);
	}
	resolved = 1;
	return 1;
}

void
sniroute_reset(void)
{
	int	i;

	for (i = 0; i < nroutes; i++) {
		free(routes[i].name);
		free(routes[i].to);
	}
	memset(routes, 0, sizeof(routes));
	nroutes = 0;
	resolved = 0;
}

/*
 * The upstream for server name sni ("" without one): the exact route,
 * else the longest "*.suffix" that matches (a "*.a.test" route takes
 * "b.a.test", not "a.test"), else "*"; NULL when none.
 */
struct upstream *
sniroute_pick(const char *sni)
{
	struct route	*best = NULL, *any = NULL;
	size_t		 n = strlen(sni), k;
	int		 i;

	for (i = 0; i < nroutes; i++) {
		if (strcmp(routes[i].name, "*") == 0) {
			any = &routes[i];
			continue;
		}
		if (n > 0 && strcmp(routes[i].name, sni) == 0)
			return routes[i].u;
		if (routes[i].name[0] != '*')
			continue;
		k = strlen(routes[i].name) - 1;	/* ".suffix" */
		if (n > k && strcmp(sni + n - k, routes[i].name + 1) == 0 &&
		    (best == NULL || strlen(best->name) < k + 1))
			best = &routes[i];
	}
	if (best != NULL)
		return best->u;
	return any != NULL ? any->u : NULL;
}

/*
 * Read io's ClientHello into p, exactly as far as tk_hello_parse asks:
 * 1 once it is whole (p->sni set), 0 while it waits for READ (blocked),
 * -1 when it failed, counted by kind.  Worker thread.
 */
int
sniroute_read(struct worker *w, struct tk_io *io, struct sni_peek *p)
{
	struct tk_hello	 h;
	ssize_t		 n;
	int		 r, kind;

	if (p->buf == NULL && (p->buf = malloc(TK_HELLO_INMAX)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	for (;;) {
		if ((r = tk_hello_parse(p->buf, p->len, &h)) == TK_HELLO_DONE) {
			strlcpy(p->sni, h.sni, sizeof(p->sni));
			return 1;
		}
		if (r == TK_HELLO_BAD) {
			kind = p->buf[0] != 22 ? TK_TLS_F_NOTTLS :
			    TK_TLS_F_PROTOCOL;
			break;
		}
		if ((io->ready & TK_EV_READ) == 0)
			return 0;
		do {
			n = recv(io->fd, p->buf + p->len, h.want, 0);
		} while (n == -1 && errno == EINTR);
		if (n > 0) {
			p->len += (size_t)n;
			if ((size_t)n < h.want && !(io->ready & TK_EV_HUP))
				tk_io_block(io, TK_EV_READ);
			continue;
		}
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			tk_io_block(io, TK_EV_READ);
			return 0;
		}
		kind = n == 0 ? TK_TLS_F_EOF : TK_TLS_F_SOCKET;
		break;
	}
	p->fail = (uint8_t)kind;
	w->st.tls_fail[kind]++;
	errno = EPROTO;
	return -1;
}
