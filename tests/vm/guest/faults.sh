#!/bin/sh
# Fault scenario: disturb a flooded, multi-queue veth pair in every way the
# BQL accounting must survive, then check that it recovered:
#   <fault>-charged        BQL had charged a tx queue under the flood
#                          before the fault (else the fault met no charge)
#   <fault>-ops            the fault's own operations succeeded (else the
#                          test proved nothing)
#   <fault>-inflight-zero  BQL inflight back to 0 on every tx queue of vethA
#   <fault>-backlog-zero   the sender's qdisc drained (no tx queue stopped)
#   <fault>-ping           ping -c 1 -W 1 gets through (a few tries)
#   <fault>-dmesg          no WARN/BUG/refcount/ptr_ring/tx timeout lines
#   <fault>-complete       the fault ran to its end (not hung or killed)
# Each fault runs in its own process ("faults.sh NAME"), under a timeout and
# on a fresh pair, so that one failing or hanging fault does not hide the
# others.  Knobs (kernel cmdline): bqlkit.slow=N receiver slowdown filters
# (300), bqlkit.rounds=N module reload rounds (50), bqlkit.faults=a,b subset.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "${BQLKIT_GUEST:-/bqlkit}/lib.sh"

SLOW=$(knob slow 300)
ROUNDS=$(knob rounds 50)
# Seconds a fault may take: 150, times "slowdown" on a debug kernel (run-vm.sh).
FAULT_TIMEOUT=$((150 * $(knob slowdown 1)))
FAULTS=$(knob faults qdisc-swap,channels,xdp,link-flap-sender,link-flap-receiver,pair-delete,netns-delete,module-reload)
PAYLOAD=64
SOCKETS=8 # spread over the 4 tx queues (the socket hash picks the queue)
# shellcheck disable=SC2034 # read by setup_pair (lib.sh)
PAIR_QUEUES=4
# Completions coalesced (the module's default, 0, completes per packet):
# every fault then also meets completions held across NAPI polls.
# shellcheck disable=SC2034 # read by setup_pair (lib.sh)
PAIR_TX_USECS=100
VETH_KO=/lib/modules/bqlkit/veth.ko

# ok_or_note CMD...: run CMD; on failure record it for the -ops result.
ok_or_note() {
	"$@" >"$BQLKIT_RUN/op.out" 2>&1 && return 0
	OPS_FAILED="${OPS_FAILED:+$OPS_FAILED; }$* ($(tr '\n' ' ' <"$BQLKIT_RUN/op.out" | cut -c1-120))"
	return 1
}

# ping_retry: one ping of 1 s, up to 5 tries (ARP and a slow TCG guest).
ping_retry() {
	for _t in 1 2 3 4 5; do
		in_ns A ping -c 1 -W 1 "$ADDR_B" >/dev/null 2>&1 && return 0
	done
	return 1
}

# dmesg_fault: dmesg_check on the kernel log since this fault began.
dmesg_fault() { dmesg_check; }

# pair_gone: wait (up to 10 s) until vethA no longer exists.
pair_gone() {
	for _t in $(seq 1 20); do
		ip -n A link show vethA >/dev/null 2>&1 || return 0
		sleep 0.5
	done
	return 1
}

# tx_timeouts: the TX watchdog's timeouts over vethA's tx queues (each
# queue's tx_timeout, counted by the core).  The kit's watchdog repairs a
# queue whose charges nothing will complete: a leak a fault left then
# reads as inflight 0 a few seconds later, so inflight-zero wants none.
tx_timeouts() { in_ns A sh -c 'cat /sys/class/net/vethA/queues/tx-*/tx_timeout' | awk '{ n += $1 } END { print n + 0 }'; }

