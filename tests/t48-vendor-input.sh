#!/bin/bash
# The vendor path on kernel trees (make import, prepare-tree, build KDIR=,
# export), with small fake trees made from the imported 6.1 base (CI cannot
# download real 5.15/6.6/6.18 trees): each wrong input is refused at once
# with one true line naming the fix; advice fits the release at hand.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
base61=$(base_dir 6.1)
if [ ! -f "$base61/MANIFEST" ]; then
	skip vendor-input "no imported Linux 6.1 base (tests/setup.sh imports it)"
	exit 0
fi

# tree DIR VERSION.PATCHLEVEL.SUBLEVEL: a fake kernel tree: the 6.1 base's
# files under another version, with what marks a source tree.
tree() {
	local d=$1 v=$2
	mkdir -p "$d/scripts/kconfig" "$d/init"
	(cd "$base61" && tar -c --exclude=MANIFEST .) | tar -x -C "$d"
	sed -i "s/^VERSION = .*/VERSION = ${v%%.*}/; s/^PATCHLEVEL = .*/PATCHLEVEL = $(cut -d. -f2 <<<"$v")/; s/^SUBLEVEL = .*/SUBLEVEL = ${v##*.}/" "$d/Makefile"
	echo 'int main;' >"$d/init/main.c"
}
# prepared DIR: what prepare-tree leaves (configuration, marker).
prepared() {
	mkdir -p "$1/include/config" "$1/include/generated"
	printf 'CONFIG_VETH=m\nCONFIG_MICROSOFT_MANA=m\n' >"$1/include/config/auto.conf"
	: >"$1/Module.symvers"
	echo "fake" >"$1/.bqlkit-prepared"
}

# --- a release the kit has no series for: refused at once -----------------
tree "$tmp/linux-7.1" 7.1.5
bad import-unsupported-release "the kit has no series for Linux 7.1 (it carries: $(carried_series)): nothing would build from it, so not importing .*FORCE=1" \
	env BQLKIT_BASES="$tmp/bases" "$BQLKIT_TOP/scripts/import-source.sh" "$tmp/linux-7.1"
check import-unsupported-release-left-nothing test ! -e "$tmp/bases/7.1"
out=$(FORCE=1 BQLKIT_BASES=$tmp/bases "$BQLKIT_TOP/scripts/import-source.sh" "$tmp/linux-7.1" 2>&1) && rc=0 || rc=$?
check import-unsupported-release-forced test "$rc" -eq 0 -a -f "$tmp/bases/7.1/MANIFEST"
has import-unsupported-release-forced-says-so 'no series for Linux 7.1: going on as FORCE=1 asks' "$out"
start=$SECONDS
bad prepare-tree-unsupported-release "the kit has no series for Linux 7.1 .*so not preparing $tmp/linux-7.1 (FORCE=1" \
	"$BQLKIT_TOP/scripts/prepare-tree.sh" "$tmp/linux-7.1"
check prepare-tree-unsupported-release-at-once test $((SECONDS - start)) -lt 30
check prepare-tree-unsupported-release-no-config test ! -e "$tmp/linux-7.1/.config"
bad export-unsupported-release "the kit has no series for Linux 7.1 (it carries: .*): nothing to export$" \
	env SIGNOFF="T <t@example.org>" BQLKIT_BASES="$tmp/bases" "$BQLKIT_TOP/scripts/export-series.sh" 7.1
lacks export-unsupported-release-no-build-advice 'make build' "$(SIGNOFF="T <t@example.org>" BQLKIT_BASES=$tmp/bases "$BQLKIT_TOP/scripts/export-series.sh" 7.1 2>&1)"

# --- make build KDIR=<a tree never prepared> ------------------------------
tree "$tmp/linux-6.1.150" 6.1.150
bad build-unprepared-tree "is a kernel tree that is not prepared for building modules: run 'make prepare-tree TREE=$tmp/linux-6.1.150' first" \
	env KDIR="$tmp/linux-6.1.150" BQLKIT_BUILD="$tmp/b" "$BQLKIT_TOP/scripts/build.sh" 6.1.150 veth

