#!/bin/sh
# Kernel text patched under a flood: start and end bqlkit.toggles (10)
# pings during a slowed-receiver flood.  Each ping's socket turns RX
# timestamping on and, when it closes, off: without guest/init's hold
# (bqlkit.hold=0) each can patch a static branch in the receive path while
# the flood runs through it, which MTTCG has been seen to hang on (stop 21's
# soft lockup); with the hold they only count.  A kprobe on
# arch_jump_label_transform_apply (x86: every static branch update goes
# through it) counts the updates during the flood: textpoke_no_patch wants
# none.  tests/t60.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "${BQLKIT_GUEST:-/bqlkit}/lib.sh"

TOGGLES=$(knob toggles 10)
T=/sys/kernel/tracing
mount -t tracefs nodev "$T" 2>/dev/null
PROBE=
if echo 'p:bqlkit/poke arch_jump_label_transform_apply' >>"$T/kprobe_events" 2>/dev/null &&
	echo 1 >"$T/events/bqlkit/poke/enable" 2>/dev/null; then
	PROBE=1
fi
# pokes: the probe's hits so far.
pokes() { awk '$1 == "poke" { print $2 }' "$T/kprobe_profile"; }

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
	check textpoke_no_patch "$((p1 - p0)) static branch updates during the flood" [ "$((p1 - p0))" -eq 0 ]
else
	result textpoke_no_patch SKIP "no kprobe on arch_jump_label_transform_apply (not x86, or no CONFIG_KPROBE_EVENTS)"
fi
check textpoke_flood_survived "$TOGGLES pings started and ended under the flood; ping after" ping_ok
delete_pair
check dmesg_clean "no WARNING/BUG/Oops/refcount/ptr_ring/tx timeout" dmesg_check