# begin: fresh 4-queue pair, slowed receiver, flood running, BQL charged.
# Receiver and sender on their own vCPUs (split_flood): with the receive
# path in the sender's softirq no queue formed, and nothing was charged
# before any fault.
begin() {
	F=$1
	OPS_FAILED=''
	ok_or_note setup_pair "$SLOW"
	split_flood
	# The faults that take vethB's NAPI down: a deep ring for the
	# teardown to drain (smoke.sh's napi_del phase says why; where BQL
	# sysfs is hidden, 6.9+, coalesced completions deepen it instead).
	case $F in
	channels | xdp | link-flap-receiver)
		_deep=$(veth_deep_ring) && emit "fault $F deep ring: $_deep" ;;
	esac
	ping_retry >/dev/null # resolve ARP
	flood_start "$F" 120 "$PAYLOAD" "$SOCKETS"
	# For the driver, should this process be killed.
	echo "$FLOOD_SEND $FLOOD_SINK" >"$BQLKIT_RUN/flood.pids"
	# BQL charged before the fault: else the fault met no charge and the
	# checks after it prove nothing.  Every tx queue is watched: the
	# sockets' hash may leave one of them without a flow.
	for _q in $(tx_queues); do
		bql_watch "$F-charged" 0.3 '' "$_q"
	done
	_c=$(bql_max "$F-charged" inflight)
	TIMEOUTS0=$(tx_timeouts)
	check "fault-$F-charged" "max inflight over tx queues before the fault=$_c (sender cpu ${FLOOD_SEND_CPU:-any})" [ "$_c" -gt 0 ]
}

# finish [fresh]: stop the flood and report.  "fresh": the fault destroyed
# the pair; check that it went away and a fresh pair works.
finish() {
	flood_stop >"$BQLKIT_RUN/flood.$F" 2>&1
	emit "flood label=$F $(grep -h UDPFLOOD "$BQLKIT_RUN/flood.$F" | tr '\n' ' ')"
	if [ "${1:-}" = fresh ]; then
		pair_gone || OPS_FAILED="${OPS_FAILED:+$OPS_FAILED; }vethA still exists 10 s after the fault"
		ok_or_note setup_pair 0
	fi
	if [ -z "$OPS_FAILED" ]; then
		result "fault-$F-ops" PASS "fault operations succeeded"
	else
		result "fault-$F-ops" FAIL "$OPS_FAILED"
	fi
	if [ "${1:-}" != fresh ]; then
		_r=FAIL
		wait_inflight_zero "$F-after" && _r=PASS
		_to=$(($(tx_timeouts) - TIMEOUTS0))
		[ "$_to" = 0 ] || _r=FAIL
		result "fault-$F-inflight-zero" $_r "max inflight over tx queues=$INFLIGHT, TX watchdog timeouts since the fault began=$_to"
		_r=FAIL
		wait_backlog_zero "$F-after" 20 && _r=PASS
		result "fault-$F-backlog-zero" $_r "qdisc backlog=$BACKLOG pkts"
	fi
	check "fault-$F-ping" "ping -c 1 -W 1 $ADDR_B, 5 tries" ping_retry
	check "fault-$F-dmesg" "no WARNING/BUG/Oops/refcount/ptr_ring/tx timeout" dmesg_fault
	dmesg -c >>"$BQLKIT_RUN/dmesg.before" 2>&1 # later lines: next check
	delete_pair
}

# --- the faults ----------------------------------------------------------

# 1. Replace the sender's qdisc live, twice round; entries charged under
# fq_codel must be completed after the swap to noqueue (no charging).
fault_qdisc_swap() {
	begin qdisc-swap
	for _r in 1 2; do
		for _q in pfifo_fast noqueue fq_codel; do
			ok_or_note tc -n A qdisc replace dev vethA root "$_q"
			sleep 0.4
		done
	done
	finish
}

