#!/bin/bash
# Install what the kit needs with apt.
#
#   install-deps.sh build [PACKAGE...]   build + DKMS install
#   install-deps.sh test                 build + the test suite (QEMU, busybox, ...)
#   install-deps.sh bench                test + make bench (gnuplot, python3)
#   install-deps.sh deb                  build + make deb (debhelper, dh-dkms)
#   install-deps.sh kernel               build + what building a kernel needs
#                                        (scripts/build-vm-kernel.sh, build-debug-kernels.sh)
#
# Only missing packages are installed; apt-get update runs at most once a
# day (or when a package is unknown).  /etc/apt is never changed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

what=${1:-build}
shift || true
pkgs=(dkms quilt make gcc libc6-dev bc xz-utils kmod "$@")
if [ "$what" = test ] || [ "$what" = bench ]; then
	pkgs+=(qemu-system-x86 busybox-static cpio iproute2 iputils-ping ethtool
		sparse file coccinelle)
	# t70 (XDP program), t61 (arm64 guest: QEMU, cross gcc for the module
	# and the static guest tools, arm64 headers' kbuild from the host)
	pkgs+=(clang llvm libbpf-dev qemu-system-arm gcc-aarch64-linux-gnu
		libc6-dev-arm64-cross binutils linux-kbuild-6.1)
fi
if [ "$what" = test ] || [ "$what" = deb ]; then
	# make deb; the test chroot (t90, t95): mmdebstrap, zstd
	pkgs+=(debhelper dh-dkms dpkg-dev fakeroot)
	[ "$what" = deb ] || pkgs+=(mmdebstrap zstd)
fi
if [ "$what" = bench ]; then
	pkgs+=(gnuplot-nox python3)
fi
# make prepare-tree / make vm-kernel (and i14's debug kernels): what a
# kernel tree's own build needs.
if [ "$what" = kernel ]; then
	pkgs+=(flex bison libelf-dev libssl-dev)
fi
# make fit / build: coccinelle checks what each patch establishes
# (scripts/fit.sh), diffutils' diff3 adapts moved context.
pkgs+=(coccinelle diffutils)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "${p%%=*}" 2>/dev/null | grep -q 'install ok installed' &&
		{ [ "${p#*=}" = "$p" ] || [ "$(dpkg-query -W -f='${Version}' "${p%%=*}")" = "${p#*=}" ]; } ||
		missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
[ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}): run as root, or apt-get install them"

stamp=/var/lib/apt/periodic/bqlkit-update-stamp
if [ -z "$(find "$stamp" -mmin -1440 2>/dev/null)" ]; then
	step "apt-get update"
	apt-get update -qq >/dev/null
	mkdir -p "$(dirname "$stamp")" && touch "$stamp"
fi
step "installing ${missing[*]}"
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/bqlkit-apt.log 2>&1; then
	tail -5 /tmp/bqlkit-apt.log >&2
	die "apt-get install ${missing[*]} failed (log: /tmp/bqlkit-apt.log)"
fi
