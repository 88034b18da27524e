#!/bin/bash
# Which driver source does the kit build kernel KVER from?  Its own, or none:
# a stable or security update that changed veth.c or mana must never be
# undone by a module built from an older release's source.
#
#   pick-source.sh KVER
#
# Exit 0, one line on stdout:
#   base DIR        the imported base DIR is this kernel's source (same
#                   upstream version and, where both are known, the same
#                   distro package version); a base given for one kernel
#                   (make install SRC= KVER=: its MANIFEST's kernel=) is
#                   that kernel's only, with the headers it was given for
#   given DIR       such a base of another sublevel, that the user said is
#                   this kernel's source (SRC_ANY_VERSION=1)
#   tarball FILE    the distro's linux-source-X.Y tarball FILE is this
#                   kernel's source (its package version is the kernel's):
#                   import it, then build
#   other DIR       a base of another sublevel, because the administrator
#                   opted in (BQLKIT_ANY_SUBLEVEL=1, or the file
#                   /etc/bqlkit/any-sublevel exists)
# Exit 1: none; one line on stdout says why and how to get the kit built
# (the in-tree drivers stay).
# Environment: KDIR (default: the kernel's headers), BQLKIT_BASES.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: pick-source.sh KVER"
kver=$1
valid_kver "$kver"
kdir=${KDIR:-$(kdir_for "$kver")}
ver=$(cat "$BQLKIT_TOP/VERSION")
carried=$(carried_series)

if ! kv=$(kernel_version "$kdir" 2>/dev/null); then
	series=$(sed -n 's/^\([0-9]\+\.[0-9]\+\).*/\1/p' <<<"$kver")
	if [ -n "$series" ] && [[ " $carried " != *" $series "* ]]; then
		echo "the kit has no series for Linux $series (it carries: $carried)"
	else
		echo "no headers for it at $kdir (apt-get install linux-headers-$kver)"
	fi
	exit 1
fi
series=$(series_of "$kv")
if [[ " $carried " != *" $series "* ]]; then
	echo "the kit has no series for Linux $series (it carries: $carried)"
	exit 1
fi
dv=$(distro_version "$kdir")
what="Linux $kv${dv:+ (package version $dv)}"

base=$(base_dir "$series")
bv='' bpv='' bk=''
if [ -f "$base/MANIFEST" ]; then
	bv=$(manifest_get "$base" version)
	bpv=$(manifest_pkgver "$base")
	bk=$(manifest_get "$base" kernel)
	if [ -n "$bk" ]; then
		# Given for kernel $bk (make install SRC=): for it only, as long as
		# its headers are those it was given for.
		if [ "$bk" = "$kver" ] && [ "$(manifest_get "$base" kernel_version)" = "$kv" ] &&
			[ "$(manifest_get "$base" kernel_package)" = "$dv" ]; then
			if [ "$bv" = "$kv" ]; then echo "base $base"; else echo "given $base"; fi
			exit 0
		fi
	elif [ "$bv" = "$kv" ] && { [ -z "$dv" ] || [ -z "$bpv" ] || [ "$bpv" = "$dv" ]; }; then
		echo "base $base"
		exit 0
	fi
fi

# The distro's source of this very kernel (Debian: linux-source-X.Y has the
# kernel's package version when both come from the same upload).
tarball=/usr/src/linux-source-$series.tar.xz
tv=
if [ -f "$tarball" ]; then
	owner=$(dpkg-query -S "$tarball" 2>/dev/null | cut -d: -f1 | head -1) || true
	[ -z "${owner:-}" ] || tv=$(dpkg-query -W -f='${Version}' "$owner" 2>/dev/null) || true
	if [ -n "$dv" ] && [ "$tv" = "$dv" ]; then
		echo "tarball $tarball"
		exit 0
	fi
fi

if [ -n "$bv" ] && { [ -n "${BQLKIT_ANY_SUBLEVEL:-}" ] || [ -e /etc/bqlkit/any-sublevel ]; }; then
	echo "other $base"
	exit 0
fi

# Why not, and the way to the kit that holds for this machine.
have=
[ -z "$bv" ] || have="the kit has Linux $bv${bpv:+ ($bpv)}${bk:+, given for kernel $bk only}"
[ -z "$tv" ] || have="${have:+$have, }$tarball is $tv"
again="dkms install bqlkit/$ver -k $kver"
newest=$(apt-cache madison "linux-source-$series" 2>/dev/null | awk -F'|' 'NR == 1 { gsub(/ /, "", $2); print $2 }') || newest=
if [ -z "$newest" ]; then
	fix="give its source: make install SRC=<its Linux $kv source> KVER=$kver"
elif [ -n "$dv" ] && apt-cache madison "linux-source-$series" 2>/dev/null | grep -q "| *$dv *|"; then
	fix="apt-get install linux-source-$series=$dv, then $again"
elif [ -n "$dv" ] && dpkg --compare-versions "$dv" gt "$newest"; then
	fix="apt-get update and apt-get install linux-source-$series=$dv, then $again"
elif [ -n "$dv" ]; then
	fix="apt no longer has linux-source-$series $dv: boot the distro's current kernel ($newest) and install the kit for it"
else
	fix="give its source: make install SRC=<its Linux $kv source> KVER=$kver"
fi
[ -z "$bv" ] || fix="$fix (or, to build from Linux $bv anyway: touch /etc/bqlkit/any-sublevel, then $again)"
echo "its own driver source is not here (it is $what${have:+; $have}), so its in-tree drivers stay; for the kit: $fix"
exit 1
