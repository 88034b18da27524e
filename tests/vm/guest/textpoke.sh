#!/bin/sh
# Kernel text patched under a flood: start and end bqlkit.toggles (10)
# pings during a slowed-receiver flood.  Each ping's socket turns RX
# timestamping on and, when it closes, off: without guest/init's hold
# (bqlkit.hold=0) each can patch a static branch in the receive path while
# the flood runs through it, which MTTCG has been seen to hang on (stop 21's
# soft lockup); with the hold they only count.  poke_probe (lib.sh) counts
# the kernel's text patches during the flood: textpoke_no_patch wants none.
# tests/t60.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "${BQLKIT_GUEST:-/bqlkit}/lib.sh"

TOGGLES=$(knob toggles 10)
PROBE=
! poke_probe || PROBE=1

check setup_pair "slow=300" setup_pair 300
ping_ok
[ -z "$PROBE" ] || p0=$(pokes)
flood_start textpoke 30 64 4
sleep 1
i=0 ok=0
while [ "$i" -lt "$TOGGLES" ]; do
	in_ns A ping -q -c 1 -W 1 "$ADDR_B" >/dev/null 2>&1 && ok=$((ok + 1))
	i=$((i + 1))
done
sleep 0.5 # the deferred timestamping work of the last ping
[ -z "$PROBE" ] || p1=$(pokes)
emit "textpoke pings=$TOGGLES replies=$ok updates=${PROBE:+$((p1 - p0))} uptime=$(uptime_s)"
flood_stop
if [ -n "$PROBE" ]; then
	check textpoke_no_patch "$((p1 - p0)) kernel text patches during the flood" [ "$((p1 - p0))" -eq 0 ]
else
	result textpoke_no_patch SKIP "no kprobe on the kernel's text patching (not x86, or no CONFIG_KPROBE_EVENTS)"
fi
check textpoke_flood_survived "$TOGGLES pings started and ended under the flood; ping after" ping_ok
delete_pair
check dmesg_clean "no WARNING/BUG/Oops/refcount/ptr_ring/tx timeout" dmesg_check
