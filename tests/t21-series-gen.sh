#!/bin/bash
# Series generation (scripts/gen-series.sh, make series): every committed
# series in patches/ is what changes/ generates; one edit of a canonical
# change reaches every base that takes it; a delta the edit invalidates
# stops generation, naming it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ch=$BQLKIT_TOP/changes

# What changes/ holds is consistent: every series under patches/ has a base
# there, every canonical change is taken by a base, every delta is of a
# change its base takes.
for s in "$BQLKIT_TOP"/patches/*/*/series; do
	n=${s#"$BQLKIT_TOP"/patches/}
	n=${n%/series}
	check "declared-$n" test -d "$ch/${n%%/*}/bases/${n#*/}"
done
for c in "$ch"/*/[0-9][0-9][0-9][0-9]-*.patch; do
	drv=$(basename "$(dirname "$c")")
	name=$(basename "$c" .patch)
	name=${name#*-}
	check "taken-$drv-$name" grep -qsx "[0-9][0-9][0-9][0-9]-$name.patch" "$ch/$drv"/bases/*/series
done
for d in "$ch"/*/delta/*/*.patch; do
	[ -f "$d" ] || continue
	n=${d#"$ch"/}
	drv=${n%%/*} b=$(basename "$(dirname "$d")")
	check "delta-of-a-taken-change-$n" grep -qx "[0-9][0-9][0-9][0-9]-$(basename "$d")" "$ch/$drv/bases/$b/series"
done

# The committed series are what generation writes.
out=$("$BQLKIT_TOP/scripts/gen-series.sh" --out "$tmp/gen" 2>&1) && rc=0 || rc=$?
if [ "$rc" -eq 0 ]; then
	pass generate
else
	fail generate "exit $rc: $(grep -v '^gen-series: [^ ]*: [0-9]' <<<"$out" | tail -2 | tr '\n' ' ')"
fi
while read -r line; do
	n=${line#gen-series: }
	n=${n%%:*}
	case $line in
	"gen-series: "*": SKIP"*) skip "generated-$n" "${line#*SKIP: }" ;;
	"gen-series: "*": hand-kept"*) skip "generated-$n" "hand-kept: $(grep -m1 '^#' "$ch/${n%%/*}/bases/${n#*/}/source" | sed 's/^# *//')" ;;
	esac
done <<<"$out"
for d in "$tmp/gen"/*/*/; do
	[ -d "$d" ] || continue
	n=${d#"$tmp/gen/"}
	n=${n%/}
	if diff -r "$d" "$BQLKIT_TOP/patches/$n" >"$tmp/diff" 2>&1; then
		pass "generated-$n"
	else
		fail "generated-$n" "patches/$n is not what make series writes: $(head -c 400 "$tmp/diff" | tr '\n' ' ')"
	fi
done

# A copy of the kit to edit: what generation reads (the same bases).
export BQLKIT_BASES
BQLKIT_BASES=$(dirname "$(base_dir 6.1)")
kit() {
	local k=$tmp/kit-$1 id
	mkdir -p "$k/tests/fixtures/kernels"
	cp -a "$BQLKIT_TOP/scripts" "$BQLKIT_TOP/drivers" "$BQLKIT_TOP/changes" "$BQLKIT_TOP/patches" "$k/"
	while read -r id; do
		cp -a "$BQLKIT_TOP/tests/fixtures/kernels/$id" "$k/tests/fixtures/kernels/"
	done < <(awk '$1 == "fixture" { print $2 }' "$ch"/*/bases/*/source | sort -u)
	echo "$k"
}
bql=$ch/veth/0002-veth-implement-byte-queue-limits.patch

# One edit of the canonical BQL change: every veth base generated here gets
# it in its BQL patch, and the committed copies no longer match.  The line
# is context of the coalescing patch too: that change is merged (3-way)
# onto the edited one on its own base.
k=$(kit edit)
sed -i 's|^+/\* BQL charges one unit per packet: the ring holds packets, not bytes \*/$|+/* BQL charges one unit per packet (t21): the ring holds packets */|' \
	"$k/changes/veth/${bql##*/}"
if cmp -s "$bql" "$k/changes/veth/${bql##*/}"; then
	fail one-edit-every-base "the line t21 edits is not in ${bql#"$BQLKIT_TOP"/}"
elif out=$("$k/scripts/gen-series.sh" veth 2>&1); then
	got=$(grep -l 'one unit per packet (t21)' "$k"/patches/veth/*/*.patch | sed "s|^$k/patches/||" | sort)
	want=$(for d in "$tmp"/gen/veth/*/; do ls "$d"*-veth-implement-byte-queue-limits.patch; done | sed "s|^$tmp/gen/||" | sort)
	# (Later patches whose context holds the line carry it too.)
	missing=$(comm -13 <(echo "$got") <(echo "$want"))
	if [ -n "$want" ] && [ -z "$missing" ]; then
		pass one-edit-every-base
	else
		fail one-edit-every-base "the edit is not in: $(echo "${missing:-(no base generated)}" | tr '\n' ' ')"
	fi
	check one-edit-stale-copy-detected bash -c "! diff -r -q '$BQLKIT_TOP/patches/veth' '$k/patches/veth' >/dev/null"
else
	fail one-edit-every-base "gen-series.sh: $(tail -1 <<<"$out")"
fi

# An edit inside a region a base's delta resolves (6.18's veth_poll(), where
# the 3-way merge conflicts) stops generation and names that delta.
if [ -f "$ch/veth/delta/6.18/veth-implement-byte-queue-limits.patch" ] && [ -d "$tmp/gen/veth/6.18" ]; then
	k=$(kit stale)
	sed -i 's|^+\tstruct netdev_queue \*peer_txq, \*bql_txq;$|+\tstruct netdev_queue *peer_txq, *bql_txq; /* t21 */|' "$k/changes/veth/${bql##*/}"
	if cmp -s "$bql" "$k/changes/veth/${bql##*/}"; then
		fail stale-delta-named "the line t21 edits is not in ${bql#"$BQLKIT_TOP"/}"
	else
		expect_error stale-delta-named "changes/veth/delta/6.18/veth-implement-byte-queue-limits.patch does not apply" \
			"$k/scripts/gen-series.sh" veth/6.18
	fi
else
	skip stale-delta-named "no 6.18 delta of the BQL change, or no 6.18 base here"
fi
