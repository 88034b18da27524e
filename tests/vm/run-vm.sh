#!/bin/bash
# run-vm.sh --kver KVER --initrd FILE --log FILE [--append "cmdline"]
#           [--timeout SECS] [--smp N] [--mem MB] [--arch ARCH] [--quiet]
#           [--qemu DIR] [--qemu-args "ARGS"] [--qmp SOCKET]
#           [--plugin NAME[,ARG=V...]] [--icount SPEC]
# Boot the Debian kernel KVER with FILE under QEMU (TCG), copy the serial
# console to stdout (unless --quiet) and to the log.  Fails if the VM timed
# out or never printed BQLKIT-END.  --arch: Debian architecture of the
# kernel (amd64 by default; arm64 runs qemu-system-aarch64 -M virt).
# --qemu: a QEMU directory (the one lab/build-qemu.sh prints: its
# qemu-system-* and firmware-args); amd64 guests boot the kit's QEMU without
# it too, arm64 guests Debian's (see "Which QEMU" below); --qemu-args: more
# QEMU arguments (e.g. -netdev/-device for an emulated MANA VF); --qmp: a
# QMP socket for the host to query and set device properties.
# --plugin NAME,ARGS: the kit QEMU's TCG plugin DIR/plugins/libNAME.so with
# ARGS (needs --qemu); --icount SPEC: -icount SPEC (virtual time from
# instructions executed, one TCG thread) instead of MTTCG.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

usage() { die "usage: run-vm.sh --kver KVER --initrd FILE --log FILE [--append STR] [--timeout SECS] [--smp N] [--mem MB] [--arch ARCH] [--quiet] [--qemu DIR] [--qemu-args ARGS] [--qmp SOCKET] [--plugin NAME,ARGS] [--icount SPEC]"; }
kver='' initrd='' logf='' append='' tmo=240 smp=2 mem=1024 quiet='' qemu_dir='' qemu_args='' qmp=''
plugin='' icount=''
while [[ $# -gt 0 ]]; do
	case $1 in
	--kver) need_arg "$1" "${2:-}"; kver=$2; shift 2 ;;
	--initrd) need_arg "$1" "${2:-}"; initrd=$2; shift 2 ;;
	--log) need_arg "$1" "${2:-}"; logf=$2; shift 2 ;;
	--append) append=${2:-}; shift 2 ;;
	--timeout) need_arg "$1" "${2:-}"; tmo=$2; shift 2 ;;
	--smp) need_arg "$1" "${2:-}"; smp=$2; shift 2 ;;
	--mem) need_arg "$1" "${2:-}"; mem=$2; shift 2 ;;
	--arch) need_arg "$1" "${2:-}"; VM_ARCH=$2; shift 2 ;;
	--quiet) quiet=1; shift ;;
	--qemu) need_arg "$1" "${2:-}"; qemu_dir=$2; shift 2 ;;
	--qemu-args) qemu_args=${2:-}; shift 2 ;;
	--qmp) need_arg "$1" "${2:-}"; qmp=$2; shift 2 ;;
	--plugin) need_arg "$1" "${2:-}"; plugin=$2; shift 2 ;;
	--icount) need_arg "$1" "${2:-}"; icount=$2; shift 2 ;;
	*) usage ;;
	esac
done
[[ -n $kver && -n $initrd && -n $logf ]] || usage
[[ -f $initrd ]] || die "no such initrd: $initrd"
# Which QEMU: --qemu DIR; else, for an amd64 guest, the kit's
# (lab/build-qemu.sh, cached in $BQLKIT_CACHE/qemu): Debian's
# qemu-system-x86_64 7.2 computes the flags after CMPXCHG8B/16B from a stale
# cc_op (lab/qemu/patches/0001-*), and SLUB's fast path is a cmpxchg16b loop:
# under load a guest takes garbage EFLAGS through an interrupt and dies.
# VM_QEMU=debian boots Debian's anyway (no build).  arm64 guests boot
# Debian's qemu-system-aarch64: the bug is in the x86 translator.
case ${VM_QEMU:-kit} in
kit | debian) ;;
*) die "VM_QEMU must be kit (the default) or debian, not '$VM_QEMU'" ;;
esac
if [[ -z $qemu_dir && $VM_ARCH == amd64 && ${VM_QEMU:-kit} == kit ]]; then
	qemu_dir=$("$VM_DIR/../../lab/build-qemu.sh" | tail -n1) && [[ -n $qemu_dir ]] ||
		die "the kit's QEMU did not build (lab/build-qemu.sh; its log is named above): fix that, or set VM_QEMU=debian to boot Debian's QEMU, whose x86 guests can crash under load"
fi
[[ -z $plugin || -n $qemu_dir ]] || die "--plugin needs --qemu (the system's QEMU has no TCG plugins)"
[[ -z $plugin || -f $qemu_dir/plugins/lib${plugin%%,*}.so ]] || die "--plugin: no $qemu_dir/plugins/lib${plugin%%,*}.so"

