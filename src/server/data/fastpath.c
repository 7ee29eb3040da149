/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fast path: the kernel forwards an established session's bytes
 * from one TCP socket to the other (a BPF sockhash and its stream
 * verdict program, fastpath.bpf.c), Linux's counterpart of OpenBSD's
 * SO_SPLICE.  This file loads the program, puts sockets into its maps
 * and keeps one direction of a stream exact; what a session does with
 * it is pxfast.c's.  Nothing here knows a worker, so the unit tests run
 * it on plain sockets.
 *
 * A direction (struct fp_dir) is bytes received on a source socket and
 * sent on a destination.  Once both are in the sockhash, the program
 * decides per segment the source receives: redirect it to the
 * destination's send path (the kernel queues it on the destination's
 * psock and a work item sends it), or pass it to the source's receive
 * queue, where recv(2) finds it.  It redirects only while
 *
 *	passed == taken		tenkd has read every byte passed so far
 *	bytes + len <= allow	and the window granted has room
 *	segs < allow_segs	(also in segments: a 64-byte segment holds
 *				 a kilobyte of kernel memory)
 *
 * and tenkd grants (fastpath_grant) only with nothing of its own
 * queued toward the destination and nothing in flight in the redirect.
 * That is what keeps every byte in order:
 *
 * - the pair (fastpath_pair) takes only sockets with nothing unread:
 *   the kernel hands the program whole segments, so a segment read part
 *   way would come again whole.  So every byte tenkd reads after the
 *   pair was passed, and taken is what it has read since.
 * - a byte passed is read by tenkd before any later byte is redirected:
 *   a segment passed and not yet read, wherever it waits, makes passed
 *   differ from taken, and the program passes on until the next grant.
 * - a byte tenkd sends itself goes out after every redirected byte:
 *   when the source turns readable (a segment passed, a FIN, an RST, or
 *   a segment the program is judging right then) tenkd revokes the
 *   grant and takes the source's socket lock once, which the program
 *   runs under (fastpath_revoke): from then on nothing is redirected
 *   and fp_out.bytes is final.  tenkd sends only once the redirect has
 *   drained (fastpath_drained: the destination's bytes written,
 *   tcp_info's bytes_acked plus SIOCOUTQ, have caught up with the bytes
 *   redirected).
 * - a FIN (recv 0), an RST or an error on the source reaches tenkd as on
 *   any socket: the source turns readable, tenkd revokes, waits for the
 *   drain, then reads and acts as the copying path does, so the FIN is
 *   passed on after the last redirected byte.
 *
 * Backpressure: a grant allows at most what the destination's send
 * queue can take at that moment (its send buffer less what is queued,
 * less a quarter for the kernel's overhead), and at most a window and
 * FP_SEGS segments; past it the program passes, the bytes wait in the
 * source's queues and tenkd reads them as its buffers allow.  So the
 * redirect never holds a segment that the destination's send queue
 * cannot take.  That matters beyond memory: the destination's psock has
 * one queue for the segments redirected to it and the segments it
 * receives itself and the program passes, so a redirected segment
 * stuck behind a peer that does not read would hold back the other
 * direction for good (integ/proxy_fastpath_duplex).  A destination too
 * full to take FP_GRANT_MIN is not granted: tenkd copies.
 *
 * Not exact on Linux 6.18 under load, whatever tenkd does: a segment
 * the program passes can reach recv(2) twice, the next segment's bytes
 * being the previous one's again (65,483 bytes back, one loopback
 * segment; 4 x 64 MiB echo sessions, 1 to 7 runs in 60 at load 10-16,
 * also with sessions in the map that were never granted, and never with
 * the same sessions copying outside the map).  Hence off by default.
 *
 * Falling back is not granting again: the program then passes every
 * segment, and tenkd reads them as on any socket.  A direction whose
 * grant fails (a map update refused) falls back with its bytes exact.
 *
 * Not used on io_uring's completions (dpcq.c), whose multishot receive
 * would read a passed segment before the redirect has drained.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
/* Not <netinet/tcp.h>: glibc's struct tcp_info lacks tcpi_bytes_acked. */
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <linux/tcp.h>

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fastpath.h"

#ifdef TENK_HAVE_FASTPATH
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fastpath.skel.h"

static struct fastpath	*skel;

static void	fastpath_unload(void);
static int		 fd_socks = -1, fd_ctl = -1, fd_out = -1;
static int		 bymap;		/* FP_O_SOCKMAP */

