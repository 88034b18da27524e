#!/bin/bash
# make check-debug's positive controls: on each debug kernel under test
# (lab/build-debug-kernels.sh), the kit's veth with one fault planted that
# the kernel's checker must report (lab/plants/<driver>/<name>.plant: a data
# race for KCSAN, a use-after-free for KASAN, a lock-order inversion for
# lockdep), built by lab/mutants.sh --plants (the mutants' sed edits on the
# fitted source) and booted once in its scenario; the VM logs under
# build/plants/<kver>/.  One PASS or FAIL per plant: it built and its VM
# ran to the end (its scenario's own checks may fail: the plant is no kit).
# t79 then requires each plant's report in its log.  On kernels that are
# not debug builds it skips: the plants are built only for check-debug.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip vm-debug-plants "BQLKIT_QUICK=1 (VM tests not run)"
	exit 0
fi
mapfile -t debug < <(debug_kernels)
for d in "${debug[@]}"; do
	read -r k flavour series <<<"$d"
	t=vm-debug-$flavour-$series
	mapfile -t plants < <(debug_plants "$flavour" "$series")
	if [ "${#plants[@]}" -eq 0 ]; then
		skip "$t-plants" "no plant in lab/plants/ for $flavour kernels of $series"
		continue
	fi
	if ! out=$("$BQLKIT_TOP/lab/mutants.sh" --plants --kver "$k" 2>&1); then
		fail "$t-plants" "lab/mutants.sh --plants --kver $k: $(tail -1 <<<"$out")"
		continue
	fi
	for f in "${plants[@]}"; do
		name=$(basename "$f" .plant)
		dir=$BQLKIT_BUILD/plants/$k/$(basename "$(dirname "$f")")/$name
		if [ -f "$dir/error" ]; then
			fail "$t-plant-$name-ran" "$(cat "$dir/error")"
		elif grep -q 'BQLKIT-END' "$dir/vm.log" 2>/dev/null; then
			pass "$t-plant-$name-ran"
			echo "$t: plant $name: $(grep -c '^FAIL ' "$dir/results" || true) of its scenario's checks failed (log: $dir/vm.log)" >&2
		else
			fail "$t-plant-$name-ran" "the VM run did not complete (log: $dir/vm.log)$(vm_crash_note "$dir/vm.log")"
		fi
	done
done
[ "${#debug[@]}" -gt 0 ] || skip vm-debug-plants "no debug kernel under test (make check-debug runs the plants on its KASAN+lockdep and KCSAN kernels)"
