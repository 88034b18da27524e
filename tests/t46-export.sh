#!/bin/bash
# Vendor export: for each tested kernel's series (and each prepared 5.15/6.6
# tree, where there is one), `git am` the exported veth and mana patches
# onto the imported base in a throwaway git repo, then build each driver
# from that tree alone (plain Kbuild, nothing from the kit) against the
# matching headers: it must build and carry BQL, and mana's exports must
# keep the kernel's CRCs (scripts/check-abi.sh on the standalone build).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The backporter who signs the exported patches off (else git config's).
export SIGNOFF="bqlkit test <test@example.org>"
mf=drivers/net/ethernet/microsoft/mana

# export_check LABEL KDIR: LABEL names the kernel's build directory.
export_check() {
	local label=$1 kdir=$2 series drv repo b
	series=$(series_of "$(kernel_version "$kdir")")
	for drv in veth mana; do
		[ -f "$BQLKIT_TOP/patches/$drv/$series/series" ] || continue
		grep -q "^$(sed -n 's/^KCONFIG=//p' "$BQLKIT_TOP/drivers/$drv/driver.conf")=[ym]" \
			"$kdir/include/config/auto.conf" || continue
		KDIR=$kdir "$BQLKIT_TOP/scripts/build.sh" "$label" "$drv" >/dev/null 2>&1 || true # probe results
		if ! out=$(KVER=$label "$BQLKIT_TOP/scripts/export-series.sh" "$series" "$drv" 2>&1); then
			fail "export-$series-$drv" "$(tail -1 <<<"$out")"
			continue
		fi
		pass "export-$series-$drv"
		repo=$tmp/$series-$drv
		mkdir -p "$repo"
		(cd "$(base_dir "$series")" && tar -c --exclude=MANIFEST .) | tar -x -C "$repo"
		git -C "$repo" init -q && git -C "$repo" add -A &&
			git -C "$repo" -c user.name=t -c user.email=t@t commit -qm "Linux $series base"
		check "export-$series-$drv-git-am" git -C "$repo" -c user.name=t -c user.email=t@t \
			am -q "$BQLKIT_BUILD/export/$series/$drv/"*.patch
		check "export-$series-$drv-no-test-hook" bash -c "! grep -rq BQLKIT_FAULT_INJECTION '$repo/drivers'"
		b=$tmp/build-$series-$drv/$drv
		mkdir -p "$b"
		case $drv in
		veth)
			cp "$repo/drivers/net/veth.c" "$repo/drivers/net/bqlkit_compat.h" "$b/"
			echo 'obj-m := veth.o' >"$b/Kbuild"
			;;
		mana)
			cp "$repo/$mf/"* "$b/"
			mv "$b/Makefile" "$b/Kbuild"
			# The tree's own include/net/mana/ (6.2+) before the kernel's.
			echo "NOSTDINC_FLAGS += -I$repo/include" >>"$b/Kbuild"
			;;
		esac
		# A prepared tree has no full Module.symvers (scripts/prepare-tree.sh).
		warn=()
		[ ! -f "$kdir/.bqlkit-prepared" ] || warn=(KBUILD_MODPOST_WARN=1)
		check "export-$series-$drv-builds-standalone" make -s -C "$kdir" M="$b" CONFIG_MICROSOFT_MANA=m \
			"${warn[@]}" modules
		check "export-$series-$drv-has-bql" bash -c "nm -u '$b/$drv.ko' | grep -qw dql_completed"
		if [ "$drv" = mana ]; then
			check "export-$series-mana-abi" env KDIR="$kdir" BQLKIT_BUILD="$tmp" \
				"$BQLKIT_TOP/scripts/check-abi.sh" "build-$series-$drv" mana
		fi
	done
}

for k in $(test_kernels); do
	export_check "$k" "$(kdir_for "$k")"
done
while read -r label kdir; do
	[ -z "$(cross_for "$kdir")" ] || continue # the x86_64 trees
	export_check "$label" "$kdir"
done < <(test_trees)

