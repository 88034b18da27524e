#!/bin/bash
# Series: DEP-3 headers, drift check, checkpatch, and the refusals (a patch
# that no longer applies, a kernel series the kit lacks).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for p in "$BQLKIT_TOP"/patches/*/*/*.patch; do
	n=${p#"$BQLKIT_TOP"/patches/}
	check "dep3-$n" bash -c "grep -q '^Description: ' '$p' && grep -q '^Origin: ' '$p' &&
		grep -q 'Differences from upstream' '$p' && grep -q '^Last-Update: ' '$p'"
	s=$(dirname "$p")
	# In its series, or (patches/<driver>/required/) required by one.
	if [ -f "$s/series" ]; then
		check "in-series-$n" grep -qx "$(basename "$p")" "$s/series"
	else
		check "required-by-a-series-$n" grep -qx "REQUIRES=.*\\b${n#*/}\\b.*" "$(dirname "$s")"/*/base.conf
	fi
done
# What a base.conf REQUIRES exists.  (That the series' own base has it is
# t44's fit-required-present; make drift applies the series alone.)
for c in "$BQLKIT_TOP"/patches/*/*/base.conf; do
	for r in $(sed -n 's/^REQUIRES=//p' "$c"); do
		check "requires-exists-${c#"$BQLKIT_TOP"/patches/}-$r" test -f "$(dirname "$(dirname "$c")")/$r"
	done
done

out=$("$BQLKIT_TOP/scripts/check-drift.sh" 2>&1) && rc=0 || rc=$?
while read -r line; do
	case $line in
	"drift: "*": clean against"*) pass "drift-$(echo "$line" | cut -d' ' -f2 | tr -d :)" ;;
	"drift: "*": SKIP"*) skip "drift-$(echo "$line" | cut -d' ' -f2 | tr -d :)" "${line#*SKIP }" ;;
	esac
done <<<"$out"
[ "$rc" -eq 0 ] || fail drift "$(grep -v clean <<<"$out" | head -3 | tr '\n' ' ')"

out=$("$BQLKIT_TOP/scripts/checkpatch.sh" 2>&1) && rc=0 || rc=$?
[ "$rc" -eq 0 ] && pass checkpatch || fail checkpatch "$(grep -v ': clean' <<<"$out" | head -3 | tr '\n' ' ')"

# fakebase SERIES SUBLEVEL [edit]: a base built from the real one with
# another version and optionally an edited veth.c, with a valid manifest.
fakebase() {
	local dir=$tmp/bases-$2${3:-}/$1
	mkdir -p "$dir"
	(cd "$(base_dir "$1")" && tar -c --exclude=MANIFEST .) | tar -x -C "$dir"
	sed -i "s/^SUBLEVEL = .*/SUBLEVEL = $2/" "$dir/Makefile"
	[ -z "${3:-}" ] || sed -i 's/static int veth_xdp_rx(/static int veth_xdp_rx_renamed(/' "$dir/drivers/net/veth.c"
	BQLKIT_BASES=$tmp/import-$2${3:-} "$BQLKIT_TOP/scripts/import-source.sh" "$dir" >/dev/null 2>&1
	echo "$tmp/import-$2${3:-}"
}
k612=$(test_kernels | sed -n 2p)
# (wiggle still merges the hunk whose context the rename moved; the rules
# then refuse the result: bql-charge does not hold on it.  Without wiggle
# the hunk does not apply.)
expect_error refuse-patch-not-applying "its result breaks .*bql-charge\|does not apply" \
	env BQLKIT_BASES="$(fakebase 6.12 117 edit)" BQLKIT_BUILD="$tmp/b2" \
	"$BQLKIT_TOP/scripts/build.sh" "$k612"
mkdir -p "$tmp/k54"
printf 'VERSION = 5\nPATCHLEVEL = 4\nSUBLEVEL = 0\n' >"$tmp/k54/Makefile"
rc=0
out=$(KDIR=$tmp/k54 BQLKIT_BUILD=$tmp/b3 "$BQLKIT_TOP/scripts/build.sh" 5.4.0-test 2>&1) || rc=$?
if [ "$rc" -eq 77 ] && grep -q 'no series for Linux 5.4' <<<"$out"; then
	pass unsupported-series-exit-77
else
	fail unsupported-series-exit-77 "exit $rc: $out"
fi
expect_error refuse-missing-headers "apt-get install linux-headers-9.9.9-none" \
	"$BQLKIT_TOP/scripts/build.sh" 9.9.9-none

