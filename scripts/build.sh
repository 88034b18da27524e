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
# sublevel differs from the kernel's), BQLKIT_FITTED (a DKMS source's changes
# fitted when it was made: make-dkms-source.sh), ARCH, CROSS_COMPILE,
# BQLKIT_FAULT_INJECTION=1 (test builds: compile the drivers' fault hooks).
# Exit 77: the kit has no series for this kernel (DKMS reports it as skipped).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || die "usage: build.sh KVER [DRIVER...]"
kver=$1
shift
valid_drivers "$@"
drivers=${*:-$BQLKIT_DRIVERS}
if [ -n "${KDIR:-}" ]; then
	valid_dir KDIR "$KDIR" "the directory of a prepared kernel tree or of a kernel's headers"
	# (make build KDIR=: KVER is that tree's version, empty when unreadable.)
	[ -n "$kver" ] || die "$(no_version "$KDIR")"
fi
valid_kver "$kver"
kdir=${KDIR:-$(kdir_for "$kver")}
[ -f "$kdir/Makefile" ] ||
	die "no kernel headers for $kver at $kdir (install them: apt-get install linux-headers-$kver)"
# A kernel tree must be configured and modules_prepare'd first (else the
# compiler fails on an empty -Wframe-larger-than= and the like).
if is_tree "$kdir" && [ ! -f "$kdir/include/config/auto.conf" ]; then
	die "$kdir is a kernel tree that is not prepared for building modules: run 'make prepare-tree TREE=$kdir' first"
fi
kv=$(kernel_version "$kdir") || die "$(no_version "$kdir")"
series=$(series_of "$kv")
out=$BQLKIT_BUILD/$kver
mkdir -p "$out"

