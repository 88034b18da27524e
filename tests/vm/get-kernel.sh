#!/bin/bash
# get-kernel.sh [--arch ARCH] KVER
# Ensure linux-image-KVER (Debian architecture ARCH, default amd64) is
# downloaded to $BQLKIT_CACHE/debs and extracted (once) to
# $BQLKIT_CACHE/kernels/KVER/; print that directory.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

if [[ ${1:-} == --arch ]]; then
	need_arg "$1" "${2:-}"
	VM_ARCH=$2
	shift 2
fi
[[ $# -eq 1 && -n $1 ]] || die "usage: get-kernel.sh [--arch ARCH] KVER"
kver=$1
pkg=linux-image-$kver
debs=$BQLKIT_CACHE/debs
kdir=$BQLKIT_CACHE/kernels/$kver

if [[ ! -e $kdir/.extracted ]]; then
	cache_lock
	mkdir -p "$debs"
	deb() { find "$debs" -maxdepth 1 -name "${pkg}_*_${VM_ARCH}.deb" | sort -V | tail -n1; }
	if [[ -z $(deb) ]]; then
		log "downloading $pkg ($VM_ARCH)"
		if ! out=$(apt_download "$debs" "$pkg" 2>&1); then
			die "cannot get package $pkg: $(grep -m1 '^E:' <<<"$out" || echo "apt-get download failed")"
		fi
	fi
	if [[ ! -e $kdir/.extracted ]]; then
		rm -rf "$kdir.tmp"
		mkdir -p "$kdir.tmp"
		dpkg-deb -x "$(deb)" "$kdir.tmp" || die "cannot extract $(deb)"
		[[ -f $kdir.tmp/boot/vmlinuz-$kver ]] || die "$(deb) has no boot/vmlinuz-$kver"
		touch "$kdir.tmp/.extracted"
		rm -rf "$kdir"
		mv "$kdir.tmp" "$kdir"
	fi
fi
echo "$kdir"
