// SPDX-License-Identifier: GPL-2.0
// Facts about mana's sources for rules/mana.rules (scripts/rules.sh) and the
// audit of tests/t80-mana.sh.  Run on the mana sources as one group
// (spatch --dir), it prints one "FACT <name> <detail>" line per finding:
//   sent              every netdev_tx_sent_queue() call (function:line), or
//                     "r = __netdev_tx_sent_queue(q, n, more)" (the kit's
//                     opt-in TX doorbell batching: the same charge)
//   sent_guarded      a call under "if (!x)" with x a bool parameter of the
//                     sending function (the XDP flag)
//   sent_conditional  a call under any "if" (bad on a base without XDP)
//   sent_before_db    the charge comes before the TX doorbell on some path
//   sent_batched      "r = __netdev_tx_sent_queue(q, n, more)" and then
//                     "if (r)" rings the SQ doorbell (opt-in batching)
//   drop_unrung       a path of the sending function, after its port_is_up
//                     check, to dev_kfree_skb_any() (a packet not sent), or
//                     from NETDEV_TX_BUSY to its return, with no SQ doorbell
//                     on it
//                     (mana_gd_wq_ring_doorbell() or the kit's
//                     mana_tx_flush()): function:line (bad)
//   teardown_call     a call between netif_tx_disable() and
//                     mana_dealloc_queues() (whose drain waits for every
//                     posted WQE): function:callee
//   xdp_caller        a function passing true for that parameter (XDP send)
//   stack_caller      a function passing false (the stack's send)
//   xdp_tx_calls      what mana_xdp_tx() (XDP_TX and XDP_REDIRECT) calls
//   completed         every netdev_tx_completed_queue() call
//   completed_skip    the bytes it reports are summed under "if (!E)": E
//   completed_order   the completion comes before smp_mb() and the
//                     stopped check
//   reset             netdev_tx_reset_queue() after napi_disable() (or
//                     napi_disable_locked(), 6.18+)
//   reset_conditional netdev_tx_reset_queue() inside an if (bad)
//   rx_ring_in_loop   an RQ doorbell inside the CQE loop (bad)
//   rx_ring_once      the RX poll rings the RQ doorbell after the CQE loop
//                     under "if (E > 0)": E
//   rx_ring_count     number of doorbell calls in the RX poll function
//   rx_post_rings     mana_post_pkt_rxq() rings the doorbell (bad)
//   rq_wqe_cnt_zero   mana_gd_wq_ring_doorbell() passes 0 as the WQE count
//   start_xmit_type   the return type of mana_start_xmit() (netdev_tx_t since
//                     upstream 0c9ef08a4d0f, v6.2; int before)

@initialize:python@
@@
def fact(name, detail):
    print("FACT %s %s" % (name, detail))

// ---- TX charge ----
@sent@
identifier fn;
expression q, n, m, r;
position p;
@@
fn(...) {
<+...
(
netdev_tx_sent_queue@p(q, n);
|
r = __netdev_tx_sent_queue@p(q, n, m);
)
...+>
}

@script:python@
fn << sent.fn;
p << sent.p;
@@
fact("sent", "%s:%s" % (fn, p[0].line))

@sent_guarded@
identifier fn, x;
expression q, n, m, r;
position p;
type T1, T2;
identifier a, b;
@@
fn(T1 a, T2 b, bool x) {
<+...
if (!x)
(
	netdev_tx_sent_queue@p(q, n);
|
	r = __netdev_tx_sent_queue@p(q, n, m);
)
...+>
}

@script:python@
fn << sent_guarded.fn;
x << sent_guarded.x;
p << sent_guarded.p;
@@
fact("sent_guarded", "%s:%s:%s" % (fn, p[0].line, x))

// A charge under any condition: bases without XDP in mana (before 5.17)
// have nothing to exclude, so their charge must be unconditional.
@sent_conditional@
identifier fn;
expression c, q, n, m, r;
position p;
@@
fn(...) {
<+...
if (c) {
	<+...
(
	netdev_tx_sent_queue@p(q, n);
|
	r = __netdev_tx_sent_queue@p(q, n, m);
)
	...+>
}
...+>
}

@script:python@
fn << sent_conditional.fn;
p << sent_conditional.p;
@@
fact("sent_conditional", "%s:%s" % (fn, p[0].line))

