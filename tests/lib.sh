# shellcheck shell=bash
# Helpers for the test files.  Each test file is run by tests/run.sh as its
# own bash process; it reports with pass/fail/skip, one line per assertion:
#   PASS <name>
#   FAIL <name>: <why>
#   SKIP <name>: <why>
. "$(dirname "${BASH_SOURCE[0]}")/../lab/lib.sh"
# What the suite imports is a test's (scripts/import-source.sh): it never
# ships in a DKMS source or .deb, unless it is a distro's package.
export BQLKIT_PROVENANCE=test

# The kernels the suite tests: Debian bookworm's default 6.1 and its 6.12.
TEST_KERNELS_FILE=${TEST_KERNELS_FILE:-$BQLKIT_BUILD/test-kernels}

pass() { echo "PASS $1"; result_time "$1"; }
fail() { echo "FAIL $1: $2"; result_time "$1"; }
skip() { echo "SKIP $1: $2"; result_time "$1"; }
# When each result came (epoch seconds), for tests/run.sh's NAME.times: where
# a test's time goes.
result_time() { [ -z "${BQLKIT_TEST_TIMES:-}" ] || printf '%(%s)T %s\n' -1 "$1" >>"$BQLKIT_TEST_TIMES"; }

# check NAME CMD...: PASS when CMD succeeds, else FAIL with its output's last line.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "$(printf '%s' "$out" | tail -1)"
	fi
}

# expect_error NAME PATTERN CMD...: CMD must exit non-zero and say PATTERN.
expect_error() {
	local name=$1 pat=$2 out rc=0
	shift 2
	out=$("$@" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ]; then
		fail "$name" "succeeded, expected an error matching '$pat'"
	elif ! grep -q -- "$pat" <<<"$out"; then
		fail "$name" "exit $rc but no '$pat' in: $(tail -1 <<<"$out")"
	else
		pass "$name"
	fi
}

# bad NAME PATTERN CMD...: CMD fails, saying PATTERN on one "bqlkit: error:" line.
bad() {
	local name=$1 pat=$2 out rc=0 n
	shift 2
	out=$("$@" 2>&1) || rc=$?
	n=$(grep -c '^bqlkit: error:' <<<"$out" || true)
	if [ "$rc" -eq 0 ]; then
		fail "$name" "succeeded, expected an error matching '$pat'"
	elif ! grep '^bqlkit: error:' <<<"$out" | grep -q -- "$pat"; then
		fail "$name" "exit $rc but no error line matching '$pat' in: $(grep -m1 '^bqlkit: error:' <<<"$out" || tail -1 <<<"$out")"
	elif [ "$n" -ne 1 ]; then
		fail "$name" "$n error lines, expected one"
	else
		pass "$name"
	fi
}

# test_kernels: "KVER" lines, one per tested kernel (written by
# tests/setup.sh); BQLKIT_TEST_KERNELS="KVER ..." instead (make check-debug:
# the debug kernels).
test_kernels() {
	if [ -n "${BQLKIT_TEST_KERNELS:-}" ]; then
		# shellcheck disable=SC2086 # a word list
		printf '%s\n' $BQLKIT_TEST_KERNELS
	else
		cat "$TEST_KERNELS_FILE"
	fi
}

# has NAME PATTERN TEXT: PASS when TEXT has a line matching PATTERN (a grep
# basic regex: + ( ) | are literal, so kernel versions need no escaping).
has() {
	if grep -q -- "$2" <<<"$3"; then
		pass "$1"
	else
		fail "$1" "no '$2' in: $(tail -1 <<<"$3")"
	fi
}

# lacks NAME PATTERN TEXT: PASS when no line of TEXT matches PATTERN.
lacks() {
	if grep -q -- "$2" <<<"$3"; then
		fail "$1" "unexpected: $(grep -m1 -- "$2" <<<"$3")"
	else
		pass "$1"
	fi
}

