/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report of a run: its header, the text report, the progress line,
 * and the JSON form, written and read back, so that reports of several
 * processes or hosts merge exactly.  Histograms travel as their
 * non-empty buckets, (lowest value, count) pairs, which rebuild the same
 * buckets with tk_hist_record_n(); min and max are carried beside them
 * and put back into their own buckets, so percentiles and extremes of a
 * merged report equal those of one histogram that recorded everything.
 * Means are merged weighted by count.  Rates (msgs/s, bytes/s) add up:
 * merged reports are taken to have run at the same time.
 *
 * The JSON reader is a small recursive-descent parser into a tree, only
 * as general as our own files need (no \\u escapes beyond Latin-1).
 */
#include <sys/resource.h>
#include <sys/utsname.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/clock.h"
#include "tenk/hist.h"
#include "tenk/loop.h"
#include "tenk/parse.h"
#include "tenk/sock.h"
#include "loadgen.h"

#define JSON_FORMAT	1
#define JSON_MAXDEPTH	32
#define JSON_MAXSIZE	(64 * 1024 * 1024)

static const char *const err_names[ERR_MAX] = {
	"mismatch", "reset", "refused", "timeout", "closed", "ports",
	"fdlimit", "other"
};

static const double default_pct[] = { 50, 90, 99, 99.9, 99.99 };

uint64_t
report_epoch_us(void)
{
	return tk_clock_real() / 1000;
}

/*
 * An empty report with its histograms and the default percentiles.
 * Returns 0, or -1 with errno ENOMEM.
 */
int
report_init(struct report *r)
{
	size_t	i;

	memset(r, 0, sizeof(*r));
	if ((r->lat.h = tk_hist_new()) == NULL ||
	    (r->lat_unc.h = tk_hist_new()) == NULL ||
	    (r->conn_lat.h = tk_hist_new()) == NULL) {
		report_free(r);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < sizeof(default_pct) / sizeof(default_pct[0]); i++)
		r->pct[i] = default_pct[i];
	r->npct = (int)i;
	return 0;
}

void
report_free(struct report *r)
{
	tk_hist_free(r->lat.h);
	tk_hist_free(r->lat_unc.h);
	tk_hist_free(r->conn_lat.h);
	r->lat.h = r->lat_unc.h = r->conn_lat.h = NULL;
}

static void
read_ports(char *buf, size_t len)
{
	char	 tmp[64];
	ssize_t	 n;
	int	 fd;

	strlcpy(buf, "?", len);
	if ((fd = open("/proc/sys/net/ipv4/ip_local_port_range",
	    O_RDONLY | O_CLOEXEC)) == -1)
		return;
	n = read(fd, tmp, sizeof(tmp) - 1);
	close(fd);
	if (n <= 0)
		return;
	tmp[n] = '\0';
	tmp[strcspn(tmp, "\n")] = '\0';
	tmp[strcspn(tmp, "\t ")] = '-';	/* "32768\t60999" */
	strlcpy(buf, tmp, len);
}

/* Fill the header of r from conf and from this machine. */
void
report_header(struct report *r, const struct lg_conf *conf)
{
	struct utsname	 u;
	struct rlimit	 rl;
	char		 a[TK_ADDRSTRLEN];
	size_t		 i;

	strlcpy(r->version, TENK_VERSION, sizeof(r->version));
	strlcpy(r->mode, traffic_name(conf->mode), sizeof(r->mode));
	if (conf->backend != NULL)
		strlcpy(r->backend, conf->backend, sizeof(r->backend));
	else
		strlcpy(r->backend, tk_backend_names()[0], sizeof(r->backend));
	r->targets[0] = '\0';
	for (i = 0; i < conf->ntargets; i++) {
		if (i > 0)
			strlcat(r->targets, ",", sizeof(r->targets));
		strlcat(r->targets, tk_addr_fmt(&conf->targets[i], a,
		    sizeof(a)), sizeof(r->targets));
	}
	strlcpy(r->args, conf->args, sizeof(r->args));
	if (uname(&u) == 0)
		strlcpy(r->kernel, u.release, sizeof(r->kernel));
	read_ports(r->ports, sizeof(r->ports));
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		r->nofile = (uint64_t)rl.rlim_cur;
	r->threads = (uint64_t)conf->threads;
	r->procs = 1;
	r->merged = 1;
	r->size_min = conf->size_min;
	r->size_max = conf->size_max;
	r->rate = conf->mode == MODE_RATE ? conf->rate : 0;
	r->window = conf->window;
	r->connect_rate = conf->connect_rate;
	r->duration = conf->duration;
	r->warmup = conf->warmup;
	r->verify = conf->verify;
	r->requested = conf->conns + conf->idle;
	r->idle = conf->idle;
	for (i = 0; i < (size_t)conf->npct; i++)
		r->pct[i] = conf->pct[i];
	if (conf->npct > 0)
		r->npct = conf->npct;
}

