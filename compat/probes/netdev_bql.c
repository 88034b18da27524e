// SPDX-License-Identifier: GPL-2.0
/*
 * net-next API change: struct net_device::bql
 *
 * Added by the veth BQL series (v7, 2026): lets a lltx/IFF_NO_QUEUE device
 * such as veth keep queues/tx-N/byte_queue_limits in sysfs, which core
 * net-sysfs hides for such devices since v6.9 (commit 74293ea1c4db, "net:
 * sysfs: Do not create sysfs for non BQL device").  In no released kernel;
 * where present the driver sets it (HAVE_NETDEV_BQL).
 *
 * bqlkit-probe: macro=HAVE_NETDEV_BQL when=present since=none
 */
#include <linux/netdevice.h>

void bqlkit_probe(struct net_device *dev);
void bqlkit_probe(struct net_device *dev)
{
	dev->bql = true;
}
