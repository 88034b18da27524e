#!/bin/sh
# tx-usecs knob, then the TX-timeout safety net (needs a veth.ko built with
# BQLKIT_FAULT_INJECTION):
# under a flood, make the consumer lose more BQL completions than the DQL
# limit, so BQL stops the txq for good; the TX watchdog must notice, log it,
# and have the peer's NAPI complete the lost charges: traffic resumes and
# the books balance exactly.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "${BQLKIT_GUEST:-/bqlkit}/lib.sh"

P=/sys/module/veth/parameters/fault_lose_completions
check fault_hook_present "$P" [ -w "$P" ]
check setup_pair "slow=100" setup_pair 100
# The receiver on vCPU 1, the flood's sender on vCPU 0 (split_flood): a
# standing queue forms, so the kit charges and a loss can stall.
check napi_thread_cpu1 "vethB's NAPI threaded on CPU 1" split_flood
# tx-usecs (BQL completion coalescing): default 0 (the kit's; upstream
# 100), settable, bounded.
usecs() { in_ns A ethtool -c vethA | sed -n 's/^tx-usecs: *//p'; }
check coalesce_default_0 "tx-usecs=$(usecs)" [ "$(usecs)" = 0 ]
in_ns A ethtool -C vethA tx-usecs 500
check coalesce_set_500 "tx-usecs=$(usecs)" [ "$(usecs)" = 500 ]
check coalesce_rejects_over_1s "tx-usecs 2000000 refused" sh -c '! /usr/sbin/ip netns exec A /usr/sbin/ethtool -C vethA tx-usecs 2000000 2>/dev/null'
in_ns A ethtool -C vethA tx-usecs 0 # per-packet completion: a small, known limit
check coalesce_set_0 "tx-usecs=$(usecs)" [ "$(usecs)" = 0 ]
ping_ok

flood_start lose 40 64 4
sleep 2
bql_sample before
LIMIT=$(bql_max before limit)
LOSE=$((LIMIT + 8))
echo "$LOSE" >"$P"
emit "fault lose_completions=$LOSE limit=$LIMIT uptime=$(uptime_s)"

# The txq must stall: ping fails while the flood is stopped by BQL.
sleep 2
stalled() { ! in_ns A ping -c 2 -W 1 "$ADDR_B" >/dev/null 2>&1; }
check txq_stalls_without_completions "lost=$LOSE limit=$LIMIT" stalled

# Within watchdog_timeo (5 s) plus a timer period, the watchdog recovers it.
recovered() {
	_i=0
	while [ $_i -lt 20 ]; do
		dmesg | grep -q 'completed [0-9]* lost BQL charges' && ping_ok && return 0
		sleep 1
		_i=$((_i + 1))
	done
	return 1
}
check watchdog_recovers "$(dmesg | grep -c 'TX queue 0 stalled') watchdog line(s)" recovered
dmesg | grep -E 'stalled|lost BQL|NETDEV WATCHDOG' | sed 's/^/BQLKIT dmesg /'
check watchdog_log_line "TX queue 0 stalled (BQL" sh -c "dmesg | grep -q 'vethA: TX queue 0 stalled (BQL'"
check fault_budget_used "$(cat $P) left" [ "$(cat $P)" -eq 0 ]

flood_stop
sleep 1
# The queue stalls once LIMIT + 1 charges are lost; the hook may lose the
# rest after the first repair, and that second stall waits for the
# watchdog's next run (watchdog_timeo, 5 s, plus a timer period).
# recovered() returns as soon as one ping gets through between the two, so
# wait here until the queue runs again (inflight <= limit), 15 s at most,
# before the books.
_i=0
while [ $_i -lt 15 ]; do
	bql_sample "settle$_i"
	[ "$(bql_max "settle$_i" inflight)" -gt "$(bql_max "settle$_i" limit)" ] || break
	sleep 1
	_i=$((_i + 1))
done
bql_sample after
# Exact books: every charge the hook dropped is either completed by a
# watchdog repair or still in flight.  A drop that left inflight at or
# below the limit never stalled the queue, so no watchdog repairs it (BQL
# tolerates it, as it would a real one); all stalled ones must be repaired.
REPAIRED=$(dmesg | sed -n 's/.*completed \([0-9]*\) lost BQL charges.*/\1/p' | awk '{ n += $1 } END { print n + 0 }')
LEFT=$(bql_max after inflight)
LIMIT_AFTER=$(bql_max after limit)
emit "fault books lost=$LOSE repaired=$REPAIRED inflight_after=$LEFT limit_after=$LIMIT_AFTER"
check bql_books_balance "lost $LOSE = repaired $REPAIRED + in flight $LEFT" [ $((REPAIRED + LEFT)) -eq "$LOSE" ]
check bql_leftover_below_limit "in flight $LEFT <= limit $LIMIT_AFTER (the queue runs)" [ "$LEFT" -le "$LIMIT_AFTER" ]

# Accounting still works: BQL charges and completes under a new flood.
flood_start again 4 64 4
sleep 1
bql_watch again 2
flood_wait
sleep 1
bql_sample again_after
check bql_active_after_recovery "max_inflight=$(bql_max again inflight)" [ "$(bql_max again inflight)" -gt 0 ]
check bql_inflight_back_to_leftover "inflight=$(bql_max again_after inflight), leftover $LEFT" [ "$(bql_max again_after inflight)" -eq "$LEFT" ]

# Only the expected watchdog report: nothing else (no BUG from dql_completed).
unexpected() {
	dmesg | grep -E 'WARNING:|BUG:|refcount|ptr_ring|Oops|general protection|invalid opcode' |
		grep -v 'NETDEV WATCHDOG' | grep -v 'dev_watchdog' | grep -q .
}
check dmesg_clean_but_watchdog_strict "no BUG/Oops" eval '! unexpected'
delete_pair
check module_unload "rmmod veth" rmmod veth
