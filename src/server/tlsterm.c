/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TLS toward clients (--tls-cert and the rest): the options of tenkd's
 * TLS, held in a struct of their own; the server context made from them
 * after the command line is read, so at start before any privilege is
 * dropped, and again by each new generation of a reload, which so
 * picks up new certificates; the session ticket secret; and a client
 * connection's handshake, its deadline, and what it is counted as.
 * The records are the data path's (dpath.c); echo.c and proxy.c run the
 * handshake before their flows; tlsorig.c speaks TLS to upstreams and
 * sniroute.c routes by the server name without TLS.
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
#include "tenk/xmalloc.h"
#include "tenkd.h"

#define DEFAULT_HS_TIMEOUT	(10 * TK_SEC)
#define DEFAULT_TICKET_PERIOD	(3600 * TK_SEC)

struct tlsconf	 tlscf = {
	.hs_timeout = DEFAULT_HS_TIMEOUT,
	.ticket_period = DEFAULT_TICKET_PERIOD,
};

static unsigned char	 secret[32];
static struct tk_timer	 trim_timer;
static int		 secret_made;
static char		 ktls_note[600];	/* why no kTLS, for the log */

/*
 * One TLS option (enum tls_opt) as typed (opt) with its value; a bad
 * value is a usage error.  Start-up and reloads.
 */
void
tlsterm_option(int which, const char *opt, const char *arg)
{
	switch (which) {
	case TLSOPT_CERT:
	case TLSOPT_KEY:
		if (*arg == '\0')
			tk_cli_bad(opt, NULL, "empty file name");
		if ((which == TLSOPT_CERT ? tlscf.ncert : tlscf.nkey) ==
		    TLS_MAXPAIRS)
			tk_cli_bad(opt, arg, "more than %d", TLS_MAXPAIRS);
		if (which == TLSOPT_CERT)
			tlscf.cert[tlscf.ncert++] = xstrdup(arg);
		else
			tlscf.key[tlscf.nkey++] = xstrdup(arg);
		break;
	case TLSOPT_CIPHERS:
		free(tlscf.ciphers);
		tlscf.ciphers = xstrdup(arg);
		break;
	case TLSOPT_HS_TIMEOUT:
		tlscf.hs_timeout = tk_cli_duration(opt, arg, 10 * TK_MSEC,
		    3600 * TK_SEC, "10ms to 1h");
		break;
	case TLSOPT_TICKETS:
		tlscf.ticket_period = tk_cli_duration(opt, arg, 0,
		    7 * 24 * 3600 * TK_SEC, "0, or 1s to 7d");
		if (tlscf.ticket_period != 0 && tlscf.ticket_period < TK_SEC)
			tk_cli_bad(opt, arg, "too small (0, or 1s to 7d)");
		break;
	case TLSOPT_VERSION:
		if ((tlscf.version = tk_tls_version_parse(arg)) == -1)
			tk_cli_bad(opt, arg, "not 1.2 or 1.3");
		break;
	}
	/* The handshake's deadline serves --sni-route as well. */
	if (which != TLSOPT_HS_TIMEOUT)
		tlscf.given = 1;
}

/*
 * After the command line: the server context for the certificates
 * given, echo's TLS protocol, and the upstreams' contexts (tlsorig.c).
 * A file that cannot be read, a key that does not match its
 * certificate, a file that holds no PEM is one line naming the option
 * and the file, and exit 2.  Start-up, and a reload's parse.
 */
