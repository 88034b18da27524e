#!/bin/bash
# get-kernel.sh [--arch ARCH] [--suite SUITE] KVER
# Ensure linux-image-KVER (Debian architecture ARCH, default amd64) is
# downloaded to $BQLKIT_CACHE/debs and extracted (once) to
# $BQLKIT_CACHE/kernels/KVER/; print that directory.  --suite takes it from
# that Debian suite through scripts/apt-private.sh (e.g. bullseye-security
# for a 5.10 kernel) instead of this system's APT sources.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

suite=
while [[ ${1:-} == --arch || ${1:-} == --suite ]]; do
	need_arg "$1" "${2:-}"
	case $1 in
	--arch) VM_ARCH=$2 ;;
	--suite) suite=$2 ;;
	esac
	shift 2
done
[[ $# -eq 1 && -n $1 ]] || die "usage: get-kernel.sh [--arch ARCH] [--suite SUITE] KVER"
kver=$1
pkg=linux-image-$kver
debs=$BQLKIT_CACHE/debs
kdir=$BQLKIT_CACHE/kernels/$kver

if [[ ! -e $kdir/.extracted ]]; then
	cache_lock
	mkdir -p "$debs"
	deb() { find "$debs" -maxdepth 1 -name "${1}_*_${VM_ARCH}.deb" | sort -V | tail -n1; }
	if [[ -n $suite ]]; then
		dl() { (cd "$debs" && "$VM_DIR/../../scripts/apt-private.sh" "$suite" --arch "$VM_ARCH" -- apt-get -q download "$1"); }
	else
		dl() { apt_download "$debs" "$1"; }
	fi
	# get PKG: download PKG once into $debs.
	get() {
		[[ -z $(deb "$1") ]] || return 0
		log "downloading $1 ($VM_ARCH)"
		if ! out=$(dl "$1" 2>&1); then
			die "cannot get package $1: $(grep -m1 '^E:' <<<"$out" || echo "apt-get download failed")"
		fi
	}
	get "$pkg"
	# From 7.x Debian splits the image: linux-image-KVER depends on
	# linux-binary-KVER (vmlinuz) and linux-modules-KVER.
	parts=("$pkg")
	for p in linux-binary-$kver linux-modules-$kver; do
		if dpkg-deb -f "$(deb "$pkg")" Depends | grep -qw "$p"; then
			get "$p"
			parts+=("$p")
		fi
	done
	if [[ ! -e $kdir/.extracted ]]; then
		rm -rf "$kdir.tmp"
		mkdir -p "$kdir.tmp"
		for p in "${parts[@]}"; do
			dpkg-deb -x "$(deb "$p")" "$kdir.tmp" || die "cannot extract $(deb "$p")"
		done
		# 7.x ships /usr/lib/modules/KVER/vmlinuz and no /lib: give the
		# harness the older layout (boot/vmlinuz-KVER, lib/modules).
		if [[ ! -e $kdir.tmp/lib && -d $kdir.tmp/usr/lib/modules ]]; then
			ln -s usr/lib "$kdir.tmp/lib"
		fi
		if [[ ! -e $kdir.tmp/boot/vmlinuz-$kver && -f $kdir.tmp/usr/lib/modules/$kver/vmlinuz ]]; then
			mkdir -p "$kdir.tmp/boot"
			ln "$kdir.tmp/usr/lib/modules/$kver/vmlinuz" "$kdir.tmp/boot/vmlinuz-$kver"
		fi
		[[ -f $kdir.tmp/boot/vmlinuz-$kver ]] || die "${parts[*]} have no boot/vmlinuz-$kver"
		touch "$kdir.tmp/.extracted"
		rm -rf "$kdir"
		mv "$kdir.tmp" "$kdir"
	fi
fi
echo "$kdir"