uint64_t
report_errors(const struct report *r)
{
	uint64_t	n = 0;
	int		i;

	for (i = 0; i < ERR_MAX; i++)
		n += r->errs[i];
	return n;
}

static void
hist_merge(struct lg_hist *d, const struct lg_hist *s)
{
	double	dc = (double)tk_hist_count(d->h);
	double	sc = (double)tk_hist_count(s->h);

	if (dc + sc > 0)
		d->mean = (d->mean * dc + s->mean * sc) / (dc + sc);
	tk_hist_merge(d->h, s->h);
}

static uint64_t
min_nz(uint64_t a, uint64_t b)
{
	if (a == 0)
		return b;
	if (b == 0)
		return a;
	return a < b ? a : b;
}

static uint64_t
max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* A comma-separated list gets s once. */
static void
list_add(char *list, size_t len, const char *s)
{
	char	 copy[512], *p, *tok;

	strlcpy(copy, list, sizeof(copy));
	for (p = copy; (tok = strsep(&p, ",")) != NULL; )
		if (strcmp(tok, s) == 0)
			return;
	if (*list != '\0')
		strlcat(list, ",", len);
	strlcat(list, s, len);
}

/*
 * Fold s into d.  Counts and histograms add, times take the earliest
 * start and the latest end, rates add (concurrent runs).  d keeps its
 * own percentile list.  A d that has merged nothing yet (merged == 0)
 * takes s's header.
 */
void
report_merge(struct report *d, const struct report *s)
{
	char	 copy[512], *p, *tok;
	int	 i;

	if (d->merged == 0) {
		memcpy(d->version, s->version, sizeof(d->version));
		memcpy(d->mode, s->mode, sizeof(d->mode));
		memcpy(d->backend, s->backend, sizeof(d->backend));
		memcpy(d->targets, s->targets, sizeof(d->targets));
		memcpy(d->args, s->args, sizeof(d->args));
		memcpy(d->kernel, s->kernel, sizeof(d->kernel));
		memcpy(d->ports, s->ports, sizeof(d->ports));
		d->nofile = s->nofile;
		d->size_min = s->size_min;
		d->size_max = s->size_max;
		d->window = s->window;
		d->duration = s->duration;
		d->warmup = s->warmup;
		d->verify = s->verify;
	} else {
		if (strcmp(d->mode, s->mode) != 0)
			strlcpy(d->mode, "mixed", sizeof(d->mode));
		if (strcmp(d->backend, s->backend) != 0)
			strlcpy(d->backend, "mixed", sizeof(d->backend));
		strlcpy(copy, s->targets, sizeof(copy));
		for (p = copy; (tok = strsep(&p, ",")) != NULL; )
			if (*tok != '\0')
				list_add(d->targets, sizeof(d->targets), tok);
		if (s->nofile < d->nofile)
			d->nofile = s->nofile;
		if (s->size_min < d->size_min)
			d->size_min = s->size_min;
		d->size_max = max64(d->size_max, s->size_max);
		d->window = max64(d->window, s->window);
		d->duration = max64(d->duration, s->duration);
		d->warmup = max64(d->warmup, s->warmup);
		d->verify = d->verify && s->verify;
	}
	d->threads += s->threads;
	d->procs += s->procs;
	d->merged += s->merged;
	d->rate += s->rate;
	d->connect_rate += s->connect_rate;

	d->t_start = min_nz(d->t_start, s->t_start);
	d->t_ramp_first = min_nz(d->t_ramp_first, s->t_ramp_first);
	d->t_ramp_last = max64(d->t_ramp_last, s->t_ramp_last);
	d->t_ramp_end = max64(d->t_ramp_end, s->t_ramp_end);
	d->t_meas_start = min_nz(d->t_meas_start, s->t_meas_start);
	d->t_meas_end = max64(d->t_meas_end, s->t_meas_end);
	d->t_end = max64(d->t_end, s->t_end);

	d->requested += s->requested;
	d->idle += s->idle;
	d->attempted += s->attempted;
	d->established += s->established;
	d->failed += s->failed;
	d->lost += s->lost;
	d->open_end += s->open_end;
	d->unserved += s->unserved;
	d->reconnects += s->reconnects;
	d->msgs += s->msgs;
	d->bytes_in += s->bytes_in;
	d->bytes_out += s->bytes_out;
	d->verified += s->verified;
	d->msgs_rate += s->msgs_rate;
	d->in_rate += s->in_rate;
	d->out_rate += s->out_rate;
	for (i = 0; i < ERR_MAX; i++)
		d->errs[i] += s->errs[i];
	hist_merge(&d->lat, &s->lat);
	hist_merge(&d->lat_unc, &s->lat_unc);
	hist_merge(&d->conn_lat, &s->conn_lat);
}

