// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_pass - the smallest XDP program: pass every frame up the stack.
 * Attaching it to a veth gives the device NAPI (and so BQL) even with GRO
 * off; the fault tests attach and detach it under load.
 *   clang -O2 -g -target bpf -c xdp_pass.c -o xdp_pass.o
 *   ip link set dev vethB xdp obj xdp_pass.o sec xdp
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
