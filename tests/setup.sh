#!/bin/bash
# Prepare the machine for the test suite: packages, the Debian kernels it
# tests (headers + their linux-source), and the imported bases.  Idempotent.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# Debian's default 6.1 kernel and its 6.12 kernel, as apt resolves them now.
meta_dep() {
	apt-cache depends "$1" 2>/dev/null | sed -n 's/^ *Depends: linux-headers-\(.*\)$/\1/p' | head -1
}
"$BQLKIT_TOP/scripts/install-deps.sh" test
k61=$(meta_dep linux-headers-amd64)
k612=$(meta_dep linux-headers-6.12-amd64)
[ -n "$k61" ] && [ -n "$k612" ] || die "cannot resolve Debian's 6.1 and 6.12 kernels from apt (apt-get update?)"

pkgs=()
for k in "$k61" "$k612"; do
	pkgs+=("linux-headers-$k")
done
"$BQLKIT_TOP/scripts/install-deps.sh" test "${pkgs[@]}"
for k in "$k61" "$k612"; do
	kdir=$(kdir_for "$k")
	series=$(series_of "$(kernel_version "$kdir")")
	want=$(distro_version "$kdir")
	pkg=linux-source-$series
	apt-cache madison "$pkg" | grep -q " $want " && pkg="$pkg=$want"
	"$BQLKIT_TOP/scripts/install-deps.sh" test "$pkg"
	tarball=/usr/src/linux-source-$series.tar.xz
	# Re-import when the source changed or the base lacks a driver's files.
	if [ "$(manifest_get "$(base_dir "$series")" source_sha256)" != "$(sha256sum "$tarball" | cut -d' ' -f1)" ] ||
		! base_covers "$(base_dir "$series")"; then
		"$BQLKIT_TOP/scripts/import-source.sh" "$tarball"
	fi
done
mkdir -p "$(dirname "$TEST_KERNELS_FILE")"
printf '%s\n' "$k61" "$k612" >"$TEST_KERNELS_FILE"

# The bases without a test kernel here (bullseye 5.10, which has no mana;
# sid 7.2; trixie-backports 7.3), so the drift, checkpatch and audit tests
# cover their series too.  Best effort: without them those tests skip and
# say why.
for sp in bullseye-security:linux-source-5.10 sid:linux-source-7.2 trixie-backports:linux-source-7.3; do
	if t=$("$BQLKIT_TOP/scripts/fetch-source.sh" "${sp%%:*}" "${sp#*:}" 2>/dev/null); then
		series=${sp#*:linux-source-}
		if [ "$(manifest_get "$(base_dir "$series")" source_sha256)" != "$(sha256sum "$t" | cut -d' ' -f1)" ] ||
			! base_covers "$(base_dir "$series")"; then
			"$BQLKIT_TOP/scripts/import-source.sh" "$t" || note "could not import $t"
		fi
	else
		note "could not fetch ${sp#*:} from ${sp%%:*}: its series' drift tests will skip"
	fi
done

# Bases from kernel trees prepared by scripts/prepare-tree.sh (5.15, 6.6:
# no Debian source; not in CI).  An O= output directory's source is its
# "source" link.
# The same for the kernels built from such trees for the VM tests (t64:
# lab/build-vm-kernel.sh; debug kernels come from Debian's source).
tree_kernels() {
	local mark
	for mark in "$BQLKIT_CACHE"/kernels/*/.bqlkit-tree-kernel; do
		[ -f "$mark" ] && [ ! -f "$(dirname "$mark")/.bqlkit-debug" ] || continue
		echo "$(basename "$(dirname "$mark")") $(cat "$mark")"
	done
}
while read -r _ kdir; do
	src=$kdir
	[ -f "$src/drivers/net/veth.c" ] || src=$(readlink -f "$kdir/source")
	series=$(series_of "$(kernel_version "$src")")
	base=$(base_dir "$series")
	if [ "$(manifest_get "$base" source)" != "$src" ] &&
		[ "$(manifest_get "$base" version)" != "$(kernel_version "$src")" ] || ! base_covers "$base"; then
		"$BQLKIT_TOP/scripts/import-source.sh" "$src" || note "could not import $src"
	fi
done < <(test_trees; tree_kernels)

# Bases of series written against a kernel of the fit corpus
# (patches/*/X.Y/base.conf REFERENCE=): where no source of that release was
# imported above, its corpus files are (no checkpatch.pl there: checkpatch
# skips them), so drift and the series' audits run without a kernel tree.
for conf in "$BQLKIT_TOP"/patches/*/*/base.conf; do
	ref=$(sed -n 's/^REFERENCE=//p' "$conf")
	series=$(basename "$(dirname "$conf")")
	fx=$BQLKIT_TOP/tests/fixtures/kernels/$ref
	[ -n "$ref" ] && [ -d "$fx" ] || continue
	# (A series named for what it is for, not a release, e.g. mana's
	# 5.15-xdp, has no base: make series generates it from the fixture
	# changes/<driver>/bases/<series>/source names.)
	[[ $series =~ ^[0-9]+\.[0-9]+$ ]] || continue
	if [ ! -f "$(base_dir "$series")/MANIFEST" ] || ! base_covers "$(base_dir "$series")"; then
		"$BQLKIT_TOP/scripts/import-source.sh" "$fx" || note "could not import the corpus' $ref"
	fi
done