static double
secs(uint64_t from_us, uint64_t to_us)
{
	return to_us > from_us ? (double)(to_us - from_us) / 1e6 : 0;
}

/* Connects started per second over the ramp, 0 if unknown. */
static double
ramp_rate(const struct report *r)
{
	double	s = secs(r->t_ramp_first, r->t_ramp_last);

	return r->attempted > 1 && s > 0 ? (double)(r->attempted - 1) / s : 0;
}

static const char *
pct_name(double p, char *buf, size_t len)
{
	snprintf(buf, len, "p%g", p);
	return buf;
}

static void
print_hist(FILE *f, const char *what, const struct report *r,
    const struct lg_hist *lh)
{
	char	 name[32];
	int	 i;

	fprintf(f, "%s (us):", what);
	if (tk_hist_count(lh->h) == 0) {
		fprintf(f, " none\n");
		return;
	}
	for (i = 0; i < r->npct; i++)
		fprintf(f, " %s %.1f", pct_name(r->pct[i], name, sizeof(name)),
		    (double)tk_hist_percentile(lh->h, r->pct[i]) / 1e3);
	fprintf(f, " max %.1f mean %.1f (%llu)\n",
	    (double)tk_hist_max(lh->h) / 1e3, lh->mean / 1e3,
	    (unsigned long long)tk_hist_count(lh->h));
}

static const char *
dur_str(uint64_t ns, char *buf, size_t len)
{
	if (ns == 0) {
		strlcpy(buf, "0s", len);
		return buf;
	}
	return tk_fmt_duration(ns, buf, len);
}

static const char *
size_str(const struct report *r, char *buf, size_t len)
{
	if (r->size_min == r->size_max)
		snprintf(buf, len, "%llu B", (unsigned long long)r->size_min);
	else
		snprintf(buf, len, "%llu-%llu B",
		    (unsigned long long)r->size_min,
		    (unsigned long long)r->size_max);
	return buf;
}

