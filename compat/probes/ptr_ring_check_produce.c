// SPDX-License-Identifier: GPL-2.0
/*
 * 7.3 API change: __ptr_ring_check_produce()
 *
 * Split out of __ptr_ring_produce() upstream for v7.3 (present in Debian's
 * 7.3.4 headers, absent from 7.2.13; the veth BQL series uses it).  It
 * tests, under the producer lock, whether __ptr_ring_produce() would
 * succeed.  Where it is absent, compat supplies it.
 *
 * bqlkit-probe: macro=NEED_PTR_RING_CHECK_PRODUCE when=absent since=7.3
 */
#include <linux/ptr_ring.h>

int bqlkit_probe(struct ptr_ring *r);
int bqlkit_probe(struct ptr_ring *r)
{
	return __ptr_ring_check_produce(r);
}
