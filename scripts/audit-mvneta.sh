#!/bin/bash
# Does this mvneta.c have what upstream v4.11 gave it ("net: mvneta: add
# xmit_more support" and "net: mvneta: add BQL support", 2016)?
#
#   audit-mvneta.sh MVNETA_C|KERNEL_TREE
#
# Checks, each in the function where upstream put it:
#   bql-sent        netdev_tx_sent_queue() in mvneta_tx()
#   xmit-more       mvneta_tx() rings the doorbell (mvneta_txq_pend_desc_add)
#                   only when !netdev_xmit_more() (skb->xmit_more before 5.2),
#                   the queue stopped, or the pending descriptors would pass
#                   MVNETA_TXQ_DEC_SENT_MASK (the hardware's cap)
#   bql-completed   netdev_tx_completed_queue() in mvneta_txq_bufs_free()
#   bql-reset       netdev_tx_reset_queue() when a TX queue is torn down
# Prints one line per check; exit 1 if any is missing.
set -euo pipefail

src=${1:-}
[ -d "$src" ] && src=$src/drivers/net/ethernet/marvell/mvneta.c
[ -f "$src" ] || { echo "usage: audit-mvneta.sh MVNETA_C|KERNEL_TREE" >&2; exit 2; }

# body NAME: the text of the function NAME (from its definition to the
# closing brace in column 0).
body() {
	awk -v n="$1" '
		$0 ~ "^[a-z].*[ *]" n "\\(" && $0 !~ ";$" { on = 1 }
		on { print }
		on && /^}/ { exit }' "$src"
}

rc=0
verdict() { # NAME OK? DETAIL
	if [ "$2" = yes ]; then echo "mvneta: $1: present ($3)"; else echo "mvneta: $1: MISSING ($3)"; rc=1; fi
}
tx=$(body mvneta_tx)
free=$(body mvneta_txq_bufs_free)
teardown=$(body mvneta_txq_sw_deinit; body mvneta_txq_deinit; body mvneta_txq_done_force)

grep -q 'netdev_tx_sent_queue(' <<<"$tx" && v=yes || v=no
verdict bql-sent "$v" "netdev_tx_sent_queue in mvneta_tx"
if grep -q 'netdev_xmit_more()\|skb->xmit_more' <<<"$tx" &&
	grep -q 'MVNETA_TXQ_DEC_SENT_MASK' <<<"$tx" &&
	grep -q 'mvneta_txq_pend_desc_add(' <<<"$tx"; then v=yes; else v=no; fi
verdict xmit-more "$v" "doorbell deferred on xmit_more, capped at MVNETA_TXQ_DEC_SENT_MASK"
grep -q 'netdev_tx_completed_queue(' <<<"$free" && v=yes || v=no
verdict bql-completed "$v" "netdev_tx_completed_queue in mvneta_txq_bufs_free"
grep -q 'netdev_tx_reset_queue(' <<<"$teardown" && v=yes || v=no
verdict bql-reset "$v" "netdev_tx_reset_queue on TX queue teardown"
exit $rc
