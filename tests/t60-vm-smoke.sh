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
	vm_smoke "vm-$series" "$k" "$ko" "$BQLKIT_BUILD/test-logs/vm-smoke-$k.log"
done