# stage_files FROM DEST: the driver's files (driver.conf FILES) from the
# source FROM into the Kbuild directory DEST.
stage_files() {
	local m src dst opt got f
	FILES=$(sed -n 's/^FILES="\(.*\)"/\1/p' "$BQLKIT_TOP/drivers/$drv/driver.conf")
	# FILES: "SRC:DEST" pairs; SRC may be a glob (DEST is then a directory,
	# ending in /); a leading '?' lets SRC match nothing.
	for m in $FILES; do
		src=${m%%:*} dst=${m#*:} opt=
		[ "${src#\?}" = "$src" ] || { opt=1; src=${src#\?}; }
		mapfile -t got < <(cd "$1" && compgen -G "$src" || true)
		if [ ${#got[@]} -eq 0 ]; then
			[ -n "$opt" ] && continue
			die "$drv: the patched Linux $bv source has no $src (drivers/$drv/driver.conf)"
		fi
		for f in "${got[@]}"; do
			case $dst in
			*/) mkdir -p "$2/$dst" && cp "$1/$f" "$2/$dst" ;;
			*) mkdir -p "$2/$(dirname "$dst")" && cp "$1/$f" "$2/$dst" ;;
			esac
		done
	done
}

# apply_fitted DIR BASE TREE: TREE is BASE with the fitted changes of DIR
# (its series file names them in order) applied exactly; false if one
# does not apply.
apply_fitted() {
	local p
	rm -rf "$3" && mkdir -p "$3" && cp -a "$2/." "$3/"
	while read -r p; do
		patch -d "$3" -p1 -s -F0 -N --no-backup-if-mismatch <"$1/$p" >/dev/null 2>&1 || return 1
	done <"$1/series"
}
# fit_tools: fit.sh can adapt and prove here (coccinelle, wiggle).
fit_tools() { command -v spatch >/dev/null && command -v wiggle >/dev/null; }

for drv in $drivers; do
	# A driver the kernel does not enable (mvneta on x86, mana on armhf) is
	# not built for it.
	sym=$(sed -n 's/^KCONFIG=//p' "$BQLKIT_TOP/drivers/$drv/driver.conf")
	if [ -n "$sym" ] && [ -f "$kdir/include/config/auto.conf" ] &&
		! grep -q "^$sym=[ym]" "$kdir/include/config/auto.conf"; then
		note "$drv: $sym is not enabled in $kver: not built"
		continue
	fi
	[ -d "$BQLKIT_TOP/patches/$drv" ] || die "the kit has no driver $drv"
	base=$(base_dir "$series")
	if [ ! -f "$base/MANIFEST" ] && [ ! -f "$BQLKIT_TOP/patches/$drv/$series/series" ]; then
		echo "bqlkit: $drv: no series for Linux $series (kernel $kver); the kit carries: $(cd "$BQLKIT_TOP/patches/$drv" && echo */ | tr -d /); to try them on this kernel, import its source (make import SRC=<its kernel source>)" >&2
		exit 77
	fi
	[ -f "$base/MANIFEST" ] ||
		die "no imported Linux $series source for $drv: run $(if is_tree "$kdir"; then echo "'make import SRC=$(tree_src "$kdir")'"; else source_advice "$series"; fi)"
	bv=$(manifest_get "$base" version)
	# Its distro package version (modinfo -F bqlkit shows it), when known.
	bpkg=$(manifest_pkgver "$base")
	[ "$(series_of "$bv")" = "$series" ] ||
		die "base $base holds Linux $bv, not $series: re-import it (make import SRC=...)"
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
	if ! grep -qw "$drv" <<<"$(manifest_get "$base" drivers)"; then
		note "$drv is not in Linux $bv: not built"
		continue
	fi

	# Fit the kit's changes to this source by content (scripts/fit.sh):
	# the series is chosen by what fits, each change applied, adapted
	# (3-way merge) or found already present, the result re-proved.  In a
	# DKMS source (BQLKIT_FITTED) that was done when it was made: the
	# changes fitted to its Linux X.Y base then are applied exactly (patch
	# alone); fit.sh runs only where they do not apply (another sublevel's
	# source whose context moved) and its tools are here.
	tree=$out/$drv-src
	frc=0
	rm -rf "$out/$drv-fit"
	fitted=${BQLKIT_FITTED:+$BQLKIT_FITTED/$drv/$series}
	if [ -n "$fitted" ] && [ -f "$fitted/fit" ] && apply_fitted "$fitted" "$base" "$tree"; then
		cp "$fitted/fit" "$tree.fit"
		note "$drv: applied the changes fitted to Linux $(sed -n 's/^kernel //p' "$fitted/fit") when this DKMS source was made ($(sed -n 's/^verdict //p' "$fitted/fit"), series $(sed -n 's/^series //p' "$fitted/fit"))"
	else
		if [ -n "$fitted" ] && [ -f "$fitted/fit" ] && ! fit_tools; then
			die "$drv: the changes fitted to Linux $(sed -n 's/^kernel //p' "$fitted/fit") when this DKMS source was made do not apply exactly to the Linux $bv source (its context moved), and fitting them again needs coccinelle and wiggle: apt-get install coccinelle wiggle, then dkms install bqlkit/$(cat "$BQLKIT_TOP/VERSION") -k $kver; until then the in-tree drivers stay"
		fi
		FIT_KEEP=$out/$drv-fit bash "$BQLKIT_TOP/scripts/fit.sh" "$drv" "$base" "$tree" >"$out/$drv.fit.txt" 2>&1 || frc=$?
		cat "$out/$drv.fit.txt" >&2
	fi
	case $frc in
	0) ;;
	3)
		# The series made for this release does not fit its source (a
		# vendor's tree, an edited source): a failure naming the patch.
		if [ -f "$out/$drv-fit/$series.fit" ]; then
			failed=$(sed -n 's/^patch \([^ ]*\) nofit.*/\1/p' "$out/$drv-fit/$series.fit" | head -1)
			grep '^patch [^ ]* nofit' "$out/$drv-fit/$series.fit" >"$out/$drv-quilt.log" || true
			die "$drv: patch ${failed:-?}.patch of series $series does not apply to the imported Linux $bv source, and no other series of the kit fits it (above; log: $out/$drv-quilt.log): $(nofit_fix "$base" "$series" "$drv" log)"
		fi
		echo "bqlkit: $drv: no series for Linux $series (kernel $kver), and none of the kit's series fits the Linux $bv source (above); the kit carries: $(cd "$BQLKIT_TOP/patches/$drv" && echo */ | tr -d /)" >&2
		exit 77
		;;
	*)
		# Refused (the adapted result breaks a rule) or half present.
		why=$(sed -n 's/^verdict refused //p' "$tree.fit")
		[ -n "$why" ] || why="$(sed -n 's/^patch \([^ ]*\) half-present.*/\1/p' "$tree.fit" | head -1) is half present in it"
		die "$drv: the kit's changes do not fit the imported Linux $bv source: $why (above; report: $tree.fit): $(nofit_fix "$base" "$series" "$drv" report)"
		;;
	esac
	pseries=$(sed -n 's/^series //p' "$tree.fit")
	pdir=$BQLKIT_TOP/patches/$drv/$pseries
	# An adapted result is also checked with sparse (below), against the
	# unpatched source staged the same way.
	adapted=
	if grep -q '^verdict adapted' "$tree.fit"; then
		adapted=1
		rm -rf "$out/$drv-sparse-base"
		mkdir -p "$out/$drv-sparse-base"
		cp "$BQLKIT_TOP/drivers/$drv/Kbuild" "$BQLKIT_TOP/compat/bqlkit_info.c" "$out/$drv-sparse-base/"
		stage_files "$base" "$out/$drv-sparse-base"
	fi

	# A driver may prove its base has what the kit would otherwise add.
	audit=$(sed -n 's/^AUDIT=//p' "$BQLKIT_TOP/drivers/$drv/driver.conf")
	if [ -n "$audit" ] && ! aout=$(bash "$BQLKIT_TOP/$audit" "$tree" 2>&1); then
		echo "$aout" >&2
		die "$drv: the Linux $bv source lacks what $audit checks (above): this base needs a series in patches/$drv/"
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
	stage_files "$tree" "$mdir"
	cp "$BQLKIT_TOP/compat/bqlkit_info.c" "$mdir/"
	{
		echo "#define BQLKIT_VERSION \"$(cat "$BQLKIT_TOP/VERSION")-bqlkit\""
		echo "#define BQLKIT_BUILD_INFO \"base=$bv${bpkg:+ package=$bpkg} series=$pseries patches=$(grep -vc '^#' "$pdir/series") fit=$(bash "$BQLKIT_TOP/scripts/fit-report.sh" --short "$tree.fit")${BQLKIT_FAULT_INJECTION:+ fault_injection=1}\""
		echo "#define BQLKIT_FIT \"$(bash "$BQLKIT_TOP/scripts/fit-report.sh" --modinfo "$tree.fit")\""
	} >"$mdir/bqlkit_info.h"
	[ -z "$adapted" ] || cp "$mdir/bqlkit_info.h" "$out/$drv-sparse-base/"
	# A source tree made ready by scripts/prepare-tree.sh has no full
	# Module.symvers: modpost can only warn about core kernel symbols.
	modpost_warn=
	[ ! -f "$kdir/.bqlkit-prepared" ] || modpost_warn=1
	step "building $drv for $kver (Linux $kv) from base $bv with series $pseries"
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
	# An adapted result must add no sparse warning to the unpatched source.
	if [ -n "$adapted" ]; then
		if ! sout=$(bash "$BQLKIT_TOP/scripts/check-sparse.sh" "$kdir" "$mdir" "$out/$drv-sparse-base" "$out/compat" \
			${ARCH:+ARCH=$ARCH} ${CROSS_COMPILE:+CROSS_COMPILE=$CROSS_COMPILE} 2>&1); then
			echo "$sout" >&2
			die "$drv: the adapted result adds sparse warnings (above): refused"
		fi
		note "$drv: adapted result: $sout"
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
		echo "series=$pseries"
		echo "patches=$(grep -v '^#' "$pdir/series" | tr '\n' ' ')"
		echo "fit=$(bash "$BQLKIT_TOP/scripts/fit-report.sh" --modinfo "$tree.fit")"
		echo "modules=$MODULES"
	} >"$out/$drv.build-info"
	if grep -q 'warning:' "$out/$drv-build.log"; then
		note "$drv: the build printed warnings (see $out/$drv-build.log)"
	fi
	echo "bqlkit: built $(for m in $MODULES; do printf '%s ' "$out/$m.ko"; done)"
done
