#!/bin/sh
# Multi-queue scenario: veth pairs of 1, 2 and 4 queues, vethB's NAPI on
# for GRO alone, for an XDP program (xdp_pass) and threaded, each flooded
# over every queue through a slowed receiver.  veth_xmit() charges the txq
# of the rq it produces into; the peer's NAPI poll of that rq must complete
# (and wake) that very txq.  Completing another one -- 6.18's veth_poll()
# took the index from rq->xdp_rxq, 0 on every rq without XDP -- BUG()s in
# dql_completed() or leaves the charged txq stopped.  Per pair:
#   mqQ-MODE-mode           the NAPI mode took (XDP attached, thread on)
#   mqQ-MODE-rq-used        every rq of vethB received part of the flood
#   mqQ-MODE-charged        BQL charged a txq under the flood (on 2+
#                           queues: a txq other than 0)
#   mqQ-MODE-inflight-zero  every txq's BQL books back to 0, and
#   mqQ-MODE-backlog-zero   the qdisc drained (no txq left stopped), both
#                           within 3 s: before the kit's 5 s TX watchdog
#   mqQ-MODE-no-timeout     no txq timed out (the watchdog did not repair)
#   mqQ-MODE-ping, mqQ-MODE-dmesg
# Knobs (kernel cmdline): bqlkit.slow=N (300), bqlkit.queues=1,2,4,
# bqlkit.modes=gro,xdp,threaded, bqlkit.secs=N flood seconds at most (8:
# the watch ends it).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "${BQLKIT_GUEST:-/bqlkit}/lib.sh"

SLOW=$(knob slow 300)
QUEUES=$(knob queues 1,2,4 | tr , ' ')
MODES=$(knob modes gro,xdp,threaded | tr , ' ')
SECS=$(knob secs 8)
SOCKETS=16 # per sender: the sockets' hash spreads them over the txqs
# shellcheck disable=SC2034 # read by setup_pair (lib.sh)
PAIR_QUIET=1

# rq_packets N: packets vethB's rq N took in (the NAPI path's counter).
rq_packets() {
	in_ns B ethtool -S vethB | sed -n "s/^ *rx_queue_$1_xdp_packets: *//p"
}

# charged_past0: $_charged (the txqs seen charged) has one other than 0.
charged_past0() {
	case " $_charged" in *" "[1-9]*) return 0 ;; esac
	return 1
}

for Q in $QUEUES; do
	for M in $MODES; do
		T=mq$Q-$M
		# fq_codel under mq, one per txq; mq needs 2+ txqs.
		# shellcheck disable=SC2034 # read by setup_pair (lib.sh)
		PAIR_QUEUES=$Q PAIR_QDISC=mq
		# shellcheck disable=SC2034 # read by setup_pair (lib.sh)
		[ "$Q" -gt 1 ] || PAIR_QDISC=root
		if ! setup_pair "$SLOW"; then
			result "$T-setup" FAIL "setup_pair queues=$Q slow=$SLOW"
			delete_pair 2>/dev/null
			continue
		fi
		case $M in
		gro) check "$T-mode" "NAPI for GRO alone (no XDP program)" sh -c '! ip -n B link show vethB | grep -q prog/xdp' ;;
		xdp) check "$T-mode" "xdp_pass attached to vethB" xdp_attach B vethB xdp_pass ;;
		threaded) check "$T-mode" "vethB's NAPI threads on CPU 1" napi_thread 1 ;;
		esac
		# Without a thread, vethB's NAPI runs in the senders' softirq
		# and paces them: hold it off 200 us after each poll (napi_defer)
		# so that the rings fill and every txq gets charges.
		case $M in
		gro | xdp) napi_defer 200 || emit "napi defer=failed" ;;
		esac
		ping_ok
		# Two senders, one on each CPU: a ring fills while its NAPI
		# runs on the other CPU, so charges stand on every txq.
		FLOOD_SEND_CPU=0
		flood_start "$T" "$SECS" 64 "$SOCKETS"
		FLOOD_SEND_CPU=
		taskset -c 1 /usr/sbin/ip netns exec A /usr/bin/udpflood send "$ADDR_B" "$FLOOD_PORT" "$SECS" 64 "$SOCKETS" >/dev/null 2>&1 &
		SEND2=$!
		sleep 0.5
		# Watch every txq in turn, up to 3 rounds, until one other than
		# txq 0 (on 2+ queues) was seen charged: the charges must cross
		# rqs for a wrong index to show.
		_round=0
		while [ "$_round" -lt 3 ]; do
			for _q in $(tx_queues); do
				bql_watch "$T-load" 0.5 '' "$_q"
			done
			# Which txqs were charged: bql lines are per queue.
			_charged=$(awk -v l="label=$T-load" '$2 == "bql" && $3 == l && $5 !~ /^inflight=0$/ && $5 !~ /NA/ { sub("queue=tx-", "", $4); print $4 }' "$BQLKIT_RUN/lines" | sort -u | tr '\n' ' ')
			charged_past0 && break
			[ "$Q" -gt 1 ] || [ -z "$_charged" ] || break
			_round=$((_round + 1))
		done
		kill "$SEND2" 2>/dev/null
		wait "$SEND2"
		flood_stop >"$BQLKIT_RUN/flood.$T" 2>&1
		emit "flood label=$T $(grep -h UDPFLOOD "$BQLKIT_RUN/flood.$T" | tr '\n' ' ')"
		_unused=''
		_n=0
		while [ "$_n" -lt "$Q" ]; do
			[ "$(rq_packets "$_n")" -gt 0 ] 2>/dev/null || _unused="$_unused $_n"
			_n=$((_n + 1))
		done
		check "$T-rq-used" "rqs that took nothing:${_unused:- none}" [ -z "$_unused" ]
		if [ "$Q" -gt 1 ]; then
			check "$T-charged" "txqs charged under the flood: ${_charged:-none}" charged_past0
		else
			check "$T-charged" "txqs charged under the flood: ${_charged:-none}" [ -n "$_charged" ]
		fi
		_r=FAIL
		wait_inflight_zero "$T-after" && _r=PASS
		result "$T-inflight-zero" $_r "max inflight over txqs=$INFLIGHT"
		_r=FAIL
		wait_backlog_zero "$T-after" && _r=PASS
		result "$T-backlog-zero" $_r "qdisc backlog=$BACKLOG pkts"
		_to=$(tx_timeouts)
		check "$T-no-timeout" "tx_timeout over txqs=$_to" [ "$_to" -eq 0 ]
		check "$T-ping" "ping after the flood" ping_ok
		check "$T-dmesg" "no WARNING/BUG/Oops/refcount/ptr_ring/tx timeout" dmesg_check
		dmesg -c >/dev/null 2>&1 # later lines: the next pair's check
		delete_pair
	done
done
