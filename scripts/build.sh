#!/bin/bash
# Build the kit's drivers for one kernel.
#
#   build.sh KVER [DRIVER...]
#
# Picks each driver's series by the kernel's X.Y, applies it with quilt to
# a copy of the imported base of that series, runs the compat probes and
# builds with Kbuild.  Results: build/KVER/<module>.ko.
# Environment: KDIR (default /lib/modules/KVER/build), BQLKIT_BASES (where
# imported bases live, default build/bases), STRICT=1 (refuse a base whose
# sublevel differs from the kernel's), ARCH, CROSS_COMPILE,
# BQLKIT_FAULT_INJECTION=1 (test builds: compile the drivers' fault hooks).
# Exit 77: the kit has no series for this kernel (DKMS reports it as skipped).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || die "usage: build.sh KVER [DRIVER...]"
kver=$1
shift
drivers=${*:-$BQLKIT_DRIVERS}
kdir=${KDIR:-$(kdir_for "$kver")}
[ -f "$kdir/Makefile" ] ||
	die "no kernel headers for $kver at $kdir (install them: apt-get install linux-headers-$kver)"
# A kernel tree must be configured and modules_prepare'd first (else the
# compiler fails on an empty -Wframe-larger-than= and the like).
if is_tree "$kdir" && [ ! -f "$kdir/include/config/auto.conf" ]; then
	die "$kdir is a kernel tree that is not prepared for building modules: run 'make prepare-tree TREE=$kdir' first"
fi
kv=$(kernel_version "$kdir") || die "cannot read the kernel version of $kdir"
series=$(series_of "$kv")
out=$BQLKIT_BUILD/$kver
mkdir -p "$out"

