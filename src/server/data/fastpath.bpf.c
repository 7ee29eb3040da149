/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel's half of the fast path (fastpath.c has the rules): a
 * stream verdict program on a sockhash of established proxy sockets,
 * keyed by socket cookie.  For each segment a socket receives it either
 * redirects the segment to the peer socket's send path, counting it, or
 * passes it to the socket's own receive queue, where tenkd reads it as
 * usual.  It redirects only while tenkd has read every byte passed so
 * far (so that no byte overtakes another) and the grant has room (held
 * by tenkd to what the peer's send queue can take; past it the bytes
 * are passed, and tenkd reads them as its buffers allow).
 *
 * Built by clang's BPF target (make compiles it when mk/deps.sh finds
 * clang, libbpf and bpftool) and loaded through its bpftool skeleton.
 * fp_verdict_map and fp_parser are there to measure the other choices
 * (a sockmap by index, a stream parser); tenkd loads neither.
 */
#include <linux/bpf.h>

#include <bpf/bpf_helpers.h>

#include "fastpath_bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * The sockets, keyed by cookie: unique in the whole system, so worker
 * processes forked from one master share the maps without clashing.
 */
struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, 2);		/* sized by fastpath.c at load */
	__type(key, __u64);
	__type(value, __u64);		/* the fd in, the cookie out */
} fp_socks SEC(".maps");

/* The same by index (ctl.peer), for the measurement only. */
struct {
	__uint(type, BPF_MAP_TYPE_SOCKMAP);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} fp_sockmap SEC(".maps");

/* Written by tenkd only, whole values; read here. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2);
	__type(key, __u64);
	__type(value, struct fp_ctl);
} fp_ctl SEC(".maps");

/* Written here only, read by tenkd. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2);
	__type(key, __u64);
	__type(value, struct fp_out);
} fp_out SEC(".maps");

/* The redirect's flags: 0, the peer's send path, unless measuring. */
const volatile __u64 fp_flags = 0;

/*
 * Redirect or pass skb: returns 1 with the peer's cookie (or index) in
 * *peer to redirect it, 0 to pass it, -1 to drop it (a FIN).
 */
static __always_inline int
fp_judge(struct __sk_buff *skb, __u64 *peer)
{
	struct fp_ctl	*ctl;
	struct fp_out	*out;
	__u64		 cookie = bpf_get_socket_cookie(skb);
	__u32		 len = skb->len;

	/*
	 * A FIN comes as a segment of no bytes (tcp_read_skb hands it over
	 * too), after TCP has marked the socket shut for reading, which is
	 * all recv(2) needs to return 0.  Dropped here, since on Linux 6.18
	 * either other verdict breaks a psock: redirected, the peer's send
	 * of nothing; passed behind segments that wait for receive memory,
	 * the work item's queueing of nothing.  Either counts as a hard
	 * error: the psock stops, reports EPIPE and drops every segment
	 * after (unit/fastpath_halfclose, integ/proxy_fastpath).
	 */
	if (len == 0)
		return -1;
	if ((ctl = bpf_map_lookup_elem(&fp_ctl, &cookie)) == NULL ||
	    (out = bpf_map_lookup_elem(&fp_out, &cookie)) == NULL)
		return 0;
	/* Socket verdicts run one at a time: plain stores suffice. */
	if (out->passed != ctl->taken || out->bytes + len > ctl->allow ||
	    out->segs >= ctl->allow_segs) {
		out->passed += len;
		return 0;
	}
	out->bytes += len;
	out->segs++;
	out->last = bpf_ktime_get_ns();
	*peer = ctl->peer;
	return 1;
}

SEC("sk_skb/stream_verdict")
int
fp_verdict(struct __sk_buff *skb)
{
	__u64	peer;
	int	r;

	if ((r = fp_judge(skb, &peer)) != 1)
		return r == 0 ? SK_PASS : SK_DROP;
	return bpf_sk_redirect_hash(skb, &fp_socks, &peer, fp_flags);
}

SEC("sk_skb/stream_verdict")
int
fp_verdict_map(struct __sk_buff *skb)
{
	__u64	peer;
	int	r;

	if ((r = fp_judge(skb, &peer)) != 1)
		return r == 0 ? SK_PASS : SK_DROP;
	return bpf_sk_redirect_map(skb, &fp_sockmap, (__u32)peer, fp_flags);
}

/* A stream parser that takes each segment whole. */
SEC("sk_skb/stream_parser")
int
fp_parser(struct __sk_buff *skb)
{
	return skb->len;
}
