#!/bin/bash
# Compat probes: on Debian's real 6.1 and 6.12 headers each probe finds what
# those kernels contain (a broken probe fails here), the report agrees with
# the versions, the cache works, and unusable headers are an error.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# What Debian's kernels contain, per series: probe=present|absent.
expected() {
	case $1 in
	6.1) echo "qdisc_txq_has_no_queue=absent ptr_ring_check_produce=absent netdev_bql=absent txq_trans_cond_update=present ethtool_sprintf=present ethtool_coalesce_kernel=present ethtool_coalesce_plain=absent u64_stats_fetch_irq=present" ;;
	6.12) echo "qdisc_txq_has_no_queue=present ptr_ring_check_produce=absent netdev_bql=absent txq_trans_cond_update=present ethtool_sprintf=present ethtool_coalesce_kernel=present ethtool_coalesce_plain=absent u64_stats_fetch_irq=absent" ;;
	esac
}
for k in $(test_kernels); do
	kdir=$(kdir_for "$k")
	series=$(series_of "$(kernel_version "$kdir")")
	out=$tmp/$k
	start=$(date +%s.%N)
	if ! "$BQLKIT_TOP/scripts/probe.sh" "$kdir" "$out" 2>"$tmp/err"; then
		fail "probe-$series-run" "$(tail -1 "$tmp/err")"
		continue
	fi
	pass "probe-$series-run ($(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)") s for $(wc -l <"$out/probes.txt") probes)"
	for e in $(expected "$series"); do
		name=${e%=*}
		want=${e#*=}
		got=$(awk -v n="$name" '$1 == n { print $2 }' "$out/probes.txt")
		if [ "$got" = "$want" ]; then pass "probe-$series-$name-$want"; else fail "probe-$series-$name" "found ${got:-nothing}, Linux $series has it $want"; fi
	done
	check "probe-$series-every-probe-asserted" test "$(wc -l <"$out/probes.txt")" -eq "$(expected "$series" | wc -w)"
	# The generated header defines exactly the macros whose condition held.
	while read -r name res macro _; do
		when=$(sed -n 's/.*bqlkit-probe: .*when=\([a-z]*\).*/\1/p' "$BQLKIT_TOP/compat/probes/$name.c")
		if [ "$res" = "$when" ]; then
			check "probe-$series-$macro-defined" grep -q "^#define $macro 1" "$out/bqlkit_config.h"
		else
			check "probe-$series-$macro-undefined" bash -c "! grep -q '^#define $macro ' '$out/bqlkit_config.h'"
		fi
	done <"$out/probes.txt"
	check "probe-report-$series-agrees" "$BQLKIT_TOP/scripts/probe-report.sh" "$kdir" "$out"
	touch -d '1 hour ago' "$out/bqlkit_config.h"
	"$BQLKIT_TOP/scripts/probe.sh" "$kdir" "$out"
	check "probe-$series-cached" test "$(stat -c %Y "$out/bqlkit_config.h")" -lt "$(date -d '30 min ago' +%s)"
done

# A version that predates an API the headers have is reported as a backport.
k612=$(test_kernels | sed -n 2p)
sed 's/since=6.16 stable=6.12.61/since=6.16/' "$tmp/$k612/probes.txt" >"$tmp/p.txt"
cp "$tmp/p.txt" "$tmp/$k612/probes.txt"
check probe-report-backport-detected bash -c "'$BQLKIT_TOP/scripts/probe-report.sh' '$(kdir_for "$k612")' '$tmp/$k612' | grep -q 'qdisc_txq_has_no_queue.*backport detected'"

mkdir -p "$tmp/broken"
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 0\n' >"$tmp/broken/Makefile"
expect_error probe-unusable-headers "cannot compile modules" "$BQLKIT_TOP/scripts/probe.sh" "$tmp/broken" "$tmp/broken-out"

# Kernel facts for reports: the fq_codel stale-state fix (815980fe6dbb),
# read from the headers; both Debian kernels carry it.  A header without
# the reset in codel_dequeue()'s empty branch reads as absent.
for k in $(test_kernels); do
	series=$(series_of "$(kernel_version "$(kdir_for "$k")")")
	check "facts-$series-fq_codel-fix-present" bash -c \
		"'$BQLKIT_TOP/lab/kernel-facts.sh' '$(kdir_for "$k")' | grep -qx fq_codel_stale_state_fix=present"
done
mkdir -p "$tmp/nofix/include/net"
cp "$(kdir_for "$(test_kernels | head -1)")/Makefile" "$tmp/nofix/Makefile.orig"
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 0\n' >"$tmp/nofix/Makefile"
common=$(sed -n 's/^include \(.*\)\/Makefile$/\1/p' "$tmp/nofix/Makefile.orig")
awk '/^static struct sk_buff \*codel_dequeue/ { f = 1 }
	f && /first_above_time = 0;/ && !done { done = 1; next } { print }' \
	"$common/include/net/codel_impl.h" >"$tmp/nofix/include/net/codel_impl.h"
check facts-fq_codel-fix-absent-detected bash -c \
	"'$BQLKIT_TOP/lab/kernel-facts.sh' '$tmp/nofix' | grep -qx fq_codel_stale_state_fix=absent"
# Headers in a build chroot (make bench on a matrix row): their Makefile
# names the -common half by its path inside the chroot.
k1=$(test_kernels | head -1)
croot=$tmp/chroot
ch=$croot/usr/src/linux-headers-$k1
mkdir -p "$ch" "$croot/usr/src/common/include/net"
sed 's|^include .*/Makefile$|include /usr/src/common/Makefile|' "$(kdir_for "$k1")/Makefile" >"$ch/Makefile"
cp "$common/include/net/codel_impl.h" "$croot/usr/src/common/include/net/"
cp "$common/Makefile" "$croot/usr/src/common/Makefile"
check facts-chroot-headers bash -c \
	"'$BQLKIT_TOP/lab/kernel-facts.sh' '$ch' | grep -qx fq_codel_stale_state_fix=present"
