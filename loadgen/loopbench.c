/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * loopbench: the event loop alone, without tenkd or the network stack,
 * measured by the method of libevent's test/bench.c.  N socketpairs each
 * carry a persistent read watcher.  A round seeds A one-byte writes,
 * spread evenly over the pairs; every byte read writes one byte into the
 * next pair, until W such chained writes are done.  The round is the
 * wall-clock time of the loop passes (TK_RUN_ONCE) until all A + W bytes
 * have been read.  With few active pairs among many idle ones, the cost
 * that grows with N is the backend's: poll and select hand the kernel
 * every fd on every pass, epoll only the ready ones.
 *
 * Each row is the median (and min and max) of the rounds, after one
 * untimed warm-up round.  This file owns the benchmark only; the
 * end-to-end comparison through tenkd is tenkbench's.
 *
 * usage: loopbench [-n N,...] [-a A:W] [-r rounds] [-b backend]
 */
#include <sys/select.h>
#include <sys/socket.h>

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tenk/cli.h"
#include "tenk/clock.h"
#include "tenk/loop.h"
#include "tenk/timer.h"

#define MAXN		100000
#define MAXW		100000000	/* chained writes of a round */
#define MAXSETS		8
#define MAXAW		8
#define MAXROUNDS	10000
#define SPAREFDS	32	/* loop, wake-up and stdio fds */
#define ROUND_LIMIT	(60 * TK_SEC)

struct bench;

struct pair {
	struct tk_io	 io;		/* on the read end */
	int		 wfd;		/* write end */
	int		 idx;
	struct bench	*b;
};

struct bench {
	struct tk_loop	*l;
	struct pair	*p;
	int		 n;
	long		 reads;		/* bytes read this round */
	long		 left;		/* chained writes to do */
	long		 errors;
};

struct aw {
	int		 a;
	long		 w;
};

static const char	*progname = "loopbench";

/* --help: the synopsis and every option with its default; exit 0. */
static noreturn void
usage(void)
{
	printf("usage: %s [-h] [-a A:W] [-b backend] [-n N,...] "
	    "[-r rounds]\n"
	    "\n"
	    "  -a, --active A:W     A seeded writes chaining W more, "
	    "repeatable\n"
	    "                       (default 1:100 and 100:1000)\n"
	    "  -b, --backend NAME   measure only this backend (default: "
	    "all); \"list\"\n"
	    "                       prints them\n"
	    "  -h, --help           this help\n"
	    "  -n, --sizes N,...    socketpairs per row "
	    "(default 100,1000,5000,9000)\n"
	    "  -r, --rounds N       timed rounds per row (default 25)\n",
	    progname);
	exit(0);
}

/*
 * Read what is there; every byte passes one byte on to the next pair
 * while chained writes remain.  A short read means the socket was empty
 * at that moment, so the watcher blocks without the read that would
 * only return EAGAIN: new data raises a new edge (epoll) or shows in the
 * next poll (level backends).
 */
static void
on_read(struct tk_loop *l, struct tk_io *io)
{
	struct pair	*p = io->arg;
	struct bench	*b = p->b;
	struct pair	*next;
	char		 buf[64];
	ssize_t		 n, i;

	next = &b->p[p->idx + 1 == b->n ? 0 : p->idx + 1];
	for (;;) {
		n = read(io->fd, buf, sizeof(buf));
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				b->errors++;
			tk_io_block(io, TK_EV_READ);
			return;
		}
		if (n == 0) {
			b->errors++;
			tk_io_stop(l, io);
			return;
		}
		b->reads += n;
		for (i = 0; i < n && b->left > 0; i++, b->left--)
			if (write(next->wfd, "e", 1) != 1)
				b->errors++;
		if ((size_t)n < sizeof(buf)) {
			tk_io_block(io, TK_EV_READ);
			return;
		}
	}
}

static void
stuck(struct tk_loop *l, struct tk_timer *t)
{
	(void)l;
	(void)t;
	fprintf(stderr, "%s: a round took over %llu s; bytes lost?\n",
	    progname, (unsigned long long)(ROUND_LIMIT / TK_SEC));
	exit(1);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int
cmp_long(const void *a, const void *b)
{
	long	x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/* Open n socketpairs; NULL with errno set. */
static struct pair *
pairs_open(int n, struct bench *b)
{
	struct pair	*p;
	int		 i, sv[2];

	if ((p = calloc(n, sizeof(*p))) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0, sv) == -1) {
			int	save = errno;

			while (i-- > 0) {
				close(p[i].io.fd);
				close(p[i].wfd);
			}
			free(p);
			errno = save;
			return NULL;
		}
		tk_io_init(&p[i].io, sv[0], on_read, &p[i]);
		p[i].wfd = sv[1];
		p[i].idx = i;
		p[i].b = b;
	}
	return p;
}

static void
pairs_close(struct pair *p, int n)
{
	int	i;

	for (i = 0; i < n; i++) {
		close(p[i].io.fd);
		close(p[i].wfd);
	}
	free(p);
}