# import_edited BASE BASES FILE SED: a vendor tree in one edit: a copy of
# the imported base BASE with FILE (relative) edited by the sed expression
# SED, imported into BASES (scripts/import-source.sh: a valid manifest).
import_edited() {
	local tree
	tree=$(mktemp -d)
	(cd "$1" && tar -c --exclude=MANIFEST .) | tar -x -C "$tree"
	sed -i "$4" "$tree/$3"
	BQLKIT_BASES=$2 "$BQLKIT_TOP/scripts/import-source.sh" "$tree" >/dev/null 2>&1
	rm -rf "$tree"
}

# vm_crash LOG: one line that says how a VM run that did not reach its end
# died, from its console log: the first BUG/Oops/WARNING line (the first
# lines tests/vm/crash-reports.ere names, as find-reports.py), the RIP, the
# innermost functions of the call trace and the panic line ("" when the log
# has none of them: a hang or timeout).  CI keeps only the suite's output,
# not the logs, so a crash must be readable from the FAIL line alone.
vm_crash() {
	[ -r "$1" ] || return 0
	tr -d '\r' <"$1" | sed 's/^\[ *[0-9.]*\] //' | awk -v start="$(cat "$BQLKIT_TOP/tests/vm/crash-reports.ere")" '
		!first && $0 ~ start { first = $0 }
		!rip && /^RIP: / { rip = $0 }
		/^Call Trace:/ { intrace = 1; next }
		intrace && /^ *<\/?(TASK|IRQ|NMI|EOI)>/ { next }
		intrace && /^ *\?? *[a-z_0-9.]+\+0x/ {
			if ($1 != "?" && nt < 6) { fn = $1; sub(/\+.*/, "", fn); trace = trace (nt++ ? " < " : "") fn }
			next
		}
		{ intrace = 0 }
		!panic && /Kernel panic - not syncing/ { panic = $0 }
		END {
			out = first
			if (rip) out = out (out ? "; " : "") rip
			if (trace) out = out (out ? "; " : "") "trace: " trace
			if (panic) out = out (out ? "; " : "") panic
			print out
		}'
}

# vm_crash_note LOG: " [crash: ...]" from vm_crash, or nothing.
# Without a crash report, where the guest was: its last BQLKIT line (the
# phase) and the console's last line (a hang's last words).
vm_crash_note() {
	local c
	c=$(vm_crash "$1")
	if [ -n "$c" ]; then
		echo " [crash: $c]"
	elif [ -s "$1" ]; then
		tr -d '\r' <"$1" | awk '/^BQLKIT/ { g = $0 } /./ { l = $0 }
			END { printf " [no crash report; last guest line: %s; console'"'"'s last line: %s]\n", substr(g, 1, 200), substr(l, 1, 200) }'
	fi
}

# vm_results PREFIX LOG [CHECK NOTE]: one PASS/FAIL/SKIP line per guest
# check in a VM console log ("BQLKIT-RESULT <name> PASS|FAIL|SKIP
# <detail>"), named PREFIX-<name>; a failure points at the log, and one of
# CHECK's also says NOTE (what the host saw that the guest could not).
vm_results() {
	local prefix=$1 log=$2 note_check=${3:-} note=${4:-} name res detail
	grep -o 'BQLKIT-RESULT .*' "$log" | while read -r _ name res detail; do
		[ "$name" != "$note_check" ] || [ -z "$note" ] || detail="$detail; $note"
		case $res in
		PASS) pass "$prefix-$name" ;;
		SKIP) skip "$prefix-$name" "$detail" ;;
		*) fail "$prefix-$name" "$detail (log: $log)" ;;
		esac
	done
}

