/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Prometheus text exposition format, version 0.0.4, of the figures
 * metrics.c gathered: one "# HELP" and "# TYPE" pair per family, then
 * its samples.  A family is a row of a table naming a uint64_t in
 * struct msnap (by offset), so adding a metric is adding a row.
 *
 * Under --workers each series comes twice over: without a "worker"
 * label, the sum (or the most, or the least, as the row says) of all
 * workers, then once per worker with worker="N"; without workers only
 * the first.  Label values are ours (reasons, limit names, upstream
 * addresses), never a client's, so they need no escaping.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenkd.h"

enum agg { AGG_SUM = 0, AGG_MAX };

/* What a row's label is, and how many series it has. */
enum lab {
	LAB_NONE = 0,
	LAB_REASON,		/* one per conn_reasons[] */
	LAB_LIMIT,		/* one per cap_names[] */
	LAB_UPSTREAM,		/* one per upstream, proxy only */
	LAB_TLSFAIL,		/* one per tk_tls_fail_names[], but none */
};

#define U64(f)		offsetof(struct msnap, f)
#define UPS(f)		offsetof(struct msnap, ups[0].f)

static const struct fam {
	const char	*name;
	const char	*type;
	const char	*help;
	size_t		 off;		/* of the first uint64_t */
	enum lab	 lab;
	enum agg	 agg;
	int		 proxy;		/* proxy mode only */
} fams[] = {
	{ "tenkd_connections_accepted_total", "counter",
	    "Client connections accepted.", U64(st.accepted), LAB_NONE,
	    AGG_SUM, 0 },
	{ "tenkd_connections_active", "gauge",
	    "Client connections open now.", U64(st.active), LAB_NONE,
	    AGG_SUM, 0 },
	{ "tenkd_connections_closed_total", "counter",
	    "Client connections closed, by reason.", U64(st.closed),
	    LAB_REASON, AGG_SUM, 0 },
	{ "tenkd_received_bytes_total", "counter",
	    "Bytes received from clients.", U64(st.bytes_in), LAB_NONE,
	    AGG_SUM, 0 },
	{ "tenkd_sent_bytes_total", "counter",
	    "Bytes sent to clients.", U64(st.bytes_out), LAB_NONE,
	    AGG_SUM, 0 },
	{ "tenkd_buffers_in_use", "gauge",
	    "Pool buffers holding queued bytes.", U64(st.bufs_inuse),
	    LAB_NONE, AGG_SUM, 0 },
	{ "tenkd_buffers_spare", "gauge",
	    "Pool buffers kept free for reuse.", U64(st.bufs_free),
	    LAB_NONE, AGG_SUM, 0 },
	{ "tenkd_memory_queued_bytes", "gauge",
	    "Bytes in queued buffers, against --max-memory.", U64(mem_held),
	    LAB_NONE, AGG_SUM, 0 },
	{ "tenkd_loop_iterations_total", "counter",
	    "Event loop iterations, all threads.", U64(st.iterations),
	    LAB_NONE, AGG_SUM, 0 },
	{ "tenkd_limit_reached_total", "counter",
	    "Times a limit held clients back, by limit.", U64(caps),
	    LAB_LIMIT, AGG_SUM, 0 },
	{ "tenkd_no_port_total", "counter",
	    "Clients closed for want of a local port.", U64(st.noport),
	    LAB_NONE, AGG_SUM, 1 },
	{ "tenkd_spliced_bytes_total", "counter",
	    "Bytes sent by splice(2), never copied into tenkd.",
	    U64(st.spliced), LAB_NONE, AGG_SUM, 1 },
	{ "tenkd_splice_no_pipe_total", "counter",
	    "Bulk streams copied because every pipe was in use.",
	    U64(st.nopipe), LAB_NONE, AGG_SUM, 1 },
	{ "tenkd_splice_pipes_in_use", "gauge",
	    "Pipes splicing a stream now.", U64(st.pipes), LAB_NONE,
	    AGG_SUM, 1 },
	{ "tenkd_splice_piped_bytes", "gauge",
	    "Bytes in the pipes now, on their way.", U64(st.piped), LAB_NONE,
	    AGG_SUM, 1 },
	{ "tenkd_uring_ring_dry_total", "counter",
	    "io_uring: receives re-armed because the buffer ring ran dry.",
	    U64(st.ring_dry), LAB_NONE, AGG_SUM, 0 },
	{ "tenkd_uring_cq_overflow_total", "counter",
	    "io_uring: waits that found the completion queue overflowed.",
	    U64(st.cq_overflow), LAB_NONE, AGG_SUM, 0 },
	{ "tenkd_uring_multishot_accepted_total", "counter",
	    "io_uring: connections brought by multishot accept.",
	    U64(st.ms_accepted), LAB_NONE, AGG_SUM, 0 },
	{ "tenkd_uring_accept_dropped_total", "counter",
	    "io_uring: connections accepted by the kernel, closed unserved.",
	    U64(st.accept_dropped), LAB_NONE, AGG_SUM, 0 },
	{ "tenkd_tls_handshakes_total", "counter",
	    "TLS handshakes of clients done in full.", U64(st.tls_new),
	    LAB_NONE, AGG_SUM, 0 },
	{ "tenkd_tls_resumed_total", "counter",
	    "TLS handshakes of clients that resumed a session.",
	    U64(st.tls_resumed), LAB_NONE, AGG_SUM, 0 },
	{ "tenkd_tls_failures_total", "counter",
	    "TLS handshakes (or, routing by name, ClientHellos) that "
	    "failed, by reason.", U64(st.tls_fail), LAB_TLSFAIL, AGG_SUM, 0 },
	{ "tenkd_upstream_up", "gauge",
	    "Whether the upstream takes connects (not failed out).", UPS(up),
	    LAB_UPSTREAM, AGG_MAX, 1 },
	{ "tenkd_upstream_sessions_active", "gauge",
	    "Sessions connecting or connected to the upstream.",
	    UPS(active), LAB_UPSTREAM, AGG_SUM, 1 },
	{ "tenkd_upstream_sessions_total", "counter",
	    "Connects to the upstream that succeeded.", UPS(sessions),
	    LAB_UPSTREAM, AGG_SUM, 1 },
	{ "tenkd_upstream_connect_failures_total", "counter",
	    "Connects to the upstream that failed or timed out.", UPS(fails),
	    LAB_UPSTREAM, AGG_SUM, 1 },
	{ "tenkd_upstream_sent_bytes_total", "counter",
	    "Bytes sent to the upstream, counted at session end.", UPS(tx),
	    LAB_UPSTREAM, AGG_SUM, 1 },
	{ "tenkd_upstream_received_bytes_total", "counter",
	    "Bytes received from the upstream, counted at session end.",
	    UPS(rx), LAB_UPSTREAM, AGG_SUM, 1 },
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

/*
 * One series: name{labels} for all workers, then name{labels,worker="i"}
 * for each when workers.  A worker that never answered (pid 0) counts
 * in a sum (its counters are its predecessors') but not in a maximum.
 */
static void
series(FILE *f, const char *name, const char *labels, const struct msnap *s,
    int n, int workers, size_t off, enum agg agg)
{
	double	v = 0, x;
	int	i;

	for (i = 0; i < n; i++) {
		x = get(&s[i], off, 0);
		if (agg == AGG_SUM)
			v += x;
		else if (s[i].pid != 0 && x > v)
			v = x;
	}
	fprintf(f, "%s%s%s%s", name, *labels != '\0' ? "{" : "", labels,
	    *labels != '\0' ? "}" : "");
	value(f, v);
	for (i = 0; workers && i < n; i++) {
		fprintf(f, "%s{%s%sworker=\"%d\"}", name, labels,
		    *labels != '\0' ? "," : "", i);
		value(f, get(&s[i], off, 0));
	}
}

static void
family(FILE *f, const struct fam *m, const struct msnap *s, int n,
    int workers)
{
	char	lb[TK_ADDRSTRLEN + 32];
	int	i, k;

	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help, m->name,
	    m->type);
	switch (m->lab) {
	case LAB_NONE:
		series(f, m->name, "", s, n, workers, m->off, m->agg);
		break;
	case LAB_REASON:
	case LAB_LIMIT:
		k = m->lab == LAB_REASON ? CONN_NREASONS : CAP_NKINDS;
		for (i = 0; i < k; i++) {
			snprintf(lb, sizeof(lb), "%s=\"%s\"", m->lab ==
			    LAB_REASON ? "reason" : "limit", m->lab ==
			    LAB_REASON ? conn_reasons[i] : cap_names[i]);
			series(f, m->name, lb, s, n, workers,
			    m->off + (size_t)i * sizeof(uint64_t), m->agg);
		}
		break;
	case LAB_TLSFAIL:
		for (i = TK_TLS_F_NONE + 1; i < TK_TLS_F_MAX; i++) {
			snprintf(lb, sizeof(lb), "reason=\"%s\"",
			    tk_tls_fail_names[i]);
			series(f, m->name, lb, s, n, workers,
			    m->off + (size_t)i * sizeof(uint64_t), m->agg);
		}
		break;
	case LAB_UPSTREAM:
		for (i = 0; i < upstream_count(); i++) {
			snprintf(lb, sizeof(lb), "upstream=\"%s\"",
			    upstream_name_at(i));
			series(f, m->name, lb, s, n, workers,
			    m->off + (size_t)i * sizeof(s->ups[0]), m->agg);
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
	uint64_t	 ns = 0;
	char		 lb[32], sname[64];
	int		 i, b;

	/* Cumulative counts in a copy, so that series() reads them. */
	if ((c = calloc((size_t)n, sizeof(*c))) == NULL)
		return;
	for (i = 0; i < n; i++) {
		c[i].pid = s[i].pid;
		for (b = 0; b < MHIST_N; b++)
			c[i].hist[b] = s[i].hist[b] +
			    (b > 0 ? c[i].hist[b - 1] : 0);
		ns += s[i].hist_sum;
	}
	fprintf(f, "# HELP %s Time from connect(2) to an established "
	    "upstream connection.\n# TYPE %s histogram\n", name, name);
	snprintf(sname, sizeof(sname), "%s_bucket", name);
	for (b = 0; b < MHIST_N; b++) {
		if (b < MHIST_N - 1)
			snprintf(lb, sizeof(lb), "le=\"%g\"", mhist_bounds[b]);
		else
			snprintf(lb, sizeof(lb), "le=\"+Inf\"");
		series(f, sname, lb, c, n, workers, U64(hist) +
		    (size_t)b * sizeof(uint64_t), AGG_SUM);
	}
	/* Kept in ns, written in seconds. */
	fprintf(f, "%s_sum", name);
	value(f, (double)ns / 1e9);
	for (i = 0; workers && i < n; i++) {
		fprintf(f, "%s_sum{worker=\"%d\"}", name, i);
		value(f, (double)s[i].hist_sum / 1e9);
	}
	snprintf(sname, sizeof(sname), "%s_count", name);
	series(f, sname, "", c, n, workers, U64(hist) +
	    (MHIST_N - 1) * sizeof(uint64_t), AGG_SUM);
	free(c);
}

/*
 * The process_* families: without a label the process that writes the
 * page (as Prometheus' client libraries do), then each worker's.
 */
static void
process(FILE *f, const struct msnap *s, int n, int workers)
{
	struct msnap	*self;
	size_t		 k;
	int		 i;

	if ((self = calloc(1, sizeof(*self))) == NULL)
		return;
	metrics_self(self);
	for (k = 0; k < sizeof(pfams) / sizeof(pfams[0]); k++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", pfams[k].name,
		    pfams[k].help, pfams[k].name, pfams[k].type);
		fprintf(f, "%s", pfams[k].name);
		value(f, get(self, pfams[k].off, pfams[k].dbl));
		for (i = 0; workers && i < n; i++) {
			fprintf(f, "%s{worker=\"%d\"}", pfams[k].name, i);
			value(f, get(&s[i], pfams[k].off, pfams[k].dbl));
		}
	}
	free(self);
}

/*
 * The whole /metrics page into f from n snapshots: one per worker
 * process when workers, else this process's only.  Main thread (or the
 * master).
 */
void
promtext_write(FILE *f, const struct msnap *s, int n, int workers)
{
	size_t	k;
	int	proxy = srv.proto == &proto_proxy;

	for (k = 0; k < sizeof(fams) / sizeof(fams[0]); k++)
		if (!fams[k].proxy || proxy)
			family(f, &fams[k], s, n, workers);
	if (proxy)
		histogram(f, s, n, workers);
	process(f, s, n, workers);
}
