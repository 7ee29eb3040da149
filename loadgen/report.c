/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report of a run as a model: its header, merging the reports of
 * several processes or hosts exactly, and the verdict on a run.
 * Printing is report_text.c's, the JSON file report_json.c's; nothing
 * here calls the engine, so that tenkbench links the report alone.
 *
 * Histograms merge bucket by bucket, so percentiles and extremes of a
 * merged report equal those of one histogram that recorded everything;
 * means merge weighted by count.  Rates (msgs/s, bytes/s) add up when
 * the measured windows overlap (concurrent runs); windows apart in time
 * are rated over their union instead (report_windows).
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/utsname.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/clock.h"
#include "tenk/hist.h"
#include "tenk/log.h"
#include "tenk/loop.h"
#include "tenk/sock.h"
#include "loadgen.h"

const char *const report_err_names[ERR_MAX] = {
	"mismatch", "reset", "refused", "timeout", "closed", "ports",
	"fdlimit", "tls", "other"
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
	    (r->conn_lat.h = tk_hist_new()) == NULL ||
	    (r->hs_lat.h = tk_hist_new()) == NULL) {
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
	size_t	i;

	tk_hist_free(r->lat.h);
	tk_hist_free(r->lat_unc.h);
	tk_hist_free(r->conn_lat.h);
	tk_hist_free(r->hs_lat.h);
	r->lat.h = r->lat_unc.h = r->conn_lat.h = r->hs_lat.h = NULL;
	for (i = 0; i < r->series.n; i++)
		free(r->series.s[i].b);
	free(r->series.s);
	memset(&r->series, 0, sizeof(r->series));
}

/*
 * The machine in one line, for the report's header, the charts' footer
 * and tenkbench's: host name (with host), kernel, CPUs and their model,
 * memory.
 */
void
report_machine(char *buf, size_t len, int host)
{
	struct utsname	 u;
	FILE		*f;
	char		 line[256], model[128] = "", *p;
	unsigned long	 memkb = 0;

	if (uname(&u) == -1) {
		strlcpy(u.nodename, "?", sizeof(u.nodename));
		strlcpy(u.release, "?", sizeof(u.release));
	}
	if ((f = fopen("/proc/cpuinfo", "re")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "model name", 10) == 0 &&
			    (p = strchr(line, ':')) != NULL) {
				strlcpy(model, p + 2, sizeof(model));
				model[strcspn(model, "\n\"")] = '\0';
				break;
			}
		fclose(f);
	}
	if ((f = fopen("/proc/meminfo", "re")) != NULL) {
		if (fscanf(f, "MemTotal: %lu kB", &memkb) != 1)
			memkb = 0;
		fclose(f);
	}
	snprintf(buf, len, "%s%sLinux %s, %ld CPUs%s%s, %.0f GiB",
	    host ? u.nodename : "", host ? ": " : "", u.release,
	    sysconf(_SC_NPROCESSORS_ONLN), model[0] != '\0' ? " " : "", model,
	    (double)memkb / 1048576);
}

