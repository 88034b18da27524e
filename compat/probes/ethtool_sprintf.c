// SPDX-License-Identifier: GPL-2.0
/*
 * 5.13 API change: ethtool_sprintf()
 *
 * Added by commit 7888fe53b706 ("ethtool: Add common function for filling
 * out strings") in v5.13.  The kit's per-queue BQL statistics name their
 * ethtool strings with it.  Where it is absent, compat supplies it.
 *
 * bqlkit-probe: macro=NEED_ETHTOOL_SPRINTF when=absent since=5.13
 */
#include <linux/ethtool.h>

void bqlkit_probe(u8 *p);
void bqlkit_probe(u8 *p)
{
	ethtool_sprintf(&p, "tx_queue_%u", 0U);
}