@sent_before_db exists@
identifier sent.fn;
expression q, n, m, r, gc, sq;
position p1;
@@
fn(...) {
...
(
netdev_tx_sent_queue@p1(q, n);
|
r = __netdev_tx_sent_queue@p1(q, n, m);
)
...
mana_gd_wq_ring_doorbell(gc, sq);
...
}

@script:python@
fn << sent.fn;
p1 << sent_before_db.p1;
@@
fact("sent_before_db", "%s:%s" % (fn, p1[0].line))

// The kit's opt-in SQ doorbell batching: the charge says whether to ring.
@sent_batched exists@
identifier sent.fn, r;
expression q, n, m, gc, sq;
position p;
@@
fn(...) {
...
r = __netdev_tx_sent_queue@p(q, n, m);
...
if (r)
	mana_gd_wq_ring_doorbell(gc, sq);
...
}

@script:python@
fn << sent.fn;
p << sent_batched.p;
@@
fact("sent_batched", "%s:%s" % (fn, p[0].line))

// ... and no packet that is not sent leaves its batch's WQEs unrung.  The
// port-down drop (before the port_is_up check's end) must not touch the SQ:
// the teardown rings those (teardown_rings).
@drop_unrung exists@
identifier sent.fn;
expression E;
statement S;
position p;
@@
fn(...) {
...
if (<+... E->port_is_up ...+>) S
... when != mana_gd_wq_ring_doorbell(...)
    when != mana_tx_flush(...)
dev_kfree_skb_any@p(...);
...
}

@script:python@
fn << sent.fn;
p << drop_unrung.p;
@@
fact("drop_unrung", "%s:%s" % (fn, p[0].line))

// NETDEV_TX_BUSY (up to 6.18): the paths from it to the function's return.
// A test "if (x == NETDEV_TX_BUSY)" on the way counts as ringing when its
// branch rings (busy_test_rings): paths are not told apart by err's value.
@busy_unrung exists@
identifier sent.fn;
expression E, E2, E3;
position p;
@@
fn(...) {
...
E = NETDEV_TX_BUSY@p;
... when != mana_gd_wq_ring_doorbell(...)
    when != mana_tx_flush(...)
    when != E3 == NETDEV_TX_BUSY
return E2;
}

@script:python@
fn << sent.fn;
p << busy_unrung.p;
@@
fact("drop_unrung", "%s:%s" % (fn, p[0].line))

@busy_test@
identifier sent.fn;
expression E3;
statement S;
position p;
@@
fn(...) {
<+...
if (E3 == NETDEV_TX_BUSY)@p S
...+>
}

@busy_test_rings@
identifier sent.fn;
expression E3;
position busy_test.p;
@@
fn(...) {
<+...
if (E3 == NETDEV_TX_BUSY)@p
\(mana_tx_flush(...);\|mana_gd_wq_ring_doorbell(...);\)
...+>
}

@script:python depends on busy_test && !busy_test_rings@
fn << sent.fn;
@@
fact("drop_unrung", "%s:busy-test-without-ring" % fn)

// What the teardown calls between netif_tx_disable() and the drain of
// mana_dealloc_queues() (mana.rules: one of them rings the SQ doorbell).
@teardown_call exists@
identifier fd, f;
expression list es;
@@
fd(...) {
<+...
netif_tx_disable(...);
...
f(es);
...
mana_dealloc_queues(...)
...+>
}

@script:python@
fd << teardown_call.fd;
f << teardown_call.f;
@@
fact("teardown_call", "%s:%s" % (fd, f))

@xdp_caller@
identifier sent_guarded.fn, w;
expression e1, e2;
position pc;
@@
w(...) {
<+...
fn@pc(e1, e2, true)
...+>
}

@script:python@
w << xdp_caller.w;
@@
fact("xdp_caller", w)

@stack_caller@
identifier sent_guarded.fn, w;
expression e1, e2;
position pc;
@@
w(...) {
<+...
fn@pc(e1, e2, false)
...+>
}

@script:python@
w << stack_caller.w;
@@
fact("stack_caller", w)

// mana_xdp_tx() sends both XDP_TX and XDP_REDIRECT frames (other file:
// the test matches the callee with xdp_caller).
@xdp_tx_calls@
identifier f;
expression e1, e2;
position pf;
@@
mana_xdp_tx(...) {
<+...
f@pf(e1, e2)
...+>
}

