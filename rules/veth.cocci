// SPDX-License-Identifier: GPL-2.0
// Facts about a veth.c for the rules in rules/veth.rules (scripts/rules.sh).
// One "FACT <name> <detail>" line per finding:
//   ring_full_busy    a function returns NETDEV_TX_BUSY when the ptr_ring
//                     produce (or its check) fails: the qdisc requeues
//   xmit_stop         veth_xmit() stops its txq (on NETDEV_TX_BUSY)
//   xmit_drop_status  veth_xmit() returns NET_XMIT_DROP for an skb it dropped
//   wake              a function that wakes a stopped txq
//   sent              every netdev_tx_sent_queue() (function:line)
//   sent_before_produce  the charge comes before the ptr_ring produce
//   sent_under_lock   the charge is inside the ring's producer_lock
//   completed         every netdev_tx_completed_queue() (function:line)
//   after_napi_disable  netdev_tx_completed_queue() or
//                     netdev_tx_reset_queue() after napi_disable() in the
//                     same function (teardown settles what was charged)
//   tx_timeout_op     the ndo_tx_timeout handler
//   watchdog_timeo    a function that sets dev->watchdog_timeo
//   set_coalesce_op   the ethtool set_coalesce handler
//   tx_usecs          a function that reads ->tx_coalesce_usecs
//   poll_txq          the index of every txq veth_poll() takes
//                     (netdev_get_tx_queue()), as text
//   poll_idx          "v = e": what veth_poll() sets such an index
//                     variable to
//   poll_flush        the line of every xdp_do_flush() (or its older
//                     name, xdp_do_flush_map()) in veth_poll()
//   poll_complete     the line of every napi_complete_done() in veth_poll()

@initialize:python@
@@
def fact(name, detail):
    print("FACT %s %s" % (name, detail))

@ring_full_busy@
identifier fn;
expression r, e;
position p;
@@
fn(...) {
<+...
(
if (<+... ptr_ring_produce(r, e) ...+>)
	return@p NETDEV_TX_BUSY;
|
if (<+... ptr_ring_produce(r, e) ...+>) {
	...
	return@p NETDEV_TX_BUSY;
}
|
if (<+... __ptr_ring_check_produce(r) ...+>)
	return@p NETDEV_TX_BUSY;
|
if (<+... __ptr_ring_check_produce(r) ...+>) {
	...
	return@p NETDEV_TX_BUSY;
}
)
...+>
}

@script:python@
fn << ring_full_busy.fn;
@@
fact("ring_full_busy", fn)

@xmit_stop@
expression t;
@@
veth_xmit(...) {
<+...
netif_tx_stop_queue(t);
...+>
}

@script:python depends on xmit_stop@
@@
fact("xmit_stop", "veth_xmit")

@xmit_drop_status@
identifier ret;
@@
veth_xmit(...) {
<+...
(
ret = NET_XMIT_DROP;
|
return NET_XMIT_DROP;
)
...+>
}

@script:python depends on xmit_drop_status@
@@
fact("xmit_drop_status", "veth_xmit")

@wake@
identifier fn;
expression t;
@@
fn(...) {
<+...
netif_tx_wake_queue(t);
...+>
}

@script:python@
fn << wake.fn;
@@
fact("wake", fn)

@sent@
identifier fn;
expression q, n;
position p;
@@
fn(...) {
<+...
netdev_tx_sent_queue@p(q, n);
...+>
}

@script:python@
fn << sent.fn;
p << sent.p;
@@
fact("sent", "%s:%s" % (fn, p[0].line))

// (One rule per produce function: a disjunction of bare expressions here
// matched paths it should not.)
@sent_before_produce exists@
identifier sent.fn;
expression q, n, r, e;
position sent.p, pf;
@@
fn(...) {
...
netdev_tx_sent_queue@p@pf(q, n);
...
__ptr_ring_produce(r, e)
...
}

@script:python@
fn << sent.fn;
pf << sent_before_produce.pf;
@@
fact("sent_before_produce", "%s:%s" % (fn, pf[0].line))