/* libbpf's messages: none on stderr; the caller says one line. */
static int
quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/*
 * Load the program and create its maps for up to maxsocks sockets,
 * before privileges are dropped (BPF needs CAP_BPF and CAP_NET_ADMIN,
 * or root).  opts: FP_O_* for the measurements.  Returns 0, or -1 with
 * errno set and a reason in why (size bytes).
 */
int
fastpath_load(int maxsocks, unsigned int opts, char *why, size_t size)
{
	struct bpf_program	*verdict;
	struct bpf_map		*socks;
	int			 err;

	if (skel != NULL)
		return 0;
	libbpf_set_print(quiet);
	if ((skel = fastpath__open()) == NULL) {
		err = errno;
		snprintf(why, size, "opening the BPF object: %s",
		    strerror(err));
		goto fail;
	}
	bymap = (opts & FP_O_SOCKMAP) != 0;
	verdict = bymap ? skel->progs.fp_verdict_map : skel->progs.fp_verdict;
	socks = bymap ? skel->maps.fp_sockmap : skel->maps.fp_socks;
	(void)bpf_program__set_autoload(bymap ? skel->progs.fp_verdict :
	    skel->progs.fp_verdict_map, 0);
	if (!(opts & FP_O_PARSER))
		(void)bpf_program__set_autoload(skel->progs.fp_parser, 0);
	skel->rodata->fp_flags = (opts & FP_O_INGRESS) ? BPF_F_INGRESS : 0;
	if (bpf_map__set_max_entries(skel->maps.fp_socks,
	    bymap ? 1 : maxsocks) != 0 ||
	    bpf_map__set_max_entries(skel->maps.fp_sockmap,
	    bymap ? maxsocks : 1) != 0 ||
	    bpf_map__set_max_entries(skel->maps.fp_ctl, maxsocks) != 0 ||
	    bpf_map__set_max_entries(skel->maps.fp_out, maxsocks) != 0) {
		err = errno;
		snprintf(why, size, "sizing the maps: %s", strerror(err));
		goto fail;
	}
	if ((err = fastpath__load(skel)) != 0) {
		err = -err;
		snprintf(why, size, "loading the BPF program: %s%s",
		    strerror(err), err == EPERM ? " (needs CAP_BPF and "
		    "CAP_NET_ADMIN, or root)" : "");
		goto fail;
	}
	fd_socks = bpf_map__fd(socks);
	fd_ctl = bpf_map__fd(skel->maps.fp_ctl);
	fd_out = bpf_map__fd(skel->maps.fp_out);
	if ((opts & FP_O_PARSER) && bpf_prog_attach(bpf_program__fd(
	    skel->progs.fp_parser), fd_socks, BPF_SK_SKB_STREAM_PARSER, 0) ==
	    -1) {
		err = errno;
		snprintf(why, size, "attaching the parser: %s", strerror(err));
		goto fail;
	}
	if (bpf_prog_attach(bpf_program__fd(verdict), fd_socks,
	    BPF_SK_SKB_STREAM_VERDICT, 0) == -1) {
		err = errno;
		snprintf(why, size, "attaching the verdict program: %s",
		    strerror(err));
		goto fail;
	}
	return 0;

 fail:
	fastpath_unload();
	errno = err;
	return -1;
}

/* Unload after a failed load: what was made of the program goes. */
static void
fastpath_unload(void)
{
	if (skel != NULL)
		fastpath__destroy(skel);
	skel = NULL;
	fd_socks = fd_ctl = fd_out = -1;
}

/*
 * The kernel memory the maps hold, from their fdinfo's memlock (what
 * the kernel charges for them, preallocated at load): bytes, 0 if not
 * loaded or not known.
 */
