#!/bin/bash
# Debian bullseye's 5.10 (gcc-10: this host cannot build for it natively):
# the kit's veth.ko is built in the cached bullseye chroot through
# `make matrix`, then the VM smoke test of t60 runs on that Debian kernel:
# with GRO on at the receiving peer (NAPI without XDP, which the 5.10 series
# backports from v5.13) BQL must charge and complete, the qdisc hold the
# queue, teardown leave nothing inflight.  The first run makes the chroot
# (a few minutes, cached in $BQLKIT_CACHE/chroots).  Also the vendor export
# of the 5.10 series, built standalone in the chroot.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip vm-5.10 "BQLKIT_QUICK=1 (chroot build and VM tests not run)"
	exit 0
fi
if [ ! -f "$(base_dir 5.10)/MANIFEST" ]; then
	skip vm-5.10 "no imported Linux 5.10 base (tests/setup.sh fetches linux-source-5.10 from bullseye-security; the fetch failed)"
	exit 0
fi
id=bullseye-5.10
bases=$(dirname "$(base_dir x)")
chroot_cell build-5.10 "$id" veth "$tmp" || exit 0
k=$CELL_KVER ko=$CELL_KO chroot=$CELL_CHROOT
check build-5.10-no-warnings bash -c "! grep -q 'warning:' '$CELL_LOG'"
check build-5.10-series bash -c "modinfo -F bqlkit '$ko' | grep -q 'series=5.10'"

# Vendor export from the chroot's build: git am onto the base, build it
# standalone in the chroot (gcc-10) against bullseye's headers.
if out=$(SIGNOFF="bqlkit test <test@example.org>" BQLKIT_BASES=$bases BQLKIT_BUILD=$chroot/bqlkit/out/$id "$BQLKIT_TOP/scripts/export-series.sh" 5.10 veth 2>&1); then
	pass export-5.10
	repo=$tmp/repo
	mkdir -p "$repo"
	(cd "$bases/5.10" && tar -c --exclude=MANIFEST .) | tar -x -C "$repo"
	git -C "$repo" init -q && git -C "$repo" add -A &&
		git -C "$repo" -c user.name=t -c user.email=t@t commit -qm "Linux 5.10 base"
	check export-5.10-git-am git -C "$repo" -c user.name=t -c user.email=t@t \
		am -q "$chroot/bqlkit/out/$id/export/5.10/veth/"*.patch
	sa=$chroot/bqlkit/out/export-standalone
	rm -rf "$sa"
	mkdir -p "$sa"
	cp "$repo/drivers/net/veth.c" "$repo/drivers/net/bqlkit_compat.h" "$sa/"
	echo 'obj-m := veth.o' >"$sa/Kbuild"
	check export-5.10-builds-standalone chroot "$chroot" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		make -s -C "/usr/src/linux-headers-$k" M=/bqlkit/out/export-standalone modules
	check export-5.10-has-bql bash -c "nm -u '$sa/veth.ko' | grep -qw dql_completed"
else
	fail export-5.10 "$(tail -1 <<<"$out")"
fi

if ! "$BQLKIT_TOP/tests/vm/get-kernel.sh" --suite bullseye-security "$k" >/dev/null 2>"$tmp/get.err"; then
	fail vm-5.10 "cannot fetch linux-image-$k from bullseye-security: $(tail -1 "$tmp/get.err")"
	exit 0
fi
vm_smoke vm-5.10 "$k" "$ko" "$BQLKIT_BUILD/test-logs/vm-smoke-$k.log"
