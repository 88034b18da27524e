// SPDX-License-Identifier: GPL-2.0
/*
 * 6.3 API change: u64_stats_fetch_begin_irq()/u64_stats_fetch_retry_irq()
 * removed.
 *
 * "u64_stats: Streamline the implementation" made the _irq variants the same
 * as the plain ones, and "u64_stat: Remove the obsolete fetch_irq()
 * variants." (net-next, January 2023) removed them for v6.3.  Both are part
 * of the PREEMPT_RT patch set for older kernels, so Debian's 6.1 rt flavour
 * lacks them although its version says 6.1: 6.1 veth.c calls them, and
 * compat maps them onto the plain variants where they are absent.
 *
 * bqlkit-probe: macro=NEED_U64_STATS_FETCH_IRQ when=absent since=0 until=6.3
 */
#include <linux/u64_stats_sync.h>

unsigned int bqlkit_probe(const struct u64_stats_sync *syncp);
unsigned int bqlkit_probe(const struct u64_stats_sync *syncp)
{
	unsigned int start = u64_stats_fetch_begin_irq(syncp);

	return u64_stats_fetch_retry_irq(syncp, start);
}
