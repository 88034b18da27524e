#!/bin/bash
# The build DKMS runs (dkms.conf MAKE: make dkms-build): the kit's modules
# for one kernel, from that kernel's own driver source, into out/.
#
#   dkms-build.sh KVER
#
# scripts/pick-source.sh names the source: the shipped base when it is this
# kernel's, else the distro's linux-source tarball of this very kernel
# (imported here, into build/own-source/), else another sublevel's base only
# when the user gave it for this kernel (make install SRC= SRC_ANY_VERSION=1)
# or the administrator opted in.  The changes are those fitted when the
# DKMS source was made (fitted/), applied with patch (scripts/build.sh).  Without one it fails with the reason;
# dkms.conf has already made DKMS skip such a kernel, so this is reached
# only by a direct call.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: dkms-build.sh KVER"
kver=$1
valid_kver "$kver"
export BQLKIT_BASES=$BQLKIT_TOP/bases
# The kit's changes as make-dkms-source.sh fitted them to each base.
[ ! -d "$BQLKIT_TOP/fitted" ] || export BQLKIT_FITTED=$BQLKIT_TOP/fitted
if ! pick=$("$BQLKIT_TOP/scripts/pick-source.sh" "$kver"); then
	die "not building for kernel $kver: $pick"
fi
case $pick in
"base "*) STRICT=1 "$BQLKIT_TOP/scripts/build.sh" "$kver" ;;
"tarball "*)
	BQLKIT_BASES=$BQLKIT_BUILD/own-source/bases
	export BQLKIT_BASES
	"$BQLKIT_TOP/scripts/import-source.sh" "${pick#tarball }"
	STRICT=1 "$BQLKIT_TOP/scripts/build.sh" "$kver"
	;;
"given "*)
	note "building for kernel $kver from the source given for it, of another sublevel (make install SRC= SRC_ANY_VERSION=1)"
	"$BQLKIT_TOP/scripts/build.sh" "$kver"
	;;
"other "*)
	note "building for kernel $kver from another sublevel's source (/etc/bqlkit/any-sublevel or BQLKIT_ANY_SUBLEVEL)"
	"$BQLKIT_TOP/scripts/build.sh" "$kver"
	;;
*) die "scripts/pick-source.sh printed '$pick'" ;;
esac
mkdir -p "$BQLKIT_TOP/out"
cp "$BQLKIT_BUILD/$kver/"*.ko "$BQLKIT_TOP/out/"
