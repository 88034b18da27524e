#!/bin/bash
# Fetch a Debian linux-source-X.Y tarball from any suite without installing
# it (scripts/apt-private.sh), for `make import`.  Prints the tarball path.
#
#   fetch-source.sh SUITE linux-source-X.Y
#   fetch-source.sh --deb SUITE linux-source-X.Y   prints the .deb it reads
#                                                  (downloaded or not)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

deb_only=
[ "${1:-}" != --deb ] || { deb_only=1; shift; }
[ $# -eq 2 ] || die "usage: fetch-source.sh [--deb] SUITE linux-source-X.Y"
suite=$1 pkg=$2
debs=$BQLKIT_CACHE/debs/$suite-all
dest=$BQLKIT_CACHE/src/$suite
mkdir -p "$debs" "$dest"
pin=()
case $suite in *-backports) pin=(-o APT::Default-Release="$suite") ;; esac
ver=$("$BQLKIT_TOP/scripts/apt-private.sh" "$suite" -- apt-cache "${pin[@]}" policy "$pkg" |
	sed -n 's/^ *Candidate: //p')
[ -n "$ver" ] && [ "$ver" != "(none)" ] || die "$suite has no $pkg"
deb=$debs/${pkg}_${ver//:/%3a}_all.deb
[ -z "$deb_only" ] || { echo "$deb"; exit 0; }
if [ ! -f "$deb" ]; then
	step "downloading $pkg $ver from $suite (~150 MB)"
	(cd "$debs" && "$BQLKIT_TOP/scripts/apt-private.sh" "$suite" -- apt-get download -qq "$pkg=$ver" >>"$debs/download.log" 2>&1) ||
		die "cannot download $pkg from $suite (log: $debs/download.log)"
fi
tarball=$dest/$pkg.tar.xz
if [ ! -f "$tarball" ] || [ "$deb" -nt "$tarball" ]; then
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$pkg.tar.xz" >"$tarball.tmp"
	mv "$tarball.tmp" "$tarball"
fi
echo "$tarball"
