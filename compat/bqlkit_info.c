// SPDX-License-Identifier: GPL-2.0
/*
 * Linked into every kit module: says it is the kit's and what it was built
 * from (modinfo -F version / -F bqlkit / -F bqlkit_fit).  A version also lets DKMS install it
 * over an in-tree module that has none.  bqlkit_info.h is written per build
 * by scripts/build.sh.
 */
#include <linux/module.h>
#include "bqlkit_info.h"

MODULE_VERSION(BQLKIT_VERSION);
MODULE_INFO(bqlkit, BQLKIT_BUILD_INFO);
#ifdef BQLKIT_FIT
/* How each change of the series got into this source (scripts/fit.sh). */
MODULE_INFO(bqlkit_fit, BQLKIT_FIT);
#endif
