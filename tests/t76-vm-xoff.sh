#!/bin/bash
# Receiver down while the sender's txq is stopped by a ring full of frames
# BQL does not charge (XDP_TX into the pair), per Debian kernel
# (tests/vm/xoff.sh, guest/xoff.sh): when the receiver comes back, without
# NAPI or with it, traffic flows again at once and the TX watchdog stays
# quiet (tests/veth-review.py finding 3).  One VM per kernel, ~1 min each
# under TCG.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip vm-xoff "BQLKIT_QUICK=1 (VM tests not run)"
	exit 0
fi
for k in $(test_kernels); do
	series=$(series_of "$(kernel_version "$(kdir_for "$k")")")
	ko=$BQLKIT_BUILD/$k/veth.ko
	if [ ! -f "$ko" ] && ! out=$("$BQLKIT_TOP/scripts/build.sh" "$k" 2>&1); then
		fail "vm-$series-xoff-build" "$(tail -1 <<<"$out")"
		continue
	fi
	vm_xoff "vm-$series" "$k" "$ko" "$BQLKIT_BUILD/test-logs/vm-xoff-$k.log"
done
