#!/bin/bash
# Remove the kit from DKMS for every kernel, and its source from /usr/src;
# regenerate the initramfs of the kernels whose image held a kit driver.
# The in-tree modules are what modinfo names afterwards.  A kit installed
# by the bqlkit-dkms package is left to apt (say so).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

install_lock uninstall
ver=$(cat "$BQLKIT_TOP/VERSION")
# Every version in DKMS (an older kit's too), except one a package owns.
mapfile -t vers < <({ echo "$ver"; dkms status bqlkit 2>/dev/null | sed -n 's|^bqlkit/\([^,:]*\)[,:].*|\1|p'; } | sort -u)
for v in "${vers[@]}"; do
	if owner=$(package_owner "/usr/src/bqlkit-$v"); then
		note "bqlkit/$v was installed by the ${owner%%$'\t'*} package: remove it with '${owner#*$'\t'}'"
		continue
	fi
	if [ -d "/var/lib/dkms/bqlkit/$v" ]; then
		# DKMS needs the source's dkms.conf to remove; restore it if gone
		# (what is left of it goes first: it is removed below in any case).
		[ -f "/usr/src/bqlkit-$v/dkms.conf" ] || [ "$v" != "$ver" ] ||
			{ rm -rf "/usr/src/bqlkit-$v" && "$BQLKIT_TOP/scripts/make-dkms-source.sh" "/usr/src/bqlkit-$v" >/dev/null 2>&1; } ||
			cp -a "$BQLKIT_TOP" "/usr/src/bqlkit-$v"
		"$BQLKIT_TOP/scripts/dkms-remove.sh" "$v"
		echo "bqlkit: removed bqlkit/$v from DKMS"
	elif [ "$v" = "$ver" ]; then
		echo "bqlkit: bqlkit/$ver is not in DKMS"
	fi
	rm -rf "/usr/src/bqlkit-$v"
done
# Images an interrupted install or uninstall left holding the kit's modules
# (scripts/initramfs.sh --defer): regenerated now.
"$BQLKIT_TOP/scripts/initramfs.sh"
