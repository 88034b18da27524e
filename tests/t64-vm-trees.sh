#!/bin/bash
# VM smoke test on kernels built from a source tree (5.15, 6.6, 6.18 LTS:
# no Debian kernel image) by lab/build-vm-kernel.sh, found as
# $BQLKIT_CACHE/kernels/KVER/.bqlkit-tree-kernel (holding the O= build
# directory, which has a full Module.symvers).  For each: build the kit's
# veth against that directory, then run t60's smoke scenario with the stock
# veth (for the log: 6.6's has no BQL) and with the kit's, whose checks must
# all pass; then, with the kit's, t60's multiqueue scenario (guest/mq.sh)
# and t76's receiver-down scenario (tests/vm/xoff.sh).  CI builds no
# such kernel: without one this file skips.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip vm-trees "BQLKIT_QUICK=1 (VM tests not run)"
	exit 0
fi
n=0
for mark in "$BQLKIT_CACHE"/kernels/*/.bqlkit-tree-kernel; do
	[ -f "$mark" ] || continue
	# Debug kernels (lab/build-debug-kernels.sh) are not smoke-tested here.
	[ ! -f "$(dirname "$mark")/.bqlkit-debug" ] || continue
	n=$((n + 1))
	k=$(basename "$(dirname "$mark")")
	odir=$(cat "$mark")
	t=vm-tree-$k
	if [ ! -f "$odir/Module.symvers" ] || [ "$(cat "$odir/include/config/kernel.release" 2>/dev/null)" != "$k" ]; then
		fail "$t" "$odir is not the build directory of $k (rebuild it: lab/build-vm-kernel.sh TREE $odir)"
		continue
	fi
	# The base from the kernel's own tree (lab/lib.sh tree_build).
	if ! out=$(tree_build "$k" veth 2>&1); then
		fail "$t-build" "$(grep -m1 'error' <<<"$out" || tail -1 <<<"$out")"
		continue
	fi
	pass "$t-build"
	ko=$BQLKIT_BUILD/$k/veth.ko
	log=$BQLKIT_BUILD/test-logs/vm-smoke-$k
	mkdir -p "$(dirname "$log")"
	"$BQLKIT_TOP/tests/vm/smoke.sh" --kver "$k" --log "$log-stock.log" --quiet >/dev/null 2>"$log-stock.err" || true
	grep -o 'BQLKIT \(rtt label=loaded\|bql label=load\).*' "$log-stock.log" 2>/dev/null | sed "s/^/$t (stock veth): /" >&2 || true
	vm_smoke "$t" "$k" "$ko" "$log.log"
	# t60's multiqueue scenario: 1, 2 and 4 queues with
	# NAPI from GRO, XDP or threaded; every txq's charges completed on it.
	vm_smoke "$t-mq" "$k" "$ko" "$BQLKIT_BUILD/test-logs/vm-mq-$k.log" --scenario mq --xdp xdp_pass
	# t76's receiver-down scenario (veth-review.py finding 3) on this base too.
	vm_xoff "$t" "$k" "$ko" "$BQLKIT_BUILD/test-logs/vm-xoff-$k.log"
done
[ "$n" -gt 0 ] || skip vm-trees "not in CI: no 5.15/6.6 kernel built from a tree (lab/build-vm-kernel.sh TREE OUTDIR)"
