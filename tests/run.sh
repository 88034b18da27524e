#!/bin/bash
# bqlkit's test suite.  Runs tests/setup.sh, then every tests/t*.sh, and ends
# with "N passed, N failed, N skipped".  BQLKIT_QUICK=1 skips the VM and the
# real DKMS install tests; TESTS="t30 t40" runs a subset.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

log=$BQLKIT_BUILD/test-logs
mkdir -p "$log"
step "setting up (packages, kernel headers, linux-source, imported bases)"
"$here/setup.sh"

passed=0 failed=0 skipped=0
for t in "$here"/t*.sh; do
	name=$(basename "$t" .sh)
	if [ -n "${TESTS:-}" ] && ! grep -qw "${name%%-*}" <<<"$TESTS"; then
		continue
	fi
	step "$name"
	start=$(date +%s)
	echo "$start start" >"$log/$name.times"
	trc=0
	BQLKIT_TEST_TIMES=$log/$name.times bash "$t" >"$log/$name.out" 2>"$log/$name.err" || trc=$?
	grep -E '^(PASS|FAIL|SKIP) ' "$log/$name.out" | sed "s/^/  /" || true
	p=$(grep -c '^PASS ' "$log/$name.out" || true)
	f=$(grep -c '^FAIL ' "$log/$name.out" || true)
	# A test file that dies part-way hides the checks it never ran.
	if [ "$trc" -ne 0 ]; then
		echo "  FAIL $name: the test script exited with status $trc (stderr: $(tail -1 "$log/$name.err"))"
		f=$((f + 1))
	fi
	s=$(grep -c '^SKIP ' "$log/$name.out" || true)
	if [ $((p + f + s)) -eq 0 ]; then
		echo "  FAIL $name: reported nothing (stderr: $(tail -1 "$log/$name.err"))"
		f=1
	fi
	if [ "$f" -gt 0 ] && [ -s "$log/$name.err" ]; then
		tail -5 "$log/$name.err" | sed 's/^/    stderr: /'
	fi
	echo "  ($name: $(($(date +%s) - start)) s)"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
