#!/bin/bash
# Write the DKMS source tree: the kit plus every imported base that has a
# series, so DKMS can build for any supported kernel without the network.
#
#   make-dkms-source.sh [DEST]    (default /usr/src/bqlkit-VERSION)
#
# DEST is replaced as a whole: written beside it, then renamed into place.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ver=$(cat "$BQLKIT_TOP/VERSION")
dest=${1:-/usr/src/bqlkit-$ver}
conf_ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$BQLKIT_TOP/dkms.conf")
[ "$conf_ver" = "$ver" ] || die "dkms.conf PACKAGE_VERSION ($conf_ver) differs from VERSION ($ver)"

# Every imported base: scripts/fit.sh decides by content which series fits
# it (a base of a release without a series of its own, 6.18 or 7.0, can).
bases=()
for m in "$BQLKIT_BUILD"/bases/*/MANIFEST; do
	[ -f "$m" ] || continue
	bases+=("$(basename "$(dirname "$m")")")
done
[ ${#bases[@]} -gt 0 ] || die "no imported base to ship: run 'make import SRC=/usr/src/linux-source-X.Y.tar.xz' first"

tmp=$(dirname "$dest")/.$(basename "$dest").tmp.$$
trap 'rm -rf "$tmp"' EXIT
rm -rf "$tmp"
mkdir -p "$tmp/bases"
kit_copy "$tmp"
cp -a "$BQLKIT_TOP/dkms.conf" "$tmp/"
for s in "${bases[@]}"; do
	cp -a "$BQLKIT_BUILD/bases/$s" "$tmp/bases/"
done
rm -rf "$dest"
mv "$tmp" "$dest"
echo "bqlkit: DKMS source $dest (bases: ${bases[*]})"
