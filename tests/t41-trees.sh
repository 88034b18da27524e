#!/bin/bash
# Bases without a Debian package (5.15, 6.6 LTS): the kit's drivers build
# against each kernel tree prepared by scripts/prepare-tree.sh (x86_64 and
# arm64), warning-free, carrying BQL, made for that kernel, with mana's
# exports keeping the in-tree CRCs (scripts/check-abi.sh, run by build.sh).
# CI cannot download such trees: without one this file skips.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

n=0
while read -r label kdir; do
	n=$((n + 1))
	kv=$(kernel_version "$kdir")
	kr=$(cat "$kdir/include/config/kernel.release")
	read -ra cross <<<"$(cross_for "$kdir")"
	t=tree-$label
	if ! out=$(env KDIR="$kdir" ${cross[@]+"${cross[@]}"} "$BQLKIT_TOP/scripts/build.sh" "$label" 2>&1); then
		fail "$t-build" "$(grep -m1 'error' <<<"$out" || tail -1 <<<"$out")"
		continue
	fi
	pass "$t-build"
	built=0
	for info in "$BQLKIT_BUILD/$label"/*.build-info; do
		[ -f "$info" ] || continue
		drv=$(sed -n 's/^driver=//p' "$info")
		built=$((built + 1))
		ko=$BQLKIT_BUILD/$label/$(sed -n 's/^modules=//p' "$info" | cut -d' ' -f1).ko
		check "$t-$drv-no-warnings" bash -c "! grep -q 'warning:' '$BQLKIT_BUILD/$label/$drv-build.log'"
		check "$t-$drv-vermagic" bash -c "modinfo -F vermagic '$ko' | grep -q '^$kr '"
		check "$t-$drv-series" bash -c "modinfo -F bqlkit '$ko' | grep -q 'series=$(series_of "$kv")'"
		case $drv in
		veth | mana) check "$t-$drv-imports-dql_completed" bash -c "nm -u '$ko' | grep -qw dql_completed" ;;
		esac
	done
	check "$t-built-a-driver" test "$built" -gt 0
done < <(test_trees)
[ "$n" -gt 0 ] || skip trees "not in CI: no kernel tree prepared for 5.15/6.6 (scripts/prepare-tree.sh TREE, then BQLKIT_TREES=TREE)"