# test_trees: "LABEL KDIR" lines, one per kernel tree prepared by
# scripts/prepare-tree.sh (5.15, 6.6: no Debian package): BQLKIT_TREES
# ("DIR ..."), else $BQLKIT_CACHE/trees/linux-*.  LABEL (the directory name
# without "linux-", e.g. 5.15.167-arm64) names the build directory.  CI has
# none: the tests that use them skip.
test_trees() {
	local t
	for t in ${BQLKIT_TREES:-"$BQLKIT_CACHE"/trees/linux-*}; do
		[ -f "$t/.bqlkit-prepared" ] || continue
		t=$(readlink -f "$t")
		echo "$(basename "$t" | sed 's/^linux-//') $t"
	done
}

# cross_for KDIR: the make variables that build for a prepared tree's
# architecture (empty for the host's).
cross_for() {
	if grep -q '^CONFIG_ARM64=y' "$1/include/config/auto.conf"; then
		echo ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
	elif grep -q '^CONFIG_ARM=y' "$1/include/config/auto.conf"; then
		echo ARCH=arm CROSS_COMPILE=arm-linux-gnueabihf-
	fi
}

# The emulated MANA VF's scenario (tests/vm/guest/mana-dev.sh): the kit's
# mana.ko through every phase, the kernel's own through those that show it
# has no BQL (t82 on the test kernels, t81 on the chroot-built ones).
# shellcheck disable=SC2034 # read by the tests that source this file
MANA_DEV_KIT_PHASES=probe,ping,bulk,bql,doorbells,rxstall,xdp,flap,channels,mtu,reload,txbatch,mana_ib
MANA_DEV_STOCK_PHASES=probe,ping,bql,doorbells
# The kit's tx_doorbell_batching on (bqlkit.batching=1), the port
# operations under a GSO flood that batches: a batch cut short by the port
# going down must leave no WQE without a doorbell (each phase's _quick,
# _batched and _inflight_zero checks).
# shellcheck disable=SC2034 # read by the tests that source this file
MANA_DEV_BATCHED_PHASES=probe,ping,flap,channels,mtu,reload

# mana_dev_qemu: sets MANA_QEMU to the kit's QEMU with the MANA model
# (lab/build-qemu.sh, cached in $BQLKIT_CACHE/qemu; the first build
# takes ~8 min on 2 idle cores).  Otherwise one SKIP line, returns 1.
mana_dev_qemu() {
	mkdir -p "$BQLKIT_BUILD/test-logs"
	if ! MANA_QEMU=$("$BQLKIT_TOP/lab/build-qemu.sh" 2>"$BQLKIT_BUILD/test-logs/build-qemu.err" | tail -n1) ||
		[ -z "$MANA_QEMU" ]; then
		skip mana-dev "the kit's QEMU did not build: $(tail -1 "$BQLKIT_BUILD/test-logs/build-qemu.err")"
		return 1
	fi
}

