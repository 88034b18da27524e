#!/bin/bash
# mana on the Debian kernels this host cannot build natively (trixie 6.12,
# sid 7.2, trixie-backports 7.3): the kit's mana.ko is built in the cached
# sid/trixie chroots through `make matrix` (their compilers, their headers,
# check-abi.sh against their Module.symvers), then a QEMU VM boots that
# Debian kernel, loads the kit's mana.ko and the kernel's own mana_ib.ko on
# top (no device needed), unloads both and checks dmesg, as t80 does for
# the test kernels.  The first run makes two chroots (a few minutes each,
# cached in $BQLKIT_CACHE/chroots).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip mana-7x "BQLKIT_QUICK=1 (chroot builds and VM tests not run)"
	exit 0
fi
bases=$(dirname "$(base_dir x)")
for row in trixie-6.12:trixie-security sid-7.2:sid trixie-bpo-7.3:trixie-backports; do
	id=${row%%:*} suite=${row#*:}
	series=${id##*-}
	t=mana-$id
	if [ ! -f "$(base_dir "$series")/MANIFEST" ]; then
		skip "$t" "no imported Linux $series base (tests/setup.sh fetches it from $suite; the fetch failed)"
		continue
	fi
	rc=0
	MATRIX_RESULTS=$tmp/$id BQLKIT_BUILD=$tmp/build BQLKIT_BASES=$bases \
		"$BQLKIT_TOP/scripts/matrix.sh" "^$id\$" >"$tmp/$id.out" 2>&1 || rc=$?
	cell=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"][0]; c=r["cells"]["mana"]
print(r["kernel"], c["status"], c["detail"])' "$tmp/$id/matrix.json" 2>/dev/null) || {
		fail "$t-build" "the matrix row did not run (exit $rc): $(tail -1 "$tmp/$id.out")"
		continue
	}
	read -r k status detail <<<"$cell"
	if [ "$status" != ok ]; then
		fail "$t-build" "$k: $status $detail"
		continue
	fi
	pass "$t-build"
	chroot=$BQLKIT_CACHE/chroots/$( [ "$suite" = sid ] && echo sid || echo trixie)-amd64
	ko=$chroot/bqlkit/out/$id/$k/mana.ko
	check "$t-abi-kept" grep -q "ABI kept for $k" "$tmp/build/matrix/cells/$id.mana.log"
	vm_mana "$t" "$k" "$ko" "$suite" || true
done
