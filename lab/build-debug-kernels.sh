#!/bin/bash
# Build (once, cached) the debug kernels the kit's VM tests run on: from
# Debian's linux-source-X.Y, through lab/build-vm-kernel.sh, one kernel
# per flavour:
#   kasan  KASAN (generic, inline) + lockdep (PROVE_LOCKING) + DEBUG_ATOMIC_SLEEP + DEBUG_NET
#   kcsan  KCSAN + DEBUG_NET
#
#   build-debug-kernels.sh [SERIES...]     (default: $DEBUG_SERIES, else 6.12)
#
# Environment: DEBUG_FLAVOURS (default "kasan kcsan").  Each kernel lands in
# $BQLKIT_CACHE/kernels/<release>/ (marked .bqlkit-debug), its O= build
# directory (for building the kit against it) in
# $BQLKIT_CACHE/debug/build/<series>-<flavour>.  A kernel is rebuilt only
# when the source package or the VM-kernel builder changed.  Prints one line
# per kernel: "<series> <flavour> <release> <build dir>".
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

[ $# -gt 0 ] || set -- ${DEBUG_SERIES:-6.12}
flavours=${DEBUG_FLAVOURS:-kasan kcsan}
top=$BQLKIT_CACHE/debug
mkdir -p "$top/src" "$top/build"
builder=$BQLKIT_TOP/lab/build-vm-kernel.sh

"$BQLKIT_TOP/scripts/install-deps.sh" tree
for series in "$@"; do
	tarball=/usr/src/linux-source-$series.tar.xz
	[ -f "$tarball" ] || "$BQLKIT_TOP/scripts/install-deps.sh" test "linux-source-$series"
	[ -f "$tarball" ] || die "no $tarball: apt-get install linux-source-$series"
	sum=$(sha256sum "$tarball" | cut -c1-16)
	src=$top/src/$series-$sum/linux-source-$series
	if [ ! -f "$src/.bqlkit-unpacked" ]; then
		step "unpacking $tarball into $(dirname "$src")"
		rm -rf "$top/src/$series-$sum"
		mkdir -p "$top/src/$series-$sum"
		tar -xf "$tarball" -C "$top/src/$series-$sum" --use-compress-program='xz -T0 -d'
		touch "$src/.bqlkit-unpacked"
	fi
	stamp="source=$sum builder=$(sha256sum "$builder" | cut -c1-16)"
	for flavour in $flavours; do
		out=$top/build/$series-$flavour
		rel=$(cat "$out/include/config/kernel.release" 2>/dev/null || true)
		if [ -n "$rel" ] && [ -f "$BQLKIT_CACHE/kernels/$rel/.bqlkit-debug" ] &&
			[ "$(cat "$out/.bqlkit-stamp" 2>/dev/null)" = "$stamp" ]; then
			echo "$series $flavour $rel $out"
			continue
		fi
		step "building the $flavour kernel of Linux $series (log: $out/build.log; 20-60 min on 2 cores)"
		rm -rf "$out"
		VM_NICE=${VM_NICE:-10} VM_DEBUG=$flavour VM_LOCALVERSION=-vm-$flavour "$builder" "$src" "$out" >/dev/null
		echo "$stamp" >"$out/.bqlkit-stamp"
		echo "$series $flavour $(cat "$out/include/config/kernel.release") $out"
	done
done