# vm_mana_dev NAME KVER PHASES [ARGS...]: one VM with two emulated MANA VFs
# on a wire (tests/vm/mana-dev.sh ARGS: --module KO, --suite SUITE, ...) in
# $MANA_QEMU; one result line per guest check, named NAME-<check>.
# MANA_DEV_APPEND: more guest knobs (e.g. bqlkit.expect_rx_db=per_packet).
vm_mana_dev() {
	local name=$1 k=$2 phases=$3 log tmo=() complaints
	shift 3
	log=$BQLKIT_BUILD/test-logs/$name.log
	mkdir -p "$(dirname "$log")"
	# The stock phases take ~30 s: a hang there need not cost CI the 900 s
	# mana-dev.sh gives the kit's run.
	[ "$phases" != "$MANA_DEV_STOCK_PHASES" ] || tmo=(--timeout 300)
	"$BQLKIT_TOP/tests/vm/mana-dev.sh" --kver "$k" --qemu "$MANA_QEMU" --log "$log" --quiet \
		--append "bqlkit.phases=$phases bqlkit.secs=5${MANA_DEV_APPEND:+ $MANA_DEV_APPEND}" "${tmo[@]}" "$@" >"$log.out" 2>&1 || true
	# (A crash on kernel text being patched, "Oops: int3" outside mana,
	# is booted again once by tests/vm/run-vm.sh.)
	if ! grep -q '^BQLKIT-END' "$log" 2>/dev/null; then
		fail "$name-run" "the VM run did not complete: $(grep -a '^run-vm\.sh: \(error: \)\?\(VM exited\|VM timed out\|VM stopped\|QEMU exited\)' "$log.out" |
			paste -sd';' | grep . || tail -1 "$log.out") (log: $log)$(vm_crash_note "$log")"
		return 0
	fi
	# The model's complaints (mana-dev.sh runs QEMU with -d guest_errors),
	# each kind once with its count and first arguments.
	complaints=$({ grep -ao 'mana: [^()]* (0x[0-9a-f]*, 0x[0-9a-f]*)' "$log" || true; } |
		awk '{ w = $0; sub(/ \(0x.*/, "", w); if (!(w in n)) { o[++k] = w; a[w] = $0 } n[w]++ }
			END { for (i = 1; i <= k && i <= 4; i++) printf "%s%dx \"%s\"", (i > 1 ? ", " : ""), n[o[i]], a[o[i]] }')
	vm_results "$name" "$log" model_guest_errors_zero "${complaints:+the model said: $complaints}"
	grep -ao 'BQLKIT \(bql\|doorbells\|txbatch\|xdp\|lost\) .*' "$log" | sed "s/^/$name: /" >&2 || true
}

# vm_mana_dev_lost NAME KVER KO [ARGS...]: the lost-completions phase
# (probe,ping,lost) with the kit's mana.ko KO.  The queue stopped by BQL
# recovers only through a port reset (7.x: the TX watchdog's), whose drain
# waits 120 s of guest time for the lost completions and then calls
# pcie_flr(), a no-op on the emulated VF (docs/mana.md): under -icount with
# sleep=off that idle wait costs no host time (12-29 s a VM, nothing else
# running, instead of ~135 s).  One vCPU (chosen when 6.1 did not boot SMP
# under -icount, before lab/qemu/patches/0003; one is all the phase needs).
vm_mana_dev_lost() {
	local name=$1 k=$2 ko=$3
	shift 3
	vm_mana_dev "$name" "$k" probe,ping,lost --module "$ko" --smp 1 \
		--icount shift=2,sleep=off,align=off --timeout 300 "$@"
}

# vm_mana_dev_eqsync NAME KVER KO: the EQ teardown race
# (changes/mana/0005, upstream 02fed6d92bad): with the fault-injection
# build KO, each EQ's interrupt handler holds its doorbell 50 ms after the
# test event that wakes mana_gd_destroy_eq(), as a preempted vCPU would;
# rmmod under load then destroys every EQ of both ports.  A teardown that
# does not wait for the handler disables the EQ first, and the device
# counts the late doorbell (model_guest_errors_zero).
vm_mana_dev_eqsync() {
	local name=$1 k=$2 ko=$3
	shift 3
	MANA_DEV_APPEND="bqlkit.eq_hold_ms=50" vm_mana_dev "$name" "$k" probe,ping,reload --module "$ko" "$@"
}

# vm_mana_dev_batchcut NAME KVER KO: a batch cut short by the port going
# down (changes/mana/0004: mana_detach() rings what the batch left before
# the drain).  With the fault-injection build KO, each WQE left without a
# doorbell holds its batch 1 ms (changes/mana/0007, as a preempted vCPU
# would), so the channel changes under the GSO flood take ports down in
# the middle of batches.  A teardown that does not ring those WQEs waits
# in the drain: 120 s (channels_each_quick), or for good on 5.15.
vm_mana_dev_batchcut() {
	local name=$1 k=$2 ko=$3
	shift 3
	MANA_DEV_APPEND="bqlkit.batching=1 bqlkit.xmit_hold_us=1000" vm_mana_dev "$name" "$k" probe,ping,channels \
		--module "$ko" --timeout 400 "$@"
}

