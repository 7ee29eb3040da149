/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Prometheus text exposition format, version 0.0.4, of the figures
 * metrics.c gathered: one "# HELP" and "# TYPE" pair per family, then
 * its samples.  A family is a row of a table naming a uint64_t in
 * struct msnap (by offset), so adding a metric is adding a row.
 *
 * Without workers each series is this process's, unlabelled.  Under a
 * master each series comes once per worker, labelled worker="N", and
 * never also as a sum: Prometheus sums in the query (sum without
 * (worker) (...)), and a sum beside its parts in one family would be
 * counted twice by any query that sums the family.  process_* are each
 * process's own: the workers' by their worker label, the master's as
 * worker="master".  A family that only one mode or backend fills (the
 * proxy's, io_uring's) is left out under the others.  Label values are
 * ours (reasons, limit names, sides, upstream addresses), never a
 * client's, so they need no escaping.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tenkd.h"

/* The help of tenkd_upstream_hash_slots names the table's size. */
_Static_assert(CHASH_SLOTS == 262144, "tenkd_upstream_hash_slots");

/* What a row's label is, and how many series it has. */
enum lab {
	LAB_NONE = 0,
	LAB_REASON,		/* one per conn_reasons[] */
	LAB_LIMIT,		/* one per cap_names[] */
	LAB_SIDE,		/* client, and upstream in proxy mode */
	LAB_UPSTREAM,		/* one per upstream, proxy only */
	LAB_TLSFAIL,		/* one per tk_tls_fail_names[], but none */
};

#define U64(f)		offsetof(struct msnap, f)
#define UPS(f)		offsetof(struct msnap, ups[0].f)

#define F_PROXY		0x01	/* with an upstream side (proto->sides) */
#define F_URING		0x02	/* --backend io_uring only */
#define F_HASH		0x04	/* --balance hash only, see hashed() */
#define F_TLS		0x08	/* TLS spoken or peeked at (tlsterm_any) */

static const char *const side_names[SIDE_N] = { "client", "upstream" };

