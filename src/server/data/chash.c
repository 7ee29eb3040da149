/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Consistent hashing for --balance hash: the table that says which
 * upstream a client's key goes to, the same in every tenkd given the
 * same set of upstreams whatever the order of its list, and moving as
 * few keys as can be when the set changes.  Which upstreams are up, and
 * what a pick does with the answer, are upstream.c's.
 *
 * It is rendezvous (highest random weight) hashing computed ahead: a
 * key hashes to one of CHASH_SLOTS slots, and each slot belongs to the
 * member with the highest score for it, a function of the member's
 * name, its weight and the slot and of nothing else.  So:
 *  - the table is the same whatever the order of the members;
 *  - removing a member moves only the slots it owned, each to the
 *    member next best for it; adding one moves only the slots it now
 *    wins, each to it;
 *  - a member that is down is passed over the same way: the caller
 *    takes, by chash_better(), the best of the members up for the
 *    slot, which is the owner a table built without the down one would
 *    have.  A health change needs no new table and moves only the keys
 *    of the member that went down, for as long as it is down; a pick
 *    for one of those keys scores every member (a hash each, and a
 *    logarithm where weights differ) where others take one lookup.
 *
 * Weights: a member's score for a slot is w / -ln(u), u uniform in
 * (0, 1) from a hash of its name and the slot, which makes its chance
 * at each slot w over the sum of the weights (the "logarithmic method"
 * of Schindelhauer and Schomaker, 2005).  Members of one weight are
 * ordered by u alone, so a set of equal weights builds without a
 * logarithm.
 *
 * What it costs is spread: each slot is a draw, so a member's count of
 * slots is binomial; with 2^18 slots a fifth is 20% +- 0.08 points (one
 * sigma, 0.4% of the share), under the 0.6% that 100,000 clients spread
 * by themselves, for 256 KiB and a build of tens of milliseconds.
 * Maglev (Eisenbud et al., NSDI 2016) fills its table by turns, which
 * makes the shares exact to a slot, but then a change of the set moves
 * some keys between members that stayed too (0.1% to 0.2% of all for
 * one of five removed); jump hashing moves most keys when any but the
 * last member goes; a ring of 160 points a member (ketama, nginx's
 * "consistent") is off by 10% and more.  docs/BENCHMARKS.md has the
 * figures of each.
 *
 * Every hash here is fixed, with no seed of the process's, and computed
 * from numbers rather than from memory's byte order, so that tenkd on
 * another machine (of either byte order) builds the same table.  The
 * logarithm is the C library's: two that round one differently could
 * part only on a slot whose two best scores of unequal weights are
 * within a rounding of each other, some 2^-50 of them.  A client that
 * knows the upstreams' names can choose its slot; a proxy has nothing
 * to keep from it by that.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../tenkd.h"

