/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TLS toward upstreams: an upstream marked "tls" (-u HOST:PORT,tls,
 * with sni=NAME, ca=FILE, noverify) is spoken to over TLS, its
 * certificate verified by default against the system's CAs or ca=FILE,
 * for the name sni= gives or else for its address.  Its parameters are
 * its struct upconf's (cfgval.c parses them), its client context is
 * made when the configuration is checked (config_check), and each
 * worker thread keeps the newest session each upstream gave, to resume
 * it on the next connect (as nginx's proxy_ssl_session_reuse).
 * proxy.c runs the handshake after the connect; a handshake that fails
 * counts as a failed connect of the upstream, whose reason is logged
 * (rate-limited).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/cli.h"
#include "tenk/log.h"
#include "../tenkd.h"

_Static_assert(sizeof(((struct worker *)NULL)->upsess) /
    sizeof(((struct worker *)NULL)->upsess[0]) == MAXUPSTREAMS,
    "a session per upstream");

/*
 * Each TLS upstream's context in c (config_check): verification against
 * its CA file (or the system's) unless noverify.  A CA file that cannot
 * be read is one line in e.
 */
int
tlsorig_load(struct config *c, struct tk_cli_err *e)
{
	struct upconf	*u;
	char		 err[512], w[64];
	int		 i;

	for (i = 0; i < c->nups; i++) {
		u = &c->ups[i];
		if (!u->tls)
			continue;
		if ((u->tctx = tk_tls_ctx_new(0, err, sizeof(err))) == NULL ||
		    (!u->noverify && tk_tls_ctx_verify(u->tctx, u->ca, err,
		    sizeof(err)) == -1))
			return tk_cli_errf(e, "--upstream", u->name, "%s",
			    err);
		(void)tk_tls_ctx_ktls(u->tctx, w, sizeof(w));
	}
	return 0;
}

/* Whether any upstream is spoken to over TLS. */
int
tlsorig_any(void)
{
	int	i;

	for (i = 0; i < srv.cfg.nups; i++)
		if (srv.cfg.ups[i].tls)
			return 1;
	return 0;
}

int
tlsorig_on(const struct upstream *u)
{
	return srv.cfg.ups[upstream_index(u)].tls;
}

/*
 * TLS toward u on io's connected socket, offering the newest session u
 * gave this thread; NULL with ENOMEM.
 */
struct tk_tls *
tlsorig_new(struct worker *w, const struct upstream *u, struct tk_io *io)
{
	const struct upconf	*uc = &srv.cfg.ups[upstream_index(u)];

	return tk_tls_new(uc->tctx, io, uc->sni, w->upsess[upstream_index(u)]);
}

/* Keep the newest session t has of u, for this thread's next connect. */
static void
keep(struct worker *w, const struct upstream *u, struct tk_tls *t)
{
	struct tk_tls_sess	*s;
	int			 k = upstream_index(u);

	if ((s = tk_tls_sess_take(t)) == NULL)
		return;
	tk_tls_sess_free(w->upsess[k]);
	w->upsess[k] = s;
}

/*
 * Advance t's handshake with u: 1 done, 0 waiting for t->rwant, -1
 * failed (logged, rate-limited, with the library's reason; the caller
 * counts it against u).  Worker thread.
 */
int
tlsorig_handshake(struct worker *w, const struct upstream *u,
    struct tk_tls *t)
{
	uint64_t	skipped;
	char		why[256];
	int		r;

	if ((r = tk_tls_handshake(t)) == 1)
		keep(w, u, t);
	else if (r == -1 && worker_warn_ok(w, WARN_TLSUP, &skipped))
		log_warnx("upstream %s: TLS handshake failed: %s (%llu "
		    "similar suppressed)", upstream_name(u),
		    tk_tls_why(t, why, sizeof(why)),
		    (unsigned long long)skipped);
	return r;
}

/* A session with u ends: a TLS 1.3 ticket came after its handshake. */
void
tlsorig_end(struct worker *w, const struct upstream *u, struct tk_tls *t)
{
	if (t->done && t->fail == TK_TLS_F_NONE)
		keep(w, u, t);
}

/* The thread's sessions, at its end. */
void
tlsorig_worker_free(struct worker *w)
{
	int	i;

	for (i = 0; i < MAXUPSTREAMS; i++) {
		tk_tls_sess_free(w->upsess[i]);
		w->upsess[i] = NULL;
	}
}
