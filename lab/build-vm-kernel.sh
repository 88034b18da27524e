#!/bin/bash
# Build a small x86_64 kernel from a kernel source tree for the QEMU VM
# tests (tests/vm), for series that have no Debian kernel image (5.15, 6.6).
#
#   build-vm-kernel.sh TREE OUTDIR
#
# TREE: a clean kernel source tree (not modified: the build is O=OUTDIR).
# The config is tinyconfig plus what tests/vm needs: serial console,
# gzip initramfs, devtmpfs, modules with MODVERSIONS, netns, fq_codel,
# ingress + u32 + gact, sysfs BQL, ACPI poweroff; everything built in but
# veth (=m: the kit replaces it).  Installs $BQLKIT_CACHE/kernels/RELEASE/
# (boot/vmlinuz-RELEASE, lib/modules/RELEASE, the layout of
# tests/vm/get-kernel.sh) marked with .bqlkit-tree-kernel (holding OUTDIR),
# and prints that directory.  OUTDIR keeps a full Module.symvers: build the
# kit against it with KDIR=OUTDIR scripts/build.sh RELEASE veth.
# Environment: VM_LOCALVERSION (default -vm), JOBS (default nproc),
# VM_CONFIG (more scripts/config arguments, for a tree's own needs, e.g.
# "-e PMO_STATS_REPORTING" for a tree whose extra code needs it),
# VM_NICE (niceness of the build, default 19),
# VM_DEBUG (a debug flavour: "kasan" = KASAN + lockdep (PROVE_LOCKING,
# DEBUG_ATOMIC_SLEEP) + DEBUG_NET, "kcsan" = KCSAN; lab/build-debug-kernels.sh).
# A debug kernel is also marked .bqlkit-debug (holding the flavour).
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

[ $# -eq 2 ] || die "usage: build-vm-kernel.sh TREE OUTDIR"
valid_dir TREE "$1" "a clean kernel source tree"
kbuild_path OUT "$2"
tree=$(readlink -f "$1")
mkdir -p "$2"
out=$(readlink -f "$2")
[ -f "$tree/arch/x86/configs/tiny.config" ] || die "$tree is not a kernel source tree"
[ ! -f "$tree/.config" ] || die "$tree has a .config: O= builds need a clean tree (make mrproper)"
"$BQLKIT_TOP/scripts/install-deps.sh" tree
mk() { nice -n "${VM_NICE:-19}" make -C "$tree" O="$out" ARCH=x86_64 "$@"; }
cfg() { "$tree/scripts/config" --file "$out/.config" "$@"; }

step "configuring $tree in $out"
mk -s tinyconfig >"$out/config.log" 2>&1 || die "make tinyconfig failed (log: $out/config.log)"
# Base system: console, initramfs, the guest's userland (glibc tools).
cfg -e 64BIT -e SMP -e PRINTK -e BUG -e DEBUG_BUGVERBOSE -e KALLSYMS \
	-e TTY -e SERIAL_8250 -e SERIAL_8250_CONSOLE \
	-e BLK_DEV_INITRD -e RD_GZIP -e DEVTMPFS -e PROC_FS -e SYSFS -e SHMEM -e TMPFS \
	-e BINFMT_ELF -e BINFMT_SCRIPT -e MULTIUSER -e FUTEX -e EPOLL -e SIGNALFD \
	-e TIMERFD -e EVENTFD -e POSIX_TIMERS -e FILE_LOCKING -e SYSCTL -e PROC_SYSCTL \
	-e X86_5LEVEL -e PCI -e PCI_MSI -e ACPI -e HYPERVISOR_GUEST -e PARAVIRT -e KVM_GUEST \
	-d CC_OPTIMIZE_FOR_SIZE -e CC_OPTIMIZE_FOR_PERFORMANCE -d SLUB_TINY \
	-d KERNEL_XZ -e KERNEL_GZIP \
	--set-str LOCALVERSION "${VM_LOCALVERSION--vm}" -d LOCALVERSION_AUTO
# Modules as distros build them.
cfg -e MODULES -e MODULE_UNLOAD -e MODVERSIONS -e MODULE_SRCVERSION_ALL
# What tests/vm/guest/*.sh use: veth pairs across netns, fq_codel root,
# clsact + u32 + gact on ingress, ethtool, sysfs BQL; dummy.ko (the guest
# loads it since 4668a3c).
cfg -e NET -e INET -e UNIX -e PACKET -e NAMESPACES -e NET_NS \
	-e NETDEVICES -e NET_CORE -m VETH -m DUMMY \
	-e NET_SCHED -e NET_SCH_FQ_CODEL -e NET_SCH_INGRESS -e NET_CLS \
	-e NET_CLS_U32 -e NET_CLS_ACT -e NET_ACT_GACT -e BQL
# XDP programs (ip link set ... xdp obj): the fault tests and the races.
cfg -e BPF_SYSCALL
debug_checks=()
case ${VM_DEBUG:-} in
'') ;;
kasan)
	cfg -e DEBUG_KERNEL -e STACKTRACE -e KASAN -e KASAN_GENERIC -e KASAN_INLINE \
		-e PROVE_LOCKING -e DEBUG_ATOMIC_SLEEP -e DEBUG_NET
	debug_checks=(KASAN=y PROVE_LOCKING=y DEBUG_ATOMIC_SLEEP=y DEBUG_NET=y) ;;
