#!/bin/bash
# Write the DKMS source tree: the kit plus every imported base that has a
# series, so DKMS can build for any supported kernel without the network.
#
#   make-dkms-source.sh [DEST]    (default /usr/src/bqlkit-VERSION)
#
# DEST is replaced as a whole: written beside it, then renamed into place;
# it carries the mark .bqlkit-dkms-source, and an existing DEST without that
# mark (DESTDIR=/usr/src: a directory the kit did not write) is refused,
# never removed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ver=$(cat "$BQLKIT_TOP/VERSION")
dest=${1:-/usr/src/bqlkit-$ver}
mark=.bqlkit-dkms-source
# kit_written DIR: DIR is a DKMS source this script wrote (its mark, or,
# from a kit before the mark, bqlkit's dkms.conf beside scripts/build.sh).
kit_written() {
	[ ! -L "$1" ] && { [ -f "$1/$mark" ] ||
		{ grep -qx 'PACKAGE_NAME="bqlkit"' "$1/dkms.conf" 2>/dev/null && [ -f "$1/scripts/build.sh" ]; }; }
}
if { [ -e "$dest" ] || [ -L "$dest" ]; } && ! kit_written "$dest"; then
	die "$dest exists and is not a DKMS source the kit wrote: give DESTDIR=<a directory that does not exist yet> (the kit removes only what it wrote)"
fi
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
echo "bqlkit $ver DKMS source, written by scripts/make-dkms-source.sh" >"$tmp/$mark"
for s in "${bases[@]}"; do
	cp -a "$BQLKIT_BUILD/bases/$s" "$tmp/bases/"
done
rm -rf "$dest"
mv "$tmp" "$dest"
echo "bqlkit: DKMS source $dest (bases: ${bases[*]})"