size_t
fastpath_mem(void)
{
	struct bpf_map	*m;
	char		 path[64], line[128];
	FILE		*f;
	size_t		 sum = 0;
	unsigned long long n;

	if (skel == NULL)
		return 0;
	bpf_object__for_each_map(m, skel->obj) {
		if (bpf_map__fd(m) < 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d",
		    bpf_map__fd(m));
		if ((f = fopen(path, "re")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL)
			if (sscanf(line, "memlock: %llu", &n) == 1)
				sum += (size_t)n;
		fclose(f);
	}
	return sum;
}

static int
cookie_cmp(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Drop the entries of sockets that left the sockhash without their
 * entries (a worker process killed with sessions in the map: each
 * socket leaves the sockhash as it closes, its fp_ctl and fp_out
 * entries stay).  An entry whose socket is not in the sockhash is
 * dropped only if it was so at the last call too: fastpath_pair makes
 * the entries just before the socket goes in, so callers space their
 * calls (a second at least) and never catch a pair in the middle.
 * Returns the entries dropped, or -1 with errno.
 */
int
fastpath_sweep(void)
{
	static uint64_t	*was;
	static size_t	 nwas;
	uint64_t	*now = NULL, *p, key, next, cookie;
	size_t		 n = 0, cap = 0, i;
	int		 dropped = 0, r;

	if (skel == NULL || bymap) {
		errno = ENOSYS;
		return -1;
	}
	for (r = bpf_map_get_next_key(fd_out, NULL, &next); r == 0;
	    r = bpf_map_get_next_key(fd_out, &key, &next)) {
		key = next;
		if (bpf_map_lookup_elem(fd_socks, &key, &cookie) == 0 ||
		    errno != ENOENT)
			continue;
		if (n == cap) {
			cap = cap == 0 ? 64 : cap * 2;
			if ((p = reallocarray(now, cap, sizeof(*now))) ==
			    NULL) {
				free(now);
				return -1;
			}
			now = p;
		}
		now[n++] = key;
	}
	for (i = 0; i < n; i++) {
		if (was == NULL || bsearch(&now[i], was, nwas, sizeof(*was),
		    cookie_cmp) == NULL)
			continue;
		(void)bpf_map_delete_elem(fd_ctl, &now[i]);
		if (bpf_map_delete_elem(fd_out, &now[i]) == 0)
			dropped++;
	}
	if (n > 0)
		qsort(now, n, sizeof(*now), cookie_cmp);
	free(was);
	was = now;
	nwas = n;
	return dropped;
}

/* What the program did with src's bytes; 0, or -1 with errno. */
int
fastpath_out(const struct fp_dir *d, struct fp_out *out)
{
	return bpf_map_lookup_elem(fd_out, &d->cookie, out) == 0 ? 0 : -1;
}

static int
put_ctl(const struct fp_dir *d, uint64_t taken, uint64_t allow,
    uint64_t segs)
{
	struct fp_ctl	ctl = {
		.peer = d->peer, .taken = taken, .allow = allow,
		.allow_segs = segs,
	};

	return bpf_map_update_elem(fd_ctl, &d->cookie, &ctl, BPF_ANY) == 0 ?
	    0 : -1;
}

/*
 * Put the sockets of both directions of a stream into the maps: d[0]
 * from a to b, d[1] from b to a, slots sa and sb (the sockmap's index
 * when measuring it; else unused).  Both start passing every segment
 * until fastpath_grant.  Neither socket may hold a byte not yet read
 * (SIOCINQ): the kernel hands the verdict program whole segments from
 * the receive queue, so a segment read part way would come again whole
 * (unit/fastpath_pair_partial); EAGAIN then, to try once read.  The
 * caller sets each direction's rbase, the bytes it has read from the
 * source so far.  Returns 0, or -1 with errno and nothing left in the
 * maps.
 */
int
fastpath_pair(int a, int b, uint32_t sa, uint32_t sb, struct fp_dir *d)
{
	struct fp_out	zero;
	uint64_t	ca, cb, fa = (uint64_t)a, fb = (uint64_t)b;
	socklen_t	len = sizeof(ca);
	int		err, i, na, nb;

	memset(&zero, 0, sizeof(zero));
	memset(d, 0, 2 * sizeof(*d));
	if (ioctl(a, SIOCINQ, &na) == -1 || ioctl(b, SIOCINQ, &nb) == -1)
		return -1;
	if (na != 0 || nb != 0) {
		errno = EAGAIN;
		return -1;
	}
	if (getsockopt(a, SOL_SOCKET, SO_COOKIE, &ca, &len) == -1 ||
	    getsockopt(b, SOL_SOCKET, SO_COOKIE, &cb, &len) == -1)
		return -1;
	d[0].cookie = ca;
	d[1].cookie = cb;
	d[0].peer = bymap ? sb : cb;
	d[1].peer = bymap ? sa : ca;
	for (i = 0; i < 2; i++)
		if (bpf_map_update_elem(fd_out, &d[i].cookie, &zero,
		    BPF_NOEXIST) != 0 || put_ctl(&d[i], UINT64_MAX, 0, 0) ==
		    -1)
			goto fail;
	if (bymap) {
		if (bpf_map_update_elem(fd_socks, &sa, &fa, BPF_ANY) != 0 ||
		    bpf_map_update_elem(fd_socks, &sb, &fb, BPF_ANY) != 0)
			goto fail;
	} else if (bpf_map_update_elem(fd_socks, &ca, &fa, BPF_NOEXIST) !=
	    0 || bpf_map_update_elem(fd_socks, &cb, &fb, BPF_NOEXIST) != 0)
		goto fail;
	return 0;

 fail:
	err = errno;
	/*
	 * A socket that went in leaves with its close; until then it
	 * passes every segment, having no grant.
	 */
	fastpath_forget(d);
	errno = err;
	return -1;
}

/* Drop both directions' entries; their sockets are closed or closing. */
void
fastpath_forget(struct fp_dir *d)
{
	int	i;

	for (i = 0; i < 2; i++) {
		(void)bpf_map_delete_elem(fd_ctl, &d[i].cookie);
		(void)bpf_map_delete_elem(fd_out, &d[i].cookie);
	}
}
#else /* !TENK_HAVE_FASTPATH */
int
fastpath_load(int maxsocks, unsigned int opts, char *why, size_t size)
{
	(void)maxsocks;
	(void)opts;
	snprintf(why, size, "not built in (make needs clang, libbpf-dev and "
	    "bpftool)");
	errno = ENOSYS;
	return -1;
}

size_t
fastpath_mem(void)
{
	return 0;
}

int
fastpath_sweep(void)
{
	errno = ENOSYS;
	return -1;
}

int
fastpath_out(const struct fp_dir *d, struct fp_out *out)
{
	(void)d;
	memset(out, 0, sizeof(*out));
	errno = ENOSYS;
	return -1;
}

static int
put_ctl(const struct fp_dir *d, uint64_t taken, uint64_t allow,
    uint64_t segs)
{
	(void)d;
	(void)taken;
	(void)allow;
	(void)segs;
	errno = ENOSYS;
	return -1;
}

int
fastpath_pair(int a, int b, uint32_t sa, uint32_t sb, struct fp_dir *d)
{
	(void)a;
	(void)b;
	(void)sa;
	(void)sb;
	(void)d;
	errno = ENOSYS;
	return -1;
}

void
fastpath_forget(struct fp_dir *d)
{
	(void)d;
}
#endif /* TENK_HAVE_FASTPATH */

/*
 * The bytes ever written into fd's send queue (by tenkd or by a
 * redirect), plus a constant: tcp_info's bytes_acked (Linux 4.1) and
 * SIOCOUTQ (write_seq - snd_una).  Read as acked, unsent, acked again
 * until both acked readings agree, so that no ACK fell between them and
 * the sum is exact at the time of the SIOCOUTQ.  0, or -1 with errno.
 */
int
fastpath_written(int fd, uint64_t *n)
{
	struct tcp_info	ti;
	socklen_t	len;
	uint64_t	acked;
	int		outq, tries;

	for (tries = 0; tries < 100; tries++) {
		len = sizeof(ti);
		if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == -1)
			return -1;
		acked = ti.tcpi_bytes_acked;
		if (ioctl(fd, SIOCOUTQ, &outq) == -1)
			return -1;
		len = sizeof(ti);
		if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == -1)
			return -1;
		if (ti.tcpi_bytes_acked == acked) {
			*n = acked + (uint64_t)outq;
			return 0;
		}
	}
	errno = EAGAIN;
	return -1;
}