/* The text report. */
void
report_print(FILE *f, const struct report *r)
{
	char	 sz[48], d1[32], d2[32];
	int	 i;

	fprintf(f, "tenkload %s: %s to %s, %llu connections (%llu idle)\n",
	    r->version, r->mode, r->targets,
	    (unsigned long long)r->requested, (unsigned long long)r->idle);
	fprintf(f, "  %llu threads in %llu process%s, backend %s, kernel %s, "
	    "RLIMIT_NOFILE %llu, ports %s\n", (unsigned long long)r->threads,
	    (unsigned long long)r->procs, r->procs == 1 ? "" : "es",
	    r->backend, r->kernel, (unsigned long long)r->nofile, r->ports);
	fprintf(f, "  size %s, verify %s, connect rate %llu/s",
	    size_str(r, sz, sizeof(sz)), r->verify ? "on" : "off",
	    (unsigned long long)r->connect_rate);
	if (strcmp(r->mode, "rate") == 0)
		fprintf(f, ", rate %llu/s", (unsigned long long)r->rate);
	if (strcmp(r->mode, "stream") == 0)
		fprintf(f, ", window %llu", (unsigned long long)r->window);
	fprintf(f, ", warm-up %s, duration %s",
	    dur_str(r->warmup, d1, sizeof(d1)),
	    dur_str(r->duration, d2, sizeof(d2)));
	if (r->merged > 1)
		fprintf(f, ", %llu reports merged",
		    (unsigned long long)r->merged);
	fputc('\n', f);
	if (r->args[0] != '\0')
		fprintf(f, "  command: %s\n", r->args);

	fprintf(f, "connections: requested %llu, established %llu, "
	    "failed %llu, closed early %llu, open at end %llu\n",
	    (unsigned long long)r->requested,
	    (unsigned long long)r->established,
	    (unsigned long long)r->failed, (unsigned long long)r->lost,
	    (unsigned long long)r->open_end);
	if (r->established < r->requested)
		fprintf(f, "  SHORTFALL: %llu of %llu connections were not "
		    "established\n",
		    (unsigned long long)(r->requested - r->established),
		    (unsigned long long)r->requested);
	if (r->reconnects > 0)
		fprintf(f, "  reconnects: %llu in the measured window\n",
		    (unsigned long long)r->reconnects);
	if (r->unserved > 0)
		fprintf(f, "  UNSERVED: %llu active connections completed no "
		    "message in the measured window\n",
		    (unsigned long long)r->unserved);
	fprintf(f, "  ramp: %llu connects started over %.3f s (%.1f/s), "
	    "resolved after %.3f s\n", (unsigned long long)r->attempted,
	    secs(r->t_ramp_first, r->t_ramp_last), ramp_rate(r),
	    secs(r->t_start, r->t_ramp_end));
	fprintf(f, "  ");
	print_hist(f, "connect latency", r, &r->conn_lat);

	fprintf(f, "traffic: %.3f s measured, %llu msgs, %.1f msgs/s, "
	    "in %.2f MB/s, out %.2f MB/s\n",
	    secs(r->t_meas_start, r->t_meas_end),
	    (unsigned long long)r->msgs, r->msgs_rate, r->in_rate / 1e6,
	    r->out_rate / 1e6);
	if (strcmp(r->mode, "rate") == 0) {
		print_hist(f, "latency corrected", r, &r->lat);
		print_hist(f, "latency uncorrected", r, &r->lat_unc);
	} else
		print_hist(f, "latency", r, &r->lat);

	fprintf(f, "errors: %llu (", (unsigned long long)report_errors(r));
	for (i = 0; i < ERR_MAX; i++)
		fprintf(f, "%s%s %llu", i > 0 ? ", " : "", err_names[i],
		    (unsigned long long)r->errs[i]);
	fprintf(f, ")\n");
	fprintf(f, "verified: %llu bytes echoed%s\n",
	    (unsigned long long)r->verified,
	    r->verify ? " and checked" : " (not checked: --no-verify)");
}

/* Sum the counters of src into dst; p99 takes the larger. */
void
report_prog_sum(struct lg_prog *dst, const struct lg_prog *src)
{
	ctr_add(&dst->target, ctr_get(&src->target));
	ctr_add(&dst->established, ctr_get(&src->established));
	ctr_add(&dst->open, ctr_get(&src->open));
	ctr_add(&dst->msgs, ctr_get(&src->msgs));
	ctr_add(&dst->bytes_in, ctr_get(&src->bytes_in));
	ctr_add(&dst->bytes_out, ctr_get(&src->bytes_out));
	ctr_add(&dst->errors, ctr_get(&src->errors));
	if (ctr_get(&src->p99) > ctr_get(&dst->p99))
		atomic_store(&dst->p99, ctr_get(&src->p99));
}

/*
 * One progress line: t seconds since the start, the totals in cur and
 * their change since prev, dt seconds ago.  p99 is since the start (the
 * largest of the threads' and processes').
 */
void
report_progress(FILE *f, uint64_t t, const struct lg_prog *cur,
    const struct lg_prog *prev, double dt)
{
	char	 p99[32];
	double	 msgs, in, out;

	if (dt <= 0)
		dt = 1;
	msgs = (double)(ctr_get(&cur->msgs) - ctr_get(&prev->msgs)) / dt;
	in = (double)(ctr_get(&cur->bytes_in) - ctr_get(&prev->bytes_in)) /
	    dt / 1e6;
	out = (double)(ctr_get(&cur->bytes_out) -
	    ctr_get(&prev->bytes_out)) / dt / 1e6;
	if (ctr_get(&cur->p99) == 0)
		strlcpy(p99, "-", sizeof(p99));
	else
		tk_fmt_duration(ctr_get(&cur->p99), p99, sizeof(p99));
	fprintf(f, "tenkload: %3llus conns %llu/%llu open %llu  msgs/s %.0f  "
	    "in %.2f MB/s  out %.2f MB/s  p99 %s  errors %llu\n",
	    (unsigned long long)t,
	    (unsigned long long)ctr_get(&cur->established),
	    (unsigned long long)ctr_get(&cur->target),
	    (unsigned long long)ctr_get(&cur->open), msgs, in, out, p99,
	    (unsigned long long)ctr_get(&cur->errors));
	fflush(f);
}

/* JSON output. */

