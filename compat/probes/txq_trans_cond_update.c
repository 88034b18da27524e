// SPDX-License-Identifier: GPL-2.0
/*
 * 5.17 API change: txq_trans_cond_update()
 *
 * Added by commit 5337824f4dc4 ("net: annotate accesses to
 * queue->trans_start") in v5.17 (merged to net-next after v5.16-rc1).
 * veth's backpressure refreshes the TX watchdog stamp with it when it wakes
 * a queue.  Where it is absent, compat supplies it.
 *
 * bqlkit-probe: macro=NEED_TXQ_TRANS_COND_UPDATE when=absent since=5.17
 */
#include <linux/netdevice.h>

void bqlkit_probe(struct netdev_queue *txq);
void bqlkit_probe(struct netdev_queue *txq)
{
	txq_trans_cond_update(txq);
}
