#!/bin/bash
# bqlkit's test suite.  Runs tests/setup.sh, then every tests/t*.sh, and ends
# with "N passed, N failed, N skipped" (two lanes at once from t44 on: see
# below).  BQLKIT_QUICK=1 skips the VM and the
# real DKMS install tests; TESTS="t30 t40" runs a subset.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

log=$BQLKIT_BUILD/test-logs
mkdir -p "$log"
step "setting up (packages, kernel headers, linux-source, imported bases)"
"$here/setup.sh"

# run_test FILE: run one test file; its result lines, and its counts in
# $log/NAME.counts.  The block is printed under a lock when the test ends
# (two lanes print whole blocks, never interleaved lines).
run_test() {
	local t=$1 name start trc=0 p f s out
	name=$(basename "$t" .sh)
	out=$log/$name.summary
	start=$(date +%s)
	echo "$start start" >"$log/$name.times"
	BQLKIT_TEST_TIMES=$log/$name.times bash "$t" >"$log/$name.out" 2>"$log/$name.err" || trc=$?
	{
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
		echo "$p $f $s" >"$log/$name.counts"
	} >"$out"
	(
		flock 9
		step "$name ended"
		cat "$out"
	) 9>>"$log/.print.lock"
}

# The tests to run, in order.
todo=()
for t in "$here"/t*.sh; do
	name=$(basename "$t" .sh)
	if [ -n "${TESTS:-}" ] && ! grep -qw "${name%%-*}" <<<"$TESTS"; then
		continue
	fi
	rm -f "$log/$name.counts"
	todo+=("$t")
done

# Tests numbered below t44 run first, one at a time: they build what later
# ones read (t40's modules).  The rest run in two lanes at once, each lane
# one test at a time: the VM tests (t6x-t8x, and t49, which boots the
# kernel it builds; QEMU) and the others (fit, chroots, DKMS).  The two share nothing a lane writes, and what they share in the
# cache (chroots, QEMU, kernel downloads, apt's lists) is locked for runs
# beside each other.  BQLKIT_LANES=1: one lane, in order.
first=() vm=() host=()
for t in "${todo[@]}"; do
	n=$(basename "$t" .sh)
	n=${n%%-*}
	n=$((10#${n#t}))
	if [ "$n" -lt 44 ] || [ "${BQLKIT_LANES:-2}" = 1 ]; then
		first+=("$t")
	elif { [ "$n" -ge 60 ] && [ "$n" -lt 90 ]; } || [ "$n" -eq 49 ]; then
		vm+=("$t")
	else
		host+=("$t")
	fi
done
lane() { local t; for t in "$@"; do step "$(basename "$t" .sh)"; run_test "$t"; done; }
lane "${first[@]}"
pids=()
[ ${#vm[@]} -eq 0 ] || { lane "${vm[@]}" & pids+=($!); }
[ ${#host[@]} -eq 0 ] || { lane "${host[@]}" & pids+=($!); }
for pid in "${pids[@]}"; do wait "$pid" || true; done

passed=0 failed=0 skipped=0
for t in "${todo[@]}"; do
	name=$(basename "$t" .sh)
	if [ ! -f "$log/$name.counts" ]; then
		echo "  FAIL $name: its lane never ran it"
		failed=$((failed + 1))
		continue
	fi
	read -r p f s <"$log/$name.counts"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