/* s as a JSON string, quoted and escaped. */
void
report_json_str(FILE *f, const char *s)
{
	const unsigned char	*p;

	fputc('"', f);
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void
json_u(FILE *f, const char *ind, const char *key, uint64_t v, int last)
{
	fprintf(f, "%s\"%s\": %llu%s\n", ind, key, (unsigned long long)v,
	    last ? "" : ",");
}

static void
json_d(FILE *f, const char *ind, const char *key, double v, int last)
{
	if (!isfinite(v))
		v = 0;
	fprintf(f, "%s\"%s\": %.3f%s\n", ind, key, v, last ? "" : ",");
}

static void
json_s(FILE *f, const char *ind, const char *key, const char *v, int last)
{
	fprintf(f, "%s\"%s\": ", ind, key);
	report_json_str(f, v);
	fprintf(f, "%s\n", last ? "" : ",");
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
	for (i = 0; i < r->npct; i++)
		json_u(f, "    ", pct_name(r->pct[i], name, sizeof(name)),
		    tk_hist_percentile(lh->h, r->pct[i]), 0);
	fprintf(f, "    \"buckets\": [\n");
	tk_hist_walk(lh->h, json_bucket, &wk);
	fprintf(f, "%s    ]\n", wk.first ? "" : "\n");
	fprintf(f, "  }%s\n", last ? "" : ",");
}

/*
 * Write r as JSON, one member per line (scripts may grep it).  Returns
 * 0, or -1 with errno set when the stream failed.
 */
int
report_json_write(FILE *f, const struct report *r)
{
	const char	*h = "    ";
	int		 i;

	fprintf(f, "{\n");
	json_s(f, "  ", "tenkload", r->version, 0);
	json_u(f, "  ", "format", JSON_FORMAT, 0);
	fprintf(f, "  \"header\": {\n");
	json_s(f, h, "mode", r->mode, 0);
	json_s(f, h, "backend", r->backend, 0);
	json_s(f, h, "targets", r->targets, 0);
	json_s(f, h, "args", r->args, 0);
	json_s(f, h, "kernel", r->kernel, 0);
	json_s(f, h, "port_range", r->ports, 0);
	json_u(f, h, "nofile", r->nofile, 0);
	json_u(f, h, "threads", r->threads, 0);
	json_u(f, h, "procs", r->procs, 0);
	json_u(f, h, "merged", r->merged, 0);
	json_u(f, h, "size_min", r->size_min, 0);
	json_u(f, h, "size_max", r->size_max, 0);
	json_u(f, h, "rate", r->rate, 0);
	json_u(f, h, "window", r->window, 0);
	json_u(f, h, "connect_rate", r->connect_rate, 0);
	json_u(f, h, "duration_ns", r->duration, 0);
	json_u(f, h, "warmup_ns", r->warmup, 0);
	json_u(f, h, "verify", (uint64_t)r->verify, 1);
	fprintf(f, "  },\n");

	fprintf(f, "  \"time\": {\n");
	json_u(f, h, "start_us", r->t_start, 0);
	json_u(f, h, "ramp_first_us", r->t_ramp_first, 0);
	json_u(f, h, "ramp_last_us", r->t_ramp_last, 0);
	json_u(f, h, "ramp_end_us", r->t_ramp_end, 0);
	json_u(f, h, "measure_start_us", r->t_meas_start, 0);
	json_u(f, h, "measure_end_us", r->t_meas_end, 0);
	json_u(f, h, "end_us", r->t_end, 0);
	json_d(f, h, "measured_s", secs(r->t_meas_start, r->t_meas_end), 0);
	json_d(f, h, "ramp_s", secs(r->t_ramp_first, r->t_ramp_last), 0);
	json_d(f, h, "connect_rate_achieved", ramp_rate(r), 1);
	fprintf(f, "  },\n");

	fprintf(f, "  \"connections\": {\n");
	json_u(f, h, "requested", r->requested, 0);
	json_u(f, h, "idle", r->idle, 0);
	json_u(f, h, "attempted", r->attempted, 0);
	json_u(f, h, "established", r->established, 0);
	json_u(f, h, "failed", r->failed, 0);
	json_u(f, h, "closed_early", r->lost, 0);
	json_u(f, h, "open_at_end", r->open_end, 0);
	json_u(f, h, "unserved", r->unserved, 0);
	json_u(f, h, "reconnects", r->reconnects, 1);
	fprintf(f, "  },\n");

	fprintf(f, "  \"traffic\": {\n");
	json_u(f, h, "msgs", r->msgs, 0);
	json_u(f, h, "bytes_in", r->bytes_in, 0);
	json_u(f, h, "bytes_out", r->bytes_out, 0);
	json_u(f, h, "verified_bytes", r->verified, 0);
	json_d(f, h, "msgs_per_s", r->msgs_rate, 0);
	json_d(f, h, "bytes_in_per_s", r->in_rate, 0);
	json_d(f, h, "bytes_out_per_s", r->out_rate, 1);
	fprintf(f, "  },\n");

	fprintf(f, "  \"errors\": {\n");
	json_u(f, h, "total", report_errors(r), 0);
	for (i = 0; i < ERR_MAX; i++)
		json_u(f, h, err_names[i], r->errs[i], i == ERR_MAX - 1);
	fprintf(f, "  },\n");

	json_hist(f, "latency", r, &r->lat, 0);
	json_hist(f, "latency_uncorrected", r, &r->lat_unc, 0);
	json_hist(f, "connect_latency", r, &r->conn_lat, 1);
	fprintf(f, "}\n");
	fflush(f);
	return ferror(f) ? -1 : 0;
}

/* JSON input: a tree of values. */

enum jtype {
	J_NULL = 0,
	J_BOOL,
	J_NUM,
	J_STR,
	J_ARR,
	J_OBJ
};

struct jv {
	enum jtype	 t;
	char		*key;		/* member name, in an object */
	char		*s;		/* J_STR */
	double		 d;		/* J_NUM, J_BOOL */
	uint64_t	 u;		/* J_NUM when a whole number >= 0 */
	int		 isint;
	struct jv	*kid;		/* J_ARR, J_OBJ */
	size_t		 n;
};

struct jp {
	const char	*p;
	const char	*end;
	const char	*err;
	int		 depth;
};

static void
jv_free(struct jv *v)
{
	size_t	i;

	for (i = 0; i < v->n; i++)
		jv_free(&v->kid[i]);
	free(v->kid);
	free(v->key);
	free(v->s);
	memset(v, 0, sizeof(*v));
}

static void
jp_ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' ||
	    *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int
jp_fail(struct jp *j, const char *why)
{
	if (j->err == NULL)
		j->err = why;
	return -1;
}

static unsigned int
hexval(char h)
{
	if (h >= '0' && h <= '9')
		return (unsigned int)(h - '0');
	if (h >= 'a' && h <= 'f')
		return (unsigned int)(h - 'a' + 10);
	if (h >= 'A' && h <= 'F')
		return (unsigned int)(h - 'A' + 10);
	return 0;
}

static int
jp_string(struct jp *j, char **out)
{
	char		*buf;
	size_t		 len = 0, cap = 16;
	unsigned int	 c;
	int		 k;

	if (j->p >= j->end || *j->p != '"')
		return jp_fail(j, "expected a string");
	j->p++;
	if ((buf = malloc(cap)) == NULL)
		return jp_fail(j, "out of memory");
	for (;;) {
		if (j->p >= j->end) {
			free(buf);
			return jp_fail(j, "unterminated string");
		}
		c = (unsigned char)*j->p++;
		if (c == '"')
			break;
		if (c == '\\') {
			if (j->p >= j->end)
				continue;
			c = (unsigned char)*j->p++;
			switch (c) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case 'r':
				c = '\r';
				break;
			case 'b':
				c = '\b';
				break;
			case 'f':
				c = '\f';
				break;
			case 'u':
				if (j->end - j->p < 4) {
					free(buf);
					return jp_fail(j, "bad \\u escape");
				}
				c = 0;
				for (k = 0; k < 4; k++)
					c = c << 4 | hexval(*j->p++);
				if (c > 0xff)
					c = '?';
				break;
			default:
				break;		/* \" \\ \/ */
			}
		}
		if (len + 2 > cap) {
			char *nb;

			cap *= 2;
			if ((nb = realloc(buf, cap)) == NULL) {
				free(buf);
				return jp_fail(j, "out of memory");
			}
			buf = nb;
		}
		buf[len++] = (char)c;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

static int	jp_value(struct jp *, struct jv *);

static int
jp_push(struct jp *j, struct jv *v, struct jv **kid)
{
	struct jv	*nk;

	if ((nk = reallocarray(v->kid, v->n + 1, sizeof(*nk))) == NULL)
		return jp_fail(j, "out of memory");
	v->kid = nk;
	*kid = &v->kid[v->n++];
	memset(*kid, 0, sizeof(**kid));
	return 0;
}

static int
jp_container(struct jp *j, struct jv *v, char close)
{
	struct jv	*kid;
	char		*key = NULL;

	v->t = close == '}' ? J_OBJ : J_ARR;
	j->p++;
	if (++j->depth > JSON_MAXDEPTH)
		return jp_fail(j, "nested too deep");
	jp_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		j->depth--;
		return 0;
	}
	for (;;) {
		jp_ws(j);
		if (v->t == J_OBJ) {
			if (jp_string(j, &key) == -1)
				return -1;
			jp_ws(j);
			if (j->p >= j->end || *j->p != ':') {
				free(key);
				return jp_fail(j, "expected ':'");
			}
			j->p++;
		}
		if (jp_push(j, v, &kid) == -1) {
			free(key);
			return -1;
		}
		kid->key = key;
		key = NULL;
		if (jp_value(j, kid) == -1)
			return -1;
		jp_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			j->depth--;
			return 0;
		}
		return jp_fail(j, close == '}' ? "expected ',' or '}'" :
		    "expected ',' or ']'");
	}
}

