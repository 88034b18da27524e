// The mana_bpf.c part of net-mana-add-BQL-support, by its meaning rather
// than its context (scripts/fit.sh; docs/fit.md, "Semantic patches"):
// mana_xdp_tx() sends XDP_TX and ndo_xdp_xmit frames; it calls
// mana_xdp_start_xmit(), which the change adds to mana_en.c, so that they
// are not charged to BQL.  Vendors' mana_bpf.c copies differ (the include
// of mana.h, the XDP MTU checks, the stats, the netdev lock), and the hunk
// of the patch does not depend on any of that.
// bqlkit-semantic: file=drivers/net/ethernet/microsoft/mana/mana_bpf.c function=mana_xdp_tx
@@
expression list args;
@@
 mana_xdp_tx(...)
 {
 <...
-mana_start_xmit(args)
+mana_xdp_start_xmit(args)
 ...>
 }
