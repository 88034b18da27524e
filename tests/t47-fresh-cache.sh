#!/bin/bash
# A fresh machine's cache: a chroot row of the build matrix (bullseye's
# 5.10, veth) built with BQLKIT_CACHE pointing at an EMPTY directory, so the
# suite proves every run that the path a new user takes works: the chroot
# made from nothing (mmdebstrap), its headers installed with apt, the kit
# built in it.  (Other tests share the warm cache; README says how to run
# the whole suite this way: BQLKIT_CACHE=$(mktemp -d) make check.)  A few
# minutes: the chroot is downloaded (~150 MB) each run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip fresh-cache "BQLKIT_QUICK=1 (no chroot)"
	exit 0
fi
[ "$(id -u)" = 0 ] || { skip fresh-cache "needs root (chroot)"; exit 0; }
if [ ! -f "$(base_dir 5.10)/MANIFEST" ]; then
	skip fresh-cache "no imported Linux 5.10 base (tests/setup.sh fetches linux-source-5.10 from bullseye-security; the fetch failed)"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/bqlkit-t47.XXXXXX")
cleanup() {
	local m
	for m in "$tmp"/cache/chroots/*/proc; do
		! mountpoint -q "$m" || umount "$m" || umount -l "$m"
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
export BQLKIT_CACHE=$tmp/cache
mkdir -p "$BQLKIT_CACHE"
check fresh-cache-is-empty test -z "$(ls -A "$BQLKIT_CACHE")"
start=$SECONDS
chroot_cell fresh-cache-chroot-row bullseye-5.10 veth "$tmp/row" || exit 0
echo "t47: bullseye-5.10 from an empty cache in $((SECONDS - start)) s" >&2
check fresh-cache-chroot-tarball test -s "$BQLKIT_CACHE/chroots/bullseye-amd64.tar"
check fresh-cache-module-built test -f "$CELL_KO"
check fresh-cache-module-series bash -c "modinfo -F bqlkit '$CELL_KO' | grep -q 'series=5.10'"
