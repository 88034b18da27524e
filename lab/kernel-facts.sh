#!/bin/bash
# Facts about a kernel that change benchmark results but are no API the kit
# uses, read from its headers.  Prints KEY=VALUE lines.
#
#   kernel-facts.sh KDIR
#
# fq_codel_stale_state_fix: upstream 815980fe6dbb ("net_sched: codel: fix
#   stale state for empty flows in fq_codel") resets first_above_time when
#   codel_dequeue() finds the flow empty; without it sparse flows (ping)
#   lose packets under load whatever BQL does.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

[ $# -eq 1 ] || die "usage: kernel-facts.sh KDIR"
kdir=$1
f=$kdir/include/net/codel_impl.h
if [ ! -f "$f" ]; then
	# Debian splits headers into -arch and -common; the Makefile names the latter.
	common=$(sed -n 's/^include \(.*\)\/Makefile$/\1/p' "$kdir/Makefile" 2>/dev/null | head -1)
	# Headers in a build chroot (make matrix): that Makefile's path is the
	# chroot's.
	if [ -n "$common" ] && [ ! -d "$common" ] && [[ $kdir == */usr/src/* ]]; then
		common=${kdir%%/usr/src/*}$common
	fi
	f=${common:+$common/include/net/codel_impl.h}
fi
if [ -n "$f" ] && [ -f "$f" ]; then
	# The body of codel_dequeue()'s empty-queue branch.
	if awk '/^static struct sk_buff \*codel_dequeue/ { in_f = 1 }
		in_f && /if \(!skb\) \{/ { in_b = 1; next }
		in_b && /\}/ { exit found ? 0 : 1 }
		in_b && /first_above_time = 0/ { found = 1 }
		END { if (!found) exit 1 }' "$f"; then
		echo "fq_codel_stale_state_fix=present"
	else
		echo "fq_codel_stale_state_fix=absent"
	fi
else
	echo "fq_codel_stale_state_fix=unknown"
fi
echo "linux_version=$(kernel_version "$kdir")"
