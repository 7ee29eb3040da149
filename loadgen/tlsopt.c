/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tenkload's TLS options (--tls and --tls-*): their values, the client
 * context they make before the run (children of a run over several
 * processes inherit it), the name each target's connections ask for
 * and verify, and the lines said once at the start: that certificates
 * go unchecked, as wrk does without saying, and that the kernel takes
 * no TLS records where it does not.  engine.c runs the connections.
 */
#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/cli.h"
#include "tenk/tls.h"
#include "tenk/xmalloc.h"
#include "loadgen.h"

#define SNI_MAX		255		/* a host name (RFC 6066 3) */

/*
 * One option, as typed (opt) with its argument, into o and conf; any
 * of them turns TLS on.  A bad value is a usage error.
 */
void
tlsopt_set(struct tlsopt *o, struct lg_conf *conf, const char *opt,
    const char *arg)
{
	o->on = 1;
	if (strcmp(opt, "--tls-sni") == 0) {
		if (*arg == '\0' || strlen(arg) > SNI_MAX)
			tk_cli_bad(opt, arg, "a host name of 1 to %d bytes",
			    SNI_MAX);
		conf->tls_sni = arg;
	} else if (strcmp(opt, "--tls-alpn") == 0)
		o->alpn = arg;
	else if (strcmp(opt, "--tls-verify") == 0)
		conf->tls_verify = 1;
	else if (strcmp(opt, "--tls-ca") == 0) {
		o->ca = arg;
		conf->tls_verify = 1;
	} else if (strcmp(opt, "--tls-version") == 0) {
		if ((o->version = tk_tls_version_parse(arg)) == -1)
			tk_cli_bad(opt, arg, "not 1.2 or 1.3");
	} else if (strcmp(opt, "--tls-ciphers") == 0)
		o->ciphers = arg;
	else if (strcmp(opt, "--tls-resume") == 0)
		conf->tls_resume = 1;
}

/*
 * The host of a target as typed, "HOST:PORT" or "[V6]:PORT", or of a
 * URL's authority, "HOST", "HOST:PORT", "[V6]" or "[V6]:PORT".
 */
static char *
host_of(const char *target)
{
	const char	*p = target, *e;
	char		*h;
	size_t		 n;

	if (*p == '[' && (e = strchr(p, ']')) != NULL)
		p++;
	else if ((e = strrchr(p, ':')) == NULL)
		e = p + strlen(p);
	n = (size_t)(e - p);
	h = xmalloc(n + 1);
	memcpy(h, p, n);
	h[n] = '\0';
	return h;
}

/*
 * After the command line: the context for the options in o, into
 * conf->tls, and each of the n targets' host names (the names to ask
 * for and verify, unless --tls-sni): a URL's host, none for unix:.  A
 * setting the library refuses is a usage error naming its option (or
 * the https:// URL).  Nothing without TLS options or an https:// URL.
 */
void
tlsopt_apply(struct tlsopt *o, struct lg_conf *conf, int n, char **targets)
{
	struct tk_tls_ctx	*c;
	char			 err[512];
	int			 i;

	if (!o->on)
		return;
	if ((c = tk_tls_ctx_new(0, err, sizeof(err))) == NULL)
		tk_cli_bad(conf->url != NULL && conf->url->scheme ==
		    SCHEME_HTTPS ? conf->url->text : "--tls", NULL, "%s", err);
	if (o->version != 0 && tk_tls_ctx_versions(c, o->version,
	    o->version, err, sizeof(err)) == -1)
		tk_cli_bad("--tls-version", tk_tls_version_name(o->version),
		    "%s", err);
	if (o->ciphers != NULL && tk_tls_ctx_ciphers(c, o->ciphers, err,
	    sizeof(err)) == -1)
		tk_cli_bad("--tls-ciphers", o->ciphers, "%s", err);
	if (o->alpn != NULL && tk_tls_ctx_alpn(c, o->alpn, err,
	    sizeof(err)) == -1)
		tk_cli_bad("--tls-alpn", o->alpn, "%s", err);
	if (conf->tls_verify && tk_tls_ctx_verify(c, o->ca, err,
	    sizeof(err)) == -1)
		tk_cli_bad(o->ca != NULL ? "--tls-ca" : "--tls-verify", o->ca,
		    "%s", err);
	if (!tk_tls_ctx_ktls(c, err, sizeof(err)) && !conf->quiet)
		fprintf(stderr, "tenkload: kTLS: %s: records sealed and "
		    "opened in user space\n", err);
	if (!conf->tls_verify && !conf->quiet)
		fprintf(stderr, "tenkload: TLS: the server's certificate is "
		    "not verified (--tls-verify checks it)\n");
	conf->tls = c;
	conf->tls_hosts = xcalloc((size_t)n, sizeof(*conf->tls_hosts));
	for (i = 0; i < n; i++)
		if (conf->url != NULL)
			conf->tls_hosts[i] = host_of(conf->url->authority);
		else if (conf->targets[i].ss.ss_family != AF_UNIX)
			conf->tls_hosts[i] = host_of(targets[i]);
}

void
tlsopt_free(struct lg_conf *conf)
{
	size_t	i;

	if (conf->tls == NULL)
		return;
	for (i = 0; i < conf->ntargets; i++)
		free(conf->tls_hosts[i]);
	free(conf->tls_hosts);
	tk_tls_ctx_free(conf->tls);
	conf->tls = NULL;
}
