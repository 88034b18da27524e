#!/bin/sh
# Receiver goes down while the sender's txq is stopped by a full ring
# (DRV_XOFF), then comes back: traffic must flow again at once, with no TX
# watchdog report (tests/veth-review.py finding 3).
#
# The ring is filled with frames BQL does not charge: UDP sent from B to
# A:9999 is bounced by xdp_bounce on vethA (XDP_TX) into vethB's ring
# through ndo_xdp_xmit.  vethB defers its NAPI completion
# (napi_defer_hard_irqs + gro_flush_timeout 30 s, a busy-polling setup),
# so once the ring is full nothing drains it: a ping from A gets
# NETDEV_TX_BUSY and stops vethA's txq, and it stays stopped while vethB
# goes down.  veth_close() deletes vethB's NAPI without a last poll; only
# its teardown can wake vethA's txq.  Variants: vethB comes back without
# NAPI (GRO off: nothing else would ever wake the txq; the TX watchdog
# only says "the peer has no NAPI") and with NAPI (GRO on: the watchdog
# would restart it after 5 s, with a warning).
# Results per variant V (nonapi, napi): xoff-V-stopped (the setup did stop
# the txq: requeues and a backlog in the qdisc), xoff-V-flows (a ping
# gets through within 4.5 s of vethB's return), xoff-V-backlog-zero, xoff-V-no-watchdog (7 s
# later: no "stalled"/NETDEV WATCHDOG line).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "${BQLKIT_GUEST:-/bqlkit}/lib.sh"

requeues() {
	tc -n A -s qdisc show dev vethA | sed -n 's/.*requeues \([0-9]*\).*/\1/p' | head -n1
}

backlog() {
	tc -n A -s qdisc show dev vethA | sed -n 's/.*backlog [0-9]*b \([0-9]*\)p.*/\1/p' | head -n1
}

# defer_napi DEV NS SECS: NAPI completion of DEV deferred by SECS (0: off).
defer_napi() {
	in_ns "$2" sh -c "echo $(($3 ? 1000 : 0)) >/sys/class/net/$1/napi_defer_hard_irqs &&
		echo ${3}000000000 >/sys/class/net/$1/gro_flush_timeout"
}

# flows T0: a ping gets through within 4.5 s of uptime T0, less than the
# TX watchdog's 5 s (sets FLOWS_AFTER).
flows() {
	while :; do
		in_ns A ping -c 1 -W 1 "$ADDR_B" >/dev/null 2>&1 && _ok=1 || _ok=
		FLOWS_AFTER=$(echo "$(uptime_s) $1" | awk '{printf "%.2f", $1 - $2}')
		[ -n "$_ok" ] && break
		echo "$FLOWS_AFTER" | awk '{exit !($1 < 4.5)}' || return 1
	done
	echo "$FLOWS_AFTER" | awk '{exit !($1 <= 4.5)}'
}

stopped() { [ "${_rq:-0}" -gt 0 ] && [ "${_bl:-0}" -gt 0 ]; }

watchdog_quiet() {
	_w=$(dmesg | grep -E 'stalled|NETDEV WATCHDOG|timed out')
	[ -z "$_w" ] && return 0
	echo "$_w" | head -n 5 | sed 's/^/BQLKIT dmesg /'
	return 1
}

variant() {
	V=$1 GRO=$2
	dmesg -c >/dev/null
	setup_pair 0 || { result "xoff-$V-setup" FAIL "setup_pair"; return; }
	# Static neighbours: ARP timing must not decide how fast traffic flows.
	_mac_a=$(in_ns A cat /sys/class/net/vethA/address)
	_mac_b=$(in_ns B cat /sys/class/net/vethB/address)
	ip -n A neigh replace "$ADDR_B" lladdr "$_mac_b" dev vethA nud permanent
	ping_ok
	defer_napi vethB B 30 || { result "xoff-$V-setup" FAIL "napi_defer_hard_irqs/gro_flush_timeout"; return; }
	xdp_attach A vethA xdp_bounce ||
		{ result "xoff-$V-setup" FAIL "xdp_bounce on vethA"; return; }
	/usr/sbin/ip netns exec B /usr/bin/udpflood send "$ADDR_A" 9999 60 64 2 >/dev/null 2>&1 &
	_bounce=$!
	sleep 2
	in_ns A ping -c 1 -W 1 "$ADDR_B" >/dev/null 2>&1
	_rq=$(requeues) _bl=$(backlog)
	check "xoff-$V-stopped" "qdisc requeues=$_rq backlog=$_bl pkts (NETDEV_TX_BUSY)" stopped
	ip -n B link set vethB down
	kill "$_bounce" 2>/dev/null
	wait "$_bounce" 2>/dev/null
	defer_napi vethB B 0
	in_ns B ethtool -K vethB gro "$GRO"
	# The stop above lasts as long as the setup makes it (the watchdog
	# may report it): judge only what follows vethB's return.
	dmesg -c >/dev/null
	_t0=$(uptime_s)
	ip -n B link set vethB up
	ip -n B neigh replace "$ADDR_A" lladdr "$_mac_a" dev vethB nud permanent
	FLOWS_AFTER=
	if flows "$_t0"; then
		result "xoff-$V-flows" PASS "ping through ${FLOWS_AFTER}s after vethB up (GRO $GRO; limit 4.5 s)"
	else
		result "xoff-$V-flows" FAIL "no ping through within ${FLOWS_AFTER}s of vethB up (GRO $GRO; limit 4.5 s)"
	fi
	check "xoff-$V-backlog-zero" "qdisc backlog=$(backlog) pkts" [ "$(backlog)" = 0 ]
	sleep 7
	check "xoff-$V-no-watchdog" "no TX watchdog report 7 s later" watchdog_quiet
	ip -n A link set dev vethA xdp off
	delete_pair
}

variant nonapi off
variant napi on
check xoff-dmesg "no WARNING/BUG/Oops" dmesg_check