void
tlsterm_apply(void)
{
	struct tk_tls_ctx	*ctx;
	char			 err[512];
	int			 i;

	tlsorig_apply();
	if (!tlscf.given)
		return;
	if (tlscf.ncert == 0)
		tk_cli_bad("--tls-cert", NULL, "the TLS options need a "
		    "certificate and its key (--tls-cert FILE --tls-key FILE)");
	if (tlscf.nkey != tlscf.ncert)
		tk_cli_bad("--tls-key", NULL, "%d certificate%s and %d key%s: "
		    "one --tls-key for each --tls-cert, in order", tlscf.ncert,
		    tlscf.ncert == 1 ? "" : "s", tlscf.nkey,
		    tlscf.nkey == 1 ? "" : "s");
	if (sniroute_on())
		tk_cli_bad("--sni-route", NULL, "routes TLS without "
		    "decrypting it: not with --tls-cert");
	if ((ctx = tk_tls_ctx_new(1, err, sizeof(err))) == NULL)
		tk_cli_bad("--tls-cert", NULL, "%s", err);
	for (i = 0; i < tlscf.ncert; i++)
		if (tk_tls_ctx_cert(ctx, tlscf.cert[i], tlscf.key[i], err,
		    sizeof(err)) == -1)
			tk_cli_bad("--tls-cert", NULL, "%s", err);
	if (tlscf.version != 0 && tk_tls_ctx_versions(ctx, tlscf.version,
	    tlscf.version, err, sizeof(err)) == -1)
		tk_cli_bad("--tls-version", NULL, "%s", err);
	if (tlscf.ciphers != NULL && tk_tls_ctx_ciphers(ctx, tlscf.ciphers,
	    err, sizeof(err)) == -1)
		tk_cli_bad("--tls-ciphers", tlscf.ciphers, "%s", err);
	if (tlscf.ticket_period != 0) {
		if (!secret_made) {
			arc4random_buf(secret, sizeof(secret));
			secret_made = 1;
		}
		if (tk_tls_ctx_tickets(ctx, secret,
		    tlscf.ticket_period / TK_SEC) == -1)
			tk_cli_bad("--tls-ticket-period", NULL, "tickets: %s",
			    strerror(errno));
	}
	ktls_note[0] = '\0';
	if (!tk_tls_ctx_ktls(ctx, err, sizeof(err)))
		snprintf(ktls_note, sizeof(ktls_note), "%s: records in user "
		    "space", err);
	tlscf.ctx = ctx;
	if (srv.proto == &proto_echo)
		srv.proto = &proto_echo_tls;
}

/*
 * Forget the options and the contexts, and the upstreams' and the
 * routes, as before the first option: a reload's new worker reads them
 * again.  The secret stays.
 */
void
tlsterm_reset(void)
{
	int	i;

	for (i = 0; i < tlscf.ncert; i++)
		free(tlscf.cert[i]);
	for (i = 0; i < tlscf.nkey; i++)
		free(tlscf.key[i]);
	free(tlscf.ciphers);
	tk_tls_ctx_free(tlscf.ctx);
	memset(&tlscf, 0, sizeof(tlscf));
	tlscf.hs_timeout = DEFAULT_HS_TIMEOUT;
	tlscf.ticket_period = DEFAULT_TICKET_PERIOD;
	tlsorig_reset();
	sniroute_reset();
}

/*
 * Whether this process speaks TLS or peeks at it (listeners, upstreams,
 * routes): its workers then run io_uring in poll mode.
 */
int
tlsterm_any(void)
{
	return tlscf.ctx != NULL || tlsorig_any() || sniroute_on();
}

/* The start-up line of what TLS does here, once the log is up. */
void
tlsterm_log(void)
{
	char	tp[32], hs[32];

	if (tlscf.ctx == NULL)
		return;
	log_info("TLS: %d certificate%s, %s, tickets %s, handshake timeout "
	    "%s, %s; kTLS: %s", tlscf.ncert, tlscf.ncert == 1 ? "" : "s",
	    tlscf.version != 0 ? (tlscf.version == TK_TLS_1_3 ? "TLS 1.3" :
	    "TLS 1.2") : "TLS 1.2 and 1.3", tlscf.ticket_period == 0 ? "off" :
	    tk_fmt_duration(tlscf.ticket_period, tp, sizeof(tp)),
	    tk_fmt_duration(tlscf.hs_timeout, hs, sizeof(hs)),
	    tk_tls_library(), ktls_note[0] != '\0' ? ktls_note : "on");
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
	return tk_tls_new(tlscf.ctx, io, NULL, NULL);
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