# 2. Channel counts on both ends, including fewer queues than the peer has.
# Shrinking the sender's tx queues while the receiver's rings still hold
# entries charged to the queues that go away is repeated at the end, each
# time with a new sender: a connected socket keeps its tx queue while that
# queue exists, so after one shrink all old sockets stay on tx-0.
new_sender() {
	kill "$FLOOD_SEND" 2>/dev/null
	wait "$FLOOD_SEND" 2>/dev/null
	/usr/sbin/ip netns exec A /usr/bin/udpflood send "$ADDR_B" "$FLOOD_PORT" 60 "$PAYLOAD" "$SOCKETS" >/dev/null 2>&1 &
	FLOOD_SEND=$!
	echo "$FLOOD_SEND $FLOOD_SINK" >"$BQLKIT_RUN/flood.pids"
}
fault_channels() {
	begin channels
	for _step in "A tx 1 rx 4" "A tx 4 rx 4" "A tx 2 rx 2" "A tx 4 rx 4" \
		"A tx 1 rx 1" "A tx 4 rx 4" "B tx 1 rx 1" "A tx 1 rx 1" \
		"B tx 4 rx 4" "B tx 2 rx 3" "A tx 4 rx 4" "B tx 4 rx 4"; do
		# shellcheck disable=SC2086 # $_step is a word list
		set -- $_step
		_ns=$1
		shift
		ok_or_note in_ns "$_ns" ethtool -L "veth$_ns" "$@"
		sleep 0.3
	done
	for _r in 1 2 3 4 5 6; do
		new_sender
		sleep 0.5
		ok_or_note in_ns A ethtool -L vethA tx 1 rx 4
		ok_or_note in_ns A ethtool -L vethA tx 4 rx 4
	done
	# The receiver's rings going away with entries in them.  Above, B's
	# rx shrinks only while every flow sits on A's tx-0 (so on B's rx-0,
	# which stays): rings 1-3 are empty then, and a teardown that
	# completed nothing passed on 6.12 (results/mutants-6.12.md).  Here a
	# new sender spreads its flows over A's 4 tx queues first.
	for _r in 1 2 3; do
		new_sender
		sleep 0.5
		ok_or_note in_ns B ethtool -L vethB tx 4 rx 1
		ok_or_note in_ns B ethtool -L vethB tx 4 rx 4
	done
	_cur=$(in_ns A ls /sys/class/net/vethA/queues | grep -c '^tx-')
	[ "$_cur" = 4 ] || OPS_FAILED="${OPS_FAILED:+$OPS_FAILED; }vethA has $_cur tx queues, not 4"
	finish
}

# 3. XDP on the receiver: attach/detach with GRO on (NAPI stays), then with
# GRO off, where attaching creates the NAPI and detaching tears it down.
xdp_attached() { ip -n B link show vethB | grep -q 'prog/xdp'; }
fault_xdp() {
	begin xdp
	for _gro in on off; do
		ok_or_note in_ns B ethtool -K vethB gro "$_gro"
		sleep 0.3
		ok_or_note xdp_attach B vethB xdp_pass
		ok_or_note xdp_attached
		sleep 1
		ok_or_note ip -n B link set dev vethB xdp off
		sleep 0.5
	done
	ok_or_note in_ns B ethtool -K vethB gro on
	finish
}

# 4a/4b. Link down/up on one end, twice.
link_flap() {
	begin "link-flap-$1"
	for _r in 1 2; do
		ok_or_note ip -n "$2" link set "veth$2" down
		sleep 0.5
		ok_or_note ip -n "$2" link set "veth$2" up
		sleep 1
	done
	finish
}
fault_link_flap_sender() { link_flap sender A; }
fault_link_flap_receiver() { link_flap receiver B; }

# 4c. Delete the pair under load.
fault_pair_delete() {
	begin pair-delete
	ok_or_note delete_pair
	sleep 0.5
	finish fresh
}

# 4d. Delete the receiver's namespace under load.  The sink holds it alive
# until it is killed: kill it at once, the sender keeps flooding meanwhile.
fault_netns_delete() {
	begin netns-delete
	ok_or_note ip netns del B
	kill "$FLOOD_SINK" 2>/dev/null
	sleep 1
	finish fresh
}

