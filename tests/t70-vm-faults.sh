#!/bin/bash
# VM fault tests per Debian kernel (tests/vm/faults.sh, guest/faults.sh): the
# kit's veth.ko under a UDP flood on a 4-queue pair survives a live qdisc
# swap, channel count changes, XDP attach/detach, link down/up on either end,
# pair and netns deletion, and 50 module reloads.  Per fault and kernel:
# vm-<series>-fault-<fault>-{charged,ops,inflight-zero,backlog-zero,ping,dmesg,complete}.
# Both kernels' VMs run at once (each ~3 min under TCG).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

# The faults, in the order the guest runs them (one VM boot per kernel).
FAULTS=qdisc-swap,channels,xdp,link-flap-sender,link-flap-receiver,pair-delete,netns-delete,module-reload

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip vm-faults "BQLKIT_QUICK=1 (VM tests not run)"
	exit 0
fi
logs=$BQLKIT_BUILD/test-logs
mkdir -p "$logs"

# Start one VM per kernel in the background.
declare -A pid=() series=()
for k in $(test_kernels); do
	series[$k]=$(series_of "$(kernel_version "$(kdir_for "$k")")")
	ko=$BQLKIT_BUILD/$k/veth.ko
	if [ ! -f "$ko" ] && ! "$BQLKIT_TOP/scripts/build.sh" "$k" >/dev/null 2>&1; then
		fail "vm-${series[$k]}-faults" "the kit's veth.ko does not build for $k"
		continue
	fi
	log=$logs/vm-faults-$k.log
	rm -f "$log"
	"$BQLKIT_TOP/tests/vm/faults.sh" --kver "$k" --veth "$ko" --log "$log" --quiet \
		--append "bqlkit.faults=$FAULTS" >/dev/null 2>"$log.err" &
	pid[$k]=$!
done

for k in "${!pid[@]}"; do
	s=${series[$k]} log=$logs/vm-faults-$k.log rc=0
	wait "${pid[$k]}" || rc=$?
	if [ ! -s "$log" ]; then
		fail "vm-$s-faults-run" "no VM log: $(tail -1 "$log.err" 2>/dev/null)"
		continue
	fi
	# One line per guest check: BQLKIT-RESULT <name> PASS|FAIL|SKIP <detail>
	vm_results "vm-$s" "$log"
	# A fault that never finished (VM crash, hang, timeout) hides nothing.
	for f in ${FAULTS//,/ }; do
		grep -q "BQLKIT-RESULT fault-$f-complete " "$log" ||
			fail "vm-$s-fault-$f-complete" "no result: the VM crashed, hung or timed out before it ($(tail -1 "$log.err" 2>/dev/null); log: $log)"
	done
	grep -q '^BQLKIT-END' "$log" ||
		fail "vm-$s-faults-run" "the VM run did not complete: $(tail -1 "$log.err" 2>/dev/null) (log: $log)$(vm_crash_note "$log")"
	[ "$rc" -eq 0 ] || grep -q 'BQLKIT-RESULT .* FAIL' "$log" ||
		fail "vm-$s-faults-harness" "faults.sh exit $rc with no failed check (log: $log)"
	grep -o 'BQLKIT \(reload\|dmesg\) .*' "$log" | sed "s/^/vm-$s: /" >&2 || true
done