# vm_mana NAME KVER KO [SUITE]: boot Debian kernel KVER (from SUITE, default
# this system's APT) under QEMU, insert the kit's mana.ko KO and then the
# kernel's own mana_ib.ko where it has one (tests/vm/guest/mana.sh); one
# result line per guest check, named vm-NAME-<check>.  Sets VM_MANA_INTREE
# (the --intree arguments used).  Returns 1 (after a FAIL line) when the VM
# did not run to its end.
vm_mana() {
	local name=$1 k=$2 ko=$3 suite=${4:-} kimg log initrd
	kimg=$("$BQLKIT_TOP/tests/vm/get-kernel.sh" ${suite:+--suite "$suite"} "$k" 2>/dev/null) ||
		{ fail "vm-$name" "cannot fetch linux-image-$k${suite:+ from $suite}"; return 1; }
	VM_MANA_INTREE=()
	[ -z "$(find "$kimg/lib/modules/$k/kernel" -name 'mana_ib.ko*' -print -quit)" ] || VM_MANA_INTREE=(--intree mana_ib)
	log=$BQLKIT_BUILD/test-logs/vm-mana-$k.log
	initrd=$(dirname "$log")/vm-mana-$k.cpio.gz
	mkdir -p "$(dirname "$log")"
	if ! "$BQLKIT_TOP/tests/vm/mkinitramfs.sh" --kver "$k" --scenario mana --out "$initrd" \
		--module "$ko" "${VM_MANA_INTREE[@]}" 2>"$log.err"; then
		fail "vm-$name-initramfs" "$(tail -1 "$log.err")"
		return 1
	fi
	"$BQLKIT_TOP/tests/vm/run-vm.sh" --kver "$k" --initrd "$initrd" --log "$log" --timeout 180 --quiet 2>>"$log.err" || true
	rm -f "$initrd"
	if ! grep -q '^BQLKIT-END' "$log" 2>/dev/null; then
		fail "vm-$name-run" "the VM run did not complete (log: $log)$(vm_crash_note "$log")"
		return 1
	fi
	vm_results "vm-$name" "$log"
}

# vm_smoke NAME KVER KO LOG [ARGS...]: t60's smoke scenario (tests/vm/smoke.sh
# ARGS: --scenario textpoke, ...) on kernel KVER with the kit's veth KO
# (empty: the kernel's own); one result line per guest check, named
# NAME-<check>; the loaded RTT and BQL lines go to stderr.
vm_smoke() {
	local name=$1 k=$2 ko=$3 log=$4 rc=0
	shift 4
	mkdir -p "$(dirname "$log")"
	"$BQLKIT_TOP/tests/vm/smoke.sh" --kver "$k" ${ko:+--veth "$ko"} --log "$log" --quiet "$@" >/dev/null 2>"$log.err" || rc=$?
	if ! grep -q 'BQLKIT-END' "$log" 2>/dev/null; then
		fail "$name-run" "the VM run did not complete: $(tail -1 "$log.err" 2>/dev/null) (log: $log)$(vm_crash_note "$log")"
		return 0
	fi
	vm_results "$name" "$log"
	grep -o 'BQLKIT \(rtt\|bql label=load\).*' "$log" | sed "s/^/$name: /" >&2 || true
	[ "$rc" -eq 0 ] || [ "$(grep -c 'BQLKIT-RESULT .* FAIL' "$log")" -gt 0 ] ||
		fail "$name-harness" "smoke.sh exit $rc with no failed check (log: $log)"
}

