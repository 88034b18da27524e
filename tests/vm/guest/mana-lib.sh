# shellcheck shell=sh
# Guest helpers for the emulated MANA VF scenarios (tests/vm/mana-dev.sh
# boots two of them on one QEMU hub: a wire between two mana ports).
# Topology: netns A holds maA (10.0.0.1, MAC ..:01), netns B holds maB
# (10.0.0.2, MAC ..:02); fq_codel under mq on both (default_qdisc).
# manactl reads the device's test port (knobs and counters, mana_debug.h).

MAC_A=52:54:00:4d:41:01
MAC_B=52:54:00:4d:41:02

# bqlkit.batching=1: the kit's opt-in SQ doorbell batching on.
# batching_set sets tx_doorbell_batching as the knob says (a fresh insmod
# starts with it off; the stock module has no such parameter).
BATCH=$(knob batching 0)
BATCH_PARAM=/sys/module/mana/parameters/tx_doorbell_batching
batching_set() { [ "$BATCH" != 1 ] || echo 1 >"$BATCH_PARAM"; }
# eq_hold_set: with bqlkit.eq_hold_ms=N, a test build's (fault-injection)
# fault_eq_doorbell_hold_ms (changes/mana/0006; tests/t82 eqsync), set
# after every insmod as batching_set is.
EQ_HOLD=$(knob eq_hold_ms 0)
eq_hold_set() { [ "$EQ_HOLD" = 0 ] || echo "$EQ_HOLD" >/sys/module/mana/parameters/fault_eq_doorbell_hold_ms; }
# xmit_hold_set: with bqlkit.xmit_hold_us=N, a test build's
# fault_xmit_more_hold_us (changes/mana/0007; tests/t82 batchcut): each
# WQE left without a doorbell holds its batch N us, so a port going down
# cuts batches short.  Set after every insmod as batching_set is.
XMIT_HOLD=$(knob xmit_hold_us 0)
xmit_hold_set() { [ "$XMIT_HOLD" = 0 ] || echo "$XMIT_HOLD" >/sys/module/mana/parameters/fault_xmit_more_hold_us; }

# mana_ifaces: "ifname mac" of each interface bound to the mana driver.
mana_ifaces() {
	for _d in /sys/class/net/*; do
		_drv=$(readlink "$_d/device/driver" 2>/dev/null) || continue
		[ "${_drv##*/}" = mana ] || continue
		echo "${_d##*/} $(cat "$_d/address")"
	done
}

# mana_setup: move the two mana ports into netns A and B, address them, up.
mana_setup() {
	echo fq_codel >/proc/sys/net/core/default_qdisc
	ensure_netns A && ensure_netns B || return 1
	mana_ifaces >"$BQLKIT_RUN/ifaces"
	while read -r _if _mac; do
		case $_mac in
		"$MAC_A") ip link set dev "$_if" netns A && ip -n A link set dev "$_if" name maA || return 1 ;;
		"$MAC_B") ip link set dev "$_if" netns B && ip -n B link set dev "$_if" name maB || return 1 ;;
		esac
	done <"$BQLKIT_RUN/ifaces"
	# No IPv6: its background packets (MLD reports, router solicitations)
	# would be charged to BQL in the middle of the XDP_TX measurements.
	for _n in A B; do
		in_ns "$_n" sh -c 'echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6; echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6' 2>/dev/null
	done
	ip -n A addr add "$ADDR_A/24" dev maA &&
		ip -n B addr add "$ADDR_B/24" dev maB &&
		ip -n A link set maA up &&
		ip -n B link set maB up || return 1
	# Static neighbours: no ARP races after resets.
	ip -n A neigh replace "$ADDR_B" lladdr "$MAC_B" dev maA nud permanent &&
		ip -n B neigh replace "$ADDR_A" lladdr "$MAC_A" dev maB nud permanent
}

# mctl NS IF ARGS...: manactl for the port IF in netns NS.
mctl() {
	_ns=$1
	shift
	in_ns "$_ns" manactl "$@"
}

# mstat NS IF NAME: one counter.
mstat() { mctl "$1" "$2" get "$3"; }

# mdump LABEL NS IF: every counter as a data line (kept for deltas).
mdump() {
	mctl "$2" "$3" dump >"$BQLKIT_RUN/mana.$1.$3" || return 1
	emit "mana label=$1 dev=$3 $(grep -v '^[sqrce][qe][0-9]' "$BQLKIT_RUN/mana.$1.$3" | tr '\n' ' ')"
}

# mdelta LABEL1 LABEL2 IF NAME: NAME at LABEL2 minus NAME at LABEL1.
mdelta() {
	_a=$(sed -n "s/^$4=//p" "$BQLKIT_RUN/mana.$1.$3")
	_b=$(sed -n "s/^$4=//p" "$BQLKIT_RUN/mana.$2.$3")
	echo $((_b - _a))
}

# ratio A B: A/B with 3 decimals (NA when B is 0).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "NA" }'; }

