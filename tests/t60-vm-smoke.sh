#!/bin/bash
# VM smoke test per Debian kernel: boot the kernel under QEMU TCG, load the
# kit's veth.ko, flood a veth pair with fq_codel on the sender and check BQL
# (inflight > 0 and a finite limit under load, 0 after the flood and after
# NAPI teardown), ping after teardown and pair deletion, rmmod, clean dmesg.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip vm-smoke "BQLKIT_QUICK=1 (VM tests not run)"
	exit 0
fi
for k in $(test_kernels); do
	series=$(series_of "$(kernel_version "$(kdir_for "$k")")")
	ko=$BQLKIT_BUILD/$k/veth.ko
	if [ ! -f "$ko" ] && ! "$BQLKIT_TOP/scripts/build.sh" "$k" >/dev/null 2>&1; then
		fail "vm-$series" "the kit's veth.ko does not build for $k"
		continue
	fi
	log=$BQLKIT_BUILD/test-logs/vm-smoke-$k.log
	mkdir -p "$(dirname "$log")"
	rc=0
	"$BQLKIT_TOP/tests/vm/smoke.sh" --kver "$k" --veth "$ko" --log "$log" --quiet >/dev/null 2>"$log.err" || rc=$?
	if ! grep -q 'BQLKIT-END' "$log" 2>/dev/null; then
		fail "vm-$series-run" "the VM run did not complete: $(tail -1 "$log.err" 2>/dev/null) (log: $log)"
		continue
	fi
	# One line per guest check: BQLKIT-RESULT <name> PASS|FAIL|SKIP <detail>
	vm_results "vm-$series" "$log"
	grep -o 'BQLKIT \(rtt\|bql label=load\).*' "$log" | sed "s/^/vm-$series: /" >&2 || true
	[ "$rc" -eq 0 ] || [ "$(grep -c 'BQLKIT-RESULT .* FAIL' "$log")" -gt 0 ] ||
		fail "vm-$series-harness" "smoke.sh exit $rc with no failed check (log: $log)"
done
