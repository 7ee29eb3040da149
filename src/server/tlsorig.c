/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TLS toward upstreams: an upstream marked "tls" (-u HOST:PORT,tls,
 * with sni=NAME, ca=FILE, noverify) is spoken to over TLS, its
 * certificate verified by default against the system's CAs or ca=FILE,
 * for the name sni= gives or else for its address.  Its parameters are
 * kept here by upstream number (upstream.c hands them over while
 * parsing), its client context made once the command line is read, and
 * each worker thread keeps the newest session each upstream gave, to
 * resume it on the next connect (as nginx's proxy_ssl_session_reuse).
 * proxy.c runs the handshake after the connect; a handshake that fails
 * counts as a failed connect of the upstream, whose reason is logged
 * (rate-limited).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/cli.h"
#include "tenk/log.h"
#include "tenk/xmalloc.h"
#include "tenkd.h"

_Static_assert(sizeof(((struct worker *)NULL)->upsess) /
    sizeof(((struct worker *)NULL)->upsess[0]) == MAXUPSTREAMS,
    "a session per upstream");

struct tlsup {
	int			 on;
	int			 noverify;
	char			*sni;		/* sni=, or NULL */
	char			*ca;		/* ca=, or NULL */
	char			 name[TK_ADDRSTRLEN];	/* to ask, verify */
	struct tk_tls_ctx	*ctx;
};

static struct tlsup	 tups[MAXUPSTREAMS];

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
 * A parameter w[0..n) of upstream number idx (upstream_add): 0 when it
 * is one of ours, 1 when not, -1 with *err a static phrase when it is
 * ours and bad.  Any of them marks the upstream "tls".
 */
int
tlsorig_param(int idx, const char *w, size_t n, const char **err)
{
	struct tlsup	*t = &tups[idx];

	if (n == 3 && strncmp(w, "tls", 3) == 0)
		t->on = 1;
	else if (n == 8 && strncmp(w, "noverify", 8) == 0)
		t->on = t->noverify = 1;
	else if (n >= 4 && strncmp(w, "sni=", 4) == 0) {
		if (n == 4 || n - 4 > 255) {
			*err = "bad sni= (a name of 1 to 255 bytes)";
			return -1;
		}
		free(t->sni);
		t->sni = strndup_x(w + 4, n - 4);
		t->on = 1;
	} else if (n >= 3 && strncmp(w, "ca=", 3) == 0) {
		if (n == 3) {
			*err = "bad ca= (a file of PEM certificates)";
			return -1;
		}
		free(t->ca);
		t->ca = strndup_x(w + 3, n - 3);
		t->on = 1;
	} else
		return 1;
	return 0;
}

/*
 * Each TLS upstream's context, after the command line: verification
 * against its CA file (or the system's) unless noverify.  A CA file
 * that cannot be read is one line and exit 2.
 */
void
tlsorig_apply(void)
{
	struct tlsup	*t;
	char		 err[512], w[64];
	int		 i;

	for (i = 0; i < upstream_count(); i++) {
		t = &tups[i];
		if (!t->on)
			continue;
		if ((t->ctx = tk_tls_ctx_new(0, err, sizeof(err))) == NULL ||
		    (!t->noverify && tk_tls_ctx_verify(t->ctx, t->ca, err,
		    sizeof(err)) == -1))
			tk_cli_bad("--upstream", upstream_name_at(i), "%s",
			    err);
		(void)tk_tls_ctx_ktls(t->ctx, w, sizeof(w));
		if (t->sni != NULL)
			strlcpy(t->name, t->sni, sizeof(t->name));
		else {
			/* The address, checked as one and not sent. */
			strlcpy(t->name, upstream_name_at(i), sizeof(t->name));
			t->name[strcspn(t->name, "]")] = '\0';
			if (t->name[0] == '[')
				memmove(t->name, t->name + 1, strlen(t->name));
			else
				t->name[strcspn(t->name, ":")] = '\0';
		}
	}
}

/* Forget every upstream's TLS, as before the first option (reload). */
void
tlsorig_reset(void)
{
	int	i;

	for (i = 0; i < MAXUPSTREAMS; i++) {
		free(tups[i].sni);
		free(tups[i].ca);
		tk_tls_ctx_free(tups[i].ctx);
	}
	memset(tups, 0, sizeof(tups));
}

/* Whether any upstream is spoken to over TLS. */
int
tlsorig_any(void)
{
	int	i;

	for (i = 0; i < upstream_count(); i++)
		if (tups[i].on)
			return 1;
	return 0;
}

int
tlsorig_on(const struct upstream *u)
{
	return tups[upstream_index(u)].on;
}

/*
 * TLS toward u on io's connected socket, offering the newest session u
 * gave this thread; NULL with ENOMEM.
 */
struct tk_tls *
tlsorig_new(struct worker *w, const struct upstream *u, struct tk_io *io)
{
	int	k = upstream_index(u);

	return tk_tls_new(tups[k].ctx, io, tups[k].name, w->upsess[k]);
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