# bql_of NS IF: "inflight limit" summed/maxed over the tx queues now.
bql_of() {
	in_ns "$1" sh -c 'for q in /sys/class/net/'"$2"'/queues/tx-*; do
		f=$q/byte_queue_limits
		[ -r $f/inflight ] && echo "$(cat $f/inflight) $(cat $f/limit)"
	done' | awk '{ i += $1; if ($2 > l) l = $2 } END { printf "%d %d\n", i, l }'
}

# stop_queues NS IF: how often mana stopped IF's tx queues (ethtool -S
# stop_queue, summed over the queues).
stop_queues() {
	in_ns "$1" ethtool -S "$2" | awk '/stop_queue:/ { s += $2 } END { print s + 0 }'
}

# bql_settle NS IF SECS: wait until the tx queues' inflight is 0; print it.
bql_settle() {
	_t=0
	while :; do
		# shellcheck disable=SC2046 # numbers, split into "$@" on purpose (dash has no arrays)
		set -- $(bql_of "$1" "$2")
		[ "$1" -eq 0 ] && break
		[ "$_t" -ge "$(($3 * 10))" ] && break
		sleep 0.1
		_t=$((_t + 1))
	done
	echo "$1"
}

# bql_peak NS IF SECS: sample every queue's BQL for SECS seconds; print
# "max_inflight max_limit" seen (bqlwatch per queue, in parallel).
bql_peak() {
	rm -f "$BQLKIT_RUN"/bqlw.*
	_qs=$(in_ns "$1" ls "/sys/class/net/$2/queues" | grep '^tx-' | sed 's/tx-//')
	for _q in $_qs; do
		in_ns "$1" bqlwatch "$2" "$_q" "$3" 2000 >"$BQLKIT_RUN/bqlw.$_q" 2>&1 &
	done
	wait
	for _q in $_qs; do cat "$BQLKIT_RUN/bqlw.$_q"; done |
		awk '{ for (i = 1; i <= NF; i++) {
			if ($i ~ /^max_inflight=/) { v = substr($i, 14); if (v + 0 > mi) mi = v + 0 }
			if ($i ~ /^max_limit=/) { v = substr($i, 11); if (v + 0 > ml) ml = v + 0 } } }
			END { printf "%d %d\n", mi, ml }'
}

# udp_start NS DST SECS PAYLOAD SOCKETS: a UDP flood in the background,
# once the wire answers (a port reset just before may still be settling).
udp_start() {
	_w=0
	while [ "$_w" -lt 10 ] && ! in_ns "$1" ping -c 1 -W 1 "$2" >/dev/null 2>&1; do
		_w=$((_w + 1))
	done
	/usr/sbin/ip netns exec "$1" /usr/bin/udpflood send "$2" "$FLOOD_PORT" "$3" "$4" "$5" >"$BQLKIT_RUN/udp.$1.out" 2>&1 &
	UDP_PID=$!
}

# gso_start NS DST SECS [SOCKETS]: a UDP GSO flood in the background from
# SOCKETS sockets (2) (60000-byte writes cut into 1400-byte datagrams: the
# stack segments them in software and hands the segments to the driver as
# one xmit_more batch).
gso_start() {
	/usr/sbin/ip netns exec "$1" /usr/bin/udpflood send "$2" "$FLOOD_PORT" "$3" 60000 "${4:-2}" 0 1400 >"$BQLKIT_RUN/gso.$1.out" 2>&1 &
	# shellcheck disable=SC2034 # for the caller, to wait for
	GSO_PID=$!
}

udp_stop() {
	kill "$UDP_PID" 2>/dev/null
	wait "$UDP_PID" 2>/dev/null
	cat "$BQLKIT_RUN/udp.$1.out"
}

# tcp_bulk FROM TO SECS LABEL: a verified TCP stream FROM -> TO; result
# lines LABEL-delivered and LABEL-intact.
tcp_bulk() {
	_dst=$ADDR_B
	[ "$2" = A ] && _dst=$ADDR_A
	/usr/sbin/ip netns exec "$2" /usr/bin/tcpload sink 5001 $(($3 + 30)) >"$BQLKIT_RUN/sink.$4" 2>&1 &
	_sink=$!
	sleep 0.3
	in_ns "$1" tcpload send "$_dst" 5001 "$3" >"$BQLKIT_RUN/send.$4" 2>&1
	wait "$_sink"
	cat "$BQLKIT_RUN/send.$4" "$BQLKIT_RUN/sink.$4"
	_bytes=$(sed -n 's/.*sink bytes=\([0-9]*\).*/\1/p' "$BQLKIT_RUN/sink.$4")
	_bad=$(sed -n 's/.* bad=\([0-9]*\).*/\1/p' "$BQLKIT_RUN/sink.$4")
	check "$4-delivered" "TCP $1->$2 moved ${_bytes:-0} bytes in ${3}s" [ "${_bytes:-0}" -gt 100000 ]
	check "$4-intact" "every byte as sent (bad=${_bad:-NA})" [ "${_bad:-1}" -eq 0 ]
}

# mana_is_kit: the loaded mana is the kit's (version ends in -bqlkit).
mana_is_kit() {
	case $(cat /sys/module/mana/version 2>/dev/null) in
	*-bqlkit) return 0 ;;
	esac
	return 1
}