static const struct fam {
	const char	*name;
	const char	*type;
	const char	*help;
	size_t		 off;		/* of the first uint64_t */
	enum lab	 lab;
	unsigned int	 flags;		/* F_* */
} fams[] = {
	{ "tenkd_connections_accepted_total", "counter",
	    "Client connections accepted.", U64(st.accepted), LAB_NONE, 0 },
	{ "tenkd_connections_active", "gauge",
	    "Client connections open now.", U64(st.active), LAB_NONE, 0 },
	{ "tenkd_connections_closed_total", "counter",
	    "Client connections closed, by reason.", U64(st.closed),
	    LAB_REASON, 0 },
	{ "tenkd_received_bytes_total", "counter",
	    "Bytes received, by side: from clients, from upstreams (proxy).",
	    U64(st.bytes_in), LAB_SIDE, 0 },
	{ "tenkd_sent_bytes_total", "counter",
	    "Bytes sent, by side: to clients, to upstreams (proxy).",
	    U64(st.bytes_out), LAB_SIDE, 0 },
	{ "tenkd_buffers_in_use", "gauge",
	    "Pool buffers holding queued bytes.", U64(st.bufs_inuse),
	    LAB_NONE, 0 },
	{ "tenkd_buffers_spare", "gauge",
	    "Pool buffers kept free for reuse.", U64(st.bufs_free),
	    LAB_NONE, 0 },
	{ "tenkd_memory_queued_bytes", "gauge",
	    "Bytes in queued buffers, against --max-memory.", U64(mem_held),
	    LAB_NONE, 0 },
	{ "tenkd_loop_iterations_total", "counter",
	    "Event loop iterations, all threads.", U64(st.iterations),
	    LAB_NONE, 0 },
	{ "tenkd_limit_reached_total", "counter",
	    "Times a limit held clients back, by limit.", U64(caps),
	    LAB_LIMIT, 0 },
	{ "tenkd_no_port_total", "counter",
	    "Clients closed for want of a local port.", U64(st.noport),
	    LAB_NONE, F_PROXY },
	{ "tenkd_spliced_bytes_total", "counter",
	    "Bytes sent by splice(2), never copied into tenkd.",
	    U64(st.spliced), LAB_NONE, F_PROXY },
	{ "tenkd_fastpath_sessions_total", "counter",
	    "Sessions whose bytes the kernel forwarded (--fastpath).",
	    U64(st.fpsess), LAB_NONE, F_PROXY },
	{ "tenkd_fastpath_bytes_total", "counter",
	    "Bytes the kernel forwarded, never read by tenkd (--fastpath).",
	    U64(st.fpbytes), LAB_NONE, F_PROXY },
	{ "tenkd_splice_no_pipe_total", "counter",
	    "Bulk streams copied because every pipe was in use.",
	    U64(st.nopipe), LAB_NONE, F_PROXY },
	{ "tenkd_splice_pipes_in_use", "gauge",
	    "Pipes splicing a stream now.", U64(st.pipes), LAB_NONE, F_PROXY },
	{ "tenkd_splice_piped_bytes", "gauge",
	    "Bytes in the pipes now, on their way.", U64(st.piped), LAB_NONE,
	    F_PROXY },
	{ "tenkd_uring_ring_dry_total", "counter",
	    "io_uring: receives re-armed because the buffer ring ran dry.",
	    U64(st.ring_dry), LAB_NONE, F_URING },
	{ "tenkd_uring_cq_overflow_total", "counter",
	    "io_uring: waits that found the completion queue overflowed.",
	    U64(st.cq_overflow), LAB_NONE, F_URING },
	{ "tenkd_uring_multishot_accepted_total", "counter",
	    "io_uring: connections brought by multishot accept.",
	    U64(st.ms_accepted), LAB_NONE, F_URING },
	{ "tenkd_uring_accept_dropped_total", "counter",
	    "io_uring: connections accepted by the kernel, closed unserved.",
	    U64(st.accept_dropped), LAB_NONE, F_URING },
	{ "tenkd_tls_handshakes_total", "counter",
	    "TLS handshakes of clients done in full.", U64(st.tls_new),
	    LAB_NONE, F_TLS },
	{ "tenkd_tls_resumed_total", "counter",
	    "TLS handshakes of clients that resumed a session.",
	    U64(st.tls_resumed), LAB_NONE, F_TLS },
	{ "tenkd_tls_failures_total", "counter",
	    "TLS handshakes (or, routing by name, ClientHellos) that "
	    "failed, by reason.", U64(st.tls_fail), LAB_TLSFAIL, F_TLS },
	{ "tenkd_access_log_dropped_total", "counter",
	    "Access-log records dropped: the log fell --access-log-buffer "
	    "behind.", U64(st.log_dropped), LAB_NONE, 0 },
	{ "tenkd_upstream_up", "gauge",
	    "Whether the upstream takes connects (not failed out).", UPS(up),
	    LAB_UPSTREAM, F_PROXY },
	{ "tenkd_upstream_sessions_active", "gauge",
	    "Sessions connecting or connected to the upstream.",
	    UPS(active), LAB_UPSTREAM, F_PROXY },
	{ "tenkd_upstream_sessions_total", "counter",
	    "Connects to the upstream that succeeded.", UPS(sessions),
	    LAB_UPSTREAM, F_PROXY },
	{ "tenkd_upstream_connect_failures_total", "counter",
	    "Connects to the upstream that failed or timed out.", UPS(fails),
	    LAB_UPSTREAM, F_PROXY },
	{ "tenkd_upstream_sent_bytes_total", "counter",
	    "Bytes sent to the upstream, counted at session end.", UPS(tx),
	    LAB_UPSTREAM, F_PROXY },
	{ "tenkd_upstream_received_bytes_total", "counter",
	    "Bytes received from the upstream, counted at session end.",
	    UPS(rx), LAB_UPSTREAM, F_PROXY },
	{ "tenkd_upstream_hash_slots", "gauge",
	    "Slots of the --balance hash table (262144) the upstream owns.",
	    UPS(slots), LAB_UPSTREAM, F_PROXY | F_HASH },
};

