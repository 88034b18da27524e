#!/bin/bash
# Mutation testing of the kit's runtime checks: for each mutant
# (lab/mutants/<driver>/<name>.mutant) build the kit's module for one
# kernel with that one property broken, run the VM scenario of the test that
# claims the property, and require the checks that claim it to fail.
#
#   mutants.sh [--kver KVER] [--out FILE] [--build-only | --report | --control | --plants] [NAME...]
#
# KVER: the kernel (default: the first of the suite's test kernels,
# tests/lib.sh test_kernels; a kernel built from a tree, as t64/t82 find
# them, builds on a base from its own tree: lab/lib.sh kit_build).
# NAME: mutants to run (default: every one whose bases include KVER's
# series).  Writes FILE (default
# results/mutants-<series>.md): mutant | property | checks that must fail
# | checks that failed | killed.  Work and VM logs: build/mutants/<kver>/.
# A mutant with no result there (another machine ran it) keeps its row
# from FILE as it was, and the table says how many rows it kept.
# --build-only: build each mutant and check its edit took, no VM, no FILE.
# --report: no run, FILE from the results the work directory holds.
# --control: run each selected mutant's scenario with the kit's module
# as built (once per scenario): a kill counts only where the checks pass
# on the kit; the table's "on the kit" column says whether they did.
# --plants: the positive controls of make check-debug instead
# (lab/plants/<driver>/<name>.plant, the same format): KVER must be a
# debug kernel (lab/build-debug-kernels.sh); each plant of its flavour and
# series is built and its scenario run once, the VM log in
# build/plants/<kver>/<driver>/<name>/vm.log for tests/t79, which requires
# the plant's report there.  No verdict, no FILE; the reference module is
# built afresh.  With --build-only: the builds only.
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
#   phases:   (mana) the guest phases to run, as t82 names them
#   append:   (mana, smoke) guest kernel arguments added to the
#             scenario's, e.g. bqlkit.channel_rounds=60: a defect that
#             bites at random needs more rounds than the test file's run
#   checks:   the checks that claim the property, {series} for X.Y
#             (e.g. vm-{series}-bql_inflight_during_flood): each must FAIL
# A .plant file has no checks: line, but (read by tests/t79):
#   flavour:  the debug kernel that must catch it (kasan, kcsan)
#   report:   the kind of report it must cause (kasan, kcsan, lockdep:
#             tests/vm/find-reports.py's kinds), naming the kit's code
#   match:    a regex one line of that report must match
# The mutant is refused (an error, not a kill) when an edit changes
# nothing or the mutant module's code is the reference module's.
set -euo pipefail
# shellcheck source=../tests/lib.sh
. "$(dirname "$0")/../tests/lib.sh"

kver='' outf='' build_only='' report='' control='' plants=''
while [ $# -gt 0 ]; do
	case $1 in
	--kver) [ -n "${2:-}" ] || die "--kver needs a value"; kver=$2; shift 2 ;;
	--out) [ -n "${2:-}" ] || die "--out needs a value"; outf=$2; shift 2 ;;
	--build-only) build_only=1; shift ;;
	--report) report=1; shift ;;
	--control) control=1; shift ;;
	--plants) plants=1; shift ;;
	-*) die "usage: mutants.sh [--kver KVER] [--out FILE] [--build-only | --report | --control | --plants] [NAME...]" ;;
	*) break ;;
	esac
done
[ -n "$kver" ] || kver=$(test_kernels | head -1)
[ -n "$kver" ] || die "no test kernel: run tests/setup.sh (make check does) or give --kver"
valid_kver "$kver"
series=$(series_of "$(kernel_version "$(kdir_for "$kver")")")
[ -n "$outf" ] || outf=$BQLKIT_TOP/results/mutants-$series.md
kdir=$(kdir_for "$kver")
work=$BQLKIT_BUILD/mutants/$kver
# What is run: mutants (lab/mutants/*/*.mutant), or with --plants the
# plants (lab/plants/*/*.plant) of the debug kernel's flavour.
kind=mutants ext=mutant flavour=''
if [ -n "$plants" ]; then
	[ -z "$report$control" ] || die "--plants takes no --report or --control"
	kind=plants ext=plant work=$BQLKIT_BUILD/plants/$kver
	flavour=$(cat "$BQLKIT_CACHE/kernels/$kver/.bqlkit-debug" 2>/dev/null) ||
		die "--plants: $kver is not a debug kernel (lab/build-debug-kernels.sh)"
	# The reference afresh: the kit's source may have changed since.
	rm -rf "$work"/ref-*