static int
jp_number(struct jp *j, struct jv *v)
{
	const char	*s = j->p;
	char		 buf[64], *ep;
	size_t		 n;
	int		 isint = 1;

	while (j->p < j->end && strchr("+-0123456789.eE", *j->p) != NULL) {
		if (strchr(".eE-", *j->p) != NULL)
			isint = 0;
		j->p++;
	}
	n = (size_t)(j->p - s);
	if (n == 0 || n >= sizeof(buf))
		return jp_fail(j, "bad number");
	memcpy(buf, s, n);
	buf[n] = '\0';
	v->t = J_NUM;
	errno = 0;
	v->d = strtod(buf, &ep);
	if (*ep != '\0' || errno != 0)
		return jp_fail(j, "bad number");
	if (isint) {
		v->u = strtoull(buf, &ep, 10);
		if (*ep != '\0' || errno != 0)
			return jp_fail(j, "bad number");
		v->isint = 1;
	}
	return 0;
}

static int
jp_word(struct jp *j, const char *w)
{
	size_t	n = strlen(w);

	if ((size_t)(j->end - j->p) < n || strncmp(j->p, w, n) != 0)
		return jp_fail(j, "unexpected character");
	j->p += n;
	return 0;
}

static int
jp_value(struct jp *j, struct jv *v)
{
	jp_ws(j);
	if (j->p >= j->end)
		return jp_fail(j, "unexpected end");
	switch (*j->p) {
	case '{':
		return jp_container(j, v, '}');
	case '[':
		return jp_container(j, v, ']');
	case '"':
		v->t = J_STR;
		return jp_string(j, &v->s);
	case 't':
		v->t = J_BOOL;
		v->d = 1;
		v->u = 1;
		return jp_word(j, "true");
	case 'f':
		v->t = J_BOOL;
		return jp_word(j, "false");
	case 'n':
		v->t = J_NULL;
		return jp_word(j, "null");
	default:
		return jp_number(j, v);
	}
}

