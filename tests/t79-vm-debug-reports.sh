#!/bin/bash
# The VM tests' console logs on debug kernels (make check-debug:
# lab/build-debug-kernels.sh, KASAN + lockdep and KCSAN): the checkers
# were on, and no KASAN, KCSAN, lockdep or WARN/BUG report names the kit's
# code (tests/vm/find-reports.py).  Reports of the kernel's own code are
# listed on stderr, not failed: the kit answers for its drivers.  Runs after
# the VM tests it reads (t60-t77); on kernels that are not debug builds it
# skips.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

logs=$BQLKIT_BUILD/test-logs
n=0
for k in $(test_kernels); do
	mark=$BQLKIT_CACHE/kernels/$k/.bqlkit-debug
	[ -f "$mark" ] || continue
	n=$((n + 1))
	flavour=$(cat "$mark")
	t=vm-debug-$flavour-$(series_of "$(kernel_version "$(kdir_for "$k")")")
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
done
[ "$n" -gt 0 ] || skip vm-debug "no debug kernel under test (make check-debug runs the VM tests on KASAN+lockdep and KCSAN kernels)"
