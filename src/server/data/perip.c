/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --max-conns-per-ip: how many sessions each client address has open.
 * One entry per address with a session open, in a red-black tree keyed
 * by family and address (tree.h): it holds the addresses connected now
 * and no more, an entry freed when its count drops to 0, and a lookup
 * stays O(log n) however many clients come, where a fixed table of
 * hash chains would grow long under a wide scan.  IPv4 and IPv6 are
 * kept apart, an IPv4-mapped IPv6 address (a dual-stack listener)
 * counting as IPv6.  The threads of the process share the tree under
 * one mutex, taken once per accept and close.  A refusal is counted and
 * logged (at most once a second) through worker_cap().  XXX With
 * --workers the cap is per process; a shared count would need memory
 * the master maps for its workers.
 */
#include <sys/socket.h>
#include <sys/tree.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tenk/log.h"
#include "../tenkd.h"

struct perip {
	RB_ENTRY(perip)	 entry;
	long long	 n;		/* sessions open */
	sa_family_t	 family;	/* AF_UNSPEC: address unknown */
	unsigned char	 addr[16];	/* in_addr or in6_addr */
};

RB_HEAD(perip_tree, perip);

static int	perip_cmp(const struct perip *, const struct perip *);

/*
 * RB_GENERATE_STATIC marks its functions __unused, which libbsd leaves
 * undefined (Linux headers name struct members so): say it ourselves,
 * or the finders we never call warn.
 */
RB_GENERATE_INTERNAL(perip_tree, perip, entry, perip_cmp,
    __attribute__((__unused__)) static)

static struct perip_tree perip_root = RB_INITIALIZER(&perip_root);
static pthread_mutex_t	 perip_mtx = PTHREAD_MUTEX_INITIALIZER;

/* Bytes of the address that count for a family. */
static size_t
addr_len(sa_family_t family)
{
	switch (family) {
	case AF_INET:
		return sizeof(struct in_addr);
	case AF_INET6:
		return sizeof(struct in6_addr);
	}
	return 0;
}

static int
perip_cmp(const struct perip *a, const struct perip *b)
{
	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	return memcmp(a->addr, b->addr, addr_len(a->family));
}

/* The key for sa (a sockaddr_in or sockaddr_in6, or any other family). */
static void
perip_key(struct perip *k, const struct sockaddr_in6 *sa)
{
	memset(k, 0, sizeof(*k));
	switch (sa->sin6_family) {
	case AF_INET:
		k->family = AF_INET;
		memcpy(k->addr, &((const struct sockaddr_in *)sa)->sin_addr,
		    sizeof(struct in_addr));
		break;
	case AF_INET6:
		k->family = AF_INET6;
		memcpy(k->addr, &sa->sin6_addr, sizeof(struct in6_addr));
		break;
	default:
		k->family = AF_UNSPEC;	/* all unknown peers share one */
		break;
	}
}

/* A refusal at the cap: counted, and logged at most once a second. */
static void
perip_refused(const struct perip *k, long long max)
{
	char		host[INET6_ADDRSTRLEN];
	uint64_t	skipped;

	if (!worker_cap(CAP_PERIP, &skipped))
		return;
	if (k->family == AF_UNSPEC ||
	    inet_ntop(k->family, k->addr, host, sizeof(host)) == NULL)
		strlcpy(host, "?", sizeof(host));
	log_warnx("client %s reached --max-conns-per-ip %lld: session "
	    "refused (%llu similar suppressed)", host, max,
	    (unsigned long long)skipped);
}

/*
 * Count one more session from sa, a sockaddr_in or sockaddr_in6 (any
 * other family shares one count), unless max are open already.
 * Returns 0, or -1 with errno EUSERS at the cap (counted and logged) or
 * ENOMEM.  Any thread.
 */
int
perip_take(const struct sockaddr_in6 *sa, long long max)
{
	struct perip	 key, *e;
	int		 rv = 0, refused = 0;

	assert(max > 0);
	perip_key(&key, sa);
	pthread_mutex_lock(&perip_mtx);
	if ((e = RB_FIND(perip_tree, &perip_root, &key)) == NULL) {
		if ((e = malloc(sizeof(*e))) == NULL) {
			rv = -1;
			goto out;
		}
		*e = key;
		RB_INSERT(perip_tree, &perip_root, e);
	}
	if (e->n >= max) {
		refused = 1;
		rv = -1;
	} else
		e->n++;
 out:
	pthread_mutex_unlock(&perip_mtx);
	if (refused) {
		perip_refused(&key, max);
		errno = EUSERS;
	}
	return rv;
}

/*
 * Count one session from sa fewer, freeing its entry at 0.  Call once
 * for each perip_take() that returned 0, with the same address.  Any
 * thread.
 */
void
perip_put(const struct sockaddr_in6 *sa)
{
	struct perip	 key, *e;

	perip_key(&key, sa);
	pthread_mutex_lock(&perip_mtx);
	e = RB_FIND(perip_tree, &perip_root, &key);
	assert(e != NULL && e->n > 0);
	if (--e->n == 0) {
		RB_REMOVE(perip_tree, &perip_root, e);
		free(e);
	}
	pthread_mutex_unlock(&perip_mtx);
}
