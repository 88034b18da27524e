#!/bin/bash
# Mutation testing of the kit's runtime checks: for each mutant
# (lab/mutants/<driver>/<name>.mutant) build the kit's module for one
# kernel with that one property broken, run the VM scenario of the test that
# claims the property, and require the checks that claim it to fail.
#
#   mutants.sh [--kver KVER] [--out FILE] [NAME...]
#
# KVER: the kernel (default: the first of the suite's test kernels,
# tests/lib.sh test_kernels).  NAME: mutants to run (default: every one
# whose bases include KVER's series).  Writes FILE (default
# results/mutants.md): mutant | property | checks that must fail | checks
# that failed | killed.  Work and VM logs: build/mutants/<kver>/.
#
# A .mutant file has "key: value" lines (# comments):
#   property: the property in words
#   driver:   veth | mana
#   bases:    the series it applies to (e.g. 6.1 6.12)
#   runner:   the VM scenario to run (runner_* below: the same helper, the
#             same arguments and so the same check names as its test file)
#   build:    fault-injection (a BQLKIT_FAULT_INJECTION build, as t75/t77);
#             default: the kit's module as installed
#   file:     the source file to edit, in the driver's Kbuild directory
#             (build/<kver>/<driver>/, the fitted source: e.g. veth_main.c)
#   edit:     a sed expression keyed on code, not on line numbers; several
#             edit: lines are applied in turn, and each must change the file
#   checks:   the checks that claim the property, {series} for X.Y
#             (e.g. vm-{series}-bql_inflight_during_flood): each must FAIL
# The mutant is refused (an error, not a kill) when an edit changes
# nothing or the mutant module's code is the reference module's.
set -euo pipefail
# shellcheck source=../tests/lib.sh
. "$(dirname "$0")/../tests/lib.sh"

kver='' outf=$BQLKIT_TOP/results/mutants.md
while [ $# -gt 0 ]; do
	case $1 in
	--kver) [ -n "${2:-}" ] || die "--kver needs a value"; kver=$2; shift 2 ;;
	--out) [ -n "${2:-}" ] || die "--out needs a value"; outf=$2; shift 2 ;;
	-*) die "usage: mutants.sh [--kver KVER] [--out FILE] [NAME...]" ;;
	*) break ;;
	esac
done
[ -n "$kver" ] || kver=$(test_kernels | head -1)
[ -n "$kver" ] || die "no test kernel: run tests/setup.sh (make check does) or give --kver"
valid_kver "$kver"
series=$(series_of "$(kernel_version "$(kdir_for "$kver")")")
kdir=$(kdir_for "$kver")
work=$BQLKIT_BUILD/mutants/$kver
mkdir -p "$work"
# QEMU TCG and the builds share the machine with other runs.
renice -n 10 -p $$ >/dev/null 2>&1 || true

# field FILE KEY: the values of KEY's lines, one per line.
field() { sed -n "s/^$2:[[:space:]]*//p" "$1"; }

# The mutants to run: the named ones, else every one for this series.
mapfile -t all < <(find "$BQLKIT_TOP/lab/mutants" -name '*.mutant' | sort)
mutants=()
for want in "$@"; do
	for f in "${all[@]}"; do
		name=$(basename "$(dirname "$f")")/$(basename "$f" .mutant)
		[ "$want" = "$name" ] || [ "$want" = "${name#*/}" ] && continue 2
	done
	die "no mutant '$want' in lab/mutants/ (DRIVER/NAME or NAME)"