/*
 * The bytes dst's send queue can still take (SO_MEMINFO: the send
 * buffer less what is queued, both in the kernel's own accounting), in
 * *room; 0, or -1 with errno.
 */
static int
send_room(int dst, uint64_t *room)
{
	uint32_t	mi[SK_MEMINFO_VARS];
	socklen_t	len = sizeof(mi);

	if (getsockopt(dst, SOL_SOCKET, SO_MEMINFO, mi, &len) == -1)
		return -1;
	*room = mi[SK_MEMINFO_SNDBUF] > mi[SK_MEMINFO_WMEM_QUEUED] ?
	    mi[SK_MEMINFO_SNDBUF] - mi[SK_MEMINFO_WMEM_QUEUED] : 0;
	return 0;
}

/*
 * Hand direction d (src to dst) to the kernel: with nothing of tenkd's
 * queued toward dst, nothing in the redirect, and nread the bytes tenkd
 * has ever read from src, allow at most window more bytes in at most
 * segs more segments (FP_SEGS).  Returns 1 granted, 0 not now (dst's
 * send queue is too full to take a grant), -1 with errno (the
 * direction stays with tenkd).
 *
 * taken, the bytes passed that tenkd has read, is what it read from src
 * since the pair: the pair found src with nothing unread, so every byte
 * read since went through the program and was passed.  Passed bytes not
 * yet read, wherever they wait (the receive queue, the psock's queues),
 * make passed differ from taken, and the program passes on.
 *
 * The grant is also held to what dst's send queue can take now, less a
 * quarter for the kernel's overhead per buffer: the redirect queues its
 * segments on dst's psock, ahead of the segments dst itself receives
 * and the program passes (one queue for both), so a segment that dst's
 * send queue cannot take would hold back the other direction's passed
 * bytes until dst's peer reads, which it may never do while it waits
 * for them (a client that sends and reads only at the end).
 */