/* The process_* families: doubles or uint64_t, of one process each. */
static const struct pfam {
	const char	*name;
	const char	*type;
	const char	*help;
	size_t		 off;
	int		 dbl;
} pfams[] = {
	{ "process_cpu_seconds_total", "counter",
	    "User and system CPU time spent in seconds.", U64(cpu), 1 },
	{ "process_resident_memory_bytes", "gauge",
	    "Resident memory size in bytes.", U64(rss), 0 },
	{ "process_open_fds", "gauge",
	    "Number of open file descriptors.", U64(fds), 0 },
	{ "process_max_fds", "gauge",
	    "Maximum number of open file descriptors.", U64(maxfds), 0 },
	{ "process_start_time_seconds", "gauge",
	    "Start time of the process since unix epoch in seconds.",
	    U64(start), 1 },
};

static void
value(FILE *f, double v)
{
	if (v == floor(v) && fabs(v) < 1e18)
		fprintf(f, " %.0f\n", v);
	else
		fprintf(f, " %.6f\n", v);
}

static double
get(const struct msnap *s, size_t off, int dbl)
{
	const char	*p = (const char *)s + off;
	uint64_t	 u;
	double		 d;

	if (dbl) {
		memcpy(&d, p, sizeof(d));
		return d;
	}
	memcpy(&u, p, sizeof(u));
	return (double)u;
}

/* One sample: name{labels,worker="wk"} v; no worker label if wk is NULL. */
static void
sample(FILE *f, const char *name, const char *labels, const char *wk,
    double v)
{
	if (wk != NULL)
		fprintf(f, "%s{%s%sworker=\"%s\"}", name, labels,
		    *labels != '\0' ? "," : "", wk);
	else if (*labels != '\0')
		fprintf(f, "%s{%s}", name, labels);
	else
		fprintf(f, "%s", name);
	value(f, v);
}

/*
 * One series of the n snapshots at off: unlabelled without workers (n
 * is 1), else one with worker="i" for each.  A worker that never
 * answered (pid 0) shows its predecessors' counters and zero gauges.
 */
static void
series(FILE *f, const char *name, const char *labels, const struct msnap *s,
    int n, int workers, size_t off, int dbl)
{
	char	wk[16];
	int	i;

	if (!workers) {
		sample(f, name, labels, NULL, get(s, off, dbl));
		return;
	}
	for (i = 0; i < n; i++) {
		snprintf(wk, sizeof(wk), "%d", i);
		sample(f, name, labels, wk, get(&s[i], off, dbl));
	}
}

/* The series of row m labelled key="names[i]", for i below k. */
static void
listed(FILE *f, const struct fam *m, const struct msnap *s, int n,
    int workers, const char *key, const char *const *names, int k)
{
	char	lb[64];
	int	i;

	for (i = 0; i < k; i++) {
		snprintf(lb, sizeof(lb), "%s=\"%s\"", key, names[i]);
		series(f, m->name, lb, s, n, workers,
		    m->off + (size_t)i * sizeof(uint64_t), 0);
	}
}

static void
family(FILE *f, const struct fam *m, const struct msnap *s, int n,
    int workers)
{
	char	lb[TK_ADDRSTRLEN + 32];
	int	i;

	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help, m->name,
	    m->type);
	switch (m->lab) {
	case LAB_NONE:
		series(f, m->name, "", s, n, workers, m->off, 0);
		break;
	case LAB_REASON:
		listed(f, m, s, n, workers, "reason", conn_reasons,
		    CONN_NREASONS);
		break;
	case LAB_LIMIT:
		listed(f, m, s, n, workers, "limit", cap_names, CAP_NKINDS);
		break;
	case LAB_SIDE:
		listed(f, m, s, n, workers, "side", side_names,
		    srv.proto->sides);
		break;
	case LAB_TLSFAIL:
		for (i = TK_TLS_F_NONE + 1; i < TK_TLS_F_MAX; i++) {
			snprintf(lb, sizeof(lb), "reason=\"%s\"",
			    tk_tls_fail_names[i]);
			series(f, m->name, lb, s, n, workers,
			    m->off + (size_t)i * sizeof(uint64_t), 0);
		}
		break;
	case LAB_UPSTREAM:
		for (i = 0; i < srv.cfg.nups; i++) {
			snprintf(lb, sizeof(lb), "upstream=\"%s\"",
			    srv.cfg.ups[i].name);
			series(f, m->name, lb, s, n, workers,
			    m->off + (size_t)i * sizeof(s->ups[0]), 0);
		}
		break;
	}
}

