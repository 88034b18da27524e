#!/bin/bash
# smoke.sh --kver KVER [--veth FILE] [--log FILE] [--slow N] [--timeout SECS]
#          [--arch ARCH] [--scenario NAME] [--xdp PROG]... [--file SRC:DST]...
#          [--append STR] [--icount SPEC] [--quiet]
# Build an initramfs for the smoke scenario (or guest/NAME.sh, e.g.
# textpoke), boot it and check the results.  Without --veth the kernel's
# stock veth is tested.  --xdp PROG: the XDP program tests/vm/PROG.c, built
# here with clang, as /bqlkit/PROG.o (guest/lib.sh xdp_attach).  --file:
# SRC as DST in the guest.  --append: more kernel command line.  --icount:
# run-vm.sh's (guest time = instructions).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

usage() { die "usage: smoke.sh --kver KVER [--veth FILE] [--log FILE] [--slow N] [--timeout SECS] [--arch ARCH] [--scenario NAME] [--xdp PROG]... [--file SRC:DST]... [--append STR] [--icount SPEC] [--quiet]"; }
kver='' veth_args=() logf='' slow=300 run_args=() scenario=smoke file_args=() append=
while [[ $# -gt 0 ]]; do
	case $1 in
	--kver) need_arg "$1" "${2:-}"; kver=$2; shift 2 ;;
	--veth) need_arg "$1" "${2:-}"; veth_args=(--veth "$(realpath "$2")"); shift 2 ;;
	--log) need_arg "$1" "${2:-}"; logf=$2; shift 2 ;;
	--slow) need_arg "$1" "${2:-}"; slow=$2; shift 2 ;;
	--timeout) need_arg "$1" "${2:-}"; run_args+=(--timeout "$2"); shift 2 ;;
	--icount) need_arg "$1" "${2:-}"; run_args+=(--icount "$2"); shift 2 ;;
	--arch) need_arg "$1" "${2:-}"; VM_ARCH=$2; shift 2 ;;
	--scenario) need_arg "$1" "${2:-}"; scenario=$2; shift 2 ;;
	--xdp) need_arg "$1" "${2:-}"; file_args+=(--file "$(bpf_object "$2"):/bqlkit/$2.o"); shift 2 ;;
	--file) need_arg "$1" "${2:-}"; file_args+=(--file "$2"); shift 2 ;;
	--append) need_arg "$1" "${2:-}"; append=" $2"; shift 2 ;;
	--quiet) run_args+=(--quiet); shift ;;
	*) usage ;;
	esac
done
[[ -n $kver ]] || usage
logf=${logf:-$BQLKIT_VM_BUILD/logs/$scenario-$kver-$(date +%Y%m%d-%H%M%S).log}

"$VM_DIR/get-kernel.sh" --arch "$VM_ARCH" "$kver" >/dev/null
mkdir -p "$BQLKIT_VM_BUILD"
initrd=$(mktemp "$BQLKIT_VM_BUILD/initrd-$scenario-XXXXXX.cpio.gz")
trap 'rm -f "$initrd"' EXIT
"$VM_DIR/mkinitramfs.sh" --kver "$kver" --scenario "$scenario" --out "$initrd" "${veth_args[@]}" "${file_args[@]}" --arch "$VM_ARCH"
vm_rc=0
"$VM_DIR/run-vm.sh" --kver "$kver" --arch "$VM_ARCH" --initrd "$initrd" --log "$logf" \
	--append "bqlkit.slow=$slow$append" "${run_args[@]}" || vm_rc=$?
"$VM_DIR/parse-results.sh" "$logf" && [[ $vm_rc -eq 0 ]]
