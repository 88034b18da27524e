#!/bin/bash
# Vendor export: for each tested kernel's series, `git am` the exported veth
# patches onto the imported base in a throwaway git repo, then build veth
# from that tree alone (plain Kbuild, nothing from the kit) against the
# matching headers: it must build and carry BQL.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for k in $(test_kernels); do
	series=$(series_of "$(kernel_version "$(kdir_for "$k")")")
	"$BQLKIT_TOP/scripts/build.sh" "$k" veth >/dev/null 2>&1 || true # probe results for the export
	if ! out=$(KVER=$k "$BQLKIT_TOP/scripts/export-series.sh" "$series" veth 2>&1); then
		fail "export-$series" "$(tail -1 <<<"$out")"
		continue
	fi
	pass "export-$series"
	repo=$tmp/$series
	mkdir -p "$repo"
	(cd "$(base_dir "$series")" && tar -c --exclude=MANIFEST .) | tar -x -C "$repo"
	git -C "$repo" init -q && git -C "$repo" add -A &&
		git -C "$repo" -c user.name=t -c user.email=t@t commit -qm "Linux $series base"
	check "export-$series-git-am" git -C "$repo" -c user.name=t -c user.email=t@t \
		am -q "$BQLKIT_BUILD/export/$series/veth/"*.patch
	check "export-$series-no-test-hook" bash -c "! grep -q BQLKIT_FAULT_INJECTION '$repo/drivers/net/veth.c'"
	mkdir -p "$tmp/build-$series"
	cp "$repo/drivers/net/veth.c" "$repo/drivers/net/bqlkit_compat.h" "$tmp/build-$series/"
	echo 'obj-m := veth.o' >"$tmp/build-$series/Kbuild"
	check "export-$series-builds-standalone" make -s -C "$(kdir_for "$k")" M="$tmp/build-$series" modules
	check "export-$series-has-bql" bash -c "nm -u '$tmp/build-$series/veth.ko' | grep -qw dql_completed"
done