@script:python@
f << xdp_tx_calls.f;
@@
fact("xdp_tx_calls", f)

// ---- TX completion ----
@completed@
identifier fc;
expression q, pk, by;
position p;
@@
fc(...) {
<+...
netdev_tx_completed_queue@p(q, pk, by);
...+>
}

@script:python@
fc << completed.fc;
p << completed.p;
@@
fact("completed", "%s:%s" % (fc, p[0].line))

@completed_skip exists@
identifier completed.fc;
identifier by;
expression q, pk, E, E2;
@@
fc(...) {
<+...
if (!E) {
	<+...
	by += E2;
	...+>
}
...+>
netdev_tx_completed_queue(q, pk, by);
...
}

@script:python@
E << completed_skip.E;
@@
fact("completed_skip", E)

@completed_order exists@
identifier completed.fc;
expression q, pk, by, t;
position po;
@@
fc(...) {
...
netdev_tx_completed_queue@po(q, pk, by);
...
smp_mb();
...
netif_tx_queue_stopped(t)
...
}

@script:python@
fc << completed.fc;
po << completed_order.po;
@@
fact("completed_order", fc)

// ---- teardown ----
@reset exists@
identifier fd;
expression nap, q;
position p;
@@
fd(...) {
...
(
napi_disable(nap);
|
napi_disable_locked(nap);
)
...
netdev_tx_reset_queue@p(q);
...
}

@script:python@
fd << reset.fd;
p << reset.p;
@@
fact("reset", "%s:%s" % (fd, p[0].line))

@reset_conditional@
expression c, q;
position p;
@@
if (c) {
<+...
netdev_tx_reset_queue@p(q);
...+>
}

@script:python@
p << reset_conditional.p;
@@
fact("reset_conditional", p[0].line)

// ---- RX doorbell batching ----
@rxpoll@
identifier fr;
expression a, b, c;
@@
fr(...) {
<+...
mana_process_rx_cqe(a, b, c);
...+>
}

@rx_ring_in_loop@
identifier rxpoll.fr;
expression gc, rq;
position p;
@@
fr(...) {
<+...
for (...;...;...) {
	<+...
	mana_gd_wq_ring_doorbell@p(gc, rq);
	...+>
}
...+>
}

@script:python@
fr << rxpoll.fr;
p << rx_ring_in_loop.p;
@@
fact("rx_ring_in_loop", "%s:%s" % (fr, p[0].line))

@rx_ring_once exists@
identifier rxpoll.fr;
expression a, b, c, gc, rq, E;
@@
fr(...) {
...
for (...;...;...) {
	<+...
	mana_process_rx_cqe(a, b, c);
	...+>
}
...
if (E > 0) {
	...
	mana_gd_wq_ring_doorbell(gc, rq);
	...
}
...
}

@script:python@
fr << rxpoll.fr;
E << rx_ring_once.E;
@@
fact("rx_ring_once", "%s:%s" % (fr, E))

@rx_ring_calls@
identifier rxpoll.fr;
expression gc, rq;
position p;
@@
fr(...) {
<+...
mana_gd_wq_ring_doorbell@p(gc, rq);
...+>
}

@script:python@
fr << rxpoll.fr;
p << rx_ring_calls.p;
@@
fact("rx_ring_call", "%s:%s" % (fr, p[0].line))

@rx_post_rings@
expression q, r, i;
position p;
@@
mana_post_pkt_rxq(...) {
<+...
(
mana_gd_post_and_ring@p(q, r, i)
|
mana_gd_wq_ring_doorbell@p(q, r)
)
...+>
}

@script:python@
p << rx_post_rings.p;
@@
fact("rx_post_rings", p[0].line)

@rq_wqe_cnt_zero@
expression gc, db, ty, id, tail;
position p;
@@
mana_gd_wq_ring_doorbell(...) {
<+...
mana_gd_ring_doorbell@p(gc, db, ty, id, tail, 0);
...+>
}

@script:python@
p << rq_wqe_cnt_zero.p;
@@
fact("rq_wqe_cnt_zero", "mana_gd_wq_ring_doorbell:%s" % p[0].line)

// ---- ndo_start_xmit's return type ----
@start_xmit_type@
type T;
identifier s, n;
@@
T mana_start_xmit(struct sk_buff *s, struct net_device *n) { ... }

@script:python@
t << start_xmit_type.T;
@@
fact("start_xmit_type", t)
