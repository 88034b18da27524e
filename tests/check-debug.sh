#!/bin/bash
# make check-debug: the veth VM tests (smoke t60, faults t70, TX watchdog
# t75, receiver-down xoff t76, overlapping NAPI polls t77) on debug kernels
# built from Debian's linux-source (lab/build-debug-kernels.sh: KASAN +
# lockdep, KCSAN), then t78, the positive controls (the kit's veth with a
# fault planted that each kernel's checker must report: lab/plants/), and
# t79, which fails on any KASAN/KCSAN/lockdep/WARN report naming the kit's
# code in the kit's logs, and on any plant whose report is missing from
# its log.  Not in make check: building the two kernels
# takes 20-30 min each on 2 cores (cached afterwards), and the VMs run 2-4x
# slower.  DEBUG_SERIES (default 6.12), DEBUG_FLAVOURS (default "kasan kcsan").
# Ends with "N passed, N failed, N skipped", like make check.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

step "building (or finding cached) debug kernels: ${DEBUG_SERIES:-6.12} (${DEBUG_FLAVOURS:-kasan kcsan})"
# shellcheck disable=SC2086 # DEBUG_SERIES is a word list
built=$("$BQLKIT_TOP/lab/build-debug-kernels.sh" ${DEBUG_SERIES:-}) ||
	die "the debug kernels did not build (logs: $BQLKIT_CACHE/debug/build/*/build.log)"
kernels=$(awk '{ print $3 }' <<<"$built" | tr '\n' ' ')
[ -n "${kernels// /}" ] || die "lab/build-debug-kernels.sh named no kernel"
# Only this run's logs count for t79.
for k in $kernels; do
	rm -f "$BQLKIT_BUILD"/test-logs/vm-*-"$k".log*
	rm -rf "$BQLKIT_BUILD/plants/$k"
done
step "debug kernels: $kernels"
BQLKIT_TEST_KERNELS=$kernels TESTS="t60 t70 t75 t76 t77 t78 t79" exec "$here/run.sh"
