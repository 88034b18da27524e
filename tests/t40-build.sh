#!/bin/bash
# Build: the kit's veth.ko for each Debian kernel, warning-free, really
# carrying BQL (it calls dql_completed), made for that kernel, and marked as
# the kit's module.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

for k in $(test_kernels); do
	series=$(series_of "$(kernel_version "$(kdir_for "$k")")")
	if ! out=$("$BQLKIT_TOP/scripts/build.sh" "$k" 2>&1); then
		fail "build-$series" "$(tail -1 <<<"$out")"
		continue
	fi
	ko=$BQLKIT_BUILD/$k/veth.ko
	pass "build-$series"
	check "build-$series-no-warnings" bash -c "! grep -q 'warning:' '$BQLKIT_BUILD/$k/veth-build.log'"
	check "build-$series-imports-dql_completed" bash -c "nm -u '$ko' | grep -qw dql_completed"
	check "build-$series-vermagic" bash -c "modinfo -F vermagic '$ko' | grep -q '^$k '"
	check "build-$series-version" test "$(modinfo -F version "$ko")" = "$(cat "$BQLKIT_TOP/VERSION")-bqlkit"
	check "build-$series-info" bash -c "modinfo -F bqlkit '$ko' | grep -q 'series=$series'"
	check "build-$series-ethtool-bql-strings" bash -c "strings '$ko' | grep -qx bql_inflight"
done