# scripts/edit-series.py without a base (the 6.6 series here) edits the
# patch text: the same edit must give the same series as with the base.
es() {
	local d=$tmp/es-$1
	mkdir -p "$d/scripts" "$d/patches"
	cp "$BQLKIT_TOP/scripts/edit-series.py" "$BQLKIT_TOP/scripts/quiltrc" "$d/scripts/"
	cp -r "$BQLKIT_TOP/patches/veth" "$d/patches/"
	echo "$d"
}
cat >"$tmp/es.spec" <<'SPEC'
@ *time-based-bql-completion-coalescing*
<<<<
		rq->bql_pending = 0;
		rq->bql_pending_since = 0;
		veth_bql_consumed(txq, n);
====
		rq->bql_pending = 0;
		rq->bql_pending_since = 0;
		/* t20: an edit that adds
		 * two lines
		 */
		veth_bql_consumed(txq, n);
>>>>
SPEC
esb=$(es base) esn=$(es nobase)
mkdir -p "$tmp/nobases"
if BQLKIT_BASES=$(dirname "$(base_dir 6.12)") python3 "$esb/scripts/edit-series.py" --only 6.12 "$tmp/es.spec" >"$tmp/es-base.out" 2>&1 &&
	BQLKIT_BASES=$tmp/nobases python3 "$esn/scripts/edit-series.py" --only 6.12 "$tmp/es.spec" >"$tmp/es-nobase.out" 2>&1; then
	check edit-series-nobase-changed grep -q 'no base: patch text edited' "$tmp/es-nobase.out"
	check edit-series-nobase-same-as-base diff -r "$esb/patches/veth/6.12" "$esn/patches/veth/6.12"
else
	fail edit-series-nobase-same-as-base "$(tail -2 "$tmp/es-base.out" "$tmp/es-nobase.out" | tr '\n' ' ')"
fi
# --new: the same edit as a patch of its own after the one it names; the
# series then gives the same source as with the edit made in place.
printf 'Description: t20: a new patch\n---\n' >"$tmp/es-new.dep3"
esw=$(es new)
if out=$(BQLKIT_BASES=$(dirname "$(base_dir 6.12)") python3 "$esw/scripts/edit-series.py" --only 6.12 \
	--new 0003a-t20-new.patch --header "$tmp/es-new.dep3" "$tmp/es.spec" 2>&1); then
	s=$esw/patches/veth/6.12
	check edit-series-new-in-series bash -c "grep -v '^#' '$s/series' | grep -A1 -- '-time-based-bql-completion-coalescing.patch' | tail -1 | grep -qx 0003a-t20-new.patch"
	check edit-series-new-named-patch-kept bash -c "cmp '$s/'0003-*coalescing*.patch '$BQLKIT_TOP/patches/veth/6.12/'0003-*coalescing*.patch"
	check edit-series-new-header grep -q '^Description: t20: a new patch' "$s/0003a-t20-new.patch"
	series_result() { # SERIES-DIR OUT: veth.c after the series, on a copy of the 6.12 base
		cp -r "$(base_dir 6.12)" "$2"
		for p in $(grep -v '^#' "$1/series"); do patch -d "$2" -p1 -s -F0 <"$1/$p" || return 1; done
	}
	if series_result "$s" "$tmp/es-new-tree" && series_result "$esb/patches/veth/6.12" "$tmp/es-inplace-tree"; then
		check edit-series-new-same-source cmp "$tmp/es-new-tree/drivers/net/veth.c" "$tmp/es-inplace-tree/drivers/net/veth.c"
	else
		fail edit-series-new-same-source "a series does not apply to the 6.12 base"
	fi
else
	fail edit-series-new-in-series "$(tail -1 <<<"$out")"
fi
expect_error edit-series-new-number-taken "already has a patch numbered 0004" \
	env BQLKIT_BASES="$(dirname "$(base_dir 6.12)")" python3 "$(es taken)/scripts/edit-series.py" --only 6.12 \
	--new NNNN-t20-new.patch --header "$tmp/es-new.dep3" "$tmp/es.spec"
expect_error edit-series-new-needs-base "a new patch is made from the base" \
	env BQLKIT_BASES="$tmp/nobases" python3 "$(es newnb)/scripts/edit-series.py" --only 6.12 \
	--new 0003a-t20-new.patch --header "$tmp/es-new.dep3" "$tmp/es.spec"
# Context lines cannot be edited without the base.
printf '@ *time-based-bql-completion-coalescing*\n<<<<\n\tstruct ptr_ring\t\txdp_ring;\n====\n\tstruct ptr_ring\t\txdp_ring; /* t20 */\n>>>>\n' >"$tmp/es-ctx.spec"
expect_error edit-series-nobase-refuses-context "only added lines can be edited" \
	env BQLKIT_BASES="$tmp/nobases" python3 "$(es ctx)/scripts/edit-series.py" --only 6.12 "$tmp/es-ctx.spec"
