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
		check "export-$series-$drv-builds-standalone" make -s -C "$kdir" M="$b" CONFIG_MICROSOFT_MANA=m \
			$([ ! -f "$kdir/.bqlkit-prepared" ] || echo KBUILD_MODPOST_WARN=1) modules
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