/* A target as the report names it: unix:PATH, or ADDR:PORT. */
static const char *
target_name(const struct tk_addr *a, char *buf, size_t len)
{
	const struct sockaddr_un *sun = (const struct sockaddr_un *)&a->ss;

	if (a->ss.ss_family != AF_UNIX)
		return tk_addr_fmt(a, buf, len);
	if (sun->sun_path[0] == '\0')
		snprintf(buf, len, "unix:@%.*s", (int)(a->len -
		    offsetof(struct sockaddr_un, sun_path) - 1),
		    sun->sun_path + 1);
	else
		snprintf(buf, len, "unix:%s", sun->sun_path);
	return buf;
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

/*
 * The request as typed into buf, "" for the default pattern; a longer
 * one is cut and ends in "...".
 */
static void
message_copy(char *buf, size_t len, const char *m)
{
	if (m == NULL)
		m = "";
	if (strlcpy(buf, m, len) >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
}

/* Fill the header of r from conf and from this machine. */
void
report_header(struct report *r, const struct lg_conf *conf)
{
	struct utsname	 u;
	struct rlimit	 rl;
	char		 a[sizeof(struct sockaddr_un) + 8];
	size_t		 i;

	strlcpy(r->version, TENK_VERSION, sizeof(r->version));
	strlcpy(r->mode, mode_name(conf->mode), sizeof(r->mode));
	if (conf->backend != NULL)
		strlcpy(r->backend, conf->backend, sizeof(r->backend));
	else
		strlcpy(r->backend, tk_backend_names()[0], sizeof(r->backend));
	r->targets[0] = '\0';
	for (i = 0; i < conf->ntargets; i++) {
		if (i > 0)
			strlcat(r->targets, ",", sizeof(r->targets));
		if (conf->url != NULL)
			strlcat(r->targets, conf->url->text,
			    sizeof(r->targets));
		else
			strlcat(r->targets, target_name(&conf->targets[i], a,
			    sizeof(a)), sizeof(r->targets));
	}
	report_machine(r->machine, sizeof(r->machine), 1);
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
	r->requests = conf->requests;
	r->seed = conf->seed;
	r->start_at = conf->start_at / 1000;
	r->verify = conf->verify;
	strlcpy(r->reply, conf->reply != NULL ? conf->reply : "echo",
	    sizeof(r->reply));
	message_copy(r->message, sizeof(r->message), conf->message);
	r->requested = conf->conns + conf->idle;
	r->idle = conf->idle;
	r->tls = conf->tls != NULL;
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
 * Whether s may be folded into d: both must have asked the same
 * question, the same framing and the same request, or their latencies
 * and rates would mean different things.  Returns 0, or -1 with the
 * two values named in why[0..len).
 */
int
report_mergeable(const struct report *d, const struct report *s, char *why,
    size_t len)
{
	if (d->merged == 0)
		return 0;
	if (strcmp(d->reply, s->reply) != 0) {
		snprintf(why, len, "reply \"%s\" differs from \"%s\"",
		    s->reply, d->reply);
		return -1;
	}
	if (strcmp(d->message, s->message) != 0) {
		snprintf(why, len, "message \"%s\" differs from \"%s\"",
		    s->message, d->message);
		return -1;
	}
	return 0;
}

/*
 * The standard deviation of lh's values, reckoned from its buckets'
 * midpoints about its exact mean, as HdrHistogram does: within the
 * buckets' 0.1%, and the same for a histogram merged or read back.
 */
struct sd_walk {
	double		 mean;
	double		 sum;
};

static void
sd_bucket(uint64_t lo, uint64_t count, void *arg)
{
	struct sd_walk	*w = arg;
	uint64_t	 hi = tk_hist_highest_equiv(lo);
	double		 d = (double)(lo + (hi - lo) / 2) - w->mean;

	w->sum += d * d * (double)count;
}

double
report_stdev(const struct lg_hist *lh)
{
	struct sd_walk	 w = { lh->mean, 0 };
	uint64_t	 n = tk_hist_count(lh->h);

	if (n == 0)
		return 0;
	tk_hist_walk(lh->h, sd_bucket, &w);
	return sqrt(w.sum / (double)n);
}

struct bk_walk {
	struct lg_bkt	*b;
	size_t		 n;
};

static int	 series_merge(struct lg_series *, const struct lg_series *);

static void
bk_bucket(uint64_t lo, uint64_t count, void *arg)
{
	struct bk_walk	*w = arg;

	w->b[w->n].lo = lo;
	w->b[w->n++].n = count;
}

static void
bk_counter(uint64_t lo, uint64_t count, void *arg)
{
	struct bk_walk	*w = arg;

	(void)lo;
	(void)count;
	w->n++;
}

static size_t
bk_count(const struct tk_hist *h)
{
	struct bk_walk	w = { NULL, 0 };

	tk_hist_walk(h, bk_counter, &w);
	return w.n;
}

/*
 * Add second t (an epoch second) to r's series, with the latencies of
 * lat and, in rate mode, unc.  A second already last in the series (a
 * collection cut short at the end of a run) takes them in.  Returns 0,
 * or -1 with errno ENOMEM.
 */
int
report_series_add(struct report *r, uint64_t t, const struct tk_hist *lat,
    const struct tk_hist *unc)
{
	struct lg_series	 one;
	struct lg_sec		 sec;
	struct bk_walk		 w;
	int			 ret;

	sec.t = t;
	sec.nlat = (uint32_t)bk_count(lat);
	sec.nunc = (uint32_t)bk_count(unc);
	if ((sec.b = reallocarray(NULL, (size_t)sec.nlat + sec.nunc + 1,
	    sizeof(*sec.b))) == NULL)
		return -1;
	w.b = sec.b;
	w.n = 0;
	tk_hist_walk(lat, bk_bucket, &w);
	tk_hist_walk(unc, bk_bucket, &w);
	one.s = &sec;
	one.n = one.cap = 1;
	ret = series_merge(&r->series, &one);
	free(sec.b);
	return ret;
}

/*
 * Two lists of buckets sorted by value into out, equal values added;
 * returns the number written (out holds na + nb).
 */
static size_t
bk_merge(const struct lg_bkt *a, size_t na, const struct lg_bkt *b,
    size_t nb, struct lg_bkt *out)
{
	size_t	i = 0, j = 0, n = 0;

	while (i < na || j < nb) {
		if (j == nb || (i < na && a[i].lo < b[j].lo))
			out[n++] = a[i++];
		else if (i == na || b[j].lo < a[i].lo)
			out[n++] = b[j++];
		else {
			out[n] = a[i++];
			out[n++].n += b[j++].n;
		}
	}
	return n;
}

/* One second from two, x (may be NULL) and y, into out. */
static int
sec_merge(const struct lg_sec *x, const struct lg_sec *y, struct lg_sec *out)
{
	static const struct lg_sec	 none;
	struct lg_bkt			*b;

	if (x == NULL)
		x = &none;
	if ((b = reallocarray(NULL, (size_t)x->nlat + x->nunc + y->nlat +
	    y->nunc + 1, sizeof(*b))) == NULL)
		return -1;
	out->t = y->t;
	out->b = b;
	out->nlat = (uint32_t)bk_merge(x->b, x->nlat, y->b, y->nlat, b);
	out->nunc = (uint32_t)bk_merge(x->b + x->nlat, x->nunc,
	    y->b + y->nlat, y->nunc, b + out->nlat);
	return 0;
}

/*
 * Fold series s into d, second by second (both sorted by time, as
 * every series is).  Returns 0, or -1 with errno ENOMEM and d as it
 * was.
 */
static int
series_merge(struct lg_series *d, const struct lg_series *s)
{
	struct lg_sec	*out;
	unsigned char	*made;
	size_t		 i = 0, j = 0, n = 0, k;
	int		 both;

	if (s->n == 0)
		return 0;
	out = reallocarray(NULL, d->n + s->n, sizeof(*out));
	made = calloc(d->n + s->n, 1);
	if (out == NULL || made == NULL)
		goto fail;
	while (i < d->n || j < s->n) {
		if (j == s->n || (i < d->n && d->s[i].t < s->s[j].t)) {
			out[n++] = d->s[i++];
			continue;
		}
		both = i < d->n && d->s[i].t == s->s[j].t;
		if (sec_merge(both ? &d->s[i] : NULL, &s->s[j], &out[n]) == -1)
			goto fail;
		made[n++] = 1;
		i += both;
		j++;
	}
	/* The seconds of d that were merged into new ones go. */
	for (i = 0, j = 0; i < d->n; i++) {
		while (j < s->n && s->s[j].t < d->s[i].t)
			j++;
		if (j < s->n && s->s[j].t == d->s[i].t)
			free(d->s[i].b);
	}
	free(d->s);
	free(made);
	d->s = out;
	d->n = d->cap = n;
	return 0;

 fail:
	for (k = 0; made != NULL && k < n; k++)
		if (made[k])
			free(out[k].b);
	free(made);
	free(out);
	errno = ENOMEM;
	return -1;
}

/*
 * Fold s into d.  Counts and histograms add, times take the earliest
 * start and the latest end, rates add (concurrent runs; see
 * report_windows for the others); the earliest signal is kept.  d keeps
 * its own percentile list.  A d that has merged nothing yet (merged ==
 * 0) takes s's header.  report_mergeable() has said yes.
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
		d->requests = s->requests;
		d->seed = s->seed;
		d->start_at = s->start_at;
		memcpy(d->reply, s->reply, sizeof(d->reply));
		memcpy(d->message, s->message, sizeof(d->message));
		d->tls = s->tls;
		memcpy(d->machine, s->machine, sizeof(d->machine));
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
		d->requests = max64(d->requests, s->requests);
		d->start_at = min_nz(d->start_at, s->start_at);
		if (strcmp(d->machine, s->machine) != 0)
			strlcpy(d->machine, "several machines",
			    sizeof(d->machine));
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
	if (s->interrupted != 0 && (d->interrupted == 0 ||
	    s->interrupted_at_us < d->interrupted_at_us)) {
		d->interrupted = s->interrupted;
		d->interrupted_at_us = s->interrupted_at_us;
	}
	if (d->stopped[0] == '\0')
		memcpy(d->stopped, s->stopped, sizeof(d->stopped));

	d->requested += s->requested;
	d->idle += s->idle;
	d->attempted += s->attempted;
	d->established += s->established;
	d->failed += s->failed;
	d->lost += s->lost;
	d->open_end += s->open_end;
	d->unserved += s->unserved;
	d->reconnects += s->reconnects;
	if (d->tls_version[0] == '\0') {
		memcpy(d->tls_version, s->tls_version, sizeof(d->tls_version));
		memcpy(d->tls_cipher, s->tls_cipher, sizeof(d->tls_cipher));
		memcpy(d->tls_alpn, s->tls_alpn, sizeof(d->tls_alpn));
	}
	d->tls = d->tls || s->tls;
	d->hs_new += s->hs_new;
	d->hs_resumed += s->hs_resumed;
	d->hs_new_w += s->hs_new_w;
	d->hs_resumed_w += s->hs_resumed_w;
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
	hist_merge(&d->hs_lat, &s->hs_lat);
	if (series_merge(&d->series, &s->series) == -1)
		fatal("merge: series");
}


/* Seconds from one time in us to a later one; 0 if not later. */
double
report_secs(uint64_t from_us, uint64_t to_us)
{
	return to_us > from_us ? (double)(to_us - from_us) / 1e6 : 0;
}

/* Connects started per second over the ramp, 0 if unknown. */
double
report_ramp_rate(const struct report *r)
{
	double	s = report_secs(r->t_ramp_first, r->t_ramp_last);

	return r->attempted > 1 && s > 0 ? (double)(r->attempted - 1) / s : 0;
}

/* TLS handshakes per second in the measured window: all, new, resumed. */
static double
per_s(const struct report *r, uint64_t n)
{
	uint64_t	us = report_measured(r);

	return us > 0 ? (double)n * 1e6 / (double)us : 0;
}

double
report_hs_rate(const struct report *r)
{
	return per_s(r, r->hs_new_w + r->hs_resumed_w);
}

double
report_hs_new_rate(const struct report *r)
{
	return per_s(r, r->hs_new_w);
}

double
report_hs_resumed_rate(const struct report *r)
{
	return per_s(r, r->hs_resumed_w);
}

/* Microseconds measured: the windows' union, or the one window's span. */
uint64_t
report_measured(const struct report *r)
{
	if (r->measured != 0)
		return r->measured;
	return r->t_meas_end > r->t_meas_start ?
	    r->t_meas_end - r->t_meas_start : 0;
}

/* The measured window of r, before it is merged anywhere. */
void
report_window(const struct report *r, struct lg_window *w)
{
	w->start = r->t_meas_start;
	w->end = r->t_meas_end;
	w->measured = report_measured(r);
}

static int
window_cmp(const void *a, const void *b)
{
	const struct lg_window	*x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * The windows w[0..n) of the reports merged into r, sorted here, fall
 * into groups that overlap.  One group means concurrent runs, whose
 * rates report_merge() rightly summed: r stays as it is.  Groups apart
 * in time (windows that only touch count as apart) are runs one after
 * the other, and the sum of their rates would be a rate nobody saw:
 * r's measured time becomes the union of the windows (a group counts
 * from its first start to its last end, a lone window as its own
 * measured time) and its rates are its totals over that.  Returns the
 * number of gaps between groups, 0 when they all overlap.
 */
int
report_windows(struct report *r, struct lg_window *w, size_t n)
{
	uint64_t	start = 0, end = 0, group = 0, total = 0;
	size_t		i;
	int		gaps = 0;

	if (n == 0)
		return 0;
	qsort(w, n, sizeof(*w), window_cmp);
	for (i = 0; i < n; i++) {
		if (i > 0 && w[i].start < end) {
			end = max64(end, w[i].end);
			group = end - start;
			continue;
		}
		if (i > 0)
			gaps++;
		total += group;
		start = w[i].start;
		end = w[i].end;
		group = w[i].measured;
	}
	total += group;
	if (gaps == 0 || total == 0)
		return gaps;
	r->measured = total;
	r->msgs_rate = (double)r->msgs * 1e6 / (double)total;
	r->in_rate = (double)r->bytes_in * 1e6 / (double)total;
	r->out_rate = (double)r->bytes_out * 1e6 / (double)total;
	return gaps;
}

/*
 * "SIGINT", "SIGTERM" (the two tenkload stops on, named by libc), or
 * "signal N", in buf.
 */
const char *
report_signame(int signo, char *buf, size_t len)
{
	if (signo == SIGINT || signo == SIGTERM)
		snprintf(buf, len, "SIG%s", sigabbrev_np(signo));
	else
		snprintf(buf, len, "signal %d", signo);
	return buf;
}

static void
reason(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Append one reason to the "; "-separated list in buf. */
static void
reason(char *buf, size_t len, const char *fmt, ...)
{
	va_list	ap;
	size_t	n = strlen(buf);

	if (n > 0)
		n = strlcat(buf, "; ", len);
	if (n >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/*
 * The verdict on r: the run failed when a mode that sends got no reply
 * at all in the measured window (--mode connect without a message: no
 * connect), when more active connections than
 * max_unserved got none, or when there were more errors than
 * max_errors.  Writes one line without its newline into buf: "ok: ..."
 * or "FAIL: " and the reasons, after "interrupted after X s by SIGTERM;
 * " when a signal ended the run.  Returns the exit status: 0, 1, or
 * 128 + the signal.
 */
int
report_result(const struct report *r, uint64_t max_errors,
    uint64_t max_unserved, char *buf, size_t len)
{
	char		 why[512] = "", sig[32];
	uint64_t	 errs = report_errors(r);
	size_t		 n = 0;

	/*
	 * --mode connect without a message sends nothing: its work is the
	 * connects themselves, each one counted as a reconnect.
	 */
	if (strcmp(r->mode, "connect") == 0 && r->message[0] == '\0') {
		if (r->reconnects == 0)
			reason(why, sizeof(why), "no connection completed in "
			    "the measured window");
	} else if (r->msgs == 0 && r->requested > r->idle &&
	    strcmp(r->mode, "idle") != 0)
		reason(why, sizeof(why), "no reply in the measured window");
	if (r->unserved > max_unserved)
		reason(why, sizeof(why), "%llu active connection%s got no "
		    "reply in the measured window, more than --max-unserved "
		    "%llu", (unsigned long long)r->unserved,
		    r->unserved == 1 ? "" : "s",
		    (unsigned long long)max_unserved);
	if (errs > max_errors)
		reason(why, sizeof(why), "%llu error%s, more than "
		    "--max-errors %llu", (unsigned long long)errs,
		    errs == 1 ? "" : "s", (unsigned long long)max_errors);
	buf[0] = '\0';
	if (r->interrupted != 0)
		n = (size_t)snprintf(buf, len, "interrupted after %.3f s by "
		    "%s; ", report_secs(r->t_start, r->interrupted_at_us),
		    report_signame(r->interrupted, sig, sizeof(sig)));
	if (n >= len)
		n = strlen(buf);
	if (why[0] != '\0')
		snprintf(buf + n, len - n, "FAIL: %s", why);
	else if (r->unserved > 0)
		snprintf(buf + n, len - n, "ok: %llu error%s, --max-errors "
		    "%llu; %llu unserved, --max-unserved %llu",
		    (unsigned long long)errs, errs == 1 ? "" : "s",
		    (unsigned long long)max_errors,
		    (unsigned long long)r->unserved,
		    (unsigned long long)max_unserved);
	else
		snprintf(buf + n, len - n, "ok: %llu error%s, --max-errors "
		    "%llu", (unsigned long long)errs, errs == 1 ? "" : "s",
		    (unsigned long long)max_errors);
	if (r->interrupted != 0)
		return 128 + r->interrupted;
	return why[0] != '\0' ? 1 : 0;
}

/* The name of percentile p as the report prints it: "p99.9". */
const char *
report_pct_name(double p, char *buf, size_t len)
{
	snprintf(buf, len, "p%g", p);
	return buf;
}
