#!/bin/bash
# mana on the Debian kernels this host cannot build natively (trixie 6.12,
# sid 7.2, trixie-backports 7.3): the kit's mana.ko is built in the cached
# sid/trixie chroots through `make matrix` (their compilers, their headers,
# check-abi.sh against their Module.symvers), then a QEMU VM boots that
# Debian kernel with t82's scenario on the emulated MANA VF: the kit's
# mana.ko through every phase (the kernel's own mana_ib.ko loaded on top,
# dmesg clean), the kernel's own mana.ko showing no BQL.  Where the kit's
# QEMU cannot be built, the VM only loads the kit's mana.ko and mana_ib.ko
# (no device needed), as t80 does for the test kernels.  The first
# run makes two chroots (a few minutes each, cached in
# $BQLKIT_CACHE/chroots).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip mana-chroots "BQLKIT_QUICK=1 (chroot builds and VM tests not run)"
	exit 0
fi
# ROW: ID:SUITE:VCPUS.  sid's kernel runs the device scenarios on one vCPU
# (NAPI, the xmit path and the wire's timer on one CPU), the others on two,
# as t82 does: one vCPU in CI at no extra cost.
first_ko=
for row in trixie-6.12:trixie-security:2 sid-7.2:sid:1 trixie-bpo-7.3:trixie-backports:2; do
	IFS=: read -r id suite smp <<<"$row"
	series=${id##*-}
	t=mana-$id
	if [ ! -f "$(base_dir "$series")/MANIFEST" ]; then
		skip "$t" "no imported Linux $series base (tests/setup.sh fetches it from $suite; the fetch failed)"
		continue
	fi
	chroot_cell "$t-build" "$id" mana "$tmp/$id" || continue
	[ "$id" != trixie-6.12 ] || first_ko=$CELL_KO
	check "$t-abi-kept" grep -q "ABI kept for $CELL_KVER" "$CELL_LOG"
	# On the emulated MANA VF (t82's scenario): the kit's mana.ko built in
	# the chroot, then the kernel's own.  Its mana_ib phase loads the
	# kernel's mana_ib on the kit's mana (CRCs) and checks dmesg, as the
	# device-less boot does: that boot runs only where the device cannot.
	[ -n "${MANA_QEMU:-}" ] || mana_dev_qemu || MANA_QEMU=none
	if [ "$MANA_QEMU" = none ]; then
		vm_mana "$t" "$CELL_KVER" "$CELL_KO" "$suite" || true
		continue
	fi
	n=mana-dev-$id
	[ "$smp" = 2 ] || n=$n-${smp}cpu
	vm_mana_dev "$n-kit" "$CELL_KVER" "$MANA_DEV_KIT_PHASES" --module "$CELL_KO" --suite "$suite" --smp "$smp"
	vm_mana_dev "$n-stock" "$CELL_KVER" "$MANA_DEV_STOCK_PHASES" --suite "$suite" --smp "$smp"
	# Lost TX completions, as t82: 7.x has upstream's TX watchdog, whose
	# reset recovers the queue with no help, but its drain waits out the
	# lost completions too (7.3: 139 s of guest time, under -icount).
	vm_mana_dev_lost "mana-dev-$id-lost" "$CELL_KVER" "$CELL_KO" --suite "$suite"
done
# trixie-bpo-7.3 was built after trixie-6.12 in the same trixie chroot:
# that run must leave trixie-6.12's module (another run may load it).
[ -z "${first_ko:-}" ] || check mana-chroots-other-rows-kept test -f "$first_ko"