int
fastpath_grant(int src, int dst, struct fp_dir *d, uint64_t window,
    uint64_t segs, uint64_t nread)
{
	struct fp_out	out;
	uint64_t	room;

	(void)src;
	if (fastpath_out(d, &out) == -1 || send_room(dst, &room) == -1)
		return -1;
	room -= room / 4;
	if (window > room)
		window = room;
	if (segs > room / FP_SEG_COST)
		segs = room / FP_SEG_COST;
	if (window < FP_GRANT_MIN || segs == 0)
		return 0;
	if (fastpath_written(dst, &d->base) == -1)
		return -1;
	d->bbase = out.bytes;
	d->taken = nread - d->rbase;
	if (put_ctl(d, d->taken, out.bytes + window, out.segs + segs) == -1)
		return -1;
	d->granted = 1;
	return 1;
}

/*
 * Take direction d back from the kernel: 1 when, from the return, the
 * program redirects nothing more and fp_out.bytes is final; 0 not yet
 * (look again later); -1 with errno.  The program runs with src's
 * socket lock held (in softirq, or in a recv); a readable src may be a
 * segment it is judging at that very moment, to be redirected still.
 * So the grant is replaced by none, then src's lock taken once (a
 * SIOCINQ): a run that read the old grant has ended, and every later
 * one reads the new.  Where the map refuses the update, the program
 * still stops by itself once it has passed a segment under the grant
 * (passed then differs from taken for good), and after a FIN or an RST
 * no segment comes.
 */
int
fastpath_revoke(int src, struct fp_dir *d)
{
	struct pollfd	pfd = { .fd = src, .events = POLLRDHUP };
	struct fp_out	out;
	int		n, r;

	r = put_ctl(d, UINT64_MAX, 0, 0);
	if (ioctl(src, SIOCINQ, &n) == -1)
		return -1;
	if (r == 0)
		return 1;
	if (fastpath_out(d, &out) == -1 || poll(&pfd, 1, 0) == -1)
		return -1;
	return out.passed != d->taken || (pfd.revents & (POLLRDHUP |
	    POLLHUP | POLLERR)) != 0;
}

/*
 * Whether bytes the program passed from d's source are not yet read,
 * nread being the bytes tenkd has ever read from it: 1 yes, 0 no, -1
 * with errno.  For a recv(2) that returned 0: a passed segment that
 * found the source's receive memory full waits on its psock for a work
 * item to queue it, and recv(2) meanwhile reports the FIN behind it
 * (Linux 6.18: a 1 MiB stream cut at 400k, integ/proxy_fastpath), so
 * the end is the end only once every passed byte was read.
 */
int
fastpath_unread(const struct fp_dir *d, uint64_t nread)
{
	struct fp_out	out;

	if (fastpath_out(d, &out) == -1)
		return -1;
	return out.passed > nread - d->rbase;
}

/*
 * Whether fd has something for recv(2) now: bytes, a FIN or an error
 * (1), or nothing (0); -1 with errno.  A poll(2), not a recv with
 * MSG_PEEK, which would consume a pending error.  On a source under a
 * grant, 1 may also be a segment the program is judging at that moment
 * (TCP counts it received before the program takes it): the caller
 * revokes the grant before it counts on the redirect having stopped.
 */
int
fastpath_readable(int fd)
{
	struct pollfd	pfd = { .fd = fd, .events = POLLIN | POLLRDHUP };
	int		n;

	while ((n = poll(&pfd, 1, 0)) == -1 && errno == EINTR)
		;
	if (n == -1)
		return -1;
	return n > 0 && pfd.revents != 0;
}

/*
 * Whether everything d redirected has reached dst's send queue: 1 yes,
 * 0 not yet, -1 with errno.  Only after fastpath_revoke, so that bytes
 * no longer grows.
 */
int
fastpath_drained(int dst, struct fp_dir *d)
{
	struct fp_out	out;
	uint64_t	w;

	if (fastpath_out(d, &out) == -1 || fastpath_written(dst, &w) == -1)
		return -1;
	if (w - d->base < out.bytes - d->bbase)
		return 0;
	d->granted = 0;
	return 1;
}
