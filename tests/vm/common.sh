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
