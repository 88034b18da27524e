#!/bin/bash
# Regenerate the initramfs of each given kernel whose image carries one of
# the kit's drivers, so that early boot loads the same module as later.
#
#   initramfs.sh KVER...
#
# Debian (initramfs-tools): an image /boot/initrd.img-KVER that lsinitramfs
# shows to hold veth.ko or mana.ko (MODULES=most puts mana in; veth only
# when listed in /etc/initramfs-tools/modules) is rebuilt with
# update-initramfs -u -k KVER.  One line per kernel says what was done.
# Kernels without an image, or whose image has none of the drivers, are left
# alone.  BQLKIT_NO_INITRAMFS=1 skips all of it.
#
#   initramfs.sh --defer KVER...
#
# records KVER... as pending before a change to their modules (dkms remove,
# a replaced source): every later run (of install, uninstall, or this
# script with no KVER) regenerates the pending kernels too, and clears each
# one once its image is right.  So an install or uninstall interrupted
# between changing the modules and regenerating the image (SIGHUP, SIGINT,
# a crash) is finished by the next run instead of leaving the kit in the
# image.  The list is root's: /var/lib/bqlkit/initramfs-pending.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ -z "${BQLKIT_NO_INITRAMFS:-}" ] || exit 0
state=/var/lib/bqlkit
pending=$state/initramfs-pending
# Only kernel releases (lib.sh is_release) are taken, recorded or read back.
releases_only() {
	local k
	for k in "$@"; do is_release "$k" || die "initramfs.sh: '$k' is not a kernel release"; done
}
pending_add() {
	releases_only "$@"
	mkdir -p "$state"
	{ cat "$pending" 2>/dev/null || true; printf '%s\n' "$@"; } | sort -u >"$pending.tmp"
	mv "$pending.tmp" "$pending"
}
pending_del() {
	[ -f "$pending" ] || return 0
	grep -vxF -- "$1" "$pending" >"$pending.tmp" || true
	if [ -s "$pending.tmp" ]; then mv "$pending.tmp" "$pending"; else rm -f "$pending.tmp" "$pending"; fi
}
if [ "${1:-}" = --defer ]; then
	shift
	pending_add "$@"
	exit 0
fi
releases_only "$@"
# The kernels given, and those an earlier, interrupted run left pending.
mapfile -t kernels < <({
	printf '%s\n' "$@"
	while read -r k; do ! is_release "$k" || echo "$k"; done < <(cat "$pending" 2>/dev/null || true)
} | grep . | sort -u)

mods=()
for d in $BQLKIT_DRIVERS; do
	m=$(sed -n 's/^MODULES="\(.*\)"/\1/p' "$BQLKIT_TOP/drivers/$d/driver.conf" 2>/dev/null || true)
	read -ra ms <<<"${m:-$d}"
	mods+=("${ms[@]}")
done
re=$(printf '%s|' "${mods[@]}")
re="/(${re%|})\\.ko(\\.(xz|zst|gz))?\$"

rc=0
for k in ${kernels[@]+"${kernels[@]}"}; do
	img=/boot/initrd.img-$k
	[ -f "$img" ] || { pending_del "$k"; continue; }
	if ! command -v lsinitramfs >/dev/null || ! command -v update-initramfs >/dev/null; then
		note "initramfs of $k: $img exists but initramfs-tools is not installed: regenerate it yourself if it holds ${mods[*]}"
		pending_del "$k"
		continue
	fi
	inside=$(lsinitramfs "$img" 2>/dev/null | grep -E "$re" | sed 's|.*/||; s|\.ko.*||' | sort -u | tr '\n' ' ' || true)
	if [ -z "$inside" ]; then
		note "initramfs of $k: holds none of ${mods[*]}, left alone"
		pending_del "$k"
		continue
	fi
	step "initramfs of $k holds ${inside% }: update-initramfs -u -k $k"
	if out=$(update-initramfs -u -k "$k" 2>&1); then
		note "initramfs of $k regenerated"
		pending_del "$k"
	else
		note "update-initramfs -u -k $k failed: $(tail -1 <<<"$out"); run it again before rebooting into $k"
		rc=1
	fi
done
exit $rc
