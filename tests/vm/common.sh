# shellcheck shell=bash
# Host-side helpers shared by the tests/vm scripts (sourced, not executed).

BQLKIT_CACHE=${BQLKIT_CACHE:-/var/cache/bqlkit}
# Build products (udpflood binary, initramfs images, logs) live here, never in git.
BQLKIT_VM_BUILD=${BQLKIT_VM_BUILD:-$BQLKIT_CACHE/vm}
# shellcheck disable=SC2034 # used by the scripts sourcing this file
VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() { echo "${0##*/}: error: $*" >&2; exit 1; }
log() { echo "${0##*/}: $*" >&2; }

# need_arg OPT VALUE: fail clearly if an option is missing its value.
need_arg() { [[ -n ${2:-} ]] || die "option $1 needs a value"; }

# Serialize cache writers (parallel runs share $BQLKIT_CACHE).
cache_lock() {
	mkdir -p "$BQLKIT_CACHE"
	exec {BQLKIT_LOCK_FD}>"$BQLKIT_CACHE/.lock"
	flock "$BQLKIT_LOCK_FD"
}

# VM_ARCH: Debian architecture of the guest (amd64, arm64); scripts take --arch.
VM_ARCH=${VM_ARCH:-amd64}

# apt_download DIR PKG...: `apt-get download` PKG... into DIR for $VM_ARCH.
# A foreign architecture goes through scripts/apt-private.sh (a private
# APT config for this release's -security suite plus its base suite, under
# $BQLKIT_CACHE/apt): /etc/apt and dpkg's architectures are never touched.
apt_download() {
	local dir=$1 suite
	shift
	if [[ $VM_ARCH == "$(dpkg --print-architecture)" ]]; then
		(cd "$dir" && apt-get -q download "$@")
	else
		suite=$(. /etc/os-release && echo "$VERSION_CODENAME")-security
		(cd "$dir" && "$VM_DIR/../../scripts/apt-private.sh" "$suite" --arch "$VM_ARCH" -- apt-get -q download "$@")
	fi
}
