#!/bin/bash
# make fit: does the kit fit this kernel source, driver by driver?
#
#   fit-source.sh SRC [KDIR]
#
# SRC: a kernel source (tarball, unpacked tree, git tree; GIT_REV) or a
# directory of driver files at their kernel paths (a corpus fixture; without
# a top Makefile, BQLKIT_SRCVER=X.Y.Z -- make fit SRCVER= -- says which
# release they are from).  Its
# driver files are imported into a scratch base (nothing in build/bases
# changes) and scripts/fit.sh fits each driver's changes to them: per change
# applied / adapted / already present / does not fit, and a verdict per
# driver.  mvneta's empty series is audited (scripts/audit-mvneta.sh).
# With KDIR (a prepared tree or headers of that kernel; SRC itself when it is
# a prepared tree), each driver that fits is also built against it
# (scripts/build.sh: compile, ABI, sparse for adapted results).
# Exit 0 when every driver present in SRC fits.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rules.sh"
[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: fit-source.sh SRC [KDIR]"
src=$1 kdir=${2:-}
[ -e "$src" ] || die "kernel source '$src' does not exist"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bqlkit-fitsrc.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ -z "$kdir" ] && [ -d "$src" ] && { [ -f "$src/.bqlkit-prepared" ] || [ -f "$src/Module.symvers" ]; } &&
	[ -f "$src/include/config/auto.conf" ]; then
	kdir=$src
fi

# A directory of driver files without the kernel's scripts/ (a fixture) is
# read as it is; anything else goes through the import.
if [ -d "$src" ] && [ ! -d "$src/scripts" ] && [ ! -e "$src/.git" ]; then
	base=$(readlink -f "$src")
	kv=$(source_version "$base") || exit 1
	[ -z "$kdir" ] || [ -f "$base/Makefile" ] ||
		die "KDIR= builds a driver from a whole source: '$src' has driver files only (no top Makefile); drop KDIR= or give the tree"
else
	BQLKIT_BASES=$tmp/bases "$BQLKIT_TOP/scripts/import-source.sh" "$src" >"$tmp/import.log" 2>&1 ||
		die "cannot import '$src': $(grep 'error' "$tmp/import.log" | tail -1)"
	base=$(ls -d "$tmp"/bases/*/)
	base=${base%/}
	kv=$(manifest_get "$base" version)
fi
[ -z "${2:-}" ] || valid_dir KDIR "$2" "the directory of a prepared kernel tree or of a kernel's headers"
echo "bqlkit fit: Linux $kv from $src"
rc=0 verdicts=()
for drv in $BQLKIT_DRIVERS; do
	if [ -z "$(rules_sources_any "$base" "$drv")" ]; then
		verdicts+=("$drv: not in Linux $kv")
		continue
	fi
	frc=0
	bash "$BQLKIT_TOP/scripts/fit.sh" "$drv" "$base" "$tmp/out/$drv" || frc=$?
	audit=$(sed -n 's/^AUDIT=//p' "$BQLKIT_TOP/drivers/$drv/driver.conf")
	if [ "$frc" -eq 0 ] && [ -n "$audit" ]; then
		if aout=$(bash "$BQLKIT_TOP/$audit" "$tmp/out/$drv" 2>&1); then
			sed 's/^/  audit: /' <<<"$aout"
		else
			sed 's/^/  audit: /' <<<"$aout"
			echo "  verdict: $drv DOES NOT FIT: $audit finds something missing (above): it needs a series"
			frc=3
		fi
	fi
	v=$(sed -n 's/^verdict //p' "$tmp/out/$drv.fit")
	[ "$frc" -eq 0 ] || rc=1
	verdicts+=("$drv: $( [ "$frc" -eq 0 ] && echo "fits (${v}) with" || echo "does not fit (${v%% *}); closest:") series $(sed -n 's/^series //p' "$tmp/out/$drv.fit")$(sed -n 's/^note \(Linux [^ ]* has no [^ ]* ([^)]*)\).*/; \1: see the note above/p' "$tmp/out/$drv.fit")")
done
if [ -n "$kdir" ] && [ "$rc" -eq 0 ]; then
	label=fit-$kv
	echo "bqlkit fit: building against $kdir (compile, ABI, sparse for adapted results)"
	b=$tmp/bases-b
	mkdir -p "$b"
	if [ "$base" = "$(readlink -f "$src")" ]; then
		BQLKIT_BASES=$b "$BQLKIT_TOP/scripts/import-source.sh" "$base" >/dev/null 2>&1 || true
	else
		cp -a "$base" "$b/"
	fi
	read -ra cross < <(grep -q '^CONFIG_ARM64=y' "$kdir/include/config/auto.conf" 2>/dev/null &&
		echo ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- || echo)
	if out=$(env BQLKIT_BASES="$b" KDIR="$kdir" ${cross[@]+"${cross[@]}"} "$BQLKIT_TOP/scripts/build.sh" "$label" 2>&1); then
		grep '^bqlkit: \(built\|.*sparse\)' <<<"$out" | sed 's/^/  /'
		verdicts+=("build: compiled, ABI kept (build/$label/)")
	else
		grep -m3 'error' <<<"$out" | sed 's/^/  /'
		verdicts+=("build: FAILED (see above): the result is refused")
		rc=1
	fi
else
	[ -n "$kdir" ] || verdicts+=("build: not checked (give KDIR=<a prepared tree or the headers of this kernel>)")
fi
echo "bqlkit fit: Linux $kv:"
printf '  %s\n' "${verdicts[@]}"
exit $rc