static const struct jv *
jv_get(const struct jv *o, const char *key)
{
	size_t	i;

	if (o == NULL || o->t != J_OBJ)
		return NULL;
	for (i = 0; i < o->n; i++)
		if (o->kid[i].key != NULL && strcmp(o->kid[i].key, key) == 0)
			return &o->kid[i];
	return NULL;
}

static uint64_t
jv_u(const struct jv *o, const char *key)
{
	const struct jv	*v = jv_get(o, key);

	if (v == NULL || (v->t != J_NUM && v->t != J_BOOL))
		return 0;
	if (v->isint || v->t == J_BOOL)
		return v->u;
	return v->d > 0 ? (uint64_t)v->d : 0;
}

static double
jv_d(const struct jv *o, const char *key)
{
	const struct jv	*v = jv_get(o, key);

	return v != NULL && v->t == J_NUM ? v->d : 0;
}

static void
jv_s(const struct jv *o, const char *key, char *buf, size_t len)
{
	const struct jv	*v = jv_get(o, key);

	strlcpy(buf, v != NULL && v->t == J_STR ? v->s : "", len);
}

/*
 * Rebuild a histogram from its buckets.  The buckets holding min and max
 * give one of their counts to the exact value, so that min, max and the
 * percentiles capped by max come back as they were.
 */
