#!/bin/bash
# Remove the kit from DKMS for every kernel, and its source from /usr/src.
# The in-tree modules are what modinfo names afterwards.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || die "removing kernel modules needs root: run 'sudo make uninstall'"
ver=$(cat "$BQLKIT_TOP/VERSION")
if [ -d "/var/lib/dkms/bqlkit/$ver" ]; then
	# DKMS needs the source's dkms.conf to remove; restore it if gone.
	[ -f "/usr/src/bqlkit-$ver/dkms.conf" ] ||
		"$BQLKIT_TOP/scripts/make-dkms-source.sh" "/usr/src/bqlkit-$ver" >/dev/null 2>&1 ||
		cp -a "$BQLKIT_TOP" "/usr/src/bqlkit-$ver"
	dkms remove "bqlkit/$ver" --all >/dev/null 2>&1 ||
		die "dkms remove bqlkit/$ver --all failed: see 'dkms status'"
	echo "bqlkit: removed bqlkit/$ver from DKMS"
else
	echo "bqlkit: bqlkit/$ver is not in DKMS"
fi
rm -rf "/usr/src/bqlkit-$ver"