fi
mkdir -p "$work"
# QEMU TCG and the builds share the machine with other runs.
renice -n 10 -p $$ >/dev/null 2>&1 || true

# field FILE KEY: the values of KEY's lines, one per line.
field() { sed -n "s/^$2:[[:space:]]*//p" "$1"; }

# The mutants to run: the named ones, else every one for this series.
mapfile -t all < <(find "$BQLKIT_TOP/lab/$kind" -name "*.$ext" | sort)
mutants=()
for want in "$@"; do
	for f in "${all[@]}"; do
		name=$(basename "$(dirname "$f")")/$(basename "$f" ".$ext")
		[ "$want" = "$name" ] || [ "$want" = "${name#*/}" ] && continue 2
	done
	die "no $ext '$want' in lab/$kind/ (DRIVER/NAME or NAME)"
done
for f in "${all[@]}"; do
	name=$(basename "$(dirname "$f")")/$(basename "$f" ".$ext")
	# A plant runs only on the debug kernel whose checker must catch it.
	[ -z "$plants" ] || [ "$(field "$f" flavour)" = "$flavour" ] || continue
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
[ -z "$report" ] || mutants=()
[ ${#mutants[@]} -gt 0 ] || [ -n "$report" ] || die "no $ext to run for $kver (series $series${flavour:+, $flavour})${1:+ named $*}"

# reference DRIVER FLAVOUR: the kit's module built for kver by
# scripts/build.sh into $work/ref-FLAVOUR (again when the driver's series
# or the compat layer changed since); prints its Kbuild dir.
reference() {
	local d=$work/ref-$2 fi='' bases=${BQLKIT_BASES:-$BQLKIT_BUILD/bases}
	[ "$2" = fault-injection ] && fi=1
	if [ ! -f "$d/$kver/$1/Kbuild" ] || [ ! -f "$d/$kver/$1.build-info" ] ||
		[ -n "$(find "$BQLKIT_TOP/patches/$1" "$BQLKIT_TOP/compat" -newer "$d/$kver/$1.build-info" -print -quit)" ]; then
		BQLKIT_BUILD=$d BQLKIT_BASES=$bases BQLKIT_FAULT_INJECTION=$fi kit_build "$kver" "$1" >"$d.log" 2>&1 ||
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
	# (Called where set -e is off: stop here with reference's own error.)
	ref=$(reference "$drv" "$flavour") || exit 1
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
runner_smoke() { vm_smoke "vm-$series" "$kver" "$1" "$2/vm.log" ${APPEND:+--append "$APPEND"}; } # t60
runner_mq() { vm_smoke "vm-$series-mq" "$kver" "$1" "$2/vm.log" --scenario mq --xdp xdp_pass; } # t60
runner_napiyield() { vm_smoke "vm-$series-napiyield" "$kver" "$1" "$2/vm.log" --scenario napiyield --icount shift=2,sleep=off,align=off; } # t60
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
# mana on the emulated MANA VF (t82): the kit's phases, the batched ones
# (bqlkit.batching=1) and the lost-completions one; a mutant's phases:
# line runs fewer of them (same check names).  Their logs go under the
# mutant's DIR (BQLKIT_BUILD=DIR: tests/lib.sh's test-logs/ is shared by
# every run of a scenario).
# mana_qemu: the kit's QEMU with the MANA model when it is built, else a
# SKIP line (no build here: another run may hold its lock for long).
# MUTANTS_MANA_QEMU=DIR: another build of it (an earlier key's).
mana_qemu() {
	local q=${MUTANTS_MANA_QEMU:-}
	[ -n "$q" ] || q=$("$BQLKIT_TOP/lab/build-qemu.sh" --print-key 2>/dev/null)
	[ -x "$q/qemu-system-x86_64" ] && { [ -n "${MUTANTS_MANA_QEMU:-}" ] || [ -f "$q/.ready" ]; } ||
		{ skip mana-dev "the kit's QEMU is not built (lab/build-qemu.sh; make check builds it)"; return 1; }
	# shellcheck disable=SC2034 # read by vm_mana_dev (tests/lib.sh)
	MANA_QEMU=$q
}
runner_mana_kit() {
	mana_qemu || return 0
	BQLKIT_BUILD=$2 MANA_DEV_APPEND=${APPEND:-} vm_mana_dev "mana-dev-$series-kit" "$kver" \
		"${PHASES:-$MANA_DEV_KIT_PHASES}" --module "$1" 2>"$2/runner.log"
}
runner_mana_batched() {
	mana_qemu || return 0
	BQLKIT_BUILD=$2 MANA_DEV_APPEND="bqlkit.batching=1${APPEND:+ $APPEND}" vm_mana_dev "mana-dev-$series-kit-batched" "$kver" \
		"${PHASES:-$MANA_DEV_BATCHED_PHASES}" --module "$1" 2>"$2/runner.log"
}
runner_mana_lost() {
	mana_qemu || return 0
	BQLKIT_BUILD=$2 vm_mana_dev_lost "mana-dev-$series-lost" "$kver" "$1" 2>"$2/runner.log"
}
runner_mana_eqsync() {
	mana_qemu || return 0
	BQLKIT_BUILD=$2 vm_mana_dev_eqsync "mana-dev-$series-eqsync" "$kver" "$1" 2>"$2/runner.log"
}
runner_mana_batchcut() {
	mana_qemu || return 0
	BQLKIT_BUILD=$2 vm_mana_dev_batchcut "mana-dev-$series-batchcut" "$kver" "$1" 2>"$2/runner.log"
}
# Which test file each runner stands for.
declare -A test_of=([smoke]=t60 [mq]=t60 [napiyield]=t60 [xoff]=t76 [faults]=t70 [txtimeout]=t75 [napi_race]=t77
	[mana_kit]=t82 [mana_batched]=t82 [mana_lost]=t82 [mana_eqsync]=t82 [mana_batchcut]=t82)

# control_dir FILE: where the kit's own run of the mutant's scenario is.
control_dir() {
	local fl ph ap
	fl=$(field "$1" build)
	ph=$(field "$1" phases)
	ap=$(field "$1" append)
	ap=${ap//[^a-z0-9_=]/-}
	echo "$work/control/$(field "$1" runner)-${fl:-kit}${ph:+-${ph//,/-}}${ap:+-${ap//=/}}"
}

# on_kit FILE: whether the mutant's claimed checks passed on the kit's
# module (its scenario's control run).
on_kit() {
	local d c bad=()
	d=$(control_dir "$1")
	grep -qs '^PASS ' "$d/results" || { echo "no control run"; return 0; }
	for c in "${claimed[@]}"; do
		grep -q "^PASS $c$" "$d/results" || bad+=("$c")
	done
	if [ ${#bad[@]} -eq 0 ]; then
		echo "pass ($(date -u -r "$d/results" +%F))"
	else
		echo "NOT ALL PASS: ${bad[*]}"
	fi
}

# verdict FILE DIR: the mutant's table row (ROW) from its run's results
# (DIR/results) and VERDICT (killed..., SURVIVED, error).
verdict() {
	local f=$1 dir=$2 runner c died others failed=() passed=() claimed secs
	runner=$(field "$f" runner)
	mapfile -t claimed < <(field "$f" checks | tr ' ' '\n' | grep . | sed "s/{series}/$series/g")
	# The time of the mutant: from its edit to its last result.
	secs=$(($(stat -c %Y "$dir/results") - $(stat -c %Y "$dir/mutant.diff")))
	# A run that died: the failed -run/-complete check, and the first
	# line of the crash report when there is one.
	died=$(grep -m1 '^FAIL [^ ]*-\(run\|complete\):' "$dir/results" | cut -d' ' -f2 | tr -d : || true)
	[ -z "$died" ] || died="$died$(grep -m1 -o '\[crash: [^;]*' "$dir/results" | sed 's/^\[crash: / [/; s/$/]/' || true)"
	for c in "${claimed[@]}"; do
		if grep -q "^FAIL $c:" "$dir/results"; then
			failed+=("$c")
		elif grep -q "^\(PASS\|SKIP\) $c$\|^SKIP $c:" "$dir/results"; then
			passed+=("$c")
		elif [ -n "$died" ]; then
			# No result: the run died before it (a crash, a hang), and
			# the test file's -run or -complete check fails for it.
			failed+=("$c (no result)")
		else
			passed+=("$c (NOT RUN)")
		fi
	done
	if grep -q '(NOT RUN)' <<<"${passed[*]}"; then
		# The scenario did not run (e.g. no emulator: a SKIP line):
		# neither a kill nor a survivor.
		VERDICT=error
		ROW="| $name | $(field "$f" property) | ${claimed[*]} | not run: $(grep -m1 '^\(SKIP\|FAIL\) ' "$dir/results" | cut -c1-160 || echo 'no result at all') | | error | $secs s |"
		return 0
	fi
	if [ ${#passed[@]} -eq 0 ]; then
		VERDICT=killed
	elif [ ${#failed[@]} -gt 0 ]; then
		VERDICT="killed; still passed: ${passed[*]}"
	else
		VERDICT=SURVIVED
	fi
	others=$(grep '^FAIL ' "$dir/results" | cut -d' ' -f2 | tr -d : | grep -vxF -f <(printf '%s\n' "${claimed[@]}") | paste -sd' ' || true)
	ROW="| $name | $(field "$f" property) | ${test_of[$runner]} $runner: ${claimed[*]} | ${failed[*]:-none}${died:+; the run died: $died}${others:+ (also failed: $others)} | $(on_kit "$f") | $VERDICT | $secs s ($(date -u -r "$dir/results" +%F), QEMU $(cat "$dir/qemu" 2>/dev/null || echo 'not recorded')) |"
}

# record_qemu DIR: which emulator the run in DIR used, for its table row:
# the veth VMs' (VM_QEMU), and the MANA model's build by its cache key (the
# model's sources are in the key: a row says which model it ran on).
record_qemu() {
	echo "${VM_QEMU:-kit}${MANA_QEMU:+, mana: $(basename "$MANA_QEMU")}" >"$1/qemu"
}

# --control: each selected mutant's scenario once with the kit's module.
if [ -n "$control" ]; then
	for f in "${mutants[@]}"; do
		d=$(control_dir "$f")
		[ ! -f "$d/done" ] || continue
		fl=$(field "$f" build)
		ref=$(reference "$(field "$f" driver)" "${fl:-kit}")
		mkdir -p "$d"
		step "control $(basename "$d"): the kit's module in ${test_of[$(field "$f" runner)]}'s scenario"
		MANA_QEMU=''
		PHASES=$(field "$f" phases) APPEND=$(field "$f" append) "runner_$(field "$f" runner)" "$(ls "$ref"/*.ko | head -1)" "$d" >"$d/results" 2>"$d/runner.err" || true
		record_qemu "$d"
		# A scenario that did not run (no emulator) is not done.
		! grep -q '^PASS ' "$d/results" || touch "$d/done"
		grep '^FAIL ' "$d/results" | cut -c1-160 >&2 || true
	done
	mutants=()
fi

# Run the mutants: build each one, boot its scenario.
for f in "${mutants[@]}"; do
	name=$(basename "$(dirname "$f")")/$(basename "$f" ".$ext")
	dir=$work/$name
	runner=$(field "$f" runner)
	declare -F "runner_$runner" >/dev/null || die "$f: no runner '$runner'"
	if [ -n "$plants" ]; then
		for k in report match; do
			[ -n "$(field "$f" $k)" ] || die "$f: no $k: line"
		done
	else
		[ -n "$(field "$f" checks)" ] || die "$f: no checks: line"
	fi
	# (--build-only keeps the last run's results: the table reads them.)
	rm -f "$dir/error"
	[ -n "$build_only" ] || rm -f "$dir/results"
	# A plant's log is its run's only result (t79): none left from before.
	[ -z "$plants" ] || rm -rf "$dir"
	step "$ext $name: building for $kver"
	if ! out=$(build_mutant "$f" "$dir" 2>&1 && echo "$MUTANT_KO"); then
		mkdir -p "$dir"
		tail -1 <<<"$out" >"$dir/error"
		echo "bqlkit: $name: $(cat "$dir/error")" >&2
		continue
	fi
	ko=$(tail -1 <<<"$out")
	if [ -n "$build_only" ]; then
		echo "bqlkit: $name: built $ko ($dir/mutant.diff)" >&2
		continue
	fi
	step "$ext $name: running ${test_of[$runner]}'s $runner scenario"
	MANA_QEMU=''
	PHASES=$(field "$f" phases) APPEND=$(field "$f" append) "runner_$runner" "$ko" "$dir" >"$dir/results" 2>"$dir/runner.err" || true
	record_qemu "$dir"
	if [ -n "$plants" ]; then
		# Its scenario's checks may fail: t79 judges the plant by its log.
		echo "bqlkit: $name: ran ($(grep -c '^FAIL ' "$dir/results" || true) of its scenario's checks failed; log: $dir/vm.log)" >&2
		continue
	fi
	verdict "$f" "$dir"
	echo "bqlkit: $name: $VERDICT" >&2
done
[ -z "$build_only$plants" ] || exit 0

# The table: every mutant of this series that has a result for kver,
# from this run or an earlier one (each row says when).
rows=() errors=0 survivors=0 killed=0 notrun=0 total=0 kept=0
for f in "${all[@]}"; do
	name=$(basename "$(dirname "$f")")/$(basename "$f" ".$ext")
	dir=$work/$name
	[[ " $(field "$f" bases | tr '\n' ' ') " == *" $series "* ]] || continue
	if [ -f "$dir/error" ]; then
		rows+=("| $name | $(field "$f" property) | $(field "$f" checks | sed "s/{series}/$series/g") | ERROR: $(cat "$dir/error") | | error | |")
		errors=$((errors + 1))
		continue
	fi
	if [ ! -f "$dir/results" ]; then
		# Run elsewhere: its row as FILE holds it, verdict and date.
		prev=$(grep -sF "| $name |" "$outf" | head -1) || true
		if [ -z "$prev" ]; then
			rows+=("| $name | $(field "$f" property) | $(field "$f" checks | sed "s/{series}/$series/g") | | | not run | |")
			notrun=$((notrun + 1))
			continue
		fi
		rows+=("$prev")
		kept=$((kept + 1))
		VERDICT=$(awk -F'|' '{ gsub(/^ +| +$/, "", $7); print $7 }' <<<"$prev")
	else
		verdict "$f" "$dir"
		rows+=("$ROW")
		total=$((total + $(stat -c %Y "$dir/results") - $(stat -c %Y "$dir/mutant.diff")))
	fi
	case $VERDICT in
	SURVIVED) survivors=$((survivors + 1)) ;;
	error) errors=$((errors + 1)) ;;
	'not run') notrun=$((notrun + 1)) ;;
	*) killed=$((killed + 1)) ;;
	esac
done
{
	echo "# Mutants: do the VM checks fail when their property is broken?"
	echo
	echo "Generated by \`make mutants\` (lab/mutants.sh) for $kver (series $series)."
	echo "VM logs in build/mutants/$kver/<mutant>/.  Each mutant is the kit's module with one"
	echo "property broken (lab/mutants/<driver>/<name>.mutant: the property, the edit, the checks"
	echo "that claim it); the checks that claim the property must FAIL.  A mutant whose checks"
	echo "all pass SURVIVED: a check that does not fail when its property is broken.  A row"
	echo "says when its mutant last ran (make mutants MUTANTS=<name> runs one again); time: from"
	echo "the mutant's build to its last result.  Total: $((total / 60)) min $((total % 60)) s."
	if [ "$kept" -gt 0 ]; then
		echo "$kept rows kept as this file held them: their mutants have no results in"
		echo "build/mutants/$kver/ here (run on another machine, on the date in the row; not in the total)."
	fi
	if grep -qsx debian "$work"/*/*/qemu; then
		echo "Rows on QEMU debian (VM_QEMU=debian: the kit's QEMU was not built) fail"
		echo "emulator_cx16_flags, the emulator bug the kit's QEMU fixes: not the mutant's doing."
	fi
	if [ "$(printf '%s\n' "${rows[@]}" | grep -o 'mana: [0-9a-f]*' | sort -u | wc -l)" -gt 1 ]; then
		echo "mana rows name the MANA model they ran on by its QEMU cache key (the model's"
		echo "sources are in the key): rows on different keys ran on different models."
	fi
	echo
	echo "| mutant | property | test, scenario: checks that must fail | checks that failed | on the kit | verdict | time |"
	echo "|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "$killed killed, $survivors survived, $errors errors, $notrun not run."
} >"$outf"
echo "bqlkit: wrote $outf: $killed killed, $survivors survived, $errors errors, $notrun not run" >&2
[ "$survivors" -eq 0 ] && [ "$errors" -eq 0 ] && [ "$notrun" -eq 0 ]
