#!/bin/bash
# Build the bqlkit-dkms RPM with rpmbuild (Debian's rpm package).
#
#   make-rpm.sh [SOURCE]   -> build/rpm/bqlkit-dkms-<VERSION>-1.noarch.rpm
#
# The package's source is the DKMS source tree (scripts/make-dkms-source.sh:
# the kit plus the imported bases, as in the .deb), made into a tarball:
# written here, or SOURCE, a tree make dkms-source wrote for this VERSION
# (the tests give theirs: fitting the changes to each base takes a minute);
# rpm/bqlkit-dkms.spec is filled in (@VERSION@ from VERSION, Requires from
# scripts/build-deps.list, the changelog from debian/changelog) under
# build/rpm/, and rpmbuild runs there (_topdir build/rpm/rpmbuild).  No
# kernel source is in git; the bases come from build/bases (make import).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ver=$(cat "$BQLKIT_TOP/VERSION")
given=${1:-}
if [ -n "$given" ]; then
	[ -f "$given/.bqlkit-dkms-source" ] && grep -qx "PACKAGE_VERSION=\"$ver\"" "$given/dkms.conf" 2>/dev/null ||
		die "$given is not a DKMS source make dkms-source wrote for bqlkit $ver"
fi
# (rpm's Version: no "-"; the .deb's rule otherwise.)
[[ $ver =~ ^[0-9][0-9A-Za-z.+~]*$ ]] || die "VERSION '$ver' is not an RPM version (digits, letters, . + ~)"
# One version: debian/changelog (the kit's changelog, the RPM's too) names it.
clver=$(sed -n '1s/^bqlkit-dkms (\([^)]*\)).*/\1/p' "$BQLKIT_TOP/debian/changelog")
[ "$clver" = "$ver" ] ||
	die "debian/changelog's newest entry is ${clver:-unreadable}, VERSION is $ver: add an entry for $ver at the top of debian/changelog"
"$BQLKIT_TOP/scripts/install-deps.sh" rpm

# rpm_name PACKAGE: the RPM distributions' name of a Debian package of
# build-deps.list; nothing for one a DKMS host does without.
rpm_name() {
	case $1 in
	libc6-dev) echo glibc-devel ;;
	xz-utils) echo xz ;;
	libpython3-dev) echo python3-devel ;;
	# (quilt: make series and make drift; a DKMS build applies the
	# fitted changes with patch.)
	quilt) ;;
	*) echo "$1" ;;
	esac
}
# tags TAG FIT: "TAG: name" lines for build-deps.list's packages with
# ("fit" in the second column, FIT=1) or without (FIT=0) "fit".
tags() {
	local p n
	for p in $(sed 's/#.*//' "$BQLKIT_TOP/scripts/build-deps.list" | awk -v fit="$2" 'NF && ($2 == "fit") == fit { print $1 }'); do
		n=$(rpm_name "$p")
		[ -z "$n" ] || printf '%s:\t%s\n' "$1" "$n"
	done
}
# changelog: debian/changelog's entries as a spec's %changelog.
changelog() {
	local line v='' who d entry=''
	while IFS= read -r line; do
		case $line in
		"bqlkit-dkms ("*) v=${line#*(} && v=${v%%)*} ;;
		" -- "*)
			who=${line# -- } && d=${who#*>  } && who=${who%%>  *}\>
			printf '* %s %s - %s-1\n' "$(LC_ALL=C date -u -d "$d" '+%a %b %d %Y')" "$who" "$v"
			sed -n 's/^  \* /- /p; s/^    /  /p' <<<"$entry" | sed 's/%/%%/g'
			echo
			entry=
			;;
		*) entry+=$line$'\n' ;;
		esac
	done <"$BQLKIT_TOP/debian/changelog"
}

out=$BQLKIT_BUILD/rpm
top=$out/rpmbuild
src=$out/bqlkit-$ver
rpm=$out/bqlkit-dkms-$ver-1.noarch.rpm
rm -rf "$top" "$src" "$rpm"
mkdir -p "$top/SOURCES" "$top/SPECS"
if [ -n "$given" ]; then
	mkdir -p "$src"
	cp -a "$given/." "$src/"
else
	step "rpm: DKMS source $src"
	"$BQLKIT_TOP/scripts/make-dkms-source.sh" "$src" >&2
fi
# Every series the kit carries should have its base in the package.
for p in "$BQLKIT_TOP"/patches/veth/*/series; do
	s=$(basename "$(dirname "$p")")
	[ -f "$src/bases/$s/MANIFEST" ] ||
		note "no Linux $s base in the DKMS source: the package will skip $s kernels (make import SRC=<that kernel's source>)"
done
bases=$(cd "$src/bases" && echo */ | tr -d /)
tar -C "$out" -czf "$top/SOURCES/bqlkit-$ver.tar.gz" "bqlkit-$ver"
rm -rf "$src"

spec=$top/SPECS/bqlkit-dkms.spec
{
	while IFS= read -r line; do
		case $line in
		@REQUIRES@) tags Requires 0 ;;
		@RECOMMENDS@) tags Recommends 1 ;;
		@CHANGELOG@) changelog | sed '$d' ;;
		*) printf '%s\n' "${line//@VERSION@/$ver}" ;;
		esac
	done <"$BQLKIT_TOP/rpm/bqlkit-dkms.spec"
} >"$spec"
cp "$spec" "$out/bqlkit-dkms.spec"

step "rpm: rpmbuild -bb (bases: $bases)"
if ! rpmbuild -bb --clean --define "_topdir $top" "$spec" >"$out/build-$ver.log" 2>&1; then
	tail -5 "$out/build-$ver.log" >&2
	die "rpmbuild failed (log: $out/build-$ver.log)"
fi
[ -f "$top/RPMS/noarch/$(basename "$rpm")" ] || die "rpmbuild did not write $(basename "$rpm") (log: $out/build-$ver.log)"
mv "$top/RPMS/noarch/$(basename "$rpm")" "$rpm"
rm -rf "$top"
# The bases in the package must still match their manifests.
chk=$(mktemp -d "${TMPDIR:-/tmp}/bqlkit-rpm.XXXXXX")
trap 'rm -rf "$chk"' EXIT
(cd "$chk" && rpm2cpio "$rpm" | cpio -idm --quiet)
[ -f "$chk/usr/src/bqlkit-$ver/dkms.conf" ] && [ -d "$chk/usr/src/bqlkit-$ver/bases" ] || {
	rm -f "$rpm"
	die "the package holds no DKMS source /usr/src/bqlkit-$ver (its dkms.conf, bases/): see rpm/bqlkit-dkms.spec"
}
for m in "$chk/usr/src/bqlkit-$ver"/bases/*/MANIFEST; do
	(cd "$(dirname "$m")" && grep '^[0-9a-f]\{64\}  ' MANIFEST | sha256sum --quiet -c - >/dev/null 2>&1) || {
		rm -f "$rpm"
		die "a file of $(basename "$(dirname "$m")")'s base changed while packaging (an rpmbuild post-install step rewrote it?): see rpm/bqlkit-dkms.spec"
	}
done
echo "bqlkit: built $rpm ($(du -h "$rpm" | cut -f1))"
