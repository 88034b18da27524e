#!/bin/sh
# Threaded NAPI under BQL yields its CPU (t60).  Under BQL vethB's ring
# holds a few packets: each poll drains them and completes them, which
# wakes vethA's txq; its NET_TX softirq, run as the poll's thread enables
# bottom halves, refills the ring and schedules the NAPI again.  The kit's
# veth_poll() reports its whole budget when a reschedule is due, so that
# napi_threaded_poll_loop() yields; without that the thread polled on
# while the sender had a backlog and nothing else ran on its CPU
# (make bench-scale, 2 queues: another rq's NAPI thread waited 531 ms).
# A one-queue pair, vethB's NAPI threaded on CPU 1, the receiver slowed by
# bqlkit.slow filters, flooded from CPU 0 for bqlkit.secs; beside it ping
# of the loopback, pinned to CPU 1, every 20 ms:
#   yield-mode      vethB's NAPI thread on CPU 1
#   yield-charged   BQL charged vethA's txq under the flood
#   yield-cpu1-gap  the largest gap between ping's replies under the flood
#                   is at most bqlkit.max_gap_ms (150): CPU 1 ran another
#                   task.  t60 boots it under -icount (guest time =
#                   instructions; the host's load does not reach it): 6.1,
#                   the kit before the fix 519 ms (32 replies of 100), with
#                   it 26-27 ms (84), stock 44 ms (55).  On 6.12 -icount's
#                   one TCG thread does not reproduce the loop (the kit
#                   before the fix 30 ms; our reading, not traced: one
#                   TCG thread runs one vCPU at a time, so the sender does
#                   not refill the qdisc while this vCPU polls).  Under
#                   MTTCG it did (347 ms; 6.1 339-488 ms, with the fix 35-67
#                   ms), but there a loaded host alone made 239 ms.
#   yield-ping, yield-dmesg
# Knobs (kernel cmdline): bqlkit.slow=N (300), bqlkit.secs=N (4),
# bqlkit.max_gap_ms=N (150).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "${BQLKIT_GUEST:-/bqlkit}/lib.sh"

SLOW=$(knob slow 300)
SECS=$(knob secs 4)
MAX_GAP=$(knob max_gap_ms 150)
# shellcheck disable=SC2034 # read by setup_pair (lib.sh)
PAIR_QUEUES=1 PAIR_QUIET=1

if ! setup_pair "$SLOW"; then
	result yield-setup FAIL "setup_pair slow=$SLOW"
	exit 1
fi
check yield-mode "vethB's NAPI thread on CPU 1" napi_thread 1
ip link set lo up
ping_ok
# shellcheck disable=SC2034 # read by flood_start (lib.sh)
FLOOD_SEND_CPU=0
flood_start yield "$SECS" 64 4
sleep 1
# ping -D: each reply with its arrival time; the gaps between replies are
# the longest CPU 1 gave no turn to this task (it sends every 20 ms).
taskset -c 1 /usr/bin/ping -D -i 0.02 -w $((SECS - 2)) 127.0.0.1 >"$BQLKIT_RUN/gap.ping" 2>&1 &
_gp=$!
bql_watch_charged yield-load $((SECS - 2))
wait "$_gp"
flood_stop >"$BQLKIT_RUN/flood.yield" 2>&1
emit "flood label=yield $(grep -h UDPFLOOD "$BQLKIT_RUN/flood.yield" | tr '\n' ' ')"
check yield-charged "BQL charged vethA's txq under the flood" \
	awk '$2 == "bql" && $3 ~ /^label=yield-load/ && $5 ~ /^inflight=[1-9]/ { f = 1 } END { exit !f }' "$BQLKIT_RUN/lines"
_gap=$(sed -n 's/^\[\([0-9.]*\)\] .* bytes from .*/\1/p' "$BQLKIT_RUN/gap.ping" |
	awk 'NR > 1 { g = ($1 - p) * 1000; if (g > m) m = g } { p = $1; n++ } END { printf "%d %d\n", m, n }')
emit "yield gap_max_ms=${_gap% *} replies=${_gap#* } ping=$(tail -1 "$BQLKIT_RUN/gap.ping")"
check yield-cpu1-gap "largest gap between replies ${_gap% *} ms (of ${_gap#* } replies; at most $MAX_GAP)" \
	sh -c "[ ${_gap#* } -ge 10 ] && [ ${_gap% *} -le $MAX_GAP ]"
check yield-ping "ping after the flood" ping_ok
check yield-dmesg "no WARNING/BUG/Oops/refcount/ptr_ring/tx timeout" dmesg_check
