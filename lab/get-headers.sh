#!/bin/bash
# Fetch a Debian kernel's headers for building against them on this host
# (natively or cross), without installing them.
#
#   get-headers.sh SUITE ARCH META          prints "KVER KDIR"
#   get-headers.sh --kver SUITE ARCH META   prints KVER, downloads no headers
#
# META is a headers metapackage of SUITE (linux-headers-amd64,
# linux-headers-6.12-cloud-amd64, ...); it names the kernel.  The headers
# and their -common package are downloaded with scripts/apt-private.sh and
# extracted once to $BQLKIT_CACHE/headers/KVER/; their kbuild links
# (scripts, tools) point at the host's /usr/lib/linux-kbuild-X (installed
# with apt if missing), which works for any target architecture.  Only for
# kernels whose linux-kbuild the host's apt has (bookworm's); newer suites
# are built in a chroot (lab/matrix.sh).
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

kver_only=
[ "${1:-}" != --kver ] || { kver_only=1; shift; }
[ $# -eq 3 ] || die "usage: get-headers.sh [--kver] SUITE ARCH META"
suite=$1 arch=$2 meta=$3
apt_p() { "$BQLKIT_TOP/scripts/apt-private.sh" "$suite" --arch "$arch" -- "$@"; }
# A backports suite's metapackage is only a candidate when pinned to it.
pin=()
case $suite in *-backports) pin=(-o APT::Default-Release="$suite") ;; esac
# The private lists first, where their errors show (apt-cache's do not).
apt_p true
kver=$(apt_p apt-cache "${pin[@]}" depends "$meta" 2>/dev/null |
	sed -n 's/^ *Depends: linux-headers-\(.*\)$/\1/p' | grep -v '^common' | head -1)
[ -n "$kver" ] || die "$meta names no kernel in $suite ($arch): apt-private.sh $suite update?"
[ -z "$kver_only" ] || { echo "$kver"; exit 0; }
hdir=$BQLKIT_CACHE/headers/$kver
kdir=$hdir/usr/src/linux-headers-$kver
# Concurrent runs (make matrix, the tests; several users of one cache)
# extract and repoint one kernel's headers one at a time.
mkdir -p "$BQLKIT_CACHE/headers"
exec {lockfd}>"$BQLKIT_CACHE/headers/.$kver.lock"
flock "$lockfd"
if [ ! -e "$hdir/.extracted" ]; then
	debs=$BQLKIT_CACHE/debs/$suite-$arch
	mkdir -p "$debs"
	step "downloading linux-headers-$kver ($suite, $arch)"
	(cd "$debs" && apt_p apt-get download -qq "linux-headers-$kver" >>"$debs/download.log" 2>&1) ||
		die "cannot download linux-headers-$kver from $suite (log: $debs/download.log)"
	hdeb=$(ls "$debs"/linux-headers-"${kver}"_*.deb | tail -1)
	deps=$(dpkg-deb -f "$hdeb" Depends)
	common=$(grep -o 'linux-headers-[^ ,]*-common[^ ,]*' <<<"$deps" | head -1)
	kbuild=$(grep -o 'linux-kbuild-[^ ,]*' <<<"$deps" | head -1)
	[ -n "$common" ] && [ -n "$kbuild" ] || die "linux-headers-$kver names no -common or kbuild package"
	(cd "$debs" && apt_p apt-get download -qq "$common" >>"$debs/download.log" 2>&1) ||
		die "cannot download $common from $suite (log: $debs/download.log)"
	[ -d "/usr/lib/$kbuild/scripts" ] || "$BQLKIT_TOP/scripts/install-deps.sh" build "$kbuild"
	[ -d "/usr/lib/$kbuild/scripts" ] || die "no /usr/lib/$kbuild on this host: build $kver in a chroot"
	rm -rf "$hdir.tmp"
	mkdir -p "$hdir.tmp"
	dpkg-deb -x "$hdeb" "$hdir.tmp"
	dpkg-deb -x "$(ls "$debs/${common}"_*.deb | tail -1)" "$hdir.tmp"
	t=$hdir.tmp/usr/src
	for d in "$t/linux-headers-$kver" "$t/$common"; do
		for l in scripts tools; do
			[ -L "$d/$l" ] && ln -sfn "/usr/lib/$kbuild/$l" "$d/$l"
		done
	done
	sed -i "s|^include /usr/src/$common/|include $hdir/usr/src/$common/|" "$t/linux-headers-$kver/Makefile"
	grep -q "^include $hdir/" "$t/linux-headers-$kver/Makefile" ||
		die "cannot repoint $kver's Makefile at $common"
	touch "$hdir.tmp/.extracted"
	rm -rf "$hdir"
	mv "$hdir.tmp" "$hdir"
fi

# A 32-bit target needs a modpost with its device table layouts
# (lab/build-modpost.sh): the headers get a private copy of the kbuild
# with that modpost in it.
case $arch in
armhf | armel | i386)
	if [ ! -e "$hdir/kbuild/.target-modpost" ]; then
		hdeb=$(ls "$BQLKIT_CACHE/debs/$suite-$arch/linux-headers-${kver}"_*.deb | tail -1)
		kbuild=$(dpkg-deb -f "$hdeb" Depends | grep -o 'linux-kbuild-[^ ,]*' | head -1)
		[ -d "/usr/lib/$kbuild/scripts" ] || die "no /usr/lib/$kbuild on this host for $kver"
		case $arch in
		armhf) tgt=(ARCH=arm CROSS_COMPILE=arm-linux-gnueabihf-) ;;
		armel) tgt=(ARCH=arm CROSS_COMPILE=arm-linux-gnueabi-) ;;
		i386) tgt=(ARCH=i386) ;;
		esac
		series=$(series_of "$(kernel_version "$kdir")")
		ksrc=$("$BQLKIT_TOP/scripts/fetch-source.sh" "$suite" "linux-source-$series") ||
			die "cannot fetch linux-source-$series to build a $arch modpost"
		rm -rf "$hdir/kbuild"
		cp -a "/usr/lib/$kbuild" "$hdir/kbuild"
		env "${tgt[@]}" "$BQLKIT_TOP/lab/build-modpost.sh" "$ksrc" "$kdir" "$hdir/kbuild/scripts/mod" >/dev/null
		for d in "$kdir" "$hdir"/usr/src/linux-headers-*-common; do
			for l in scripts tools; do
				[ -L "$d/$l" ] && ln -sfn "$hdir/kbuild/$l" "$d/$l"
			done
		done
		touch "$hdir/kbuild/.target-modpost"
	fi
	;;
esac
echo "$kver $kdir"
