/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report as a JSON file, written and read back, so that the reports
 * of several processes or hosts merge exactly.  One table maps the
 * report's members to their sections and names, for the writer and the
 * reader alike; json.c does the JSON itself.
 *
 * Histograms travel as their non-empty buckets, (lowest value, count)
 * pairs, which rebuild the same buckets with tk_hist_record_n(); min
 * and max are carried beside them and put back into their own buckets,
 * so that a histogram read back equals the one written.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/hist.h"
#include "loadgen.h"

#define JSON_FORMAT	1
#define JSON_MAXSIZE	(64 * 1024 * 1024)

enum ftype {
	F_U64 = 0,		/* uint64_t member */
	F_INT,			/* int member */
	F_STR,			/* char array member */
	F_REAL,			/* double member */
	F_DU,			/* derived whole number, written only */
	F_DR			/* derived real, written only */
};

struct field {
	const char	*sec;
	const char	*key;
	enum ftype	 type;
	size_t		 off;
	size_t		 len;		/* F_STR: size of the array */
	uint64_t	(*du)(const struct report *);
	double		(*dr)(const struct report *);
};

#define OFF(m)		offsetof(struct report, m)
#define U(s, k, m)	{ s, k, F_U64, OFF(m), 0, NULL, NULL }
#define I(s, k, m)	{ s, k, F_INT, OFF(m), 0, NULL, NULL }
#define S(s, k, m)	{ s, k, F_STR, OFF(m), \
			    sizeof(((struct report *)NULL)->m), NULL, NULL }
#define R(s, k, m)	{ s, k, F_REAL, OFF(m), 0, NULL, NULL }
#define E(k, e)		{ "errors", k, F_U64, OFF(errs) + \
			    (e) * sizeof(uint64_t), 0, NULL, NULL }

static double
measured_s(const struct report *r)
{
	return (double)report_measured(r) / 1e6;
}

static double
ramp_s(const struct report *r)
{
	return report_secs(r->t_ramp_first, r->t_ramp_last);
}

/* In the order written; a section's members stand together. */
static const struct field fields[] = {
	S("header", "mode", mode),
	S("header", "backend", backend),
	S("header", "targets", targets),
	S("header", "args", args),
	S("header", "kernel", kernel),
	S("header", "port_range", ports),
	U("header", "nofile", nofile),
	U("header", "threads", threads),
	U("header", "procs", procs),
	U("header", "merged", merged),
	U("header", "size_min", size_min),
	U("header", "size_max", size_max),
	U("header", "rate", rate),
	U("header", "window", window),
	U("header", "connect_rate", connect_rate),
	U("header", "duration_ns", duration),
	U("header", "warmup_ns", warmup),
	U("header", "requests", requests),
	U("header", "seed", seed),
	U("header", "start_at_us", start_at),
	S("header", "machine", machine),
	I("header", "verify", verify),
	S("header", "reply", reply),
	S("header", "message", message),

	U("time", "start_us", t_start),
	U("time", "ramp_first_us", t_ramp_first),
	U("time", "ramp_last_us", t_ramp_last),
	U("time", "ramp_end_us", t_ramp_end),
	U("time", "measure_start_us", t_meas_start),
	U("time", "measure_end_us", t_meas_end),
	U("time", "end_us", t_end),
	U("time", "measured_us", measured),
	I("time", "interrupted", interrupted),
	U("time", "interrupted_at_us", interrupted_at_us),
	S("time", "stopped", stopped),
	{ "time", "measured_s", F_DR, 0, 0, NULL, measured_s },
	{ "time", "ramp_s", F_DR, 0, 0, NULL, ramp_s },
	{ "time", "connect_rate_achieved", F_DR, 0, 0, NULL,
	    report_ramp_rate },

	U("connections", "requested", requested),
	U("connections", "idle", idle),
	U("connections", "attempted", attempted),
	U("connections", "established", established),
	U("connections", "failed", failed),
	U("connections", "closed_early", lost),
	U("connections", "open_at_end", open_end),
	U("connections", "unserved", unserved),
	U("connections", "reconnects", reconnects),

	U("traffic", "msgs", msgs),
	U("traffic", "bytes_in", bytes_in),
	U("traffic", "bytes_out", bytes_out),
	U("traffic", "verified_bytes", verified),
	R("traffic", "msgs_per_s", msgs_rate),
	R("traffic", "bytes_in_per_s", in_rate),
	R("traffic", "bytes_out_per_s", out_rate),

	{ "errors", "total", F_DU, 0, 0, report_errors, NULL },
	E("mismatch", ERR_MISMATCH),
	E("reset", ERR_RESET),
	E("refused", ERR_REFUSED),
	E("timeout", ERR_TIMEOUT),
	E("closed", ERR_CLOSED),
	E("ports", ERR_PORTS),
	E("fdlimit", ERR_FDLIMIT),
	E("tls", ERR_TLS),
	E("other", ERR_OTHER),

	I("tls", "on", tls),
	S("tls", "version", tls_version),
	S("tls", "cipher", tls_cipher),
	S("tls", "alpn", tls_alpn),
	U("tls", "handshakes_new", hs_new),
	U("tls", "handshakes_resumed", hs_resumed),
	U("tls", "window_new", hs_new_w),
	U("tls", "window_resumed", hs_resumed_w),
	{ "tls", "handshakes_per_s", F_DR, 0, 0, NULL, report_hs_rate },
	{ "tls", "new_per_s", F_DR, 0, 0, NULL, report_hs_new_rate },
	{ "tls", "resumed_per_s", F_DR, 0, 0, NULL, report_hs_resumed_rate }
};