# --- a tree whose base was imported from another sublevel -----------------
prepared "$tmp/linux-6.1.150"
bad build-tree-other-sublevel "veth: the imported Linux 6.1 source is $(manifest_get "$base61" version) but the tree $tmp/linux-6.1.150 is Linux 6.1.150: re-import from this tree: make import SRC=$tmp/linux-6.1.150" \
	env KDIR="$tmp/linux-6.1.150" BQLKIT_BUILD="$tmp/b" BQLKIT_BASES="$(dirname "$base61")" "$BQLKIT_TOP/scripts/build.sh" 6.1.150 veth

# --- a tree of a carried series without a Debian package: true advice -----
tree "$tmp/linux-5.15.999" 5.15.999
prepared "$tmp/linux-5.15.999"
bad build-tree-no-base "no imported Linux 5.15 source for veth: run 'make import SRC=$tmp/linux-5.15.999'" \
	env KDIR="$tmp/linux-5.15.999" BQLKIT_BUILD="$tmp/b" BQLKIT_BASES="$tmp/nobases" "$BQLKIT_TOP/scripts/build.sh" 5.15.999 veth
mkdir -p "$tmp/h515"
printf 'VERSION = 5\nPATCHLEVEL = 15\nSUBLEVEL = 0\n' >"$tmp/h515/Makefile"
bad headers-no-base-advice "no Debian package has Linux 5.15" \
	env KDIR="$tmp/h515" BQLKIT_BUILD="$tmp/b" BQLKIT_BASES="$tmp/nobases" "$BQLKIT_TOP/scripts/build.sh" 5.15.0-99-generic veth
# A 5.15 tree no series of the kit fits (here: 6.1's files, reworked by a
# "vendor" throughout: every struct veth_rq *rq is a *vq): no advice to
# import a linux-source-5.15 that does not exist.  (6.1's files as they
# are fit the 6.1 series by content, scripts/fit.sh.)
sed -i 's/\brq\b/vq/g' "$tmp/linux-5.15.999/drivers/net/veth.c"
BQLKIT_BASES=$tmp/bases515 "$BQLKIT_TOP/scripts/import-source.sh" "$tmp/linux-5.15.999" >/dev/null 2>&1
out=$(KDIR=$tmp/linux-5.15.999 BQLKIT_BUILD=$tmp/b BQLKIT_BASES=$tmp/bases515 "$BQLKIT_TOP/scripts/build.sh" 5.15.999 veth 2>&1) && rc=0 || rc=$?
check build-tree-patch-fails-exit test "$rc" -ne 0
has build-tree-patch-fails-says-why "veth: patch 0001-.* of series 5.15 does not apply to the imported Linux 5.15.999 source, and no other series of the kit fits it .*the kit cannot build veth for it as it is" "$out"
lacks build-tree-patch-fails-no-linux-source-5.15 'linux-source-5.15' "$out"

# --- check-abi: an in-tree module that exports nothing (mana in 5.15) -----
mkdir -p "$tmp/abi/k/include/config" "$tmp/abi/b/k515/mana"
printf 'CONFIG_MICROSOFT_MANA=m\n' >"$tmp/abi/k/include/config/auto.conf"
printf '0x12345678\tdev_kfree_skb\tvmlinux\tEXPORT_SYMBOL\t\n' >"$tmp/abi/k/Module.symvers"
: >"$tmp/abi/b/k515/mana/Module.symvers"
out=$(KDIR=$tmp/abi/k BQLKIT_BUILD=$tmp/abi/b "$BQLKIT_TOP/scripts/check-abi.sh" k515 mana 2>&1) && rc=0 || rc=$?
check abi-no-exports-exit-0 test "$rc" -eq 0
has abi-no-exports-says-so "mana: the in-tree mana of kernel k515 exports no symbols .*: no ABI to keep" "$out"
lacks abi-no-exports-no-guess 'not built in-tree?' "$out"
sed -i 's/=m/=n/' "$tmp/abi/k/include/config/auto.conf"
has abi-not-built-says-so "kernel k515 does not build the in-tree mana (CONFIG_MICROSOFT_MANA is not set)" \
	"$(KDIR=$tmp/abi/k BQLKIT_BUILD=$tmp/abi/b "$BQLKIT_TOP/scripts/check-abi.sh" k515 mana 2>&1)"
