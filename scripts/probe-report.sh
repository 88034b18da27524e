#!/bin/bash
# Print each compat probe's result next to what the kernel's version would
# predict, flagging disagreements.
#
#   probe-report.sh KDIR OUTDIR     (OUTDIR as given to probe.sh)
#
# "backport detected": the API is there although the version predates it
# (a distro or stable backport).  "MISSING": the version says it should be
# there and it is not (a probe bug, or a distro revert); exit 1.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || die "usage: probe-report.sh KDIR OUTDIR"
kdir=$1
out=$2
bash "$BQLKIT_TOP/scripts/probe.sh" "$kdir" "$out"
kv=$(kernel_version "$kdir")
series=$(series_of "$kv")

# predicted SINCE STABLE UNTIL: "present" when the version has the API
# upstream (added in SINCE or a STABLE release, removed in UNTIL).
predicted() {
	local since=$1 stable=$2 until=$3 s
	if [ "$until" != - ] && version_ge "$kv" "$until"; then
		echo absent
		return
	fi
	[ "$since" != none ] && version_ge "$kv" "$since" && { echo present; return; }
	for s in ${stable//,/ }; do
		[ "$s" != - ] && [ "$(series_of "$s")" = "$series" ] &&
			version_ge "$kv" "$s" && { echo present; return; }
	done
	echo absent
}

rc=0
printf '%-26s %-8s %-9s %-30s %s\n' probe result predicted macro verdict
while read -r name res macro since stable until; do
	since=${since#since=}
	stable=${stable#stable=}
	until=${until#until=}
	pred=$(predicted "$since" "$stable" "${until:--}")
	if [ "$res" = "$pred" ]; then
		verdict=agrees
	elif [ "$res" = present ] && [ "${until:--}" != - ]; then
		verdict="MISSING removal: Linux $kv should not have it (removed in $until)"
		rc=1
	elif [ "$res" = present ]; then
		verdict="backport detected (upstream since $since)"
	elif [ "${until:--}" != - ]; then
		verdict="removal backported (upstream removed it in $until)"
	else
		verdict="MISSING: Linux $kv should have it (since $since${stable:+, stable $stable})"
		rc=1
	fi
	printf '%-26s %-8s %-9s %-30s %s\n' "$name" "$res" "$pred" "$macro" "$verdict"
done <"$out/probes.txt"
exit $rc
