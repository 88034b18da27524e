// SPDX-License-Identifier: GPL-2.0
/*
 * net-next API change: __ptr_ring_check_produce()
 *
 * Added by the veth BQL series (v7, 2026, "veth: implement Byte Queue
 * Limits (BQL) for latency reduction" and its ptr_ring prerequisite); in no
 * released kernel yet.  It tests, under the producer lock, whether
 * __ptr_ring_produce() would succeed.  Where it is absent, compat supplies it.
 *
 * bqlkit-probe: macro=NEED_PTR_RING_CHECK_PRODUCE when=absent since=none
 */
#include <linux/ptr_ring.h>

int bqlkit_probe(struct ptr_ring *r);
int bqlkit_probe(struct ptr_ring *r)
{
	return __ptr_ring_check_produce(r);
}
