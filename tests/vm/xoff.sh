#!/bin/bash
# xoff.sh --kver KVER --veth FILE [--log FILE] [--timeout SECS] [--quiet]
# Build an initramfs for the receiver-down scenario (guest/xoff.sh, with
# the xdp_bounce BPF object built here with clang), boot it and check the
# results.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

usage() { die "usage: xoff.sh --kver KVER --veth FILE [--log FILE] [--timeout SECS] [--quiet]"; }
kver='' veth='' logf='' run_args=(--timeout 300)
while [[ $# -gt 0 ]]; do
	case $1 in
	--kver) need_arg "$1" "${2:-}"; kver=$2; shift 2 ;;
	--veth) need_arg "$1" "${2:-}"; veth=$(realpath "$2"); shift 2 ;;
	--log) need_arg "$1" "${2:-}"; logf=$2; shift 2 ;;
	--timeout) need_arg "$1" "${2:-}"; run_args+=(--timeout "$2"); shift 2 ;;
	--quiet) run_args+=(--quiet); shift ;;
	*) usage ;;
	esac
done
[[ -n $kver && -n $veth ]] || usage
logf=${logf:-$BQLKIT_VM_BUILD/logs/xoff-$kver-$(date +%Y%m%d-%H%M%S).log}
mkdir -p "$(dirname "$logf")"

xdp=$(bpf_object xdp_bounce)
initrd=$(mktemp "$BQLKIT_VM_BUILD/initrd-xoff-XXXXXX.cpio.gz")
trap 'rm -f "$initrd"' EXIT
"$VM_DIR/mkinitramfs.sh" --kver "$kver" --scenario xoff --out "$initrd" \
	--veth "$veth" --file "$xdp:/bqlkit/xdp_bounce.o"
vm_rc=0
"$VM_DIR/run-vm.sh" --kver "$kver" --initrd "$initrd" --log "$logf" "${run_args[@]}" || vm_rc=$?
"$VM_DIR/parse-results.sh" "$logf" && [[ $vm_rc -eq 0 ]]
