#!/bin/bash
# Series: DEP-3 headers, drift check, checkpatch, and the refusals (old 6.12
# base, a patch that no longer applies, a kernel series the kit lacks).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for p in "$BQLKIT_TOP"/patches/*/*/*.patch; do
	n=${p#"$BQLKIT_TOP"/patches/}
	check "dep3-$n" bash -c "grep -q '^Description: ' '$p' && grep -q '^Origin: ' '$p' &&
		grep -q 'Differences from upstream' '$p' && grep -q '^Last-Update: ' '$p'"
	s=$(dirname "$p")
	check "in-series-$n" grep -qx "$(basename "$p")" "$s/series"
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
expect_error refuse-6.12-before-61 "dc82a33297fc" \
	env BQLKIT_BASES="$(fakebase 6.12 60)" BQLKIT_BUILD="$tmp/b1" \
	"$BQLKIT_TOP/scripts/build.sh" "$k612"
# (wiggle still merges the hunk whose context the rename moved; the rules
# then refuse the result: bql-charge does not hold on it.  Without wiggle
# the hunk does not apply.)
expect_error refuse-patch-not-applying "the result does not hold .*bql-charge\|does not apply" \
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
# Context lines cannot be edited without the base.
printf '@ *time-based-bql-completion-coalescing*\n<<<<\n\tstruct ptr_ring\t\txdp_ring;\n====\n\tstruct ptr_ring\t\txdp_ring; /* t20 */\n>>>>\n' >"$tmp/es-ctx.spec"
expect_error edit-series-nobase-refuses-context "only added lines can be edited" \
	env BQLKIT_BASES="$tmp/nobases" python3 "$(es ctx)/scripts/edit-series.py" --only 6.12 "$tmp/es-ctx.spec"