kcsan)
	cfg -e DEBUG_KERNEL -e KCSAN -d KCSAN_SELFTEST -e KCSAN_VERBOSE -e DEBUG_NET
	debug_checks=(KCSAN=y DEBUG_NET=y) ;;
*) die "VM_DEBUG=$VM_DEBUG: unknown debug flavour (kasan, kcsan)" ;;
esac
# shellcheck disable=SC2086 # VM_CONFIG is a word list
[ -z "${VM_CONFIG:-}" ] || cfg $VM_CONFIG
mk -s olddefconfig >>"$out/config.log" 2>&1 || die "make olddefconfig failed (log: $out/config.log)"
# olddefconfig drops what it cannot satisfy: check what matters.
for s in VETH=m DUMMY=m BQL=y MODVERSIONS=y MODULE_UNLOAD=y NET_NS=y NET_SCH_FQ_CODEL=y \
	NET_SCH_INGRESS=y NET_CLS_U32=y NET_ACT_GACT=y DEVTMPFS=y SERIAL_8250_CONSOLE=y \
	BLK_DEV_INITRD=y RD_GZIP=y TMPFS=y PRINTK=y SMP=y ACPI=y BPF_SYSCALL=y \
	${debug_checks[@]+"${debug_checks[@]}"}; do
	grep -qx "CONFIG_$s" "$out/.config" || die "CONFIG_$s did not stick in $out/.config"
done

step "building in $out (bzImage, modules)"
start=$SECONDS
mk -s -j"${JOBS:-$(nproc)}" bzImage modules >"$out/build.log" 2>&1 ||
	die "kernel build failed: $(grep -m1 -E 'error:|Error [0-9]' "$out/build.log" || tail -1 "$out/build.log") (log: $out/build.log)"
rel=$(cat "$out/include/config/kernel.release")
kimg=$BQLKIT_CACHE/kernels/$rel
step "built $rel in $((SECONDS - start))s; installing $kimg"
rm -rf "$kimg.tmp"
mkdir -p "$kimg.tmp/boot"
mk -s INSTALL_MOD_PATH="$kimg.tmp" modules_install >>"$out/build.log" 2>&1 ||
	die "modules_install failed (log: $out/build.log)"
rm -f "$kimg.tmp/lib/modules/$rel/build" "$kimg.tmp/lib/modules/$rel/source"
cp "$out/arch/x86/boot/bzImage" "$kimg.tmp/boot/vmlinuz-$rel"
cp "$out/.config" "$kimg.tmp/boot/config-$rel"
echo "$out" >"$kimg.tmp/.bqlkit-tree-kernel"
[ -z "${VM_DEBUG:-}" ] || echo "$VM_DEBUG" >"$kimg.tmp/.bqlkit-debug"
touch "$kimg.tmp/.extracted"
rm -rf "$kimg"
mv "$kimg.tmp" "$kimg"
echo "$kimg"