kdir=$("$VM_DIR/get-kernel.sh" --arch "$VM_ARCH" "$kver")
kernel=$kdir/boot/vmlinuz-$kver
cmdline="panic=-1 quiet $append"
# A debug kernel (lab/build-debug-kernels.sh) runs 2-4x slower under
# TCG (the VM's timeout and the guest's own, knob "slowdown", scale); its
# sanitizer and lockdep reports print at KERN_WARNING and below,
# which "quiet" keeps off the console the host scans (tests/t79).
if [[ -f $kdir/.bqlkit-debug ]]; then
	tmo=$((tmo * ${VM_DEBUG_SLOWDOWN:-4}))
	cmdline="$cmdline loglevel=5 bqlkit.debug=$(cat "$kdir/.bqlkit-debug") bqlkit.slowdown=${VM_DEBUG_SLOWDOWN:-4}"
fi

# qemu_cmd: the QEMU command line for this kernel's architecture.
console=ttyS0
qemu_bin() {
	if [[ -n $qemu_dir ]]; then
		echo "$qemu_dir/$1 $(cat "$qemu_dir/firmware-args")${plugin:+ -plugin $qemu_dir/plugins/lib$plugin}"
	else
		echo "$1"
	fi
}
if [[ -n $qemu_dir ]]; then
	b='qemu-system-x86_64'
	[[ $VM_ARCH != arm64 ]] || b='qemu-system-aarch64'
	[[ -x $qemu_dir/$b && -f $qemu_dir/firmware-args ]] ||
		die "--qemu $qemu_dir has no $b (lab/build-qemu.sh, QEMU_TARGETS for other targets)"
fi
accel=tcg,thread=multi
[[ -z $icount ]] || accel="tcg,thread=single -icount $icount"
qemu_cmd() {
	case $VM_ARCH in
	amd64)
		echo "$(qemu_bin qemu-system-x86_64)" -accel "$accel" -cpu qemu64,+rdrand -M q35 \
			-smp "$smp" -m "$mem" -nographic -no-reboot -nic none \
			-kernel "$kernel" -initrd "$initrd" ;;
	arm64)
		# cortex-a72: -cpu max emulates pointer authentication, slow in TCG.
		echo "$(qemu_bin qemu-system-aarch64)" -accel "$accel" -cpu cortex-a72 -M virt \
			-smp "$smp" -m "$mem" -nographic -no-reboot -nic none \
			-kernel "$kernel" -initrd "$initrd" ;;
	*) die "unsupported --arch $VM_ARCH (amd64, arm64)" ;;
	esac
}
[[ $VM_ARCH != arm64 ]] || console=ttyAMA0
qemu="$(qemu_cmd) $qemu_args${qmp:+ -qmp unix:$qmp,server=on,wait=off}"

mkdir -p "$(dirname "$logf")"
# boot: one run of the VM; sets rc.
boot() {
	set +e
	# shellcheck disable=SC2086 # $qemu is a word list built above (no spaces in paths)
	timeout -k 10 "$tmo" $qemu -append "console=$console $cmdline" </dev/null 2>&1 |
		tr -d '\r' | if [[ -n $quiet ]]; then cat >"$logf"; else tee "$logf"; fi
	rc=${PIPESTATUS[0]}
	set -e
}
start=$SECONDS
boot
# MTTCG's cross-modifying code: a vCPU may still execute an int3 that
# text_poke_bp() (static keys, alternatives, BPF dispatcher) on another vCPU
# has already replaced, and the kernel, finding no patch in progress, oopses
# ("Oops: int3", the Code: line showing the new byte at RIP).  Seen at boot
# in sched_clock_cpu before any module (stop 20's CI, t60 on 6.12; 1 of 12
# boots on a loaded host), and at XDP attach in bpf_dispatcher_* and
# netif_receive_skb_list_internal (stops 17, 19).  Only such a crash, with
# RIP outside the kit's drivers and no QMP client attached, is run again,
# once, and said so; its log is kept as LOG.int3.
if ! grep -q '^BQLKIT-END' "$logf" && grep -q 'Oops: int3' "$logf" && [[ -z $qmp ]] &&
	! grep 'RIP: ' "$logf" | grep -q 'veth\|mana\|gdma\|mvneta'; then
	mv "$logf" "$logf.int3"
	log "the VM oopsed on kernel text being patched ($(grep -m1 'RIP: ' "$logf.int3" | sed 's/^\[[^]]*\] //'); Oops: int3 outside the kit's drivers, an emulator artefact; log: $logf.int3): booting it again"
	boot
fi
secs=$((SECONDS - start))
log "VM exited rc=$rc after ${secs}s (log: $logf)"
if [[ $rc -eq 124 || $rc -eq 137 ]]; then
	die "VM timed out after ${tmo}s (no poweroff); see $logf"
fi
grep -q '^BQLKIT-END' "$logf" ||
	die "VM stopped (rc=$rc) without printing BQLKIT-END (crash/panic?); see $logf"
[[ $rc -eq 0 ]] || die "QEMU exited with rc=$rc; see $logf"
