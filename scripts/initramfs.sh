#!/bin/bash
# Regenerate the initramfs of each given kernel whose image carries one of
# the kit's drivers, so that early boot loads the same module as later.
#
#   initramfs.sh KVER...
#
# Debian (initramfs-tools): an image /boot/initrd.img-KVER that lsinitramfs
# shows to hold veth.ko or mana.ko (MODULES=most puts mana in; veth only
# when listed in /etc/initramfs-tools/modules) is rebuilt with
# update-initramfs -u -k KVER.  One line per kernel says what was done.
# Kernels without an image, or whose image has none of the drivers, are left
# alone.  BQLKIT_NO_INITRAMFS=1 skips all of it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ -z "${BQLKIT_NO_INITRAMFS:-}" ] || exit 0
mods=()
for d in $BQLKIT_DRIVERS; do
	m=$(sed -n 's/^MODULES="\(.*\)"/\1/p' "$BQLKIT_TOP/drivers/$d/driver.conf" 2>/dev/null || true)
	mods+=(${m:-$d})
done
re=$(printf '%s|' "${mods[@]}")
re="/(${re%|})\\.ko(\\.(xz|zst|gz))?\$"

rc=0
for k in "$@"; do
	img=/boot/initrd.img-$k
	[ -f "$img" ] || continue
	if ! command -v lsinitramfs >/dev/null || ! command -v update-initramfs >/dev/null; then
		note "initramfs of $k: $img exists but initramfs-tools is not installed: regenerate it yourself if it holds ${mods[*]}"
		continue
	fi
	inside=$(lsinitramfs "$img" 2>/dev/null | grep -E "$re" | sed 's|.*/||; s|\.ko.*||' | sort -u | tr '\n' ' ' || true)
	if [ -z "$inside" ]; then
		note "initramfs of $k: holds none of ${mods[*]}, left alone"
		continue
	fi
	step "initramfs of $k holds ${inside% }: update-initramfs -u -k $k"
	if out=$(update-initramfs -u -k "$k" 2>&1); then
		note "initramfs of $k regenerated"
	else
		note "update-initramfs -u -k $k failed: $(tail -1 <<<"$out"); run it again before rebooting into $k"
		rc=1
	fi
done
exit $rc
