#!/bin/bash
# veth on the newest Debian kernels, which this host cannot build for
# natively (sid 7.2, trixie-backports 7.3): the kit's veth.ko is built in
# the cached sid/trixie chroot through `make matrix` (their compilers,
# their headers), then t60's smoke scenario boots that Debian kernel under
# QEMU with it: BQL charges and limits under a flood, nothing in flight
# after it and after NAPI teardown, ping after teardown, rmmod, dmesg
# clean.  t81 builds mana in the same chroots (made by whichever runs
# first: a few minutes each, cached in $BQLKIT_CACHE/chroots).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip vm-veth-chroots "BQLKIT_QUICK=1 (chroot builds and VM tests not run)"
	exit 0
fi
# ROW: matrix.conf ID:the suite its kernel comes from.
for row in sid-7.2:sid trixie-bpo-7.3:trixie-backports; do
	IFS=: read -r id suite <<<"$row"
	series=${id##*-}
	t=veth-$id
	if [ ! -f "$(base_dir "$series")/MANIFEST" ]; then
		skip "$t" "no imported Linux $series base (tests/setup.sh fetches it from $suite; the fetch failed)"
		continue
	fi
	BQLKIT_DRIVERS=veth chroot_cell "$t-build" "$id" veth "$tmp/$id" || continue
	k=$CELL_KVER ko=$CELL_KO
	check "$t-build-no-warnings" bash -c "! grep -q 'warning:' '$CELL_LOG'"
	check "$t-series" bash -c "modinfo -F bqlkit '$ko' | grep -q 'series=$series '"
	if ! "$BQLKIT_TOP/tests/vm/get-kernel.sh" --suite "$suite" "$k" >/dev/null 2>"$tmp/get.err"; then
		fail "vm-$id" "cannot fetch linux-image-$k from $suite: $(tail -1 "$tmp/get.err")"
		continue
	fi
	vm_smoke "vm-$id" "$k" "$ko" "$BQLKIT_BUILD/test-logs/vm-smoke-$k.log"
done
