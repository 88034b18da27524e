#!/bin/bash
# Overlapping NAPI polls with a BQL repair pending, per Debian kernel
# (guest/napi-race.sh; a BQLKIT_FAULT_INJECTION build of the kit's veth
# forces the interleaving): no double completion (dql_completed() BUG),
# nothing counted as lost, inflight back to 0 (tests/veth-review.py
# finding 1).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip vm-napi-race "BQLKIT_QUICK=1 (VM tests not run)"
	exit 0
fi
vm=$BQLKIT_TOP/tests/vm
fi_build=$BQLKIT_BUILD/fault-injection
# The bases imported under the suite's build/, not under $fi_build.
bases=${BQLKIT_BASES:-$BQLKIT_BUILD/bases}
for k in $(test_kernels); do
	series=$(series_of "$(kernel_version "$(kdir_for "$k")")")
	if ! out=$(BQLKIT_FAULT_INJECTION=1 BQLKIT_BASES="$bases" \
		BQLKIT_BUILD="$fi_build" "$BQLKIT_TOP/scripts/build.sh" "$k" veth 2>&1); then
		fail "vm-$series-napi-race-build" "$(tail -1 <<<"$out")"
		continue
	fi
	log=$BQLKIT_BUILD/test-logs/vm-napi-race-$k.log
	mkdir -p "$(dirname "$log")"
	initrd=$(mktemp /tmp/bqlkit-initrd-XXXXXX.cpio.gz)
	rc=0
	{ "$vm/get-kernel.sh" "$k" >/dev/null &&
		"$vm/mkinitramfs.sh" --kver "$k" --scenario napi-race --out "$initrd" \
			--veth "$fi_build/$k/veth.ko" &&
		"$vm/run-vm.sh" --kver "$k" --initrd "$initrd" --log "$log" --quiet; } \
		>/dev/null 2>"$log.err" || rc=$?
	rm -f "$initrd"
	if ! grep -q 'BQLKIT-END' "$log" 2>/dev/null; then
		fail "vm-$series-napi-race-run" "the VM run did not complete (rc=$rc): $(tail -1 "$log.err" 2>/dev/null) (log: $log)$(vm_crash_note "$log")"
		continue
	fi
	vm_results "vm-$series-napi-race" "$log"
	grep -o 'BQLKIT \(race\|dmesg\) .*' "$log" | sed "s/^/vm-$series: /" >&2 || true
done
