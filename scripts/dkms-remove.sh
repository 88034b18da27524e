#!/bin/bash
# Remove bqlkit/VERSION from DKMS for every kernel, including kernels whose
# headers are gone (dkms 3.0.10 no longer lists those, and `dkms remove
# --all` leaves their modules in /lib/modules/KVER/updates/dkms), then
# regenerate the initramfs where it held a kit driver.
#
#   dkms-remove.sh VERSION           all of it (make uninstall)
#   dkms-remove.sh --before VERSION  the package's prerm, before dh_dkms's own
#                                    `dkms remove --all`: prints what DKMS
#                                    installed ("KVER FILE" lines)
#   dkms-remove.sh --after VERSION   after it, those lines on stdin: what it
#                                    left, and the initramfs
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mode=all
case ${1:-} in --before | --after) mode=${1#--} && shift ;; esac
[ $# -eq 1 ] || die "usage: dkms-remove.sh [--before|--after] VERSION"
v=$1
# (rm -rf below: a version is a name, never a path.)
is_release "$v" || die "'$v' is not a version of the kit"
tree=/var/lib/dkms/bqlkit/$v

# kernels_of LINES: the kernels of "KVER FILE" lines, each once, space-separated.
kernels_of() { cut -d' ' -f1 <<<"$1" | sed '/^$/d' | sort -u | tr '\n' ' '; }

# installed: what DKMS installed, per kernel: "KVER MODULE-FILE" lines.  Their
# images may hold the kit's modules: pending until regenerated, so that a
# run interrupted from here on is finished by the next one.
installed() {
	local d k f left kernels
	left=$(for d in "$tree"/*/*/module; do
		[ -d "$d" ] || continue
		k=$(basename "$(dirname "$(dirname "$d")")")
		for f in "$d"/*.ko*; do [ -f "$f" ] && echo "$k $(basename "$f")"; done
	done)
	kernels=$(kernels_of "$left")
	# shellcheck disable=SC2086 # one word per kernel
	[ -z "$kernels" ] || "$BQLKIT_TOP/scripts/initramfs.sh" --defer $kernels
	echo "$left"
}

# finish LINES: remove what DKMS lost track of, then the tree and the initramfs.
finish() {
	local k f kernels
	while read -r k f; do
		[ -n "$k" ] || continue
		if [ -f "/lib/modules/$k/updates/dkms/$f" ]; then
			rm -f "/lib/modules/$k/updates/dkms/$f"
			rmdir "/lib/modules/$k/updates/dkms" "/lib/modules/$k/updates" 2>/dev/null || true
			[ ! -d "/lib/modules/$k/kernel" ] || depmod -a "$k" 2>/dev/null || true
			note "removed $f for $k (DKMS had lost track of it: no headers)"
		fi
	done <<<"$1"
	# What DKMS leaves of kernels it never built for (a skipped kernel's dir).
	rm -rf "$tree"
	find /var/lib/dkms/bqlkit -maxdepth 1 -xtype l -delete 2>/dev/null || true
	rmdir /var/lib/dkms/bqlkit 2>/dev/null || true
	kernels=$(kernels_of "$1")
	# shellcheck disable=SC2086 # one word per kernel
	[ -z "$kernels" ] || "$BQLKIT_TOP/scripts/initramfs.sh" $kernels || true
}

case $mode in
before)
	left=$(installed)
	kernels=$(kernels_of "$left")
	step "dkms remove bqlkit/$v --all, by dh_dkms${kernels:+ (installed for: ${kernels% })}"
	echo "$left"
	;;
after)
	finish "$(cat)"
	;;
all)
	left=$(installed)
	kernels=$(kernels_of "$left")
	step "dkms remove bqlkit/$v --all${kernels:+ (installed for: ${kernels% })}"
	dkms remove "bqlkit/$v" --all >>/var/log/bqlkit-dkms.log 2>&1 ||
		note "dkms remove bqlkit/$v --all failed (log: /var/log/bqlkit-dkms.log); removing its files by hand"
	finish "$left"
	;;
esac
