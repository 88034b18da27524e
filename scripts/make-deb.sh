#!/bin/bash
# Build the bqlkit-dkms .deb with debhelper + dh-dkms.
#
#   make-deb.sh            -> build/deb/bqlkit-dkms_<VERSION>_all.deb
#   DEB_VERSION=0.1.1 make-deb.sh   package the kit as another version (the
#                          module version, dkms.conf and /usr/src path follow)
#
# The package directory build/deb/bqlkit-dkms-<ver>/ is generated here: the
# DKMS source tree (scripts/make-dkms-source.sh: the kit plus the imported
# bases) and debian/ with @VERSION@ filled in.  No kernel source is in git;
# the bases come from build/bases (make import, or make install).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ver=${DEB_VERSION:-$(cat "$BQLKIT_TOP/VERSION")}
[[ $ver =~ ^[0-9][0-9A-Za-z.+~]*$ ]] || die "DEB_VERSION '$ver' is not a Debian upstream version (digits, letters, . + ~)"
# One version: debian/changelog's newest entry is VERSION's.
kitver=$(cat "$BQLKIT_TOP/VERSION")
clver=$(sed -n '1s/^bqlkit-dkms (\([^)]*\)).*/\1/p' "$BQLKIT_TOP/debian/changelog")
[ "$clver" = "$kitver" ] ||
	die "debian/changelog's newest entry is ${clver:-unreadable}, VERSION is $kitver: add an entry for $kitver at the top of debian/changelog"
"$BQLKIT_TOP/scripts/install-deps.sh" deb

# Every series the kit carries should have its base in the package.
for p in "$BQLKIT_TOP"/patches/veth/*/series; do
	s=$(basename "$(dirname "$p")")
	[ -f "$(base_dir "$s")/MANIFEST" ] ||
		note "no imported Linux $s base: the package will skip $s kernels (make import SRC=/usr/src/linux-source-$s.tar.xz)"
done

out=$BQLKIT_BUILD/deb
dir=$out/bqlkit-dkms-$ver
rm -rf "$dir" "$out"/bqlkit-dkms_"$ver"_*
mkdir -p "$out"
step "deb: package directory $dir"
"$BQLKIT_TOP/scripts/make-dkms-source.sh" "$dir" >&2
echo "$ver" >"$dir/VERSION"
sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$ver\"/" "$dir/dkms.conf"
cp -a "$BQLKIT_TOP/debian" "$dir/debian"
cp "$dir/dkms.conf" "$dir/debian/bqlkit-dkms.dkms"
sed -i "s/@VERSION@/$ver/g" "$dir"/debian/bqlkit-dkms.*
# Another version (DEB_VERSION): an entry of its own on top, by the same
# maintainer as the newest one.
if [ "$ver" != "$clver" ]; then
	{
		echo "bqlkit-dkms ($ver) unstable; urgency=medium"
		echo
		echo "  * Packaged as $ver (make deb DEB_VERSION=$ver)."
		echo
		echo " -- $(sed -n 's/^ -- \(.*>\)  .*/\1/p' "$BQLKIT_TOP/debian/changelog" | head -1)  $(date -R)"
		echo
		cat "$BQLKIT_TOP/debian/changelog"
	} >"$dir/debian/changelog"
fi

step "deb: dpkg-buildpackage -b (bases: $(cd "$dir/bases" && echo */ | tr -d /))"
if ! (cd "$dir" && dpkg-buildpackage -b -us -uc -tc >"$out/build-$ver.log" 2>&1); then
	tail -5 "$out/build-$ver.log" >&2
	die "dpkg-buildpackage failed (log: $out/build-$ver.log)"
fi
deb=$out/bqlkit-dkms_${ver}_all.deb
[ -f "$deb" ] || die "dpkg-buildpackage did not write $deb (log: $out/build-$ver.log)"
rm -f "$out"/bqlkit-dkms_"$ver"_*.buildinfo "$out"/bqlkit-dkms_"$ver"_*.changes
# The bases in the package must still match their manifests.
chk=$(mktemp -d "${TMPDIR:-/tmp}/bqlkit-deb.XXXXXX")
trap 'rm -rf "$chk"' EXIT
dpkg-deb -x "$deb" "$chk"
for m in "$chk/usr/src/bqlkit-$ver"/bases/*/MANIFEST; do
	(cd "$(dirname "$m")" && grep '^[0-9a-f]\{64\}  ' MANIFEST | sha256sum --quiet -c - >/dev/null 2>&1) || {
		rm -f "$deb"
		die "a file of $(basename "$(dirname "$m")")'s base changed while packaging (a debhelper tool rewrote it?): see debian/rules"
	}
done
echo "bqlkit: built $deb ($(du -h "$deb" | cut -f1))"
