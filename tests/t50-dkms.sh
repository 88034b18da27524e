#!/bin/bash
# DKMS: add/build for each Debian kernel in a throwaway DKMS tree, a kernel
# with no base is skipped with exit 77 and one line; then (unless
# BQLKIT_QUICK) the real install the way a user runs it: make install,
# again (idempotent), modinfo names the kit's module, make uninstall.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ver=$(cat "$BQLKIT_TOP/VERSION")
check dkms-conf-version grep -qx "PACKAGE_VERSION=\"$ver\"" "$BQLKIT_TOP/dkms.conf"
mkdir -p "$tmp/tree" "$tmp/src" "$tmp/inst"
check dkms-source "$BQLKIT_TOP/scripts/make-dkms-source.sh" "$tmp/src/bqlkit-$ver"
d=(dkms --dkmstree "$tmp/tree" --sourcetree "$tmp/src" --installtree "$tmp/inst")
check dkms-add "${d[@]}" add "bqlkit/$ver"
for k in $(test_kernels); do
	series=$(series_of "$(kernel_version "$(kdir_for "$k")")")
	if out=$("${d[@]}" build "bqlkit/$ver" -k "$k" 2>&1); then
		pass "dkms-build-$series"
		ko=$(ls "$tmp/tree/bqlkit/$ver/$k/"*/module/veth.ko* 2>/dev/null | head -1)
		check "dkms-build-$series-module" test -n "$ko"
		check "dkms-build-$series-is-bql" bash -c "modinfo -F bqlkit '$ko' | grep -q 'series=$series'"
		mko=$(ls "$tmp/tree/bqlkit/$ver/$k/"*/module/mana.ko* 2>/dev/null | head -1)
		check "dkms-build-$series-mana" bash -c "[ -n '$mko' ] && modinfo -F bqlkit '$mko' | grep -q 'series=$series'"
	else
		fail "dkms-build-$series" "$(tail -1 <<<"$out")"
	fi
done
rc=0
out=$("${d[@]}" build "bqlkit/$ver" -k 5.4.0-99-amd64 2>&1) || rc=$?
check dkms-unsupported-exit-77 test "$rc" -eq 77
check dkms-unsupported-one-line-reason grep -q 'bqlkit: skipping kernel 5.4.0-99-amd64: the kit has no base' <<<"$out"
check dkms-status-lists-built bash -c "'${d[0]}' ${d[*]:1} status | grep -c ': built' | grep -qx 2"

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip dkms-install "BQLKIT_QUICK=1 (real DKMS install not run)"
	exit 0
fi
[ "$(id -u)" = 0 ] || { skip dkms-install "needs root"; exit 0; }

# The real thing, as README says.  Put back whatever was installed before.
# (The initramfs part is tested in the chroot, t90: leave this machine's alone.)
export BQLKIT_NO_INITRAMFS=1
had=$(dkms status "bqlkit/$ver" 2>/dev/null | sed -n 's/^[^,]*, \([^,]*\),.*installed.*/\1/p')
k61=$(test_kernels | sed -n 1p)
k612=$(test_kernels | sed -n 2p)
check dkms-install-main-command make -C "$BQLKIT_TOP" install
kdef=$(IFS=$'\t' read -r k _ < <("$BQLKIT_TOP/scripts/pick-kernel.sh"); echo "$k")
check dkms-install-modinfo-names-kit bash -c "modinfo -k '$kdef' -n veth | grep -q '/updates/dkms/veth.ko'"
check dkms-install-twice make -C "$BQLKIT_TOP" install
check dkms-install-6.12 make -C "$BQLKIT_TOP" install KVER="$k612"
check dkms-install-6.12-modinfo bash -c "modinfo -k '$k612' -n veth | grep -q '/updates/dkms/veth.ko'"
check dkms-status-installed bash -c "dkms status bqlkit/$ver | grep -c ': installed' | grep -qx 2"
check dkms-uninstall make -C "$BQLKIT_TOP" uninstall
check dkms-uninstall-nothing-left bash -c "! dkms status bqlkit 2>/dev/null | grep -q . && [ ! -e /usr/src/bqlkit-$ver ] && [ ! -e /var/lib/dkms/bqlkit/$ver ] && ! ls /lib/modules/*/updates/dkms/veth.ko* 2>/dev/null"
check dkms-uninstall-in-tree-back bash -c "modinfo -k '$k612' -n veth | grep -q '/kernel/drivers/net/veth.ko'"
for k in $had; do
	make -C "$BQLKIT_TOP" install KVER="$k" >/dev/null 2>&1 || true
done
: "$k61"
