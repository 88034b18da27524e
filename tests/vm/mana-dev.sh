#!/bin/bash
# mana-dev.sh --kver KVER [--module FILE] [--suite SUITE] [--scenario NAME]
#             [--log FILE] [--append STR] [--timeout SECS] [--smp N]
#             [--vf-props STR] [--qemu DIR] [--qmp SOCKET] [--icount SPEC]
#             [--plugin NAME,ARGS] [--file SRC:DST]... [--quiet]
# Boot Debian kernel KVER in the kit's QEMU (lab/build-qemu.sh) with
# two emulated MANA VFs on one hub, i.e. a wire between them, and run a
# mana scenario (guest/NAME.sh, default mana-dev): with --module the kit's
# mana.ko, else the kernel's own; the kernel's mana_ib.ko is loaded too
# where it has one.  --suite: where KVER's image comes from (trixie-security,
# sid, ...; default this system's APT).  --vf-props: more properties for
# both VFs (e.g. "queues=4,rate-mbps=1000").  --icount: run-vm.sh's (guest
# time from the instruction count; with sleep=off an idle guest's timers
# fire at once, so its waits cost no host time).  --plugin: run-vm.sh's (a
# TCG plugin of the kit's QEMU: make bench DRIVER=mana's insncount).  --file:
# another file into the guest (mkinitramfs.sh's).  Exit 0
# iff no check failed.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

usage() { die "usage: mana-dev.sh --kver KVER [--module FILE] [--suite SUITE] [--scenario NAME] [--log FILE] [--append STR] [--timeout SECS] [--smp N] [--vf-props STR] [--qemu DIR] [--qmp SOCKET] [--icount SPEC] [--plugin NAME,ARGS] [--file SRC:DST]... [--quiet]"; }
kver='' module='' suite='' scenario=mana-dev logf='' append='' props='' qemu='' run_args=() more=()
while [[ $# -gt 0 ]]; do
	case $1 in
	--kver) need_arg "$1" "${2:-}"; kver=$2; shift 2 ;;
	--module) need_arg "$1" "${2:-}"; module=$(realpath "$2"); shift 2 ;;
	--suite) need_arg "$1" "${2:-}"; suite=$2; shift 2 ;;
	--scenario) need_arg "$1" "${2:-}"; scenario=$2; shift 2 ;;
	--log) need_arg "$1" "${2:-}"; logf=$2; shift 2 ;;
	--append) append=${2:-}; shift 2 ;;
	--timeout) need_arg "$1" "${2:-}"; run_args+=(--timeout "$2"); shift 2 ;;
	--smp) need_arg "$1" "${2:-}"; run_args+=(--smp "$2"); shift 2 ;;
	--vf-props) props=${2:+,$2}; shift 2 ;;
	--qemu) need_arg "$1" "${2:-}"; qemu=$2; shift 2 ;;
	--qmp) need_arg "$1" "${2:-}"; run_args+=(--qmp "$2"); shift 2 ;;
	--icount) need_arg "$1" "${2:-}"; run_args+=(--icount "$2"); shift 2 ;;
	--plugin) need_arg "$1" "${2:-}"; run_args+=(--plugin "$2"); shift 2 ;;
	--file) need_arg "$1" "${2:-}"; more+=(--file "$2"); shift 2 ;;
	--quiet) run_args+=(--quiet); shift ;;
	*) usage ;;
	esac
done
[[ -n $kver ]] || usage
[[ -z $module || -f $module ]] || die "--module: no such file: $module"
logf=${logf:-$BQLKIT_VM_BUILD/logs/$scenario-$kver-$(date +%Y%m%d-%H%M%S).log}

if [[ -z $qemu ]]; then
	qemu=$("$VM_DIR/../../lab/build-qemu.sh" | tail -n1) || die "cannot build the kit's QEMU (lab/build-qemu.sh)"
fi
kimg=$("$VM_DIR/get-kernel.sh" ${suite:+--suite "$suite"} "$kver")

# XDP programs (BPF bytecode, the same for every kernel).
files=(--file "$VM_DIR/guest/mana-lib.sh:/bqlkit/mana-lib.sh" "${more[@]}")
for x in xdp_pass xdp_tx; do
	obj=$BQLKIT_VM_BUILD/bin/$x.o
	mkdir -p "$(dirname "$obj")"
	if [[ ! -s $obj || $VM_DIR/$x.c -nt $obj ]]; then
		command -v clang >/dev/null || die "clang not found (apt-get install clang llvm libbpf-dev)"
		clang -O2 -g -target bpf -I"/usr/include/$(gcc -dumpmachine)" \
			-c "$VM_DIR/$x.c" -o "$obj.$$" || die "cannot build $x.o (libbpf-dev?)"
		mv "$obj.$$" "$obj"
	fi
	files+=(--file "$obj:/bqlkit/$x.o")
done

mods=()
if [[ -n $module ]]; then
	[[ $(modinfo -F name "$module") == mana ]] || die "--module $module is not mana"
	mods+=(--module "$module")
else
	mods+=(--intree mana)
fi
[[ -z $(find "$kimg/lib/modules/$kver/kernel" -name 'mana_ib.ko*' -print -quit) ]] || mods+=(--intree mana_ib)

mkdir -p "$BQLKIT_VM_BUILD"
initrd=$(mktemp "$BQLKIT_VM_BUILD/initrd-$scenario-XXXXXX.cpio.gz")
trap 'rm -f "$initrd"' EXIT
"$VM_DIR/mkinitramfs.sh" --kver "$kver" --scenario "$scenario" --out "$initrd" \
	"${mods[@]}" "${files[@]}"
# Two VFs, MACs as guest/mana-lib.sh expects, on hub 0: a wire.
vfs="-netdev hubport,id=manaw0,hubid=0 -device mana-vf,netdev=manaw0,mac=52:54:00:4d:41:01,id=manaA$props"
vfs+=" -netdev hubport,id=manaw1,hubid=0 -device mana-vf,netdev=manaw1,mac=52:54:00:4d:41:02,id=manaB$props"
# The model's complaints about the driver (mana_guest_error(): "mana: WHAT
# (0xA, 0xB)") go to QEMU's stderr, i.e. into the log, so that a failed
# model_guest_errors_zero can say which (tests/lib.sh vm_mana_dev).
vfs+=" -d guest_errors"
vm_rc=0
"$VM_DIR/run-vm.sh" --kver "$kver" --initrd "$initrd" --log "$logf" --qemu "$qemu" \
	--qemu-args "$vfs" --append "$append" --timeout 900 "${run_args[@]}" || vm_rc=$?
"$VM_DIR/parse-results.sh" "$logf" && [[ $vm_rc -eq 0 ]]
