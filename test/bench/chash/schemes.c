/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * schemes: tenkd's --balance hash table (src/server/data/chash.c, included
 * whole, so that its statics serve here too)
 * against the consistent hashing schemes it was chosen over, on the
 * targets of issue 28, over 100,000 random IPv4 clients and five
 * upstreams named as tenkd names them ("10.S.0.K:8080"), for each of
 * several seeds S (new names and new clients each time):
 *
 *	add	a sixth upstream: keys moved (target <= 1.1 x 1/6)
 *	remove	each of the five in turn: keys moved in all (<= 1.1 x 1/5),
 *		and keys moved that were not the removed one's (target 0)
 *	down	each of the five down: keys moved that were not its own
 *		(target 0); a table scheme either rebuilds without it or
 *		keeps its table and passes it over, as said per scheme
 *	spread	the largest deviation of a share from 1/5 with equal
 *		weights, and from w/15 with weights 1 to 5 (target 2%)
 *	pick	ns per lookup (wall clock, indicative only) and the build
 *		of 5 and of 64 upstreams
 *
 * The schemes: rendezvous table (tenkd), Maglev (M = 65537, members by
 * name, weights by turns, rebuilt when one is down as Katran does),
 * rendezvous computed per key (no table), jump hashing (members by
 * name; no weights) and a ring of 160 points per unit of weight (as
 * nginx's "hash ... consistent").  Built and run by test/bench/chash.sh.
 *
 *	schemes [seeds]
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../../src/server/data/chash.c"

#define NKEYS		100000
#define MAXN		64
#define MAGLEV_M	65537
#define RING_POINTS	160

enum scheme { S_TABLE = 0, S_MAGLEV, S_HRW, S_JUMP, S_RING, S_N };

static const char *const scheme_names[S_N] = {
	"rendezvous table, 2^18 (tenkd)", "Maglev, 65537", "rendezvous per key",
	"jump", "ring, 160 points a weight",
};

/* A set of members: names and weights, by index. */
struct set {
	int		 n;
	const char	*name[MAXN];
	int		 weight[MAXN];
};

/* What a scheme has built from a set. */
struct built {
	struct set	 s;
	struct chash	 ch;			/* S_TABLE */
	int		*maglev;		/* S_MAGLEV */
	uint64_t	 seed[MAXN];		/* S_HRW */
	int		 byname[MAXN];		/* S_JUMP: sorted order */
	struct point {
		uint32_t	 h;
		int		 m;
	}		*ring;			/* S_RING */
	int		 nring;
};

struct key {
	uint32_t	 slot;			/* tenkd's */
	uint64_t	 h;			/* the others' */
};

static uint64_t
rng_next(uint64_t *r)
{
	*r += 0x9e3779b97f4a7c15ULL;
	return mix64(*r);
}

static int
by_name(const void *a, const void *b, void *s)
{
	const struct set	*set = s;

	return strcmp(set->name[*(const int *)a], set->name[*(const int *)b]);
}

static int
by_point(const void *a, const void *b)
{
	const struct point	*x = a, *y = b;

	return x->h < y->h ? -1 : x->h > y->h;
}

static double
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Maglev's population (Eisenbud et al. 2016, pseudo-code 1), weighted. */
static void
maglev_build(struct built *b)
{
	const struct set	*s = &b->s;
	uint64_t		 off[MAXN], skip[MAXN], next[MAXN];
	double			 credit[MAXN], wmax = 0;
	int			 order[MAXN], filled = 0, i, k;
	uint64_t		 c;

	b->maglev = malloc(MAGLEV_M * sizeof(*b->maglev));
	for (i = 0; i < MAGLEV_M; i++)
		b->maglev[i] = -1;
	for (i = 0; i < s->n; i++) {
		order[i] = i;
		off[i] = chash_seed(s->name[i]) % MAGLEV_M;
		skip[i] = mix64(chash_seed(s->name[i]) ^ 1) % (MAGLEV_M - 1) +
		    1;
		next[i] = 0;
		credit[i] = 0;
		if (s->weight[i] > wmax)
			wmax = s->weight[i];
	}
	qsort_r(order, s->n, sizeof(order[0]), by_name, (void *)s);
	for (;;)
		for (k = 0; k < s->n; k++) {
			i = order[k];
			credit[i] += s->weight[i] / wmax;
			if (credit[i] < 1)
				continue;
			credit[i] -= 1;
			do {
				c = (off[i] + next[i] * skip[i]) % MAGLEV_M;
				next[i]++;
			} while (b->maglev[c] != -1);
			b->maglev[c] = i;
			if (++filled == MAGLEV_M)
				return;
		}
}

static void
build(enum scheme sc, const struct set *s, struct built *b)
{
	struct chash_member	m[MAXN];
	char			buf[128];
	int			i, v;

	memset(b, 0, sizeof(*b));
	b->s = *s;
	for (i = 0; i < s->n; i++) {
		m[i].seed = b->seed[i] = chash_seed(s->name[i]);
		m[i].weight = s->weight[i];
		b->byname[i] = i;
	}
	switch (sc) {
	case S_TABLE:
		if (chash_build(&b->ch, m, s->n) == -1)
			abort();
		break;
	case S_MAGLEV:
		maglev_build(b);
		break;
	case S_JUMP:
		qsort_r(b->byname, s->n, sizeof(int), by_name, (void *)s);
		break;
	case S_RING:
		for (i = 0; i < s->n; i++)
			b->nring += RING_POINTS * s->weight[i];
		b->ring = malloc(b->nring * sizeof(*b->ring));
		b->nring = 0;
		for (i = 0; i < s->n; i++)
			for (v = 0; v < RING_POINTS * s->weight[i]; v++) {
				snprintf(buf, sizeof(buf), "%s-%d", s->name[i],
				    v);
				b->ring[b->nring].h =
				    (uint32_t)chash_seed(buf);
				b->ring[b->nring++].m = i;
			}
		qsort(b->ring, b->nring, sizeof(*b->ring), by_point);
		break;
	default:
		break;
	}
}

static void
unbuild(struct built *b)
{
	chash_free(&b->ch);
	free(b->maglev);
	free(b->ring);
}

/* The member a key goes to, as a name. */
static const char *
lookup(enum scheme sc, const struct built *b, const struct key *k)
{
	struct chash_member	x, y;
	int64_t			j = 0, bk = -1;
	uint64_t		h;
	int			i, best, lo, hi, mid;

	switch (sc) {
	case S_TABLE:
		return b->s.name[b->ch.slot[k->slot]];
	case S_MAGLEV:
		return b->s.name[b->maglev[k->h % MAGLEV_M]];
	case S_HRW:
		/* The table's order, over the key's own 64 bits. */
		best = 0;
		for (i = 1; i < b->s.n; i++) {
			x.seed = b->seed[i];
			x.weight = b->s.weight[i];
			y.seed = b->seed[best];
			y.weight = b->s.weight[best];
			if (chash_better(&x, &y, (uint32_t)k->h ^
			    (uint32_t)(k->h >> 32)))
				best = i;
		}
		return b->s.name[best];
	case S_JUMP:
		/* Lamping and Veach, 2014. */
		h = k->h;
		while (j < b->s.n) {
			bk = j;
			h = h * 2862933555777941757ULL + 1;
			j = (int64_t)((bk + 1) * ((double)(1LL << 31) /
			    (double)((h >> 33) + 1)));
		}
		return b->s.name[b->byname[bk]];
	default:
		lo = 0;
		hi = b->nring;
		while (lo < hi) {
			mid = (lo + hi) / 2;
			if (b->ring[mid].h < (uint32_t)(k->h >> 32))
				lo = mid + 1;
			else
				hi = mid;
		}
		return b->s.name[b->ring[lo == b->nring ? 0 : lo].m];
	}
}

/*
 * Down, for a table kept as it is: a key of the down member goes to the
 * next by chash_better (tenkd), or for Maglev to the owner of the next
 * slot that is not the down one's (a probe; Maglev itself rebuilds).
 */
static const char *
lookup_down(enum scheme sc, const struct built *b, const struct key *k,
    int down)
{
	struct chash_member	x, y;
	int			i, best = -1;
	uint32_t		s;

	if (sc != S_TABLE || b->ch.slot[k->slot] != down)
		return lookup(sc, b, k);
	s = k->slot;
	for (i = 0; i < b->s.n; i++) {
		if (i == down)
			continue;
		x.seed = b->seed[i];
		x.weight = b->s.weight[i];
		if (best != -1) {
			y.seed = b->seed[best];
			y.weight = b->s.weight[best];
		}
		if (best == -1 || chash_better(&x, &y, s))
			best = i;
	}
	return b->s.name[best];
}

struct fig {
	double	 add, rm, rm_others, down_others, spread, wspread, ns;
	double	 slots;		/* tenkd's: the table's own spread */
};

static void
figures(enum scheme sc, int seed, const struct key *keys, struct fig *f)
{
	static char		 names[MAXN][32];
	static const char	*own[NKEYS];
	struct set		 s5, s6, s4, sw;
	struct built		 b, b2;
	const char		*o;
	int			 cnt[MAXN], i, j, gone, moved, others;
	double			 t0, d;
	volatile uintptr_t	 sink = 0;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < 6; i++) {
		snprintf(names[i], sizeof(names[i]), "10.%d.0.%d:8080", seed,
		    i + 11);
		s6.name[i] = names[i];
		s6.weight[i] = 1;
	}
	s6.n = 6;
	s5 = s6;
	s5.n = 5;
	sw = s5;
	for (i = 0; i < 5; i++)
		sw.weight[i] = i + 1;

	build(sc, &s5, &b);
	for (i = 0; sc == S_TABLE && i < 5; i++) {
		d = fabs(b.ch.owned[i] * 5.0 / CHASH_SLOTS - 1);
		f->slots = d > f->slots ? d : f->slots;
	}
	memset(cnt, 0, sizeof(cnt));
	for (j = 0; j < NKEYS; j++) {
		own[j] = lookup(sc, &b, &keys[j]);
		cnt[(own[j][strlen(own[j]) - 6] - '1')]++;
	}
	for (i = 0; i < 5; i++) {
		d = fabs(cnt[i] * 5.0 / NKEYS - 1);
		f->spread = d > f->spread ? d : f->spread;
	}
	t0 = now_ms();
	for (i = 0; i < 10; i++)
		for (j = 0; j < NKEYS; j++)
			sink += (uintptr_t)lookup(sc, &b, &keys[j]);
	f->ns = (now_ms() - t0) * 1e6 / (10.0 * NKEYS);

	build(sc, &s6, &b2);
	for (moved = j = 0; j < NKEYS; j++)
		moved += strcmp(own[j], lookup(sc, &b2, &keys[j])) != 0;
	f->add = (double)moved / NKEYS;
	unbuild(&b2);

	for (gone = 0; gone < 5; gone++) {
		s4.n = 4;
		for (i = j = 0; i < 5; i++)
			if (i != gone) {
				s4.name[j] = s5.name[i];
				s4.weight[j++] = 1;
			}
		build(sc, &s4, &b2);
		for (moved = others = j = 0; j < NKEYS; j++) {
			o = lookup(sc, &b2, &keys[j]);
			if (strcmp(own[j], o) == 0)
				continue;
			moved++;
			others += own[j] != s5.name[gone];
		}
		d = (double)moved / NKEYS;
		f->rm = d > f->rm ? d : f->rm;
		d = (double)others / NKEYS;
		f->rm_others = d > f->rm_others ? d : f->rm_others;
		/* Down: a rebuild, but for tenkd, which passes it over. */
		for (others = j = 0; sc == S_TABLE && j < NKEYS; j++)
			others += own[j] != s5.name[gone] &&
			    strcmp(own[j], lookup_down(sc, &b, &keys[j],
			    gone)) != 0;
		d = (double)others / NKEYS;
		f->down_others = sc == S_TABLE ? d : f->rm_others;
		unbuild(&b2);
	}
	unbuild(&b);

	if (sc != S_JUMP) {
		build(sc, &sw, &b);
		memset(cnt, 0, sizeof(cnt));
		for (j = 0; j < NKEYS; j++) {
			o = lookup(sc, &b, &keys[j]);
			cnt[o[strlen(o) - 6] - '1']++;
		}
		for (i = 0; i < 5; i++) {
			d = fabs(cnt[i] * 15.0 / (i + 1) / NKEYS - 1);
			f->wspread = d > f->wspread ? d : f->wspread;
		}
		unbuild(&b);
	} else
		f->wspread = NAN;
	(void)sink;
}

