/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report as text: the report printed at the end of a run or a
 * merge, and the progress line printed once a second while it runs.
 *
 * Latencies are milliseconds with three decimals everywhere, in the
 * report and on the progress line alike, as wrk and redis-benchmark
 * print them: one unit lets a reader compare any two figures at a
 * glance and a script read them without parsing suffixes, and a
 * microsecond, the third decimal, is finer than anything a loopback
 * round trip shows.  JSON keeps nanoseconds, the histograms' unit, and
 * --hgrm and --csv milliseconds.
 */
#include <string.h>

#include "tenk/hist.h"
#include "tenk/parse.h"
#include "loadgen.h"

static void
print_hist(FILE *f, const char *what, const struct report *r,
    const struct lg_hist *lh)
{
	char	 name[32];
	int	 i;

	fprintf(f, "%s (ms):", what);
	if (tk_hist_count(lh->h) == 0) {
		fprintf(f, " none\n");
		return;
	}
	fprintf(f, " min %.3f", (double)tk_hist_min(lh->h) / 1e6);
	for (i = 0; i < r->npct; i++)
		fprintf(f, " %s %.3f",
		    report_pct_name(r->pct[i], name, sizeof(name)),
		    (double)tk_hist_percentile(lh->h, r->pct[i]) / 1e6);
	fprintf(f, " max %.3f mean %.3f stdev %.3f (%llu)\n",
	    (double)tk_hist_max(lh->h) / 1e6, lh->mean / 1e6,
	    report_stdev(lh) / 1e6, (unsigned long long)tk_hist_count(lh->h));
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
	char	 sz[48], d1[32], d2[32], sig[32];
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
	if (r->requests > 0)
		fprintf(f, ", requests %llu", (unsigned long long)r->requests);
	if (strcmp(r->mode, "stream") == 0)
		fprintf(f, ", window %llu", (unsigned long long)r->window);
	fprintf(f, ", warm-up %s, duration %s",
	    dur_str(r->warmup, d1, sizeof(d1)),
	    dur_str(r->duration, d2, sizeof(d2)));
	if (r->merged > 1)
		fprintf(f, ", %llu reports merged",
		    (unsigned long long)r->merged);
	fputc('\n', f);
	fprintf(f, "  message %s, reply %s, seed %llu\n",
	    r->message[0] != '\0' ? r->message : "(the verified pattern)",
	    r->reply, (unsigned long long)r->seed);
	if (r->machine[0] != '\0')
		fprintf(f, "  machine %s\n", r->machine);
	if (r->args[0] != '\0')
		fprintf(f, "  command: %s\n", r->args);
	if (r->start_at != 0)
		fprintf(f, "  measured from --start-at %.3f (epoch s), %.3f s "
		    "after the start\n", (double)r->start_at / 1e6,
		    report_secs(r->t_start, r->t_meas_start));
	if (r->stopped[0] != '\0')
		fprintf(f, "  STOPPED EARLY after %.3f s: %s\n",
		    report_secs(r->t_start, r->t_meas_end), r->stopped);
	if (r->interrupted != 0)
		fprintf(f, "  interrupted after %.3f s by %s: the report "
		    "covers the run until then\n",
		    report_secs(r->t_start, r->interrupted_at_us),
		    report_signame(r->interrupted, sig, sizeof(sig)));

	fprintf(f, "connections: requested %llu, established %llu, "
	    "failed %llu, closed early %llu, open at end %llu\n",
	    (unsigned long long)r->requested,
	    (unsigned long long)r->established,
	    (unsigned long long)r->failed, (unsigned long long)r->lost,
	    (unsigned long long)r->open_end);
	if (r->reconnects > 0)
		fprintf(f, "  reconnects: %llu connections closed on purpose "
		    "and opened again\n", (unsigned long long)r->reconnects);
	if (r->established < r->requested)
		fprintf(f, "  SHORTFALL: %llu of %llu connections were not "
		    "established\n",
		    (unsigned long long)(r->requested - r->established),
		    (unsigned long long)r->requested);
	if (r->unserved > 0)
		fprintf(f, "  UNSERVED: %llu active connections completed no "
		    "message in the measured window\n",
		    (unsigned long long)r->unserved);
	fprintf(f, "  ramp: %llu connects started over %.3f s (%.1f/s), "
	    "resolved after %.3f s\n", (unsigned long long)r->attempted,
	    report_secs(r->t_ramp_first, r->t_ramp_last), report_ramp_rate(r),
	    report_secs(r->t_start, r->t_ramp_end));
	fprintf(f, "  ");
	print_hist(f, "connect latency", r, &r->conn_lat);
	if (r->tls) {
		fprintf(f, "  tls: %s %s, alpn %s; handshakes %llu (new %llu, "
		    "resumed %llu), %.1f/s in the window (new %.1f/s, resumed "
		    "%.1f/s)\n", r->tls_version[0] != '\0' ? r->tls_version :
		    "none", r->tls_cipher, r->tls_alpn[0] != '\0' ?
		    r->tls_alpn : "none",
		    (unsigned long long)(r->hs_new + r->hs_resumed),
		    (unsigned long long)r->hs_new,
		    (unsigned long long)r->hs_resumed, report_hs_rate(r),
		    report_hs_new_rate(r), report_hs_resumed_rate(r));
		fprintf(f, "  ");
		print_hist(f, "handshake latency", r, &r->hs_lat);
	}

	fprintf(f, "traffic: %.3f s measured, %llu msgs, %.1f msgs/s, "
	    "in %.2f MB/s, out %.2f MB/s\n",
	    (double)report_measured(r) / 1e6,
	    (unsigned long long)r->msgs, r->msgs_rate, r->in_rate / 1e6,
	    r->out_rate / 1e6);
	if (strcmp(r->mode, "rate") == 0) {
		print_hist(f, "latency corrected", r, &r->lat);
		print_hist(f, "latency uncorrected", r, &r->lat_unc);
	} else
		print_hist(f, "latency", r, &r->lat);

	fprintf(f, "errors: %llu (", (unsigned long long)report_errors(r));
	for (i = 0; i < ERR_MAX; i++)
		fprintf(f, "%s%s %llu", i > 0 ? ", " : "", report_err_names[i],
		    (unsigned long long)r->errs[i]);
	fprintf(f, ")\n");
	if (r->reply[0] != '\0' && strcmp(r->reply, "echo") != 0)
		fprintf(f, "verified: %llu reply bytes read as %s\n",
		    (unsigned long long)r->verified, r->reply);
	else
		fprintf(f, "verified: %llu bytes echoed%s\n",
		    (unsigned long long)r->verified, r->verify ?
		    " and checked" : " (not checked: --no-verify)");
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
 * their change since prev, dt seconds ago.  p99 is of the last second
 * (of all threads; with several processes, the largest of theirs), "-"
 * when no message completed in it.
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
		snprintf(p99, sizeof(p99), "%.3f ms",
		    (double)ctr_get(&cur->p99) / 1e6);
	fprintf(f, "tenkload: %3llus conns %llu/%llu open %llu  msgs/s %.0f  "
	    "in %.2f MB/s  out %.2f MB/s  p99 %s  errors %llu\n",
	    (unsigned long long)t,
	    (unsigned long long)ctr_get(&cur->established),
	    (unsigned long long)ctr_get(&cur->target),
	    (unsigned long long)ctr_get(&cur->open), msgs, in, out, p99,
	    (unsigned long long)ctr_get(&cur->errors));
	fflush(f);
}
