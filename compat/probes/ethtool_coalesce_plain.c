// SPDX-License-Identifier: GPL-2.0
/*
 * 5.15 API change: ethtool_ops get_coalesce/set_coalesce lost the plain
 * (struct net_device *, struct ethtool_coalesce *) form.
 *
 * Commit f3ccfda19319 ("ethtool: extend coalesce setting uAPI with CQE
 * mode") in v5.15 added struct kernel_ethtool_coalesce * and struct
 * netlink_ext_ack * (probed by ethtool_coalesce_kernel.c).  Before it the
 * ops take two arguments; the kit's 5.10 veth series writes its tx-usecs
 * ops in that form, and compat/bqlkit_compat.h accepts it only where this
 * probe finds it (HAVE_ETHTOOL_COALESCE_PLAIN).
 *
 * bqlkit-probe: macro=HAVE_ETHTOOL_COALESCE_PLAIN when=present since=0 until=5.15
 */
#include <linux/ethtool.h>
#include <linux/netdevice.h>

static int bqlkit_get(struct net_device *dev, struct ethtool_coalesce *ec)
{
	return 0;
}

const struct ethtool_ops bqlkit_probe = {
	.get_coalesce = bqlkit_get,
};
