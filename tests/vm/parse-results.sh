#!/bin/bash
# parse-results.sh LOGFILE
# Print the BQLKIT-RESULT lines of a VM console log and a summary line.
# Exit 0 only if the run completed (BQLKIT-END) and nothing FAILed.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

[[ $# -eq 1 ]] || die "usage: parse-results.sh LOGFILE"
logf=$1
[[ -r $logf ]] || die "cannot read log $logf"

results=$(tr -d '\r' <"$logf" | grep -o 'BQLKIT-RESULT .*' || true)
[[ -z $results ]] || echo "$results"
count() { grep -c "^BQLKIT-RESULT [^ ]* $1\b" <<<"$results" || true; }
pass=$(count PASS) fail=$(count FAIL) skip=$(count SKIP)
echo "BQLKIT-SUMMARY pass=$pass fail=$fail skip=$skip log=$logf"

if ! grep -q '^BQLKIT-END' "$logf"; then
	reason="VM crashed, hung or timed out"
	grep -q 'Kernel panic' "$logf" && reason="kernel panic"
	die "run incomplete: no BQLKIT-END in $logf ($reason)"
fi
[[ -n $results ]] || die "no BQLKIT-RESULT lines in $logf"
[[ $fail -eq 0 ]] || die "$fail check(s) failed"
