#!/bin/bash
# The VM tests' console logs on debug kernels (make check-debug:
# lab/build-debug-kernels.sh, KASAN + lockdep and KCSAN): the checkers
# were on, and no KASAN, KCSAN, lockdep or WARN/BUG report names the kit's
# code (tests/vm/find-reports.py).  Reports of the kernel's own code are
# listed on stderr, not failed: the kit answers for its drivers.  Then the
# positive controls: each plant t78 ran on this kernel (lab/plants/, a fault
# planted in the kit's veth) has its report in its VM log, a report of the
# plant's kind naming the kit's code and matching the plant's match: line
# (FAIL when it is missing: this kernel's checker did not catch the fault),
# and the same check finds nothing in the kit's own logs.  Runs after the
# VM tests it reads (t60-t78); on kernels that are not debug builds it
# skips.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

logs=$BQLKIT_BUILD/test-logs
# plant_reports KIND REGEX LOG...: the KIND reports in LOGs that name the
# kit's code and have a line matching REGEX (find-reports.py's lines).
plant_reports() {
	"$BQLKIT_TOP/tests/vm/find-reports.py" --match "$2" "${@:3}" |
		awk -F'\t' -v k="$1" '$1 == k && $2 == "kit"'
}

mapfile -t debug < <(debug_kernels)
for d in "${debug[@]}"; do
	read -r k flavour series <<<"$d"
	t=vm-debug-$flavour-$series
	mapfile -t vmlogs < <(find "$logs" -maxdepth 1 -name "vm-*-$k.log" | sort)
	if [ "${#vmlogs[@]}" -eq 0 ]; then
		fail "$t-logs" "no VM log of $k in $logs: run the VM tests first (make check-debug)"
		continue
	fi
	pass "$t-logs"
	echo "$t: ${#vmlogs[@]} logs: $(printf '%s ' "${vmlogs[@]##*/}")" >&2
	# The checkers this flavour promises ran in every boot.
	case $flavour in
	kasan) want='KernelAddressSanitizer_initialized.*Lock_dependency_validator|Lock_dependency_validator.*KernelAddressSanitizer_initialized' ;;
	kcsan) want='kcsan:_enabled_early' ;;
	*) want=. ;;
	esac
	off=()
	for l in "${vmlogs[@]}"; do
		grep -qE "BQLKIT debug checkers=.*($want)" "$l" || off+=("${l##*/}")
	done
	if [ "${#off[@]}" -eq 0 ]; then
		pass "$t-checkers-on"
	else
		fail "$t-checkers-on" "no '$flavour' checkers line in ${off[*]}"
	fi
	# lockdep disables itself after its first report: a late one would be missed.
	if [ "$flavour" = kasan ]; then
		offl=$(grep -l 'BQLKIT debug lockdep debug_locks:0' "${vmlogs[@]}" || true)
		if [ -n "$offl" ]; then
			fail "$t-lockdep-stayed-on" "lockdep turned itself off in $(xargs -n1 basename <<<"$offl" | tr '\n' ' ')"
		else
			pass "$t-lockdep-stayed-on"
		fi
	fi
	reports=$("$BQLKIT_TOP/tests/vm/find-reports.py" "${vmlogs[@]}")
	kit=$(awk -F'\t' '$2 == "kit"' <<<"$reports")
	other=$(awk -F'\t' '$2 == "other"' <<<"$reports")
	[ -z "$other" ] || awk -F'\t' -v t="$t" '{ n = split($3, p, "/"); print t ": not the kit'"'"'s: " $1 " in " p[n] ": " $4 }' <<<"$other" >&2
	for kind in kasan kcsan lockdep warn; do
		r=$(awk -F'\t' -v k="$kind" '$1 == k' <<<"$kit")
		if [ -z "$r" ]; then
			pass "$t-no-kit-$kind-report"
		else
			fail "$t-no-kit-$kind-report" "$(wc -l <<<"$r") report(s), first: $(head -1 <<<"$r" | cut -f4) (log: $(head -1 <<<"$r" | cut -f3))"
		fi
	done
	# The positive controls (t78 ran them): the checker caught each plant.
	mapfile -t plants < <(debug_plants "$flavour" "$series")
	[ "${#plants[@]}" -gt 0 ] || skip "$t-plants" "no plant in lab/plants/ for $flavour kernels of $series"
	for f in "${plants[@]}"; do
		name=$(basename "$f" .plant)
		kind=$(plant_field "$f" report)
		match=$(plant_field "$f" match)
		plog=$BQLKIT_BUILD/plants/$k/$(basename "$(dirname "$f")")/$name/vm.log
		if [ ! -s "$plog" ]; then
			fail "$t-plant-$name-reported" "no VM log of the plant ($plog): t78 runs it (make check-debug)"
		else
			r=$(plant_reports "$kind" "$match" "$plog")
			if [ -n "$r" ]; then
				pass "$t-plant-$name-reported"
				echo "$t: plant $name: $(wc -l <<<"$r") report(s), first: $(head -1 <<<"$r" | cut -f4)" >&2
			else
				fail "$t-plant-$name-reported" "no $kind report naming the kit's code and matching '$match' in $plog: the $flavour kernel did not catch it ($(plant_field "$f" property))"
			fi
		fi
		# The check can fail: on the kit's own logs it finds nothing.
		r=$(plant_reports "$kind" "$match" "${vmlogs[@]}")
		if [ -z "$r" ]; then
			pass "$t-plant-$name-not-on-kit"
		else
			fail "$t-plant-$name-not-on-kit" "the kit's own logs hold it: $(head -1 <<<"$r" | cut -f4) (log: $(head -1 <<<"$r" | cut -f3))"
		fi
	done
done
[ "${#debug[@]}" -gt 0 ] || skip vm-debug "no debug kernel under test (make check-debug runs the VM tests on KASAN+lockdep and KCSAN kernels)"
