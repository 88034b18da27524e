#!/bin/bash
# Choose the kernel to build for.
#
#   pick-kernel.sh              print "KVER<TAB>why" for installing: the running
#                               kernel if the distro has its headers, else the
#                               distro's default kernel
#   pick-kernel.sh --installed  print a kernel whose headers are installed: the
#                               running one, else the distro default, else none
set -euo pipefail
. "$(dirname "$0")/lib.sh"

running=$(uname -r)

# The distro's default kernel: what the linux-headers-<arch> metapackage
# depends on (Debian: linux-headers-amd64 -> linux-headers-6.1.0-57-amd64).
default_kernel() {
	local meta
	meta=linux-headers-$(dpkg --print-architecture)
	apt-cache depends "$meta" 2>/dev/null |
		sed -n 's/^ *Depends: linux-headers-\(.*\)$/\1/p' | grep -v common | head -1
}

if [ "${1:-}" = --installed ]; then
	if [ -f "$(kdir_for "$running")/Makefile" ]; then
		echo "$running"
		exit 0
	fi
	d=$(default_kernel)
	if [ -n "$d" ] && [ -f "$(kdir_for "$d")/Makefile" ]; then
		echo "$d"
		exit 0
	fi
	exit 1
fi

if [ -f "$(kdir_for "$running")/Makefile" ]; then
	printf '%s\t%s\n' "$running" "the running kernel (headers installed)"
elif apt-cache show "linux-headers-$running" >/dev/null 2>&1; then
	printf '%s\t%s\n' "$running" "the running kernel"
else
	d=$(default_kernel)
	[ -n "$d" ] || die "the running kernel $running has no headers in the distro, and no default kernel was found (apt-get update, or give KVER=)"
	printf '%s\t%s\n' "$d" "the distro's default kernel: the running kernel $running has no headers in the distro"
fi