/* MurmurHash3's 64-bit finaliser: a bijection, every bit to every bit. */
static uint64_t
mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* The 64 bits of a big-endian word at p, on any machine. */
static uint64_t
be64(const unsigned char *p)
{
	uint64_t	v = 0;
	int		i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/*
 * A member's seed: a hash of its name (FNV-1a 64, then mixed), from
 * which its hash for each slot follows.  Any thread.
 */
uint64_t
chash_seed(const char *name)
{
	uint64_t	h = 0xcbf29ce484222325ULL;

	for (; *name != '\0'; name++) {
		h ^= (unsigned char)*name;
		h *= 0x100000001b3ULL;
	}
	return mix64(h);
}

/*
 * The slot of a client address: an IPv4 one by its 4 bytes, an IPv6 one
 * by its 16 (an IPv4-mapped one as the IPv4 address, so that a
 * dual-stack listener and an IPv4 one agree), and its port too when
 * port is set.  An address of another family (unknown) goes to one
 * slot.  Any thread.
 */
uint32_t
chash_addr(const struct sockaddr_in6 *sa, int port)
{
	const struct sockaddr_in	*sin = (const struct sockaddr_in *)sa;
	const unsigned char		*a6 = sa->sin6_addr.s6_addr;
	uint64_t			 h, p = 0;

	switch (sa->sin6_family) {
	case AF_INET:
		if (port)
			p = (uint64_t)ntohs(sin->sin_port) << 32 | 1ULL << 48;
		h = mix64(ntohl(sin->sin_addr.s_addr) | p);
		break;
	case AF_INET6:
		if (port)
			p = (uint64_t)ntohs(sa->sin6_port) << 32 | 1ULL << 48;
		if (IN6_IS_ADDR_V4MAPPED(&sa->sin6_addr)) {
			h = mix64((uint64_t)a6[12] << 24 | a6[13] << 16 |
			    a6[14] << 8 | a6[15] | p);
			break;
		}
		h = mix64(mix64(be64(a6) ^ 0x6a09e667f3bcc909ULL) ^
		    be64(a6 + 8) ^ p << 8);
		break;
	default:
		h = 0;
		break;
	}
	return (uint32_t)(h >> (64 - CHASH_BITS));
}

/* A member's hash for a slot, uniform over 64 bits. */
static uint64_t
slot_hash(uint64_t seed, uint32_t slot)
{
	return mix64(seed ^ slot);
}

/* The score of weight w with slot hash h: w / -ln(u), u in (0, 1). */
static double
score(int w, uint64_t h)
{
	double	u = ((double)(h >> 11) + 0.5) / 9007199254740992.0;

	return w / -log(u);
}

/*
 * Whether (wa, ha, sa) outranks (wb, hb, sb): by score, then by slot
 * hash, then by seed, which is a total order.  Of one weight, the score
 * rises with the hash, so the hash alone orders them and no logarithm
 * is taken.
 */
static int
outranks(int wa, uint64_t ha, uint64_t sa, int wb, uint64_t hb,
    uint64_t sb)
{
	double	xa, xb;

	if (wa != wb) {
		xa = score(wa, ha);
		xb = score(wb, hb);
		if (xa != xb)
			return xa > xb;
	}
	if (ha != hb)
		return ha > hb;
	return sa > sb;
}

/*
 * Whether member a outranks member b for slot: the order the table was
 * built by, for the caller to pass over members that are down (or
 * backups, or tried) and find the one a table without them would give.
 * Weights of 0 count here as given.  Any thread.
 */
int
chash_better(const struct chash_member *a, const struct chash_member *b,
    uint32_t slot)
{
	return outranks(a->weight, slot_hash(a->seed, slot), a->seed,
	    b->weight, slot_hash(b->seed, slot), b->seed);
}

/*
 * Build ch from the n members m (at most MAXUPSTREAMS, their indexes
 * the owners the table holds): each slot to the best member of weight
 * above 0, of which there must be one.  For each slot the best of each
 * weight is found by hash alone, then those few are compared by score.
 * Returns 0, or -1 with errno ENOMEM (ch is then empty).  ch is the
 * caller's, its table to be freed by chash_free(); start-up only, as it
 * takes tens of milliseconds (docs/BENCHMARKS.md).
 */
int
chash_build(struct chash *ch, const struct chash_member *m, int n)
{
	int		 w[MAXUPSTREAMS], cls[MAXUPSTREAMS], best[MAXUPSTREAMS];
	uint64_t	 h[MAXUPSTREAMS];
	uint32_t	 slot;
	int		 i, k, b, nw = 0;

	assert(n > 0 && n <= MAXUPSTREAMS);
	memset(ch, 0, sizeof(*ch));
	if ((ch->slot = malloc(CHASH_SLOTS)) == NULL)
		return -1;
	/* The distinct weights, and each member's among them (-1: none). */
	for (i = 0; i < n; i++) {
		cls[i] = -1;
		if (m[i].weight <= 0)
			continue;
		for (k = 0; k < nw && w[k] != m[i].weight; k++)
			;
		if (k == nw)
			w[nw++] = m[i].weight;
		cls[i] = k;
	}
	assert(nw > 0);
	for (slot = 0; slot < CHASH_SLOTS; slot++) {
		for (k = 0; k < nw; k++)
			best[k] = -1;
		for (i = 0; i < n; i++) {
			if ((k = cls[i]) == -1)
				continue;
			h[i] = slot_hash(m[i].seed, slot);
			b = best[k];
			if (b == -1 || h[i] > h[b] ||
			    (h[i] == h[b] && m[i].seed > m[b].seed))
				best[k] = i;
		}
		b = best[0];
		for (k = 1; k < nw; k++)
			if (outranks(w[k], h[best[k]], m[best[k]].seed,
			    m[b].weight, h[b], m[b].seed))
				b = best[k];
		ch->slot[slot] = (uint8_t)b;
		ch->owned[b]++;
	}
	return 0;
}

/* Free ch's table and forget its counts; ch may be empty. */
void
chash_free(struct chash *ch)
{
	free(ch->slot);
	memset(ch, 0, sizeof(*ch));
}