/* The build of the table of n upstreams, in ms; weighted: 1 to 5. */
static double
build_ms(int n, int weighted)
{
	static char	names[MAXN][32];
	struct set	s;
	struct built	b;
	double		t0, t;
	int		i;

	s.n = n;
	for (i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "10.0.%d.1:8080", i);
		s.name[i] = names[i];
		s.weight[i] = weighted ? i % 5 + 1 : 1;
	}
	t0 = now_ms();
	build(S_TABLE, &s, &b);
	t = now_ms() - t0;
	unbuild(&b);
	return t;
}

int
main(int argc, char *argv[])
{
	struct sockaddr_in6	 sa;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&sa;
	static struct key	 keys[NKEYS];
	struct fig		 f, mean[S_N], worst[S_N];
	uint64_t		 r;
	int			 seeds = argc > 1 ? atoi(argv[1]) : 10;
	int			 sd, sc, j;

	if (seeds < 1 || seeds > 200) {
		fprintf(stderr, "usage: schemes [seeds: 1 to 200]\n");
		return 2;
	}
	memset(mean, 0, sizeof(mean));
	memset(worst, 0, sizeof(worst));
	memset(&sa, 0, sizeof(sa));
	for (sd = 1; sd <= seeds; sd++) {
		r = (uint64_t)sd;
		for (j = 0; j < NKEYS; j++) {
			sin->sin_family = AF_INET;
			sin->sin_addr.s_addr = (uint32_t)rng_next(&r);
			keys[j].slot = chash_addr(&sa, 0);
			keys[j].h = mix64(sin->sin_addr.s_addr ^
			    0x5851f42d4c957f2dULL);
		}
		for (sc = 0; sc < S_N; sc++) {
			figures(sc, sd, keys, &f);
#define ACC(x) do {							\
	mean[sc].x += f.x / seeds;					\
	worst[sc].x = f.x > worst[sc].x || isnan(f.x) ? f.x : worst[sc].x; \
} while (0)
			ACC(add);
			ACC(rm);
			ACC(rm_others);
			ACC(down_others);
			ACC(spread);
			ACC(wspread);
			ACC(ns);
			ACC(slots);
		}
	}
	printf("%d seeds of 5 upstreams and %d clients; mean (worst)\n\n",
	    seeds, NKEYS);
	printf("| scheme | add one: moved (<= 18.33%%) | remove one: moved "
	    "(<= 22%%) | of which not its keys (0) | one down: not its "
	    "keys moved (0) | spread, equal (+-2%%) | spread, 1:2:3:4:5 | "
	    "ns a pick |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: "
	    "| ---: |\n");
	for (sc = 0; sc < S_N; sc++)
		printf("| %s | %.2f%% (%.2f%%) | %.2f%% (%.2f%%) | %.3f%% "
		    "(%.3f%%) | %.3f%% (%.3f%%) | %.2f%% (%.2f%%) | "
		    "%.2f%% (%.2f%%) | %.0f |\n", scheme_names[sc],
		    100 * mean[sc].add, 100 * worst[sc].add, 100 * mean[sc].rm,
		    100 * worst[sc].rm, 100 * mean[sc].rm_others,
		    100 * worst[sc].rm_others, 100 * mean[sc].down_others,
		    100 * worst[sc].down_others, 100 * mean[sc].spread,
		    100 * worst[sc].spread, 100 * mean[sc].wspread,
		    100 * worst[sc].wspread, mean[sc].ns);
	printf("\ntenkd's table: its slots of 5 equal upstreams %.2f%% "
	    "(%.2f%%) from 1/5; built in %.1f ms for 5 upstreams, %.1f ms "
	    "for 64, %.1f ms for 64 of weights 1 to 5; %u KiB\n",
	    100 * mean[S_TABLE].slots, 100 * worst[S_TABLE].slots,
	    build_ms(5, 0), build_ms(64, 0), build_ms(64, 1),
	    CHASH_SLOTS / 1024);
	return 0;
}
