/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fastpath.c: the kernel forwarding of a stream's directions (see
 * there), apart from tenkd.h so that the unit tests link it alone.
 */
#ifndef TENK_SERVER_FASTPATH_H
#define TENK_SERVER_FASTPATH_H

#include <stddef.h>
#include <stdint.h>

#include "fastpath_bpf.h"

/* fastpath_load's options, for the measurements: the default is none. */
#define FP_O_SOCKMAP	0x01	/* a sockmap by index, not a sockhash */
#define FP_O_PARSER	0x02	/* attach a stream parser too */
#define FP_O_INGRESS	0x04	/* redirect with BPF_F_INGRESS */

/* Segments a grant allows at most, besides its window of bytes. */
#define FP_SEGS		256
/* A grant's segments: at most one per this many bytes of send room. */
#define FP_SEG_COST	256
/* No grant of fewer bytes: too full a send queue, tenkd copies. */
#define FP_GRANT_MIN	4096

/* One direction: bytes received on one socket, sent on the other. */
struct fp_dir {
	uint64_t	 cookie;	/* the source's */
	uint64_t	 peer;		/* the destination's cookie (index) */
	uint64_t	 base;		/* fastpath_written(dst) at the grant */
	uint64_t	 bbase;		/* fp_out.bytes at the grant */
	uint64_t	 counted;	/* fp_out.bytes counted by the caller */
	uint64_t	 rbase;		/* bytes read from src before the map */
	uint64_t	 taken;		/* the grant's */
	uint8_t		 granted;	/* a grant not yet drained */
};

int		 fastpath_load(int, unsigned int, char *, size_t);
size_t		 fastpath_mem(void);
int		 fastpath_sweep(void);
int		 fastpath_pair(int, int, uint32_t, uint32_t, struct fp_dir *);
void		 fastpath_forget(struct fp_dir *);
int		 fastpath_out(const struct fp_dir *, struct fp_out *);
int		 fastpath_written(int, uint64_t *);
int		 fastpath_readable(int);
int		 fastpath_grant(int, int, struct fp_dir *, uint64_t, uint64_t,
		    uint64_t);
int		 fastpath_revoke(int, struct fp_dir *);
int		 fastpath_drained(int, struct fp_dir *);
int		 fastpath_unread(const struct fp_dir *, uint64_t);

#endif /* TENK_SERVER_FASTPATH_H */
