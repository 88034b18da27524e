/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bqlkit compat layer: supplies the kernel APIs the kit's backports use
 * where a kernel lacks them.  Force-included (-include) ahead of every
 * driver source, so the patched drivers read like upstream code.
 *
 * Each block keys only on a macro from bqlkit_config.h, which
 * scripts/probe.sh generates per kernel from compat/probes/ (one compile
 * probe per API).  NEED_x: compat supplies x.  HAVE_x: the driver adapts.
 * Never test a kernel version here: distro kernels backport APIs.
 */
#ifndef _BQLKIT_COMPAT_H
#define _BQLKIT_COMPAT_H

#include "bqlkit_config.h"

#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/ptr_ring.h>
#include <linux/u64_stats_sync.h>
#include <net/sch_generic.h>

#ifdef NEED_QDISC_TXQ_HAS_NO_QUEUE
/*
 * Upstream 34dd0fecaa02 (v6.16): true when the txq's qdisc cannot queue
 * (noqueue), i.e. a driver may not return NETDEV_TX_BUSY to it.
 */
static inline bool qdisc_txq_has_no_queue(const struct netdev_queue *txq)
{
	const struct Qdisc *qdisc = rcu_access_pointer(txq->qdisc);

	return !qdisc->enqueue;
}
#endif

#ifdef NEED_U64_STATS_FETCH_IRQ
/*
 * Removed for v6.3 ("u64_stat: Remove the obsolete fetch_irq() variants."),
 * and from PREEMPT_RT 6.1 kernels, after "u64_stats: Streamline the
 * implementation" made them the same as the plain variants.
 */
#define u64_stats_fetch_begin_irq(syncp) u64_stats_fetch_begin(syncp)
#define u64_stats_fetch_retry_irq(syncp, start) \
	u64_stats_fetch_retry(syncp, start)
#endif

#ifdef NEED_PTR_RING_CHECK_PRODUCE
/*
 * Upstream for v7.3, used by the veth BQL series: with the producer lock
 * held, 0 when __ptr_ring_produce() would succeed, an error when the ring
 * is full (or has no size).  Mirrors the test at the top of
 * __ptr_ring_produce().
 */
static inline int __ptr_ring_check_produce(struct ptr_ring *r)
{
	if (unlikely(!r->size) || r->queue[r->producer])
		return -ENOSPC;

	return 0;
}
#endif

#ifdef NEED_TXQ_TRANS_COND_UPDATE
/*
 * Upstream 5337824f4dc4 (v5.17): refresh the TX watchdog stamp, writing
 * the shared cache line only when it changes.
 */
static inline void txq_trans_cond_update(struct netdev_queue *txq)
{
	unsigned long now = jiffies;

	if (READ_ONCE(txq->trans_start) != now)
		WRITE_ONCE(txq->trans_start, now);
}
#endif

#ifdef NEED_ETHTOOL_SPRINTF
/*
 * Upstream 7888fe53b706 (v5.13): print one ETH_GSTRING_LEN string and
 * advance the cursor.
 */
static inline __printf(2, 3) void ethtool_sprintf(u8 **data,
						  const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vsnprintf(*data, ETH_GSTRING_LEN, fmt, args);
	va_end(args);
	*data += ETH_GSTRING_LEN;
}
#endif

/*
 * ethtool coalesce ops, newest first.  5.15 (f3ccfda19319) added
 * kernel_ethtool_coalesce and extack; the kit's veth tx-usecs is written for
 * that form; the 5.10 series writes the older two-argument form.
 */
#if defined(HAVE_ETHTOOL_COALESCE_KERNEL)
/* the driver's get/set_coalesce take (dev, ec, kernel_coal, extack) */
#elif defined(HAVE_ETHTOOL_COALESCE_PLAIN)
/*
 * Before f3ccfda19319 (v5.15) they take (dev, ec): the kit's 5.10 series
 * writes veth's tx-usecs ops in that form (no extack to report to).
 */
#else
#error "bqlkit: neither known form of ethtool get/set_coalesce: add a probe and a variant"
#endif

#endif /* _BQLKIT_COMPAT_H */
