// SPDX-License-Identifier: GPL-2.0
/*
 * 5.15 API change: ethtool_ops get_coalesce/set_coalesce gained
 * struct kernel_ethtool_coalesce * and struct netlink_ext_ack *.
 *
 * Added by commit f3ccfda19319 ("ethtool: extend coalesce setting uAPI
 * with CQE mode") in v5.15.  veth's tx-usecs (BQL completion coalescing)
 * is written for it; compat/bqlkit_compat.h stops a build without it.
 *
 * bqlkit-probe: macro=HAVE_ETHTOOL_COALESCE_KERNEL when=present since=5.15
 */
#include <linux/ethtool.h>
#include <linux/netdevice.h>

static int bqlkit_get(struct net_device *dev, struct ethtool_coalesce *ec,
		      struct kernel_ethtool_coalesce *kec,
		      struct netlink_ext_ack *extack)
{
	return 0;
}

const struct ethtool_ops bqlkit_probe = {
	.get_coalesce = bqlkit_get,
};
