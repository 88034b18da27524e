#!/bin/bash
# veth's race and hardening fixes, checked by structure on every veth series
# applied to its imported base (tests/veth-review.py): the repair before
# napi_complete_done() (1), smp_rmb() before completing (2), the teardown
# wake (3), trans_start stamped before a send may stop the txq (4), the
# drain and alignment hardening (5).  1 and 3 also have VM tests (t77, t76)
# on 6.1 and 6.12; 2 (arm64 ordering), 4 (5.10/5.15 only) and 5 cannot fail
# in an x86 VM, so this is their test on every series.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for sdir in "$BQLKIT_TOP"/patches/veth/*/; do
	series=$(basename "$sdir")
	base=$(base_dir "$series")
	if [ ! -f "$base/MANIFEST" ]; then
		skip "veth-review-$series" "no imported Linux $series base (5.15 and 6.6 come from a kernel tree: not in CI)"
		continue
	fi
	tree=$tmp/$series
	if ! out=$(apply_series "$base" "${sdir%/}" "$tree"); then
		fail "veth-review-$series" "the series does not apply: $(tail -1 <<<"$out")"
		continue
	fi
	{ "$BQLKIT_TOP/tests/veth-review.py" "$tree/drivers/net/veth.c" || true; } | while read -r res name what; do
		case $res in
		PASS) pass "veth-review-$series-$name" ;;
		*) fail "veth-review-$series-$name" "$what: not so in the patched source" ;;
		esac
	done
done
