#!/bin/bash
# TX-timeout safety net, per Debian kernel: a test build of the kit's veth
# (BQLKIT_FAULT_INJECTION) loses BQL completions on request; the txq must
# stall, the TX watchdog must log it and recover it, and BQL accounting must
# balance exactly (every dropped completion repaired or still in flight,
# below the limit) and keep working.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip vm-txtimeout "BQLKIT_QUICK=1 (VM tests not run)"
	exit 0
fi
vm=$BQLKIT_TOP/tests/vm
for k in $(test_kernels); do
	series=$(series_of "$(kernel_version "$(kdir_for "$k")")")
	fi_build=$BQLKIT_BUILD/fault-injection
	# The bases imported under the suite's build/, not under $fi_build.
	bases=${BQLKIT_BASES:-$BQLKIT_BUILD/bases}
	if ! out=$(BQLKIT_FAULT_INJECTION=1 BQLKIT_BASES="$bases" \
		BQLKIT_BUILD="$fi_build" "$BQLKIT_TOP/scripts/build.sh" "$k" 2>&1); then
		fail "vm-$series-txtimeout-build" "$(tail -1 <<<"$out")"
		continue
	fi
	log=$BQLKIT_BUILD/test-logs/vm-txtimeout-$k.log
	mkdir -p "$(dirname "$log")"
	initrd=$(mktemp /tmp/bqlkit-initrd-XXXXXX.cpio.gz)
	rc=0
	{ "$vm/get-kernel.sh" "$k" >/dev/null &&
		"$vm/mkinitramfs.sh" --kver "$k" --scenario txtimeout --out "$initrd" \
			--veth "$fi_build/$k/veth.ko" &&
		"$vm/run-vm.sh" --kver "$k" --initrd "$initrd" --log "$log" --quiet; } \
		>/dev/null 2>"$log.err" || rc=$?
	rm -f "$initrd"
	if ! grep -q 'BQLKIT-END' "$log" 2>/dev/null; then
		fail "vm-$series-txtimeout-run" "the VM run did not complete (rc=$rc): $(tail -1 "$log.err") (log: $log)$(vm_crash_note "$log")"
		continue
	fi
	vm_results "vm-$series-txtimeout" "$log"
	grep -o 'BQLKIT dmesg.*' "$log" | sed "s/^/vm-$series: /" >&2 || true
done
