#!/usr/bin/env python3
"""Check a patched veth.c for veth's race and hardening fixes, by structure.

    veth-review.py VETH_C

One line per finding: "PASS|FAIL finding-N <detail>".  Exit 0 iff all pass.
These are the findings a VM cannot show on every base or CPU (2: arm64
ordering; 4: 5.10/5.15 only; 5: hardening), checked on every series'
source, and 1 and 3, whose VM tests run on 6.1 and 6.12 only:
  1  veth_poll() repairs BQL before napi_complete_done()
  2  veth_bql_consumed() has smp_rmb() before completing, and NAPI
     completes only through it
  3  veth_napi_del_range() (5.10: veth_napi_del()) wakes the peer's txq
     without netif_running(dev)
  4  trans_start is stamped (txq_trans_cond_update) before each place
     the txq may stop: before the BQL charge in veth_xdp_rx() and before
     the ring-full netif_tx_stop_queue() in veth_xmit()
  5  veth_ptr_ring_drain() tests the BQL bit on skbs only, and
     BUILD_BUG_ON()s check the alignment the tagging relies on
"""
import re
import sys


def body(src, name):
    """The text of function NAME's body (from its definition to the first
    closing brace in column 0), or ''."""
    m = re.search(r"^[a-z][^;(]*\b%s\([^;{]*\)\s*\{" % re.escape(name), src, re.M)
    if not m:
        return ""
    end = src.find("\n}", m.end())
    return src[m.end():end]


def code(text):
    """TEXT without comments."""
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)


def before(text, a, b):
    """A occurs in TEXT, and before the first B."""
    i, j = text.find(a), text.find(b)
    return i >= 0 and (j < 0 or i < j)


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: veth-review.py VETH_C")
    src = open(argv[1]).read()
    res = []
    poll = code(body(src, "veth_poll"))
    res.append(("1", before(poll, "veth_bql_repair(", "napi_complete_done(") and
                "napi_complete_done(" in poll,
                "veth_poll: veth_bql_repair() before napi_complete_done()"))
    cons = code(body(src, "veth_bql_consumed"))
    completers = [m.start() for m in re.finditer(r"netdev_tx_completed_queue\(", code(src))]
    napi_path = code(body(src, "veth_poll")) + code(body(src, "veth_xdp_rcv"))
    res.append(("2", before(cons, "smp_rmb()", "netdev_tx_completed_queue(") and
                "netdev_tx_completed_queue(" in cons and
                "netdev_tx_completed_queue(" not in napi_path,
                "veth_bql_consumed: smp_rmb() then netdev_tx_completed_queue() "
                "(%d completion sites in the file)" % len(completers)))
    # 5.10 has veth_napi_del() (no range).
    napi_del = code(body(src, "veth_napi_del_range") or body(src, "veth_napi_del"))
    res.append(("3", "netif_tx_wake_queue(" in napi_del and
                not re.search(r"if\s*\(\s*netif_running\(\s*dev\s*\)", napi_del),
                "veth_napi_del_range: wakes the peer txq, not only if netif_running(dev)"))
    xmit = code(body(src, "veth_xmit"))
    rx = code(body(src, "veth_xdp_rx"))
    res.append(("4", "netdev_tx_sent_queue(" in rx and
                before(rx, "txq_trans_cond_update(", "netdev_tx_sent_queue(") and
                "netif_tx_stop_queue(" in xmit and
                before(xmit, "txq_trans_cond_update(", "netif_tx_stop_queue("),
                "txq_trans_cond_update() before netdev_tx_sent_queue() in "
                "veth_xdp_rx and before netif_tx_stop_queue() in veth_xmit"))
    drain = code(body(src, "veth_ptr_ring_drain"))
    ok5 = (re.search(r"!\s*veth_is_xdp_frame\(\s*ptr\s*\)\s*&&\s*veth_ptr_is_bql\(", drain) is not None
           and re.search(r"BUILD_BUG_ON\(__alignof__\(struct xdp_frame\)", code(src)) is not None
           and re.search(r"BUILD_BUG_ON\(__alignof__\(struct sk_buff\)", code(src)) is not None)
    res.append(("5", ok5, "veth_ptr_ring_drain: BQL bit on skbs only; BUILD_BUG_ON alignment of sk_buff and xdp_frame"))
    for n, ok, what in res:
        print("%s finding-%s %s" % ("PASS" if ok else "FAIL", n, what))
    sys.exit(0 if all(ok for _, ok, _ in res) else 1)


if __name__ == "__main__":
    main(sys.argv)