for drv in $drivers; do
	# A driver the kernel does not enable (mvneta on x86, mana on armhf) is
	# not built for it.
	sym=$(sed -n 's/^KCONFIG=//p' "$BQLKIT_TOP/drivers/$drv/driver.conf")
	if [ -n "$sym" ] && [ -f "$kdir/include/config/auto.conf" ] &&
		! grep -q "^$sym=[ym]" "$kdir/include/config/auto.conf"; then
		note "$drv: $sym is not enabled in $kver: not built"
		continue
	fi
	pdir=$BQLKIT_TOP/patches/$drv/$series
	if [ ! -f "$pdir/series" ]; then
		echo "bqlkit: $drv: no series for Linux $series (kernel $kver); the kit carries: $(cd "$BQLKIT_TOP/patches/$drv" && echo */ | tr -d /)" >&2
		exit 77
	fi
	base=$(base_dir "$series")
	[ -f "$base/MANIFEST" ] ||
		die "no imported Linux $series source for $drv: run $(if is_tree "$kdir"; then echo "'make import SRC=$(tree_src "$kdir")'"; else source_advice "$series"; fi)"
	bv=$(manifest_get "$base" version)
	[ "$(series_of "$bv")" = "$series" ] ||
		die "base $base holds Linux $bv, not $series: re-import it (make import SRC=...)"
	if [ -f "$pdir/base.conf" ]; then
		min=$(sed -n 's/^MIN_VERSION=//p' "$pdir/base.conf")
		if [ -n "$min" ] && ! version_ge "$bv" "$min"; then
			die "$drv: the imported Linux $bv source is older than $min: $(sed -n 's/^MIN_REASON=//p' "$pdir/base.conf"); import linux-source-$series >= $min"
		fi
	fi
	if [ "$bv" != "$kv" ]; then
		# A tree is its own source: another sublevel's base is never right
		# for it (a stable release changes the driver's context).
		is_tree "$kdir" &&
			die "$drv: the imported Linux $series source is $bv but the tree $kdir is Linux $kv: re-import from this tree: make import SRC=$(tree_src "$kdir")"
		[ -z "${STRICT:-}" ] ||
			die "$drv: imported source is Linux $bv but kernel $kver is Linux $kv (STRICT=1): import the matching source"
		note "$drv: building from Linux $bv source for kernel $kver (Linux $kv)"
	fi
	# The imported files must be the ones recorded at import.
	if ! (cd "$base" && grep '^[0-9a-f]\{64\}  ' MANIFEST | sha256sum --quiet -c - >/dev/null 2>&1); then
		bad=$(cd "$base" && grep '^[0-9a-f]\{64\}  ' MANIFEST | sha256sum -c - 2>/dev/null | grep -v ": OK$" | head -1 || true)
		die "imported file changed since import in $base ($bad): re-import the source (make import SRC=...)"
	fi

	# Apply the series to a fresh copy of the base.
	tree=$out/$drv-src
	if ! qout=$(apply_series "$base" "$pdir" "$tree"); then
		failed=$(sed -n 's/^Applying patch \(.*\)/\1/p' <<<"$qout" | tail -1)
		echo "$qout" >"$out/$drv-quilt.log"
		die "$drv: patch ${failed:-?} of series $series does not apply to the imported Linux $bv source (log: $out/$drv-quilt.log): $(if [ "$(manifest_get "$base" package)" = unknown ] && debian_suite "$series" >/dev/null; then
			echo "import Debian's linux-source-$series, which the series is made for: $(source_advice "$series")"
		else
			echo "this source changed $drv where the kit's backport touches it (a vendor or later stable change), so the kit cannot build $drv for it as it is; send the log to the kit's maintainers"
		fi)"
	fi
	# quilt runs with --fuzz=0: every hunk's context matched exactly, only
	# its line numbers moved (code added or removed elsewhere in the file).
	if grep -q 'offset' <<<"$qout"; then
		note "$drv: series $series applies to Linux $bv at shifted line numbers ($(grep -c 'with offset' <<<"$qout") hunks; every hunk's context matched exactly, no fuzz): the result is the kit's backport; it is compiled and checked below as for any base"
	fi

	# A driver may prove its base has what the kit would otherwise add.
	audit=$(sed -n 's/^AUDIT=//p' "$BQLKIT_TOP/drivers/$drv/driver.conf")
	if [ -n "$audit" ] && ! aout=$(bash "$BQLKIT_TOP/$audit" "$tree" 2>&1); then
		echo "$aout" >&2
		die "$drv: the Linux $bv source lacks what $audit checks (above): this base needs a series in patches/$drv/$series/"
	fi

	# Compat probes, once per kernel.
	bash "$BQLKIT_TOP/scripts/probe.sh" "$kdir" "$out/compat"
	echo "$kdir" >"$out/compat/kdir"
	echo "$kv" >"$out/compat/kernel_version"

	# Kbuild directory: the driver's Kbuild plus its patched files.
	mdir=$out/$drv
	rm -rf "$mdir"
	mkdir -p "$mdir"
	cp "$BQLKIT_TOP/drivers/$drv/Kbuild" "$mdir/"
	MODULES=$(sed -n 's/^MODULES="\(.*\)"/\1/p' "$BQLKIT_TOP/drivers/$drv/driver.conf")
	FILES=$(sed -n 's/^FILES="\(.*\)"/\1/p' "$BQLKIT_TOP/drivers/$drv/driver.conf")
	# FILES: "SRC:DEST" pairs; SRC may be a glob (DEST is then a directory,
	# ending in /); a leading '?' lets SRC match nothing.
	for m in $FILES; do
		src=${m%%:*} dst=${m#*:} opt=
		[ "${src#\?}" = "$src" ] || { opt=1; src=${src#\?}; }
		mapfile -t got < <(cd "$tree" && compgen -G "$src" || true)
		if [ ${#got[@]} -eq 0 ]; then
			[ -n "$opt" ] && continue
			die "$drv: the patched Linux $bv source has no $src (drivers/$drv/driver.conf)"
		fi
		for f in "${got[@]}"; do
			case $dst in
			*/) mkdir -p "$mdir/$dst" && cp "$tree/$f" "$mdir/$dst" ;;
			*) mkdir -p "$mdir/$(dirname "$dst")" && cp "$tree/$f" "$mdir/$dst" ;;
			esac
		done
	done
	cp "$BQLKIT_TOP/compat/bqlkit_info.c" "$mdir/"
	{
		echo "#define BQLKIT_VERSION \"$(cat "$BQLKIT_TOP/VERSION")-bqlkit\""
		echo "#define BQLKIT_BUILD_INFO \"base=$bv series=$series patches=$(grep -vc '^#' "$pdir/series")${BQLKIT_FAULT_INJECTION:+ fault_injection=1}\""
	} >"$mdir/bqlkit_info.h"
	# A source tree made ready by scripts/prepare-tree.sh has no full
	# Module.symvers: modpost can only warn about core kernel symbols.
	modpost_warn=
	[ ! -f "$kdir/.bqlkit-prepared" ] || modpost_warn=1
	step "building $drv for $kver (Linux $kv) from base $bv with series $series"
	if ! make -C "$kdir" M="$mdir" BQLKIT_COMPAT="$BQLKIT_TOP/compat" \
		BQLKIT_CONFIG="$out/compat" ${ARCH:+ARCH=$ARCH} \
		${modpost_warn:+KBUILD_MODPOST_WARN=1} \
		${BQLKIT_FAULT_INJECTION:+BQLKIT_FAULT_INJECTION=y} \
		${CROSS_COMPILE:+CROSS_COMPILE=$CROSS_COMPILE} \
		-j"$(nproc)" modules >"$out/$drv-build.log" 2>&1; then
		grep -m1 -E 'error|Error' "$out/$drv-build.log" >&2 || tail -5 "$out/$drv-build.log" >&2
		die "$drv failed to build for $kver (log: $out/$drv-build.log)"
	fi
	# Exported symbols must keep the in-tree CRCs (drivers/$drv/driver.conf ABI_MODULE).
	if ! bash "$BQLKIT_TOP/scripts/check-abi.sh" "$kver" "$drv"; then
		die "$drv: the module built for $kver breaks the in-tree ABI (see above); not installing it"
	fi
	for m in $MODULES; do
		cp "$mdir/$m.ko" "$out/$m.ko"
	done
	{
		echo "driver=$drv"
		echo "kernel=$kver"
		echo "kernel_version=$kv"
		echo "base_version=$bv"
		echo "base_package=$(manifest_get "$base" package)"
		echo "series=$series"
		echo "patches=$(grep -v '^#' "$pdir/series" | tr '\n' ' ')"
		echo "modules=$MODULES"
	} >"$out/$drv.build-info"
	if grep -q 'warning:' "$out/$drv-build.log"; then
		note "$drv: the build printed warnings (see $out/$drv-build.log)"
	fi
	echo "bqlkit: built $(for m in $MODULES; do printf '%s ' "$out/$m.ko"; done)"
done
