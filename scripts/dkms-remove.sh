#!/bin/bash
# Remove bqlkit/VERSION from DKMS for every kernel, including kernels whose
# headers are gone (dkms 3.0.10 no longer lists those, and `dkms remove
# --all` leaves their modules in /lib/modules/KVER/updates/dkms), then
# regenerate the initramfs where it held a kit driver.
#
#   dkms-remove.sh VERSION      (prints the kernels it was installed for)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

v=$1
tree=/var/lib/dkms/bqlkit/$v
# What DKMS installed, per kernel: "KVER MODULE-FILE" lines.
left=$(for d in "$tree"/*/*/module; do
	[ -d "$d" ] || continue
	k=$(basename "$(dirname "$(dirname "$d")")")
	for f in "$d"/*.ko*; do [ -f "$f" ] && echo "$k $(basename "$f")"; done
done)
kernels=$(cut -d' ' -f1 <<<"$left" | sort -u | tr '\n' ' ')
# Their images may hold the kit's modules: pending until regenerated, so
# that a run interrupted from here on is finished by the next one.
[ -z "$kernels" ] || "$BQLKIT_TOP/scripts/initramfs.sh" --defer $kernels
step "dkms remove bqlkit/$v --all${kernels:+ (installed for: ${kernels% })}"
dkms remove "bqlkit/$v" --all >>/var/log/bqlkit-dkms.log 2>&1 ||
	note "dkms remove bqlkit/$v --all failed (log: /var/log/bqlkit-dkms.log); removing its files by hand"
while read -r k f; do
	[ -n "$k" ] || continue
	if [ -f "/lib/modules/$k/updates/dkms/$f" ]; then
		rm -f "/lib/modules/$k/updates/dkms/$f"
		rmdir "/lib/modules/$k/updates/dkms" "/lib/modules/$k/updates" 2>/dev/null || true
		[ ! -d "/lib/modules/$k/kernel" ] || depmod -a "$k" 2>/dev/null || true
		note "removed $f for $k (DKMS had lost track of it: no headers)"
	fi
done <<<"$left"
# What DKMS leaves of kernels it never built for (a skipped kernel's dir).
rm -rf "$tree"
find /var/lib/dkms/bqlkit -maxdepth 1 -xtype l -delete 2>/dev/null || true
rmdir /var/lib/dkms/bqlkit 2>/dev/null || true
[ -z "$kernels" ] || "$BQLKIT_TOP/scripts/initramfs.sh" $kernels || true
