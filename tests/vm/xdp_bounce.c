// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_bounce - send UDP frames to port 9999 straight back out of the
 * device they came in on (XDP_TX), pass everything else.  On a veth this
 * puts xdp_frames into the peer's ring through ndo_xdp_xmit: frames BQL
 * does not charge, which can fill the ring behind the qdisc's back
 * (guest/xoff.sh).
 *   clang -O2 -g -target bpf -c xdp_bounce.c -o xdp_bounce.o
 *   ip link set dev vethA xdp obj xdp_bounce.o sec xdp
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define BOUNCE_PORT 9999

SEC("xdp")
int xdp_bounce(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);

	if ((void *)(udp + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 ||
	    ip->protocol != IPPROTO_UDP || udp->dest != bpf_htons(BOUNCE_PORT))
		return XDP_PASS;
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