done
for f in "${all[@]}"; do
	name=$(basename "$(dirname "$f")")/$(basename "$f" .mutant)
	if [ $# -gt 0 ]; then
		for want in "$@"; do
			if [ "$want" = "$name" ] || [ "$want" = "${name#*/}" ]; then
				mutants+=("$f")
				break
			fi
		done
	elif [[ " $(field "$f" bases | tr '\n' ' ') " == *" $series "* ]]; then
		mutants+=("$f")
	fi
done
[ ${#mutants[@]} -gt 0 ] || die "no mutant to run for $kver (series $series)${1:+ named $*}"

# reference DRIVER FLAVOUR: the kit's module built for kver by
# scripts/build.sh into $work/ref-FLAVOUR (once); prints its Kbuild dir.
reference() {
	local d=$work/ref-$2 fi='' bases=${BQLKIT_BASES:-$BQLKIT_BUILD/bases}
	[ "$2" = fault-injection ] && fi=1
	if [ ! -f "$d/$kver/$1/Kbuild" ] || [ ! -f "$d/$kver/$1.build-info" ]; then
		BQLKIT_BUILD=$d BQLKIT_BASES=$bases \
			BQLKIT_FAULT_INJECTION=$fi "$BQLKIT_TOP/scripts/build.sh" "$kver" "$1" >"$d.log" 2>&1 ||
			die "the kit's $1 does not build for $kver ($2; log: $d.log)"
	fi
	echo "$d/$kver/$1"
}

# code KO: the module's disassembly without its file name.
code() { objdump -d --no-show-raw-insn "$1" | grep -v 'file format'; }

# build_mutant FILE DIR: the mutant's module in DIR/src (a copy of the
# reference Kbuild directory with the edits applied); dies when an edit
# changes nothing or the module's code did not change.
build_mutant() {
	local f=$1 dir=$2 drv flavour ref src e before fi='' ko
	drv=$(field "$f" driver)
	flavour=$(field "$f" build)
	flavour=${flavour:-kit}
	ref=$(reference "$drv" "$flavour")
	src=$(field "$f" file)
	[ -n "$src" ] && [ -f "$ref/$src" ] || die "$f: no file '$src' in $ref"
	rm -rf "$dir/src"
	mkdir -p "$dir"
	cp -a "$ref" "$dir/src"
	(cd "$dir/src" && rm -f ./*.ko ./*.o ./*.mod ./*.mod.c ./.*.cmd Module.symvers modules.order)
	while IFS= read -r e; do
		before=$(sha256sum <"$dir/src/$src")
		sed -i -e "$e" "$dir/src/$src"
		[ "$(sha256sum <"$dir/src/$src")" != "$before" ] ||
			die "$f: the edit '$e' changed nothing in $src: the mutant does not apply to this source"
	done < <(field "$f" edit)
	diff -u "$ref/$src" "$dir/src/$src" >"$dir/mutant.diff" || true
	[ "$flavour" = fault-injection ] && fi=y
	make -C "$kdir" M="$dir/src" BQLKIT_COMPAT="$BQLKIT_TOP/compat" \
		BQLKIT_CONFIG="$(dirname "$ref")/compat" ${fi:+BQLKIT_FAULT_INJECTION=y} \
		-j"$(nproc)" modules >"$dir/build.log" 2>&1 ||
		die "$f: the mutant does not build (log: $dir/build.log)"
	for ko in "$ref"/*.ko; do
		if ! cmp -s <(code "$ko") <(code "$dir/src/$(basename "$ko")"); then
			MUTANT_KO=$dir/src/$(basename "$ko")
			return 0
		fi
	done
	die "$f: the mutant's module has the reference's code: the edit did not reach it"
}

# Runners: one VM scenario each, as its test file runs it, with the
# mutant's module KO; result lines (PASS/FAIL/SKIP NAME) on stdout.
runner_smoke() { vm_smoke "vm-$series" "$kver" "$1" "$2/vm.log"; }             # t60
runner_mq() { vm_smoke "vm-$series-mq" "$kver" "$1" "$2/vm.log" --scenario mq --xdp xdp_pass; } # t60
runner_xoff() { vm_xoff "vm-$series" "$kver" "$1" "$2/vm.log"; }               # t76
runner_faults() {                                                              # t70
	local faults=qdisc-swap,channels,xdp,link-flap-sender,link-flap-receiver,pair-delete,netns-delete,module-reload
	"$BQLKIT_TOP/tests/vm/faults.sh" --kver "$kver" --veth "$1" --log "$2/vm.log" --quiet \
		--append "bqlkit.faults=$faults" >/dev/null 2>"$2/vm.log.err" || true
	[ -s "$2/vm.log" ] || { fail "vm-$series-faults-run" "no VM log"; return 0; }
	vm_results "vm-$series" "$2/vm.log"
}
runner_txtimeout() { runner_scenario txtimeout "vm-$series-txtimeout" "$@"; } # t75
runner_napi_race() { runner_scenario napi-race "vm-$series-napi-race" "$@"; } # t77
# runner_scenario SCENARIO PREFIX KO DIR: one boot of guest/SCENARIO.sh.
runner_scenario() {
	local vm=$BQLKIT_TOP/tests/vm initrd
	initrd=$(mktemp "$4/initrd-XXXXXX.cpio.gz")
	{ "$vm/get-kernel.sh" "$kver" >/dev/null &&
		"$vm/mkinitramfs.sh" --kver "$kver" --scenario "$1" --out "$initrd" --veth "$3" &&
		"$vm/run-vm.sh" --kver "$kver" --initrd "$initrd" --log "$4/vm.log" --quiet; } \
		>/dev/null 2>"$4/vm.log.err" || true
	rm -f "$initrd"
	grep -q 'BQLKIT-END' "$4/vm.log" 2>/dev/null ||
		fail "$2-run" "the VM run did not complete (log: $4/vm.log)$(vm_crash_note "$4/vm.log")"
	vm_results "$2" "$4/vm.log"
}
# Which test file each runner stands for.
declare -A test_of=([smoke]=t60 [mq]=t60 [xoff]=t76 [faults]=t70 [txtimeout]=t75 [napi_race]=t77)

rows=() errors=0 survivors=0 t_all=$SECONDS
for f in "${mutants[@]}"; do
	name=$(basename "$(dirname "$f")")/$(basename "$f" .mutant)
	dir=$work/$name
	runner=$(field "$f" runner)
	declare -F "runner_$runner" >/dev/null || die "$f: no runner '$runner'"
	mapfile -t claimed < <(field "$f" checks | tr ' ' '\n' | grep . | sed "s/{series}/$series/g")
	[ ${#claimed[@]} -gt 0 ] || die "$f: no checks: line"
	t0=$SECONDS
	step "mutant $name: building for $kver"
	if ! err=$(build_mutant "$f" "$dir" 2>&1 && echo "$MUTANT_KO"); then
		errors=$((errors + 1))
		rows+=("| $name | $(field "$f" property) | ${claimed[*]} | ERROR: $(tail -1 <<<"$err") | error | $((SECONDS - t0)) s |")
		echo "bqlkit: $name: $(tail -1 <<<"$err")" >&2
		continue
	fi
	ko=$(tail -1 <<<"$err")
	step "mutant $name: running ${test_of[$runner]}'s $runner scenario"
	"runner_$runner" "$ko" "$dir" >"$dir/results" 2>"$dir/runner.err" || true
	failed=() passed=()
	for c in "${claimed[@]}"; do
		if grep -q "^FAIL $c:" "$dir/results"; then
			failed+=("$c")
		elif ! grep -q "^\(PASS\|SKIP\) $c$\|^SKIP $c:" "$dir/results"; then
			# No result: the run died before it (a crash, a hang); the
			# test file's -run or -complete check fails for it.
			failed+=("$c (no result: $(grep -m1 '^FAIL .*-\(run\|complete\)' "$dir/results" | cut -c1-120 || echo 'not reported'))")
		else
			passed+=("$c")
		fi
	done
	if [ ${#passed[@]} -eq 0 ]; then
		verdict=killed
	elif [ ${#failed[@]} -gt 0 ]; then
		verdict="killed; still passed: ${passed[*]}"
	else
		verdict=SURVIVED
		survivors=$((survivors + 1))
	fi
	others=$(grep '^FAIL ' "$dir/results" | cut -d' ' -f2 | tr -d : | grep -vxF -f <(printf '%s\n' "${claimed[@]}") | paste -sd' ' || true)
	rows+=("| $name | $(field "$f" property) | ${test_of[$runner]} $runner: ${claimed[*]} | ${failed[*]:-none}${others:+ (also failed: $others)} | $verdict | $((SECONDS - t0)) s |")
	echo "bqlkit: $name: $verdict ($((SECONDS - t0)) s)" >&2
done

{
	echo "# Mutants: do the VM checks fail when their property is broken?"
	echo
	echo "Generated by \`make mutants\` (lab/mutants.sh) on $(date -u +%Y-%m-%d) for $kver (series $series),"
	echo "QEMU: ${VM_QEMU:-kit}; VM logs in build/mutants/$kver/<mutant>/."
	echo "Each mutant is the kit's module with one property broken (lab/mutants/<driver>/<name>.mutant:"
	echo "the property, the edit, the checks that claim it); the checks that claim the"
	echo "property must FAIL.  A mutant whose checks all pass is a SURVIVOR: a check"
	echo "that cannot fail.  Total time: $(((SECONDS - t_all) / 60)) min $(((SECONDS - t_all) % 60)) s."
	echo
	echo "| mutant | property | test, scenario: checks that must fail | checks that failed | verdict | time |"
	echo "|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "$((${#rows[@]} - survivors - errors)) killed, $survivors survived, $errors errors."
} >"$outf"
echo "bqlkit: wrote $outf: $((${#rows[@]} - survivors - errors)) killed, $survivors survived, $errors errors" >&2
[ "$survivors" -eq 0 ] && [ "$errors" -eq 0 ]
