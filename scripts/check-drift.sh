#!/bin/bash
# Drift check: apply every series to its imported base, refresh each patch
# and compare it with the committed one.  Fails on fuzz, offsets or any
# other difference (the series then needs 'quilt refresh' against the base).
#
#   check-drift.sh [DRIVER/SERIES...]     (default: every series whose base is imported)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ $# -gt 0 ]; then
	sets=("$@")
else
	# (Series only: what patches/<driver>/required/ holds, the bases
	# already have; scripts/fit.sh finds it present there.)
	mapfile -t sets < <(cd "$BQLKIT_TOP/patches" && ls -d */*/series | sed 's,/series$,,')
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/bqlkit-drift.XXXXXX")
trap 'rm -rf "$work"' EXIT
q=(quilt --quiltrc "$BQLKIT_TOP/scripts/quiltrc")
rc=0
checked=0
for set in "${sets[@]}"; do
	series=${set#*/}
	base=$(base_dir "$series")
	# (A series generated from a corpus kernel, changes/<driver>/bases/
	# <series>/source "fixture <id>", e.g. mana's 5.15-xdp: that kernel.)
	read -r kind id < <(grep -v '^#' "$BQLKIT_TOP/changes/${set%%/*}/bases/$series/source" 2>/dev/null | grep . || true) || true
	if [ ! -f "$base/MANIFEST" ] && [ "${kind:-}" = fixture ] && [ -d "$BQLKIT_TOP/tests/fixtures/kernels/${id:-}" ]; then
		base=$BQLKIT_TOP/tests/fixtures/kernels/$id
		mkdir -p "$work/fx-$id"
		cp -a "$base/." "$work/fx-$id/"
		printf 'version=%s (fit corpus: %s)\n' "$(awk -v i="$id" '$1 == i { print $2 }' "$BQLKIT_TOP/tests/fixtures/kernels/SRCVER")" "$id" >"$work/fx-$id/MANIFEST"
		base=$work/fx-$id
	fi
	if [ ! -f "$base/MANIFEST" ]; then
		echo "drift: $set: SKIP (no imported Linux $series base: make import SRC=...)"
		continue
	fi
	t=$work/${set//\//_}
	mkdir -p "$t/tree"
	cp -a "$BQLKIT_TOP/patches/$set" "$t/patches"
	(cd "$base" && tar -c --exclude=MANIFEST .) | tar -x -C "$t/tree"
	ok=yes
	while read -r p; do
		if ! out=$(cd "$t/tree" && QUILT_PATCHES=$t/patches "${q[@]}" push 2>&1); then
			echo "drift: $set: $p does not apply to Linux $(manifest_get "$base" version):"
			sed 's/^/    /' <<<"$out"
			ok=
			break
		fi
		if grep -q 'offset\|fuzz' <<<"$out"; then
			echo "drift: $set: $p applies with offsets/fuzz:"
			grep 'offset\|fuzz' <<<"$out" | sed 's/^/    /'
			ok=
		fi
		(cd "$t/tree" && QUILT_PATCHES=$t/patches "${q[@]}" refresh >/dev/null 2>&1)
		if ! diff -u "$BQLKIT_TOP/patches/$set/$p" "$t/patches/$p" >"$t/diff"; then
			echo "drift: $set: $p differs once refreshed against the base:"
			head -20 "$t/diff" | sed 's/^/    /'
			ok=
		fi
	done < <(grep -v '^#' "$BQLKIT_TOP/patches/$set/series")
	checked=$((checked + 1))
	if [ -n "$ok" ]; then
		echo "drift: $set: clean against Linux $(manifest_get "$base" version)"
	else
		rc=1
	fi
done
[ $checked -gt 0 ] || die "no series could be checked: import a base first (make import SRC=...)"
exit $rc