/* The connect-time histogram: cumulative buckets, sum, count. */
static void
histogram(FILE *f, const struct msnap *s, int n, int workers)
{
	static const char name[] = "tenkd_upstream_connect_duration_seconds";
	struct msnap	*c;
	char		 lb[32], sname[64], wk[16];
	int		 i, b;

	/* Cumulative counts in a copy, so that series() reads them. */
	if ((c = calloc((size_t)n, sizeof(*c))) == NULL)
		return;
	for (i = 0; i < n; i++)
		for (b = 0; b < MHIST_N; b++)
			c[i].hist[b] = s[i].hist[b] +
			    (b > 0 ? c[i].hist[b - 1] : 0);
	fprintf(f, "# HELP %s Time from connect(2) to an established "
	    "upstream connection.\n# TYPE %s histogram\n", name, name);
	snprintf(sname, sizeof(sname), "%s_bucket", name);
	for (b = 0; b < MHIST_N; b++) {
		if (b < MHIST_N - 1)
			snprintf(lb, sizeof(lb), "le=\"%g\"", mhist_bounds[b]);
		else
			snprintf(lb, sizeof(lb), "le=\"+Inf\"");
		series(f, sname, lb, c, n, workers, U64(hist) +
		    (size_t)b * sizeof(uint64_t), 0);
	}
	/* Kept in ns, written in seconds. */
	snprintf(sname, sizeof(sname), "%s_sum", name);
	for (i = 0; i < n; i++) {
		snprintf(wk, sizeof(wk), "%d", i);
		sample(f, sname, "", workers ? wk : NULL,
		    (double)s[i].hist_sum / 1e9);
	}
	snprintf(sname, sizeof(sname), "%s_count", name);
	series(f, sname, "", c, n, workers, U64(hist) +
	    (MHIST_N - 1) * sizeof(uint64_t), 0);
	free(c);
}

/*
 * The process_* families, each process's own: without workers this
 * process's, unlabelled (as Prometheus' client libraries write them);
 * under a master its own as worker="master", then each worker's, but
 * for a worker that never answered (nothing of its own to show).
 */
static void
process(FILE *f, const struct msnap *s, int n, int workers)
{
	struct msnap	*self;
	const char	*name;
	char		 wk[16];
	size_t		 k;
	int		 i, dbl;

	if ((self = calloc(1, sizeof(*self))) == NULL)
		return;
	metrics_self(self);
	for (k = 0; k < sizeof(pfams) / sizeof(pfams[0]); k++) {
		name = pfams[k].name;
		dbl = pfams[k].dbl;
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name,
		    pfams[k].help, name, pfams[k].type);
		sample(f, name, "", workers ? "master" : NULL,
		    get(self, pfams[k].off, dbl));
		for (i = 0; workers && i < n; i++) {
			if (s[i].pid == 0)
				continue;
			snprintf(wk, sizeof(wk), "%d", i);
			sample(f, name, "", wk, get(&s[i], pfams[k].off, dbl));
		}
	}
	free(self);
}

/*
 * Whether the snapshots come from --balance hash, by their table's
 * slots: under --workers the master's own options may be older than
 * its workers', since a reload parses them in the workers.
 */
static int
hashed(const struct msnap *s, int n)
{
	uint32_t	k;
	int		i;

	for (i = 0; i < n; i++)
		for (k = 0; k < s[i].nups && k < MAXUPSTREAMS; k++)
			if (s[i].ups[k].slots > 0)
				return 1;
	return 0;
}

/*
 * The whole /metrics page into f from n snapshots: one per worker
 * process when workers, else this process's only.  Main thread (or the
 * master).
 */
void
promtext_write(FILE *f, const struct msnap *s, int n, int workers)
{
	size_t		 k;
	unsigned int	 on = 0;

	if (srv.proto->sides == SIDE_N)
		on |= F_PROXY | (hashed(s, n) ? F_HASH : 0);
	if (srv.cfg.backend != NULL && strcmp(srv.cfg.backend, "io_uring") ==
	    0)
		on |= F_URING;
	if (tlsterm_any())
		on |= F_TLS;
	for (k = 0; k < sizeof(fams) / sizeof(fams[0]); k++)
		if ((fams[k].flags & ~on) == 0)
			family(f, &fams[k], s, n, workers);
	if (on & F_PROXY)
		histogram(f, s, n, workers);
	process(f, s, n, workers);
}