static int
hist_read(const struct jv *o, struct lg_hist *lh, const char **errstr)
{
	const struct jv	*b, *pair;
	uint64_t	 count, min, max, lo, n, total = 0;
	size_t		 i;

	if (o == NULL || o->t != J_OBJ) {
		*errstr = "missing histogram";
		return -1;
	}
	count = jv_u(o, "count");
	min = jv_u(o, "min");
	max = jv_u(o, "max");
	lh->mean = jv_d(o, "mean");
	b = jv_get(o, "buckets");
	if (b == NULL || b->t != J_ARR) {
		*errstr = "missing buckets";
		return -1;
	}
	tk_hist_reset(lh->h);
	for (i = 0; i < b->n; i++) {
		pair = &b->kid[i];
		if (pair->t != J_ARR || pair->n != 2 ||
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
		tk_hist_record_n(lh->h, lo, n);
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
	static char	 where[128];
	struct jp	 j = { buf, buf + len, NULL, 0 };
	struct jv	 root;
	const struct jv	*h, *o;
	int		 i, ret = -1;

	memset(&root, 0, sizeof(root));
	if (jp_value(&j, &root) == -1) {
		snprintf(where, sizeof(where), "%s at byte %zu", j.err,
		    (size_t)(j.p - buf));
		*errstr = where;
		goto out;
	}
	jp_ws(&j);
	if (j.p != j.end) {
		*errstr = "trailing data";
		goto out;
	}
	if (jv_get(&root, "tenkload") == NULL ||
	    jv_u(&root, "format") != JSON_FORMAT) {
		*errstr = "not a tenkload report of format 1";
		goto out;
	}
	h = jv_get(&root, "header");
	jv_s(&root, "tenkload", r->version, sizeof(r->version));
	jv_s(h, "mode", r->mode, sizeof(r->mode));
	jv_s(h, "backend", r->backend, sizeof(r->backend));
	jv_s(h, "targets", r->targets, sizeof(r->targets));
	jv_s(h, "args", r->args, sizeof(r->args));
	jv_s(h, "kernel", r->kernel, sizeof(r->kernel));
	jv_s(h, "port_range", r->ports, sizeof(r->ports));
	r->nofile = jv_u(h, "nofile");
	r->threads = jv_u(h, "threads");
	r->procs = jv_u(h, "procs");
	r->merged = jv_u(h, "merged");
	r->size_min = jv_u(h, "size_min");
	r->size_max = jv_u(h, "size_max");
	r->rate = jv_u(h, "rate");
	r->window = jv_u(h, "window");
	r->connect_rate = jv_u(h, "connect_rate");
	r->duration = jv_u(h, "duration_ns");
	r->warmup = jv_u(h, "warmup_ns");
	r->verify = jv_u(h, "verify") != 0;

	o = jv_get(&root, "time");
	r->t_start = jv_u(o, "start_us");
	r->t_ramp_first = jv_u(o, "ramp_first_us");
	r->t_ramp_last = jv_u(o, "ramp_last_us");
	r->t_ramp_end = jv_u(o, "ramp_end_us");
	r->t_meas_start = jv_u(o, "measure_start_us");
	r->t_meas_end = jv_u(o, "measure_end_us");
	r->t_end = jv_u(o, "end_us");

	o = jv_get(&root, "connections");
	r->requested = jv_u(o, "requested");
	r->idle = jv_u(o, "idle");
	r->attempted = jv_u(o, "attempted");
	r->established = jv_u(o, "established");
	r->failed = jv_u(o, "failed");
	r->lost = jv_u(o, "closed_early");
	r->open_end = jv_u(o, "open_at_end");
	r->unserved = jv_u(o, "unserved");
	r->reconnects = jv_u(o, "reconnects");

	o = jv_get(&root, "traffic");
	r->msgs = jv_u(o, "msgs");
	r->bytes_in = jv_u(o, "bytes_in");
	r->bytes_out = jv_u(o, "bytes_out");
	r->verified = jv_u(o, "verified_bytes");
	r->msgs_rate = jv_d(o, "msgs_per_s");
	r->in_rate = jv_d(o, "bytes_in_per_s");
	r->out_rate = jv_d(o, "bytes_out_per_s");

	o = jv_get(&root, "errors");
	for (i = 0; i < ERR_MAX; i++)
		r->errs[i] = jv_u(o, err_names[i]);

	if (hist_read(jv_get(&root, "latency"), &r->lat, errstr) == -1 ||
	    hist_read(jv_get(&root, "latency_uncorrected"), &r->lat_unc,
	    errstr) == -1 ||
	    hist_read(jv_get(&root, "connect_latency"), &r->conn_lat,
	    errstr) == -1)
		goto out;
	ret = 0;
 out:
	jv_free(&root);
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
