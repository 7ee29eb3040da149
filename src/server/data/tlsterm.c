/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TLS toward clients (--tls-cert and the rest, which config.c parses
 * into struct config's tls): the server context, made from them when
 * the configuration is checked (config_check), so at start before any
 * privilege is dropped, and by the master at each reload, whose new
 * generation so picks up new certificates while the old one keeps its
 * own, and keeps serving when the new ones fail; the session ticket
 * secret; and a client connection's handshake, its deadline, and what
 * it is counted as.  The records are the data path's (dpath.c); echo.c
 * and proxy.c run the handshake before their flows; tlsorig.c speaks
 * TLS to upstreams and sniroute.c routes by the server name without
 * TLS.
 *
 * The ticket keys derive from one secret and the wall clock
 * (tk_tls_ctx_tickets): the secret is made once, at the first start, so
 * a master's workers, forked after it, and every later generation of a
 * reload share it and resume each other's sessions; keys rotate every
 * --tls-ticket-period.
 *
 * io_uring: a TLS connection's records must pass through the library,
 * which reads and writes the socket itself, so a process that speaks
 * TLS runs io_uring in its poll mode (worker.c): readiness as epoll
 * gives it, and none of the completion path's recvs into the ring.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/cli.h"
#include "tenk/log.h"
#include "tenk/parse.h"
#include "../tenkd.h"

static unsigned char	 secret[32];
static struct tk_timer	 trim_timer;
static int		 secret_made;

/*
 * The server context of c's certificates (config_check): a file that
 * cannot be read, a key that does not match its certificate, a file
 * that holds no PEM is one line in e naming the option and the file.
 * The upstreams' contexts too (tlsorig.c).  The first to make one makes
 * the ticket secret.  Start-up, and the master at a reload.
 */
int
tlsterm_load(struct config *c, struct tk_cli_err *e)
{
	struct tlsconf		*t = &c->tls;
	struct tk_tls_ctx	*ctx;
	char			 err[512];
	int			 i;

	if (tlsorig_load(c, e) == -1)
		return -1;
	if (t->ncert == 0)
		return 0;
	if ((t->ctx = ctx = tk_tls_ctx_new(1, err, sizeof(err))) == NULL)
		return tk_cli_errf(e, "--tls-cert", NULL, "%s", err);
	for (i = 0; i < t->ncert; i++)
		if (tk_tls_ctx_cert(ctx, t->cert[i], t->key[i], err,
		    sizeof(err)) == -1)
			return tk_cli_errf(e, "--tls-cert", NULL, "%s", err);
	if (t->version != 0 && tk_tls_ctx_versions(ctx, t->version,
	    t->version, err, sizeof(err)) == -1)
		return tk_cli_errf(e, "--tls-version", NULL, "%s", err);
	if (t->ciphers != NULL && tk_tls_ctx_ciphers(ctx, t->ciphers, err,
	    sizeof(err)) == -1)
		return tk_cli_errf(e, "--tls-ciphers", t->ciphers, "%s", err);
	if (t->ticket_period != 0) {
		if (!secret_made) {
			arc4random_buf(secret, sizeof(secret));
			secret_made = 1;
		}
		if (tk_tls_ctx_tickets(ctx, secret,
		    t->ticket_period / TK_SEC) == -1)
			return tk_cli_errf(e, "--tls-ticket-period", NULL,
			    "tickets: %s", strerror(errno));
	}
	t->ktls_why[0] = '\0';
	if (!tk_tls_ctx_ktls(ctx, err, sizeof(err)))
		snprintf(t->ktls_why, sizeof(t->ktls_why), "%s: records in "
		    "user space", err);
	return 0;
}

/*
 * Whether this process speaks TLS or peeks at it (listeners, upstreams,
 * routes): its workers then run io_uring in poll mode.
 */
int
tlsterm_any(void)
{
	return srv.cfg.tls.ctx != NULL || tlsorig_any() || sniroute_on();
}

/* The start-up line of what TLS does here, once the log is up. */
void
tlsterm_log(void)
{
	const struct tlsconf	*t = &srv.cfg.tls;
	char			 tp[32], hs[32];

	if (t->ctx == NULL)
		return;
	log_info("TLS: %d certificate%s, %s, tickets %s, handshake timeout "
	    "%s, %s; kTLS: %s", t->ncert, t->ncert == 1 ? "" : "s",
	    t->version != 0 ? (t->version == TK_TLS_1_3 ? "TLS 1.3" :
	    "TLS 1.2") : "TLS 1.2 and 1.3", t->ticket_period == 0 ? "off" :
	    tk_fmt_duration(t->ticket_period, tp, sizeof(tp)),
	    tk_fmt_duration(t->hs_timeout, hs, sizeof(hs)),
	    tk_tls_library(), t->ktls_why[0] != '\0' ? t->ktls_why : "on");
}

/*
 * Once a second on the main thread, while TLS is spoken: give back what
 * a burst of handshakes left in the heap (tk_tls_trim).
 */
static void
trim_tick(struct tk_loop *l, struct tk_timer *t)
{
	tk_tls_trim();
	(void)tk_timer_arm(l, t, TK_SEC);
}

void
tlsterm_start(struct tk_loop *l)
{
	tk_timer_init(&trim_timer, trim_tick, NULL);
	if (tlsterm_any())
		(void)tk_timer_arm(l, &trim_timer, TK_SEC);
}

void
tlsterm_stop(struct tk_loop *l)
{
	tk_timer_cancel(l, &trim_timer);
}

/*
 * Once a second in each worker thread that speaks TLS: the buffers of
 * its quiet connections go (tk_tls_sweep).
 */
static void
sweep_tick(struct tk_loop *l, struct tk_timer *t)
{
	tk_tls_sweep();
	(void)tk_timer_arm(l, t, TK_SEC);
}

/* Before the worker's thread starts (worker_init). */
void
tlsterm_worker_init(struct worker *w)
{
	tk_timer_init(&w->tls_timer, sweep_tick, w);
	if (tlsterm_any() && tk_timer_arm(w->l, &w->tls_timer, TK_SEC) == -1)
		fatal("thread %d: timer", w->id);
}

void
tlsterm_worker_free(struct worker *w)
{
	tk_timer_cancel(w->l, &w->tls_timer);
}

/* TLS for a client connection on io's socket; NULL with ENOMEM. */
struct tk_tls *
tlsterm_new(struct tk_io *io)
{
	return tk_tls_new(srv.cfg.tls.ctx, io, NULL, NULL);
}

/*
 * Advance t's handshake: 1 once done, counted new or resumed; 0 while
 * it waits for t->rwant; -1 when it failed, counted by kind (the caller
 * closes with CONN_TLS).  Worker thread.
 */
int
tlsterm_handshake(struct worker *w, struct tk_tls *t)
{
	struct tk_tls_info	i;
	int			r;

	if ((r = tk_tls_handshake(t)) == 1) {
		tk_tls_info(t, &i);
		if (i.resumed)
			w->st.tls_resumed++;
		else
			w->st.tls_new++;
	} else if (r == -1)
		w->st.tls_fail[t->fail]++;
	return r;
}

/* t's handshake ran out of time: count it so (the caller closes). */
void
tlsterm_timeout(struct worker *w, struct tk_tls *t)
{
	t->fail = TK_TLS_F_TIMEOUT;
	w->st.tls_fail[TK_TLS_F_TIMEOUT]++;
}

/*
 * The access log's TLS fields of t: the version and cipher agreed and
 * the name asked for, or the kind of failure.
 */
void
tlsterm_acct(const struct tk_tls *t, struct acct_rec *r)
{
	struct tk_tls_info	i;

	if (t == NULL)
		return;
	if (!t->done) {
		r->tls_fail = tk_tls_fail_names[t->fail != TK_TLS_F_NONE ?
		    t->fail : TK_TLS_F_EOF];
		return;
	}
	tk_tls_info(t, &i);
	r->tls_version = i.version;
	r->tls_cipher = i.cipher;
	if (i.sni[0] != '\0')
		r->sni = i.sni;
}