# 5. Unload and reload the module ROUNDS times, with traffic in each round.
# Results: -ops (every insmod/setup/rmmod worked), -inflight-zero (every
# round drained), -ping (every round reached the peer), -dmesg.
# Each exec costs ~0.1 s under TCG: the rounds use a lean pair setup (the
# namespaces stay; GRO on at the receiver gives NAPI, so BQL charges) and
# read inflight from the kit's ethtool stats (present on every kernel).
lean_pair() {
	ip link add vethA netns A type veth peer name vethB netns B &&
		printf 'addr add %s/24 dev vethA\nlink set vethA up\n' "$ADDR_A" | ip -n A -batch - &&
		printf 'addr add %s/24 dev vethB\nlink set vethB up\n' "$ADDR_B" | ip -n B -batch - &&
		tc -n A qdisc replace dev vethA root fq_codel &&
		in_ns B ethtool -K vethB gro on
}
inflight_sum() {
	in_ns A ethtool -S vethA | awk '/_bql_inflight:/ { s += $2; n++ } END { print n ? s : "NA" }'
}
reload_round() {
	insmod "$VETH_KO" || return 1
	lean_pair || return 1
	ping_retry || _noping="$_noping $1"
	/usr/sbin/ip netns exec A /usr/bin/udpflood send "$ADDR_B" "$FLOOD_PORT" 1 "$PAYLOAD" 4 >/dev/null 2>&1 &
	_p=$!
	sleep 0.3
	kill "$_p" 2>/dev/null
	wait "$_p"
	for _t in 1 2 3 4 5; do
		_inf=$(inflight_sum)
		[ "$_inf" = 0 ] && break
		sleep 0.2
	done
	[ "$_inf" = 0 ] || _leak="$_leak $1:$_inf"
	delete_pair || return 1
	for _t in 1 2 3 4 5; do
		rmmod veth 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}
fault_module_reload() {
	F=module-reload
	OPS_FAILED='' _noping='' _leak='' _bad=''
	ok_or_note rmmod veth
	_i=1
	while [ "$_i" -le "$ROUNDS" ]; do
		reload_round "$_i" >/dev/null 2>&1 || {
			_bad="$_bad $_i"
			delete_pair 2>/dev/null
			rmmod veth 2>/dev/null
		}
		_i=$((_i + 1))
	done
	emit "reload rounds=$ROUNDS failed=${_bad:-none} noping=${_noping:-none} inflight_left=${_leak:-none}"
	[ -z "$_bad" ] || OPS_FAILED="rounds failed:$_bad"
	# Leave the module loaded and a pair in place for whatever follows.
	[ -d /sys/module/veth ] || ok_or_note insmod "$VETH_KO"
	if [ -z "$OPS_FAILED" ]; then
		result "fault-$F-ops" PASS "$ROUNDS x insmod, pair, flood, delete, rmmod"
	else
		result "fault-$F-ops" FAIL "$OPS_FAILED"
	fi
	check "fault-$F-inflight-zero" "rounds with inflight left:${_leak:- none}" [ -z "$_leak" ]
	check "fault-$F-ping" "rounds without ping:${_noping:- none}" [ -z "$_noping" ]
	check "fault-$F-dmesg" "no WARNING/BUG/Oops/refcount/ptr_ring/tx timeout" dmesg_fault
	dmesg -c >>"$BQLKIT_RUN/dmesg.before" 2>&1
}

# --- driver ----------------------------------------------------------------
if [ -n "${1:-}" ]; then
	# One fault, in this process.
	"fault_$(echo "$1" | tr - _)"
	result "fault-$1-complete" PASS "ran to its end"
	exit 0
fi

# Each fault in its own process, with a fresh kernel log and a time limit.
for f in $(echo "$FAULTS" | tr , ' '); do
	dmesg -c >>"$BQLKIT_RUN/dmesg.before" 2>&1
	emit "fault name=$f start uptime=$(uptime_s)"
	timeout "$FAULT_TIMEOUT" sh "$0" "$f" || result "fault-$f-complete" FAIL "exit $? (killed after $FAULT_TIMEOUT s or crashed)"
	# Whatever the fault left behind must not leak into the next one.
	# shellcheck disable=SC2046 # pids
	kill $(cat "$BQLKIT_RUN/flood.pids" 2>/dev/null) 2>/dev/null
	rm -f "$BQLKIT_RUN/flood.pids"
	ip -n A link show vethA >/dev/null 2>&1 && delete_pair
	[ -d /sys/module/veth ] || insmod "$VETH_KO"
	[ -e /run/netns/B ] || ensure_netns B
	emit "fault name=$f end uptime=$(uptime_s)"
done
# Kernel complaints that came after a fault's own check.
check faults-dmesg-final "no late WARNING/BUG/Oops/refcount/ptr_ring/tx timeout" dmesg_check
