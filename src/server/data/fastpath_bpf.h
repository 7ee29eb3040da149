/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the fast path's BPF program (fastpath.bpf.c) and tenkd
 * (fastpath.c) share: the values of its two maps, both keyed by the cookie
 * of the socket whose received bytes they are about.  Each has one
 * writer, so that neither side ever loses the other's store: tenkd
 * replaces fp_ctl values whole, the program adds to fp_out's.
 */
#ifndef TENK_SERVER_FASTPATH_BPF_H
#define TENK_SERVER_FASTPATH_BPF_H

#include <linux/types.h>

/* tenkd's grant for one socket's received bytes. */
struct fp_ctl {
	__u64		peer;		/* cookie of the socket to send to */
	__u64		taken;		/* bytes passed that tenkd has read */
	__u64		allow;		/* redirect while bytes stay under */
	__u64		allow_segs;	/* ... and segs */
};

/* What the program did with them. */
struct fp_out {
	__u64		bytes;		/* redirected to the peer */
	__u64		segs;		/* segments among them */
	__u64		passed;		/* passed to the socket's queue */
	__u64		last;		/* last segment, CLOCK_MONOTONIC ns */
};

#endif /* TENK_SERVER_FASTPATH_BPF_H */
