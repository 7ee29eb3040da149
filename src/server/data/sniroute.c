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
 * a routed session tries only its own; the routes are the
 * configuration's (srv.cfg.routes, parsed by cfgval.c).  A ClientHello
 * that is no TLS, malformed or over TK_HELLO_MAX closes the session,
 * counted as a TLS failure of its kind (not-tls, protocol; eof,
 * timeout).
 */
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/tlshello.h"
#include "../tenkd.h"

/* Whether sessions route by name. */
int
sniroute_on(void)
{
	return srv.cfg.nroutes > 0;
}

/*
 * The upstream for server name sni ("" without one): the exact route,
 * else the longest "*.suffix" that matches (a "*.a.test" route takes
 * "b.a.test", not "a.test"), else "*"; NULL when none.
 */
struct upstream *
sniroute_pick(const char *sni)
{
	const struct sniroute	*routes = srv.cfg.routes;
	const struct sniroute	*best = NULL, *any = NULL;
	size_t			 n = strlen(sni), k;
	int			 i;

	for (i = 0; i < srv.cfg.nroutes; i++) {
		if (strcmp(routes[i].name, "*") == 0) {
			any = &routes[i];
			continue;
		}
		if (n > 0 && strcmp(routes[i].name, sni) == 0)
			return upstream_at(routes[i].up);
		if (routes[i].name[0] != '*')
			continue;
		k = strlen(routes[i].name) - 1;	/* ".suffix" */
		if (n > k && strcmp(sni + n - k, routes[i].name + 1) == 0 &&
		    (best == NULL || strlen(best->name) < k + 1))
			best = &routes[i];
	}
	if (best != NULL)
		return upstream_at(best->up);
	return any != NULL ? upstream_at(any->up) : NULL;
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