#define NFIELDS		(sizeof(fields) / sizeof(fields[0]))

/*
 * The histograms, in the order written, after the fields; a report
 * from before TLS has no handshake latency.
 */
static const struct {
	const char	*key;
	size_t		 off;
	int		 optional;
} hists[] = {
	{ "latency", OFF(lat), 0 },
	{ "latency_uncorrected", OFF(lat_unc), 0 },
	{ "connect_latency", OFF(conn_lat), 0 },
	{ "handshake_latency", OFF(hs_lat), 1 }
};

#define NHISTS		(sizeof(hists) / sizeof(hists[0]))

static struct lg_hist *
hist_at(struct report *r, size_t i)
{
	return (struct lg_hist *)(void *)((char *)r + hists[i].off);
}

static void
field_write(FILE *f, const struct report *r, const struct field *fl, int last)
{
	const char	*ind = "    ", *p = (const char *)r + fl->off;

	switch (fl->type) {
	case F_U64:
		json_u(f, ind, fl->key, *(const uint64_t *)(const void *)p,
		    last);
		break;
	case F_INT:
		json_u(f, ind, fl->key, (uint64_t)*(const int *)(const void *)p,
		    last);
		break;
	case F_STR:
		json_s(f, ind, fl->key, p, last);
		break;
	case F_REAL:
		json_d(f, ind, fl->key, *(const double *)(const void *)p, last);
		break;
	case F_DU:
		json_u(f, ind, fl->key, fl->du(r), last);
		break;
	case F_DR:
		json_d(f, ind, fl->key, fl->dr(r), last);
		break;
	}
}

static void
field_read(const struct jv *o, struct report *r, const struct field *fl)
{
	char	*p = (char *)r + fl->off;

	switch (fl->type) {
	case F_U64:
		*(uint64_t *)(void *)p = json_get_u(o, fl->key);
		break;
	case F_INT:
		*(int *)(void *)p = (int)json_get_u(o, fl->key);
		break;
	case F_STR:
		json_get_s(o, fl->key, p, fl->len);
		break;
	case F_REAL:
		*(double *)(void *)p = json_get_d(o, fl->key);
		break;
	case F_DU:
	case F_DR:
		break;
	}
}

struct walk {
	FILE	*f;
	int	 first;
};

static void
json_bucket(uint64_t lo, uint64_t count, void *arg)
{
	struct walk	*wk = arg;

	fprintf(wk->f, "%s      [%llu, %llu]", wk->first ? "" : ",\n",
	    (unsigned long long)lo, (unsigned long long)count);
	wk->first = 0;
}

