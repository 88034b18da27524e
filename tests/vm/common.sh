# shellcheck shell=bash
# Host-side helpers shared by the tests/vm scripts (sourced, not executed).

# shellcheck disable=SC2034 # used by the scripts sourcing this file
VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The cache's default is scripts/lib.sh's (the one place it lives).
# shellcheck disable=SC2031 # lib.sh sets it in the subshell, which prints it
BQLKIT_CACHE=${BQLKIT_CACHE:-$(. "$VM_DIR/../../scripts/lib.sh" && echo "$BQLKIT_CACHE")}
[ -n "$BQLKIT_CACHE" ] || { echo "${0##*/}: error: no BQLKIT_CACHE from scripts/lib.sh" >&2; exit 1; }
# Build products (udpflood binary, initramfs images, logs) live here, never in git.
BQLKIT_VM_BUILD=${BQLKIT_VM_BUILD:-$BQLKIT_CACHE/vm}

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

# bpf_object NAME: build $VM_DIR/NAME.c (an XDP program) into BPF bytecode
# once (the same for every guest architecture); print the object's path.
bpf_object() {
	local obj=$BQLKIT_VM_BUILD/bin/$1.o
	mkdir -p "$(dirname "$obj")"
	if [[ ! -s $obj || $VM_DIR/$1.c -nt $obj ]]; then
		command -v clang >/dev/null || die "clang not found (apt-get install clang llvm libbpf-dev)"
		clang -O2 -g -target bpf -I"/usr/include/$(gcc -dumpmachine)" \
			-c "$VM_DIR/$1.c" -o "$obj.$$" || die "cannot build $1.o (libbpf-dev?)"
		mv "$obj.$$" "$obj"
	fi
	echo "$obj"
}