# The export as a vendor tree wants it: every driver with a non-empty
# series at once (mvneta's are empty: named, not exported), one driver's
# export never deletes another's, stable-backport form, checkpatch clean.
k=$(test_kernels | sed -n 1p)
series=$(series_of "$(kernel_version "$(kdir_for "$k")")")
ex=$BQLKIT_BUILD/export/$series
rm -rf "$ex"
out=$(KVER=$k "$BQLKIT_TOP/scripts/export-series.sh" "$series" 2>&1) && rc=0 || rc=$?
check export-all-exit-0 test "$rc" -eq 0
check export-all-veth-and-mana bash -c "ls '$ex/veth/'*.patch '$ex/mana/'*.patch >/dev/null"
has export-all-names-skipped "mvneta: not exported: its Linux $series series is empty: the base already has what the kit adds" "$out"
KVER=$k "$BQLKIT_TOP/scripts/export-series.sh" "$series" veth >/dev/null 2>&1
KVER=$k "$BQLKIT_TOP/scripts/export-series.sh" "$series" mana >/dev/null 2>&1
check export-one-driver-keeps-the-other bash -c "ls '$ex/veth/'*.patch '$ex/mana/'*.patch >/dev/null"
bp=$(grep -l '^Subject: .*veth: implement Byte Queue Limits' "$ex/veth/"*.patch)
has export-from-upstream-author '^From: Jesper Dangaard Brouer <hawk@kernel.org>$' "$(cat "$bp")"
has export-posting-in-message 'Backport of the netdev posting "\[PATCH net-next v7 2/5\]' "$(cat "$bp")"
has export-signed-off-by-backporter '^Signed-off-by: bqlkit test <test@example.org>$' "$(cat "$bp")"
has export-compat-by-maintainers "^From: $(sed -n 's/^Maintainer: //p' "$BQLKIT_TOP/debian/control")\$" "$(cat "$ex/veth/0001-"*.patch)"
if [ "$series" = 6.1 ]; then
	has export-upstream-commit '^commit dc82a33297fc2c58cb0b2b008d728668d45c0f6a upstream\.$' \
		"$(cat "$(grep -l '^Subject: .*apply qdisc backpressure' "$ex/veth/"*.patch)")"
fi
# checkpatch as a vendor tree runs it, less what needs the upstream git
# (UNKNOWN_COMMIT_ID), the MAINTAINERS reminder for the new compat header
# (FILE_PATH_CHANGES) and the kernel's own type names (CAMELCASE: Qdisc).
cp=$(base_dir "$series")/scripts/checkpatch.pl
for p in "$ex"/*/*.patch; do
	check "export-checkpatch-$(basename "$(dirname "$p")")-$(basename "$p" | cut -c1-4)" \
		perl "$cp" --no-tree -q --ignore UNKNOWN_COMMIT_ID,FILE_PATH_CHANGES,CAMELCASE "$p"
done
bad_id=$(SIGNOFF=nobody KVER=$k "$BQLKIT_TOP/scripts/export-series.sh" "$series" veth 2>&1) || true
has export-needs-signoff "who signs off the exported patches? give SIGNOFF='Your Name <you@example.org>'" "$bad_id"
# A source the series cannot take (the function veth charges BQL in
# renamed, as t95 does for the build): one error with the fix.
import_edited "$(base_dir "$series")" "$tmp/bases-edit" drivers/net/veth.c 's/static int veth_xdp_rx(/static int veth_xdp_rx_renamed(/'
bad export-does-not-fit-names-fix "veth: the kit's changes do not fit the imported Linux $series source (above; report: .*): nothing exported; import Debian's linux-source-$series" \
	env BQLKIT_BASES="$tmp/bases-edit" KVER="$k" "$BQLKIT_TOP/scripts/export-series.sh" "$series" veth

# A base without what a series requires (6.12.15, before 6.12.y took veth's
# backpressure in 6.12.61): the export carries it first (the 6.6 series'
# backport, base.conf REQUIRES=), and git am takes the whole export.
k612=$(test_kernels | sed -n 2p)
if [ "$(series_of "$(kernel_version "$(kdir_for "$k612")")")" = 6.12 ]; then
	BQLKIT_BASES=$tmp/bases-61215 "$BQLKIT_TOP/scripts/import-source.sh" "$BQLKIT_TOP/tests/fixtures/kernels/armbian-6.12.15" >/dev/null 2>&1
	ex=$BQLKIT_BUILD/export/6.12/veth
	rm -rf "$ex"
	out=$(BQLKIT_BASES=$tmp/bases-61215 KVER=$k612 "$BQLKIT_TOP/scripts/export-series.sh" 6.12 veth 2>&1) && rc=0 || rc=$?
	check export-required-exit-0 test "$rc" -eq 0
	has export-required-first '^Subject: \[PATCH 02\] veth: apply qdisc backpressure on full ptr_ring' "$(cat "$ex/0002-"*.patch 2>/dev/null)"
	has export-required-upstream '^commit dc82a33297fc2c58cb0b2b008d728668d45c0f6a upstream\.$' "$(cat "$ex/0002-"*.patch 2>/dev/null)"
	repo=$tmp/am-61215
	mkdir -p "$repo"
	(cd "$tmp/bases-61215/6.12" && tar -c --exclude=MANIFEST .) | tar -x -C "$repo"
	git -C "$repo" init -q && git -C "$repo" add -A &&
		git -C "$repo" -c user.name=t -c user.email=t@t commit -qm "Linux 6.12.15"
	check export-required-git-am git -C "$repo" -c user.name=t -c user.email=t@t am -q "$ex/"*.patch
else
	skip export-required "the second test kernel is not a 6.12 one"
fi