static void
json_hist(FILE *f, const char *key, const struct report *r,
    const struct lg_hist *lh, int last)
{
	struct walk	 wk = { f, 1 };
	char		 name[32];
	int		 i;

	fprintf(f, "  \"%s\": {\n", key);
	json_s(f, "    ", "unit", "ns", 0);
	json_u(f, "    ", "count", tk_hist_count(lh->h), 0);
	json_u(f, "    ", "min", tk_hist_min(lh->h), 0);
	json_u(f, "    ", "max", tk_hist_max(lh->h), 0);
	json_d(f, "    ", "mean", lh->mean, 0);
	json_d(f, "    ", "stdev", report_stdev(lh), 0);
	for (i = 0; i < r->npct; i++)
		json_u(f, "    ", report_pct_name(r->pct[i], name,
		    sizeof(name)), tk_hist_percentile(lh->h, r->pct[i]), 0);
	fprintf(f, "    \"buckets\": [\n");
	tk_hist_walk(lh->h, json_bucket, &wk);
	fprintf(f, "%s    ]\n", wk.first ? "" : "\n");
	fprintf(f, "  }%s\n", last ? "" : ",");
}

static void
series_bkts(FILE *f, const char *key, const struct lg_bkt *b, size_t n)
{
	size_t	i;

	fprintf(f, "\"%s\": [", key);
	for (i = 0; i < n; i++)
		fprintf(f, "%s[%llu, %llu]", i > 0 ? ", " : "",
		    (unsigned long long)b[i].lo, (unsigned long long)b[i].n);
	fprintf(f, "]");
}

/*
 * Each second's latencies, one second a line: its epoch second, and
 * the buckets of the corrected and (rate mode) uncorrected latency.
 */
static void
series_write(FILE *f, const struct lg_series *se)
{
	const struct lg_sec	*sec;
	size_t			 i;

	fprintf(f, "  \"series\": {\n");
	json_s(f, "    ", "unit", "ns", 0);
	fprintf(f, "    \"seconds\": [\n");
	for (i = 0; i < se->n; i++) {
		sec = &se->s[i];
		fprintf(f, "      { \"t\": %llu, ", (unsigned long long)sec->t);
		series_bkts(f, "lat", sec->b, sec->nlat);
		fprintf(f, ", ");
		series_bkts(f, "unc", sec->b + sec->nlat, sec->nunc);
		fprintf(f, " }%s\n", i + 1 < se->n ? "," : "");
	}
	fprintf(f, "    ]\n  }\n");
}

/* The pairs of array a after b[0..*n), as series_bkts() wrote them. */
static int
series_bkts_read(const struct jv *a, struct lg_bkt *b, uint32_t *n)
{
	const struct jv	*pair;
	size_t		 i;

	*n = 0;
	if (a == NULL)
		return 0;
	if (a->t != JV_ARR)
		return -1;
	for (i = 0; i < a->n; i++) {
		pair = &a->kid[i];
		if (pair->t != JV_ARR || pair->n != 2 ||
		    !pair->kid[0].isint || !pair->kid[1].isint ||
		    (i > 0 && pair->kid[0].u <= b[i - 1].lo))
			return -1;
		b[i].lo = pair->kid[0].u;
		b[i].n = pair->kid[1].u;
	}
	*n = (uint32_t)a->n;
	return 0;
}

