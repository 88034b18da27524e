// SPDX-License-Identifier: GPL-2.0
/*
 * 6.16 API change: qdisc_txq_has_no_queue()
 *
 * Added by commit 34dd0fecaa02 ("net: sched: generalize check for no-queue
 * qdisc on TX queue") in v6.16, with veth's qdisc backpressure; carried by
 * stable 6.12.61.  Where it is absent, compat supplies it.
 *
 * bqlkit-probe: macro=NEED_QDISC_TXQ_HAS_NO_QUEUE when=absent since=6.16 stable=6.12.61
 */
#include <net/sch_generic.h>

bool bqlkit_probe(const struct netdev_queue *txq);
bool bqlkit_probe(const struct netdev_queue *txq)
{
	return qdisc_txq_has_no_queue(txq);
}
