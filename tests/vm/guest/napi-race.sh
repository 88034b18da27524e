#!/bin/sh
# Two NAPI polls of one rq overlapping while the TX watchdog's BQL repair
# is pending (tests/veth-review.py finding 1); needs a veth.ko built with
# BQLKIT_FAULT_INJECTION.  fault_race_polls=N: N polls request a repair and
# busy-wait fault_race_tail_ms after napi_complete_done(); meanwhile the
# next poll, started by a sender on the other CPU, holds the ring's last
# entry fault_race_hold_ms between consuming and completing it.  A repair
# done after napi_complete_done() counts that entry as lost and completes
# it; the second poll then completes it again and dql_completed() BUG()s.
# Done while the poll owns NAPI, the repair finds nothing lost.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "${BQLKIT_GUEST:-/bqlkit}/lib.sh"

P=/sys/module/veth/parameters
RACES=$(knob races 8)
check race_hook_present "$P/fault_race_polls" [ -w "$P/fault_race_polls" ]
# A receiver slowed by 50 ingress filters: with a fast one each sender's
# own softirq drained the ring at once and a standing queue, so a charge,
# came only when a vCPU was descheduled (a full run on a quiet host read
# no charge in 3 s of its watch).  DQL keeps the ring at 2-3 entries, so
# every poll still ends in napi_complete_done(), which the races need.
SLOW=$(knob slow 50)
check setup_pair "slow=$SLOW" setup_pair "$SLOW"
# Per-packet completion: the held entry is the only one in flight.
in_ns A ethtool -C vethA tx-usecs 0
ping_ok

# Two senders, one pinned to each CPU: unpinned, both can share a CPU and
# then no queue stands (a CI run charged nothing in 1 s).
FLOOD_SEND_CPU=0
flood_start race 60 64 2
FLOOD_SEND_CPU=
taskset -c 1 /usr/sbin/ip netns exec A /usr/bin/udpflood send "$ADDR_B" "$FLOOD_PORT" 60 64 2 >/dev/null 2>&1 &
SEND2=$!
sleep 1
# The hold needs a charged entry: the kit charges BQL only behind a
# standing queue (ring or qdisc), which the slowed receiver lets two
# senders on two CPUs build.
bql_watch_charged charge 10 || true
check race_flood_charged "max_inflight=$(bql_max charge inflight) before the races ($(bql_values charge reads | awk '{ n++; s += $1 } END { print n " 1-s windows, " s " reads" }'))" [ "$(bql_max charge inflight)" -gt 0 ]
echo "$RACES" >"$P/fault_race_polls"
emit "race polls=$RACES tail_ms=$(cat "$P/fault_race_tail_ms") hold_ms=$(cat "$P/fault_race_hold_ms") uptime=$(uptime_s)"
_i=0
while [ "$(cat "$P/fault_race_polls")" -gt 0 ] && [ $_i -lt 30 ]; do
	sleep 1
	_i=$((_i + 1))
done
sleep 2
check race_polls_done "$(cat "$P/fault_race_polls") left" [ "$(cat "$P/fault_race_polls")" -eq 0 ]
kill "$SEND2" 2>/dev/null
wait "$SEND2" 2>/dev/null
flood_stop >/dev/null
sleep 1
bql_sample after
check race_inflight_zero "inflight=$(bql_max after inflight)" [ "$(bql_max after inflight)" -eq 0 ]
check race_ping "ping after the races" ping_ok
# Nothing was lost: a repair that completes anything completed a charge
# some poll still held.
_lost=$(dmesg | grep -c 'lost BQL charges')
dmesg | grep 'lost BQL charges' | head -n 3 | sed 's/^/BQLKIT dmesg /'
check race_nothing_repaired "$_lost repair(s) completing in-flight charges" [ "$_lost" -eq 0 ]
check race_dmesg "no WARNING/BUG/Oops" dmesg_check
delete_pair
