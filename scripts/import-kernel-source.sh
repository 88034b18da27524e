#!/bin/bash
# make install SRC=: import a kernel's own source, given by the user, as the
# base DKMS builds that kernel from, and for that kernel only.
#
#   import-kernel-source.sh KVER SRC
#
# SRC: a tarball, an unpacked tree, a git tree (GIT_REV) or the driver files
# at their kernel paths (without the top Makefile: BQLKIT_SRCVER=X.Y.Z says
# which release).  Its version (the top Makefile's) must be the kernel's
# (its headers' Makefile, not the release string: 5.15.0-1050-azure is
# Linux 5.15.N there); SRC_ANY_VERSION=1 takes another sublevel's source
# as this kernel's, on the user's word.  The source is imported into a
# scratch base and the kit built from it for KVER (scripts/build.sh: the
# fit and the compile); only then does it replace build/bases/X.Y, with
# the kernel recorded in its MANIFEST, so that scripts/pick-source.sh
# builds from it that kernel and no other (a later kernel update keeps its
# in-tree drivers until its own source is given).  On any refusal nothing
# changes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || die "usage: import-kernel-source.sh KVER SRC"
kver=$1 src=$2
valid_kver "$kver"
[ -e "$src" ] ||
	die "SRC='$src' does not exist: give kernel $kver's own source (a tarball, an unpacked tree, a git tree or its driver files; docs/install.md, 'Any distro: SRC=')"
kdir=$(kdir_for "$kver")
kv=$(kernel_version "$kdir") || die "$(no_version "$kdir")"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bqlkit-ksrc.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# (Each step that refuses says why in its own error line.)
BQLKIT_FOR_KERNEL=$kver BQLKIT_BASES=$tmp/bases "$BQLKIT_TOP/scripts/import-source.sh" "$src" || exit 1
base=$(ls -d "$tmp"/bases/*/)
base=${base%/}
sv=$(manifest_get "$base" version)
say="SRC='$src' is Linux $sv, but kernel $kver is Linux $kv (the version in its headers' Makefile; a vendor's release string such as 5.15.0-1050-azure keeps the upstream version there)"
if [ "$(series_of "$sv")" != "$(series_of "$kv")" ]; then
	die "$say: give kernel $kver's own source; nothing installed"
elif [ "$sv" != "$kv" ]; then
	[ -n "${SRC_ANY_VERSION:-}" ] ||
		die "$say: give kernel $kver's own source, or, if this is that kernel's source whatever its Makefile says, add SRC_ANY_VERSION=1 (it is then used for kernel $kver only); nothing installed"
	note "SRC is Linux $sv, kernel $kver is Linux $kv: taking it as $kver's source (SRC_ANY_VERSION=1), for that kernel only"
fi

# The fit and the build, against the scratch base: a source the kit's
# changes do not fit is refused with the fit's own message.
if [ -z "${SRC_ANY_VERSION:-}" ]; then export STRICT=1; fi
BQLKIT_BASES=$tmp/bases "$BQLKIT_TOP/scripts/build.sh" "$kver" || exit 1

dest=$(base_dir "$(series_of "$sv")")
mkdir -p "$(dirname "$dest")"
if [ -d "$dest" ]; then
	old=$(manifest_get "$dest" version)
	note "replacing base $(basename "$dest") (Linux $old from $(manifest_get "$dest" source)) with SRC, for kernel $kver"
	rm -rf "$dest.old"
	mv "$dest" "$dest.old"
fi
mv "$base" "$dest"
rm -rf "$dest.old"
step "base $(basename "$dest"): Linux $sv from $(manifest_get "$dest" source), for kernel $kver only"