# vm_xoff NAME KVER KO LOG: t76's receiver-down scenario (tests/vm/xoff.sh)
# on kernel KVER with the kit's veth KO; one result line per guest check,
# named NAME-<check>; the xoff and dmesg lines go to stderr.
vm_xoff() {
	local name=$1 k=$2 ko=$3 log=$4 rc=0
	mkdir -p "$(dirname "$log")"
	"$BQLKIT_TOP/tests/vm/xoff.sh" --kver "$k" --veth "$ko" --log "$log" --quiet \
		>/dev/null 2>"$log.err" || rc=$?
	if ! grep -q 'BQLKIT-END' "$log" 2>/dev/null; then
		fail "$name-xoff-run" "the VM run did not complete (rc=$rc): $(tail -1 "$log.err") (log: $log)$(vm_crash_note "$log")"
		return 0
	fi
	vm_results "$name" "$log"
	grep -o 'BQLKIT \(xoff\|dmesg\) .*' "$log" | sed "s/^/$name: /" >&2 || true
}

# chroot_cell NAME ID DRIVER DIR: build DRIVER for the row ID of
# lab/matrix.conf in that row's cached chroot (lab/matrix.sh, its
# outputs under DIR); PASS or FAIL NAME.  On success sets CELL_KVER,
# CELL_CHROOT, CELL_KO (the module, in the chroot's tree) and CELL_LOG (the
# cell's build log); returns 1 otherwise.
chroot_cell() {
	local name=$1 id=$2 drv=$3 dir=$4 bases rc=0 cell status detail env
	bases=$(dirname "$(base_dir x)")
	mkdir -p "$dir"
	MATRIX_RESULTS=$dir BQLKIT_BUILD=$dir/build BQLKIT_BASES=$bases \
		"$BQLKIT_TOP/lab/matrix.sh" "^$id\$" >"$dir/out" 2>&1 || rc=$?
	cell=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"][0]; c=r["cells"][sys.argv[2]]
print(r["kernel"], c["status"], c["detail"])' "$dir/matrix.json" "$drv" 2>/dev/null) || {
		fail "$name" "the matrix row did not run (exit $rc): $(tail -1 "$dir/out")"
		return 1
	}
	read -r CELL_KVER status detail <<<"$cell"
	if [ "$status" != ok ]; then
		fail "$name" "$CELL_KVER: $status $detail"
		return 1
	fi
	pass "$name"
	env=$(awk -v id="$id" '$1 == id { print $5 }' "$BQLKIT_TOP/lab/matrix.conf")
	CELL_CHROOT=$BQLKIT_CACHE/chroots/${env#chroot:}-amd64
	# shellcheck disable=SC2034 # for the caller, as the comment above says
	CELL_KO=$CELL_CHROOT/bqlkit/out/$id/$CELL_KVER/$drv.ko
	# shellcheck disable=SC2034 # for the caller, as the comment above says
	CELL_LOG=$dir/build/matrix/cells/$id.$drv.log
}

# debug_kernels: "KVER FLAVOUR SERIES" lines, one per debug kernel under
# test (lab/build-debug-kernels.sh marks them .bqlkit-debug, holding the
# flavour: kasan, kcsan): make check-debug's kernels, none in make check.
debug_kernels() {
	local k
	for k in $(test_kernels); do
		[ -f "$BQLKIT_CACHE/kernels/$k/.bqlkit-debug" ] || continue
		echo "$k $(cat "$BQLKIT_CACHE/kernels/$k/.bqlkit-debug") $(series_of "$(kernel_version "$(kdir_for "$k")")")"
	done
}

# debug_plants FLAVOUR SERIES: the plants (lab/plants/<driver>/<name>.plant,
# make check-debug's positive controls) that a FLAVOUR debug kernel of
# SERIES must catch, one file a line (t78 runs them, t79 checks them).
debug_plants() {
	local f
	find "$BQLKIT_TOP/lab/plants" -name '*.plant' | sort | while read -r f; do
		[ "$(plant_field "$f" flavour)" = "$1" ] || continue
		[[ " $(plant_field "$f" bases | tr '\n' ' ') " == *" $2 "* ]] || continue
		echo "$f"
	done
}

# plant_field FILE KEY: the values of a plant's (or mutant's) KEY lines.
plant_field() { sed -n "s/^$2:[[:space:]]*//p" "$1"; }
