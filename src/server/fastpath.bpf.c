/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel's half of the fast path (fastpath.c has the rules): a
 * stream verdict program on a sockhash of established proxy sockets,
 * keyed by socket cookie.  For each segment a socket receives it either
 * redirects the segment to the peer socket's send path, counting it, or
 * passes it to the socket's own receive queue, where tenkd reads it as
 * usual.  It redirects only while tenkd has read every byte passed so
 * far (so that no byte overtakes another) and the window tenkd granted
 * has room (so that a slow reader holds at most a window of kernel
 * memory; past it the bytes wait in the source's receive queue, whose
 * TCP window closes).
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
	__type(value, __u32);		/* the fd, when tenkd adds one */
} fp_socks SEC(".maps");

/* The same by index (ctl.peer), for the measurement only. */
struct {
	__uint(type, BPF_MAP_TYPE_SOCKMAP);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
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
 * Redirect or pass skb; returns the peer's cookie (or index) in *peer
 * when it is to be redirected, else 0.
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
	 * too): passed, it makes recv(2) return 0.  Redirected, the peer's
	 * send of nothing counts as a failure that breaks the peer's psock:
	 * on Linux 6.18 its next passed segments are dropped and recv says
	 * EPIPE (unit/fastpath_halfclose).
	 */
	if (len == 0)
		return 0;
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

	if (!fp_judge(skb, &peer))
		return SK_PASS;
	return bpf_sk_redirect_hash(skb, &fp_socks, &peer, fp_flags);
}

SEC("sk_skb/stream_verdict")
int
fp_verdict_map(struct __sk_buff *skb)
{
	__u64	peer;

	if (!fp_judge(skb, &peer))
		return SK_PASS;
	return bpf_sk_redirect_map(skb, &fp_sockmap, (__u32)peer, fp_flags);
}

/* A stream parser that takes each segment whole. */
SEC("sk_skb/stream_parser")
int
fp_parser(struct __sk_buff *skb)
{
	return skb->len;
}