struct result {
	uint64_t	med, min, max;	/* ns */
	long		passes;
};

/* One round: seed, then run passes until every byte is read; ns. */
static uint64_t
round_run(struct bench *b, const struct aw *aw, long *passes)
{
	uint64_t	t0, t1;
	int		i, space;

	b->reads = 0;
	b->left = aw->w;
	space = b->n / aw->a;
	for (i = 0; i < aw->a; i++)
		if (write(b->p[i * space].wfd, "e", 1) != 1)
			b->errors++;
	*passes = 0;
	t0 = tk_clock_mono();
	while (b->reads < aw->a + aw->w) {
		tk_loop_run(b->l, TK_RUN_ONCE);
		(*passes)++;
	}
	t1 = tk_clock_mono();
	return t1 - t0;
}

/*
 * Measure every (A, W) on one backend with the pairs in b.  Returns 0,
 * 1 when the backend refuses an fd with ERANGE, -1 on
 * another error.
 */
static int
measure(struct bench *b, const char *be, const struct aw *aws, int naw,
    int rounds, struct result *res)
{
	struct tk_timer	 guard;
	uint64_t	*us;
	long		*np;
	int		 i, k, r, started = 0, ret = 0;

	if ((us = calloc(rounds, sizeof(*us))) == NULL ||
	    (np = calloc(rounds, sizeof(*np))) == NULL) {
		free(us);
		return -1;
	}
	if ((b->l = tk_loop_new(be, 2 * b->n + SPAREFDS)) == NULL) {
		fprintf(stderr, "%s: %s: %s\n", progname, be, strerror(errno));
		ret = -1;
		goto out;
	}
	for (i = 0; i < b->n; i++, started++) {
		if (tk_io_start(b->l, &b->p[i].io, TK_EV_READ) == -1) {
			ret = errno == ERANGE ? 1 : -1;
			if (ret == -1)
				fprintf(stderr, "%s: %s: tk_io_start: %s\n",
				    progname, be, strerror(errno));
			goto stop;
		}
	}
	tk_timer_init(&guard, stuck, NULL);
	for (k = 0; k < naw; k++) {
		if (aws[k].a > b->n)
			continue;
		for (r = -1; r < rounds; r++) {
			tk_loop_update_now(b->l);
			tk_timer_arm(b->l, &guard, ROUND_LIMIT);
			if (r == -1)		/* warm-up */
				round_run(b, &aws[k], &np[0]);
			else
				us[r] = round_run(b, &aws[k], &np[r]);
		}
		tk_timer_cancel(b->l, &guard);
		qsort(np, rounds, sizeof(*np), cmp_long);
		qsort(us, rounds, sizeof(*us), cmp_u64);
		res[k].med = us[rounds / 2];
		res[k].min = us[0];
		res[k].max = us[rounds - 1];
		res[k].passes = np[rounds / 2];
	}
 stop:
	for (i = 0; i < started; i++)
		tk_io_stop(b->l, &b->p[i].io);
	tk_loop_free(b->l);
	b->l = NULL;
 out:
	free(np);
	free(us);
	return ret;
}

/* "100,1000", given to opt, into ns[]; returns the count. */
static int
parse_list(const char *opt, char *arg, int *ns, int max)
{
	char	*p, *tok;
	int	 n = 0;

	for (p = arg; (tok = strsep(&p, ",")) != NULL; ) {
		if (*tok == '\0')
			continue;
		if (n == max)
			tk_cli_bad(opt, NULL, "at most %d sizes", max);
		ns[n++] = (int)tk_cli_num(opt, tok, 1, MAXN);
	}
	if (n == 0)
		tk_cli_bad(opt, NULL, "empty list");
	return n;
}

/* "A:W", given to opt. */
static void
parse_aw(const char *opt, char *arg, struct aw *aw)
{
	char	*w;

	if ((w = strchr(arg, ':')) == NULL)
		tk_cli_bad(opt, arg, "not A:W");
	*w++ = '\0';
	aw->a = (int)tk_cli_num(opt, arg, 1, MAXN);
	aw->w = (long)tk_cli_num(opt, w, 0, MAXW);
}

static void
row_na(const char *be, int n, const struct aw *aw, const char *why)
{
	printf("%-8s %6d %5d %6ld   %s\n", be, n, aw->a, aw->w, why);
}

static void
row(const char *be, int n, const struct aw *aw, const struct result *r)
{
	printf("%-8s %6d %5d %6ld %11.1f %11.1f %11.1f %7ld\n", be, n,
	    aw->a, aw->w, r->med / 1e3, r->min / 1e3, r->max / 1e3,
	    r->passes);
}

