# shellcheck shell=bash
# Helpers of the laboratory and the suite (lab/, tests/), which no product
# script (import, fit, build, DKMS, install, export, deb) runs: kept out of
# scripts/lib.sh, which the DKMS build loads.  Source this instead of
# scripts/lib.sh: it sources that first.  (The benches' own helpers:
# lab/bench-lib.sh; the chroots' maker: lab/chroot-lib.sh.)
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

# tree_build KVER DRIVER: for a kernel built from a tree (lab/build-vm-kernel.sh,
# marked $BQLKIT_CACHE/kernels/KVER/.bqlkit-tree-kernel), the kit's DRIVER
# built into $BQLKIT_BUILD/KVER/ against its O= directory, from a base
# imported from that kernel's own tree ($BQLKIT_BUILD/tree-bases/KVER: the
# kit refuses a base of another sublevel).  Output: the import's and the
# build's, for the caller's failure message.
tree_build() {
	local odir bases=$BQLKIT_BUILD/tree-bases/$1
	odir=$(cat "$BQLKIT_CACHE/kernels/$1/.bqlkit-tree-kernel") || return 1
	BQLKIT_BASES=$bases "$BQLKIT_TOP/scripts/import-source.sh" "$odir/source" &&
		BQLKIT_BASES=$bases KDIR=$odir "$BQLKIT_TOP/scripts/build.sh" "$1" "$2"
}

# kit_build KVER DRIVER: the kit's DRIVER built into $BQLKIT_BUILD/KVER/:
# scripts/build.sh for an installed kernel, tree_build for one built from
# a tree (no /lib/modules/KVER/build: kdir_for finds its O= directory).
kit_build() {
	if [ "$(kdir_for "$1")" != "/lib/modules/$1/build" ]; then
		tree_build "$1" "$2"
	else
		"$BQLKIT_TOP/scripts/build.sh" "$1" "$2"
	fi
}

# apply_series BASE PDIR DIR: DIR becomes a fresh copy of the imported base
# BASE with the quilt series PDIR pushed (fuzz 0: scripts/quiltrc).  Prints
# quilt's output; fails as quilt does.  An empty series leaves the copy.
apply_series() {
	rm -rf "$3"
	mkdir -p "$3"
	(cd "$1" && tar -c --exclude=MANIFEST .) | tar -x -C "$3"
	grep -qv '^#' "$2/series" || { echo "(the series $2 is empty)"; return 0; }
	(cd "$3" && QUILT_PATCHES=$2 QUILT_PC=.pc quilt --quiltrc "$BQLKIT_TOP/scripts/quiltrc" push -a 2>&1)
}

# corpus_srcver ID: the release of a fit-corpus kernel that has no top
# Makefile (tests/fixtures/kernels/SRCVER), else nothing: for BQLKIT_SRCVER=.
corpus_srcver() {
	awk -v i="$1" '$1 == i { print $2 }' "$BQLKIT_TOP/tests/fixtures/kernels/SRCVER" 2>/dev/null || true
}

# base_covers BASEDIR: true when the base was imported for every driver of
# $BQLKIT_DRIVERS (each one either imported or recorded as absent).
base_covers() {
	local have d
	have=" $(manifest_get "$1" drivers) $(manifest_get "$1" absent) "
	for d in $BQLKIT_DRIVERS; do
		[[ $have == *" $d "* ]] || return 1
	done
}
