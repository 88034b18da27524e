#!/bin/bash
# Write the DKMS source tree: the kit plus every imported base that has a
# series, so DKMS can build for any supported kernel without the network.
#
#   make-dkms-source.sh [DEST]    (default /usr/src/bqlkit-VERSION)
#
# DEST is replaced as a whole: written beside it (a new name), then renamed
# into place; it carries the mark .bqlkit-dkms-source, and an existing DEST
# without that mark is refused, never removed: not /usr/src (DESTDIR=/usr/src),
# not a checkout of the kit (it has the kit's dkms.conf and scripts, not the
# mark), not a DKMS source of a kit from before the mark (remove it yourself).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ver=$(cat "$BQLKIT_TOP/VERSION")
dest=${1:-/usr/src/bqlkit-$ver}
mark=.bqlkit-dkms-source
if { [ -e "$dest" ] || [ -L "$dest" ]; } && { [ -L "$dest" ] || [ ! -f "$dest/$mark" ]; }; then
	die "$dest exists and is not a DKMS source the kit wrote (no $mark in it): give DESTDIR=<a directory that does not exist yet>, or remove $dest yourself"
fi
# One version source: VERSION, written into dkms.conf's placeholder below.
grep -qx 'PACKAGE_VERSION="#MODULE_VERSION#"' "$BQLKIT_TOP/dkms.conf" ||
	die "$BQLKIT_TOP/dkms.conf has no PACKAGE_VERSION=\"#MODULE_VERSION#\" line: restore it (git checkout dkms.conf); the version is VERSION's"

# Every imported base of a distro's package or a source the user gave
# (scripts/import-source.sh records which): scripts/fit.sh decides by content
# which series fits it (a base of a release without a series of its own,
# 6.18 or 7.0, can).  A test's import (a fixture) never ships.
bases=()
for m in "$BQLKIT_BUILD"/bases/*/MANIFEST; do
	[ -f "$m" ] || continue
	b=$(dirname "$m")
	p=$(manifest_get "$b" provenance)
	# (A base imported before provenance was recorded: a package's is the distro's.)
	[ -n "$p" ] || { [ "$(manifest_get "$b" package)" = unknown ] || p=distro; }
	case $p in
	distro | user) bases+=("$(basename "$b")") ;;
	*) note "not shipping base $(basename "$b") ($(manifest_get "$b" source), provenance ${p:-unrecorded}): only a distro's or your own import ships; re-import it with make import SRC=... to ship it" ;;
	esac
done
[ ${#bases[@]} -gt 0 ] || die "no imported base to ship: run 'make import SRC=/usr/src/linux-source-X.Y.tar.xz' first"

mkdir -p "$(dirname "$dest")"
tmp=$(mktemp -d "$(dirname "$dest")/.$(basename "$dest").XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir "$tmp/bases" "$tmp/fitted"

# The kit's changes are fitted to each base here, once, with the kit's
# tools (scripts/fit.sh: 3-way merge, wiggle, the rules proved with
# Coccinelle): fitted/DRIVER/X.Y/ holds the changes as they got in (the
# series file names them in order) and the report.  A DKMS build applies
# them with patch alone (scripts/build.sh).  A base they do not fit is not
# shipped.
fitted_ok=()
for s in "${bases[@]}"; do
	ok=1
	for drv in $(manifest_get "$BQLKIT_BUILD/bases/$s" drivers); do
		[ -d "$BQLKIT_TOP/patches/$drv" ] || continue
		f=$tmp/fit-$drv-$s
		if ! bash "$BQLKIT_TOP/scripts/fit.sh" "$drv" "$BQLKIT_BUILD/bases/$s" "$f" >"$f.log" 2>&1; then
			note "not shipping base $s: the kit's $drv changes do not fit it ($(sed -n 's/^verdict //p' "$f.fit" 2>/dev/null | head -1); log: make fit SRC=$BQLKIT_BUILD/bases/$s)"
			ok=
			break
		fi
		mkdir -p "$tmp/fitted/$drv/$s"
		cp "$f.fit" "$tmp/fitted/$drv/$s/fit"
		sed -n 's/^patch \([^ ]*\) \(applied\|adapted\).*/\1.patch/p' "$f.fit" |
			while read -r p; do
				cp "$f.changes/$(basename "$p")" "$tmp/fitted/$drv/$s/"
				basename "$p"
			done >"$tmp/fitted/$drv/$s/series"
	done
	rm -rf "$tmp"/fit-*
	if [ -n "$ok" ]; then fitted_ok+=("$s"); else rm -rf "$tmp"/fitted/*/"$s"; fi
done
[ ${#fitted_ok[@]} -gt 0 ] || die "the kit's changes fit none of the imported bases (${bases[*]}): see make fit SRC=<base>"
bases=("${fitted_ok[@]}")
kit_copy "$tmp"
sed "s/^PACKAGE_VERSION=\"#MODULE_VERSION#\"$/PACKAGE_VERSION=\"$ver\"/" "$BQLKIT_TOP/dkms.conf" >"$tmp/dkms.conf"
echo "bqlkit $ver DKMS source, written by scripts/make-dkms-source.sh" >"$tmp/$mark"
for s in "${bases[@]}"; do
	cp -a "$BQLKIT_BUILD/bases/$s" "$tmp/bases/"
done
rm -rf "$dest"
mv "$tmp" "$dest"
echo "bqlkit: DKMS source $dest (bases: ${bases[*]})"