static int
sec_cmp(const void *a, const void *b)
{
	const struct lg_sec	*x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

/* A report's series, if it has one, into se (empty before). */
static int
series_read(const struct jv *o, struct lg_series *se, const char **errstr)
{
	const struct jv	*secs, *one, *lat, *unc;
	struct lg_sec	*sec;
	size_t		 i, nb;

	if (o == NULL)
		return 0;
	if (o->t != JV_OBJ || (secs = json_get(o, "seconds")) == NULL ||
	    secs->t != JV_ARR) {
		*errstr = "bad series";
		return -1;
	}
	if (secs->n == 0)
		return 0;
	if ((se->s = calloc(secs->n, sizeof(*se->s))) == NULL) {
		*errstr = strerror(ENOMEM);
		return -1;
	}
	se->cap = secs->n;
	for (i = 0; i < secs->n; i++) {
		one = &secs->kid[i];
		lat = json_get(one, "lat");
		unc = json_get(one, "unc");
		nb = (lat != NULL ? lat->n : 0) + (unc != NULL ? unc->n : 0);
		sec = &se->s[se->n++];
		sec->t = json_get_u(one, "t");
		if ((sec->b = calloc(nb + 1, sizeof(*sec->b))) == NULL) {
			*errstr = strerror(ENOMEM);
			return -1;
		}
		if (series_bkts_read(lat, sec->b, &sec->nlat) == -1 ||
		    series_bkts_read(unc, sec->b + sec->nlat,
		    &sec->nunc) == -1) {
			*errstr = "bad second in the series";
			return -1;
		}
	}
	qsort(se->s, se->n, sizeof(*se->s), sec_cmp);
	for (i = 1; i < se->n; i++)
		if (se->s[i].t == se->s[i - 1].t) {
			*errstr = "a second twice in the series";
			return -1;
		}
	return 0;
}

/*
 * Write r as JSON, one member per line (scripts may grep it).  Returns
 * 0, or -1 with errno set when the stream failed.
 */
int
report_json_write(FILE *f, const struct report *r)
{
	struct report	 c = *r;
	size_t		 i;
	int		 last;

	/* The measured time of one run is its window's. */
	c.measured = report_measured(r);
	fprintf(f, "{\n");
	json_s(f, "  ", "tenkload", r->version, 0);
	json_u(f, "  ", "format", JSON_FORMAT, 0);
	for (i = 0; i < NFIELDS; i++) {
		if (i == 0 || strcmp(fields[i - 1].sec, fields[i].sec) != 0)
			fprintf(f, "  \"%s\": {\n", fields[i].sec);
		last = i + 1 == NFIELDS ||
		    strcmp(fields[i + 1].sec, fields[i].sec) != 0;
		field_write(f, &c, &fields[i], last);
		if (last)
			fprintf(f, "  },\n");
	}
	for (i = 0; i < NHISTS; i++)
		json_hist(f, hists[i].key, r, hist_at(&c, i), i + 1 == NHISTS &&
		    r->series.n == 0);
	if (r->series.n > 0)
		series_write(f, &r->series);
	fprintf(f, "}\n");
	fflush(f);
	return ferror(f) ? -1 : 0;
}

/*
 * Rebuild a histogram from its buckets.  The buckets holding min and max
 * give one of their counts to the exact value, so that min, max and the
 * percentiles capped by max come back as they were; the other samples of
 * min's bucket are recorded at min, which is in the same bucket, so that
 * they do not lower it to the bucket's floor.
 */
static int
hist_read(const struct jv *o, struct lg_hist *lh, const char **errstr)
{
	const struct jv	*b, *pair;
	uint64_t	 count, min, max, lo, n, total = 0;
	size_t		 i;

	if (o == NULL || o->t != JV_OBJ) {
		*errstr = "missing histogram";
		return -1;
	}
	count = json_get_u(o, "count");
	min = json_get_u(o, "min");
	max = json_get_u(o, "max");
	lh->mean = json_get_d(o, "mean");
	b = json_get(o, "buckets");
	if (b == NULL || b->t != JV_ARR) {
		*errstr = "missing buckets";
		return -1;
	}
	tk_hist_reset(lh->h);
	for (i = 0; i < b->n; i++) {
		pair = &b->kid[i];
		if (pair->t != JV_ARR || pair->n != 2 ||
		    !pair->kid[0].isint || !pair->kid[1].isint) {
			*errstr = "bad bucket";
			return -1;
		}
		lo = pair->kid[0].u;
		n = pair->kid[1].u;
		total += n;
		if (n > 0 && count > 0 && tk_hist_lowest_equiv(min) == lo) {
			tk_hist_record(lh->h, min);
			n--;
		}
		if (n > 0 && count > 0 && tk_hist_lowest_equiv(max) == lo) {
			tk_hist_record(lh->h, max);
			n--;
		}
		/* The rest of min's bucket stays at min, not below it. */
		tk_hist_record_n(lh->h, count > 0 && lo < min ? min : lo, n);
	}
	if (total != count) {
		*errstr = "bucket counts do not add up to count";
		return -1;
	}
	return 0;
}

/*
 * Parse the JSON report in buf[0..len) into r, which report_init() has
 * prepared.  Returns 0, or -1 with *errstr pointing at a static phrase
 * (overwritten by the next call: one thread only).
 */
static int
report_json_read(const char *buf, size_t len, struct report *r,
    const char **errstr)
{
	static char	 err[128];
	struct jv	 root;
	size_t		 i;
	int		 ret = -1;

	if (json_parse(buf, len, &root, err, sizeof(err)) == -1) {
		*errstr = err;
		goto out;
	}
	if (json_get(&root, "tenkload") == NULL ||
	    json_get_u(&root, "format") != JSON_FORMAT) {
		*errstr = "not a tenkload report of format 1";
		goto out;
	}
	json_get_s(&root, "tenkload", r->version, sizeof(r->version));
	for (i = 0; i < NFIELDS; i++)
		field_read(json_get(&root, fields[i].sec), r, &fields[i]);
	/* A report from before the framings replied in echo. */
	if (r->reply[0] == '\0')
		strlcpy(r->reply, "echo", sizeof(r->reply));
	for (i = 0; i < NHISTS; i++) {
		if (hists[i].optional && json_get(&root, hists[i].key) == NULL)
			continue;
		if (hist_read(json_get(&root, hists[i].key), hist_at(r, i),
		    errstr) == -1)
			goto out;
	}
	if (series_read(json_get(&root, "series"), &r->series, errstr) == -1)
		goto out;
	ret = 0;
 out:
	json_free(&root);
	return ret;
}

static int
load_stream(FILE *f, const char *name, struct report *r)
{
	const char	*errstr = NULL;
	char		*buf = NULL, *nb;
	size_t		 len = 0, cap = 0, n;
	int		 ret;

	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			if (cap > JSON_MAXSIZE ||
			    (nb = realloc(buf, cap)) == NULL) {
				fprintf(stderr, "tenkload: %s: too large\n",
				    name);
				free(buf);
				return -1;
			}
			buf = nb;
		}
		if ((n = fread(buf + len, 1, cap - len, f)) == 0)
			break;
		len += n;
	}
	if (ferror(f)) {
		fprintf(stderr, "tenkload: %s: %s\n", name, strerror(errno));
		ret = -1;
	} else if ((ret = report_json_read(buf, len, r, &errstr)) == -1)
		fprintf(stderr, "tenkload: %s: %s\n", name, errstr);
	free(buf);
	return ret;
}

/*
 * Read the JSON report in file path ("-" for stdin) into r.  Returns 0,
 * or -1 after printing one line on stderr.
 */
int
report_json_load(const char *path, struct report *r)
{
	FILE	*f;
	int	 ret;

	if (strcmp(path, "-") == 0)
		return load_stream(stdin, "(stdin)", r);
	if ((f = fopen(path, "r")) == NULL) {
		fprintf(stderr, "tenkload: %s: %s\n", path, strerror(errno));
		return -1;
	}
	ret = load_stream(f, path, r);
	fclose(f);
	return ret;
}

/* The same from an open file descriptor, read from its current offset. */
int
report_json_fd(int fd, struct report *r)
{
	FILE	*f;
	int	 ret, nfd;

	if ((nfd = dup(fd)) == -1 || (f = fdopen(nfd, "r")) == NULL) {
		fprintf(stderr, "tenkload: report: %s\n", strerror(errno));
		if (nfd != -1)
			close(nfd);
		return -1;
	}
	ret = load_stream(f, "child report", r);
	fclose(f);
	return ret;
}