@sent_before_produce2 exists@
identifier sent.fn;
expression q, n, r, e;
position sent.p, pf;
@@
fn(...) {
...
netdev_tx_sent_queue@p@pf(q, n);
...
ptr_ring_produce(r, e)
...
}

@script:python@
fn << sent.fn;
pf << sent_before_produce2.pf;
@@
fact("sent_before_produce", "%s:%s" % (fn, pf[0].line))

@sent_under_lock exists@
identifier sent.fn;
expression q, n, l;
position sent.p, pf;
@@
fn(...) {
...
spin_lock(l);
... when != spin_unlock(l);
netdev_tx_sent_queue@p@pf(q, n);
... when != spin_lock(l);
spin_unlock(l);
...
}

@script:python@
fn << sent.fn;
pf << sent_under_lock.pf;
@@
fact("sent_under_lock", "%s:%s" % (fn, pf[0].line))

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

@after_napi_disable exists@
identifier fd;
expression nap, q, pk, by;
@@
fd(...) {
...
(
napi_disable(nap);
|
napi_disable_locked(nap);
)
...
(
netdev_tx_completed_queue(q, pk, by);
|
netdev_tx_reset_queue(q);
)
...
}

@script:python@
fd << after_napi_disable.fd;
@@
fact("after_napi_disable", fd)

@tx_timeout_op@
identifier ops, h;
@@
struct net_device_ops ops = {
	.ndo_tx_timeout = h,
};

@script:python@
h << tx_timeout_op.h;
@@
fact("tx_timeout_op", h)

@watchdog@
identifier fn;
expression d, v;
@@
fn(...) {
<+...
d->watchdog_timeo = v;
...+>
}

@script:python@
fn << watchdog.fn;
@@
fact("watchdog_timeo", fn)

@set_coalesce_op@
identifier ops, h;
@@
struct ethtool_ops ops = {
	.set_coalesce = h,
};

@script:python@
h << set_coalesce_op.h;
@@
fact("set_coalesce_op", h)

@tx_usecs@
identifier fn;
expression ec;
@@
fn(...) {
<+...
ec->tx_coalesce_usecs
...+>
}

@script:python@
fn << tx_usecs.fn;
@@
fact("tx_usecs", fn)

// The txq veth_poll() completes, repairs and wakes must be the one
// veth_xmit() charged for this rq (rules/veth.rules bql-poll-txq).
@poll_txq@
expression d, i;
@@
veth_poll(...) {
<+...
netdev_get_tx_queue(d, i)
...+>
}

@script:python@
i << poll_txq.i;
@@
fact("poll_txq", " ".join(str(i).split()))

// The index variables of those txqs, and what veth_poll() sets them to.
@poll_txq_var@
identifier v;
expression d;
@@
veth_poll(...) {
<+...
netdev_get_tx_queue(d, v)
...+>
}

@poll_idx_init@
type T;
identifier poll_txq_var.v;
expression e;
@@
veth_poll(...) {
...
T v = e;
...
}

@script:python@
v << poll_txq_var.v;
e << poll_idx_init.e;
@@
fact("poll_idx", "%s = %s" % (v, " ".join(str(e).split())))

@poll_idx_set@
identifier poll_txq_var.v;
expression e;
@@
veth_poll(...) {
<+...
v = e
...+>
}

@script:python@
v << poll_txq_var.v;
e << poll_idx_set.e;
@@
fact("poll_idx", "%s = %s" % (v, " ".join(str(e).split())))

// Redirected XDP frames are flushed before the poll completes
// (rules/veth.rules xdp-flush-before-complete): the lines of both calls.
@poll_flush exists@
position p;
@@
veth_poll(...) {
<+...
(
xdp_do_flush@p()
|
xdp_do_flush_map@p()
)
...+>
}

@script:python@
p << poll_flush.p;
@@
fact("poll_flush", p[0].line)

@poll_complete exists@
position p;
expression n, d;
@@
veth_poll(...) {
<+...
napi_complete_done@p(n, d)
...+>
}

@script:python@
p << poll_complete.p;
@@
fact("poll_complete", p[0].line)