#define MAXBE	8

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "backend",	required_argument,	NULL, 'b' },
		{ "active",	required_argument,	NULL, 'a' },
		{ "help",	no_argument,		NULL, 'h' },
		{ "sizes",	required_argument,	NULL, 'n' },
		{ "rounds",	required_argument,	NULL, 'r' },
		{ NULL,		0,			NULL, 0 }
	};
	static struct result	 res[MAXBE][MAXAW];
	static int		 state[MAXBE];
	const char *const	*names;
	const char		*bes[MAXBE], *opt, *only = NULL;
	struct aw		 aws[MAXAW];
	struct bench		 b;
	uint64_t		 nofile;
	int			 list = 0;
	int			 ns[MAXSETS], nn = 0, naw = 0, nbe = 0;
	int			 rounds = 25, ch, i, j, k;

	while ((ch = tk_cli_getopt(argc, argv, ":a:b:hn:r:", longopts)) !=
	    -1) {
		opt = tk_cli_opt();
		switch (ch) {
		case 'a':
			if (naw == MAXAW)
				tk_cli_bad(opt, NULL, "at most %d", MAXAW);
			parse_aw(opt, optarg, &aws[naw++]);
			break;
		case 'b':
			if ((only = tk_cli_backend(opt, optarg)) == NULL)
				list = 1;
			break;
		case 'n':
			nn = parse_list(opt, optarg, ns, MAXSETS);
			break;
		case 'r':
			rounds = (int)tk_cli_num(opt, optarg, 1, MAXROUNDS);
			break;
		case 'h':
			usage();
		}
	}
	if (optind != argc)
		tk_cli_bad(argv[optind], NULL, "unexpected argument");
	if (list)
		tk_cli_backend_list();

	for (names = tk_backend_names(); *names != NULL; names++) {
		if (only != NULL && strcmp(only, *names) != 0)
			continue;
		/* Named, a refused backend already ended us in parse. */
		if (tk_backend_probe(*names) == -1) {
			printf("# %s: the kernel refuses it: %s\n", *names,
			    strerror(errno));
			continue;
		}
		if (nbe < MAXBE)
			bes[nbe++] = *names;
	}
	if (nn == 0) {
		ns[nn++] = 100;
		ns[nn++] = 1000;
		ns[nn++] = 5000;
		ns[nn++] = 9000;
	}
	if (naw == 0) {
		aws[naw].a = 1;
		aws[naw++].w = 100;
		aws[naw].a = 100;
		aws[naw++].w = 1000;
	}

	/* N pairs take 2N fds: raise the soft limit as far as allowed. */
	if (tk_nofile_raise(&nofile) == -1)
		fprintf(stderr, "%s: RLIMIT_NOFILE %ju not raised: %s\n",
		    progname, (uintmax_t)nofile, strerror(errno));

	printf("# loopbench: N socketpairs with a read watcher each; A "
	    "seeded writes chain W more.\n# A round is the loop passes until "
	    "all A+W bytes are read: median, min, max\n# of %d rounds in "
	    "microseconds after one warm-up; passes is the median count.\n"
	    "# RLIMIT_NOFILE %ju, FD_SETSIZE %d\n", rounds,
	    (uintmax_t)nofile, FD_SETSIZE);
	printf("%-8s %6s %5s %6s %11s %11s %11s %7s\n", "backend", "N", "A",
	    "W", "median_us", "min_us", "max_us", "passes");
	fflush(stdout);

	memset(&b, 0, sizeof(b));
	for (i = 0; i < nn; i++) {
		b.n = ns[i];
		if ((uint64_t)(2 * b.n + SPAREFDS) > nofile) {
			printf("# N=%d skipped: needs about %d fds, "
			    "RLIMIT_NOFILE is %ju\n", b.n, 2 * b.n + SPAREFDS,
			    (uintmax_t)nofile);
			continue;
		}
		if ((b.p = pairs_open(b.n, &b)) == NULL) {
			printf("# N=%d skipped: socketpair: %s\n", b.n,
			    strerror(errno));
			continue;
		}
		for (j = 0; j < nbe; j++) {
			if (isatty(STDERR_FILENO))
				fprintf(stderr, "\r%s: N=%d %s ...  ",
				    progname, b.n, bes[j]);
			b.errors = 0;
			state[j] = measure(&b, bes[j], aws, naw, rounds,
			    res[j]);
			if (b.errors != 0)
				state[j] = 2;
		}
		if (isatty(STDERR_FILENO))
			fprintf(stderr, "\r%40s\r", "");
		for (k = 0; k < naw; k++) {
			for (j = 0; j < nbe; j++) {
				if (aws[k].a > b.n)
					row_na(bes[j], b.n, &aws[k],
					    "n/a (A > N)");
				else if (state[j] == 1)
					row_na(bes[j], b.n, &aws[k],
					    "n/a (FD_SETSIZE)");
				else if (state[j] == 2)
					row_na(bes[j], b.n, &aws[k],
					    "failed (I/O errors)");
				else if (state[j] == -1)
					row_na(bes[j], b.n, &aws[k],
					    "failed");
				else
					row(bes[j], b.n, &aws[k], &res[j][k]);
			}
		}
		fflush(stdout);
		pairs_close(b.p, b.n);
		b.p = NULL;
	}
	return 0;
}
