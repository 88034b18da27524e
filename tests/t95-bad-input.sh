#!/bin/bash
# Bad input: each case ends with one clear line naming the fix, a non-zero
# exit, nothing half-installed and the in-tree module still named by modinfo.
# Here (no side effects on this machine): no root, a kernel that does not
# exist, a kernel without headers, a series with no base, a source of another
# version or series, truncated and corrupted tarballs, an imported file
# edited, a vendor edit the series adapts to and one it cannot take, Secure
# Boot advice.  In the Debian chroot (tests/chroot.sh; not with
# BQLKIT_QUICK=1): a driver that fails to build, SIGINT during the DKMS build
# and running again, running twice, an unsigned module where signatures are
# enforced, a patch that fails for one of two kernels, a kernel series with no
# base (real headers), make install SRC= (a missing, another version's, a
# not fitting source; the kernel's own driver files).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/chroot.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bqlkit-t95.XXXXXX")
R=$tmp/root
trap 'chroot_down "$R" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

ver=$(cat "$BQLKIT_TOP/VERSION")
K1=$(test_kernels | sed -n 1p)
K2=$(test_kernels | sed -n 2p)
base61=$(base_dir 6.1)
base612=$(base_dir 6.12)
# The state that must not change: DKMS, /usr/src, what modinfo names.
state() {
	dkms status bqlkit 2>/dev/null || true
	ls -d /usr/src/bqlkit* /var/lib/dkms/bqlkit* 2>/dev/null || true
	for k in $(test_kernels); do modinfo -k "$k" -n veth 2>/dev/null || true; done
}
before=$(state)

# --- on this machine, nothing installed by any of these -------------------
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent "$@"; }
bad not-root-install "needs root: run 'sudo make install'" nobody make -s -C "$BQLKIT_TOP" install
bad not-root-uninstall "needs root: run 'sudo make uninstall'" nobody make -s -C "$BQLKIT_TOP" uninstall
if [ "$(id -u)" = 0 ]; then
	bad kver-does-not-exist "no headers installed and none in apt (linux-headers-9.9.9-99-amd64): give KVER= of a kernel with headers" \
		make -s -C "$BQLKIT_TOP" install KVER=9.9.9-99-amd64
else
	skip kver-does-not-exist "needs root"
fi
# A kernel apt knows whose headers are not installed: make build names the
# package (make install installs it with apt itself).
nohdr=$(apt-cache search --names-only '^linux-headers-6\.1\.0-[0-9]+-amd64$' 2>/dev/null | awk '{print $1}' |
	sed 's/^linux-headers-//' | while read -r k; do [ -e "/lib/modules/$k/build" ] || echo "$k"; done | sed -n 1p)
if [ -n "$nohdr" ]; then
	bad kver-no-headers "no kernel headers for $nohdr .*apt-get install linux-headers-$nohdr" \
		make -s -C "$BQLKIT_TOP" build KVER="$nohdr"
else
	skip kver-no-headers "apt knows no 6.1 kernel without installed headers"
fi
# A kernel series the kit has no series for: headers that say Linux 5.4.
mkdir -p "$tmp/k54/include/generated/uapi/linux"
printf 'VERSION = 5\nPATCHLEVEL = 4\nSUBLEVEL = 0\n' >"$tmp/k54/Makefile"
out=$(KDIR=$tmp/k54 BQLKIT_BUILD=$tmp/b "$BQLKIT_TOP/scripts/build.sh" 5.4.0-99-amd64 2>&1) && rc=0 || rc=$?
check series-none-exit-77 test "$rc" -eq 77
check series-none-one-line test "$(grep -c . <<<"$out")" -eq 1
has series-none-says-why "no series for Linux 5.4 (kernel 5.4.0-99-amd64); the kit carries: $(cd "$BQLKIT_TOP/patches/veth" && echo */ | tr -d /)" "$out"
# A series the kit carries whose base is not imported: the fix is named.
mkdir -p "$tmp/k515"
printf 'VERSION = 5\nPATCHLEVEL = 15\nSUBLEVEL = 0\n' >"$tmp/k515/Makefile"
expect_error series-no-base "no imported Linux 5.15 source for veth: run 'make import SRC=" \
	env KDIR="$tmp/k515" BQLKIT_BUILD="$tmp/b" BQLKIT_BASES="$tmp/nobases" "$BQLKIT_TOP/scripts/build.sh" 5.15.0-99-generic veth

# Sources of another version: same series, other sublevel (a note; STRICT=1
# refuses), another series (refused), truncated or corrupted tarballs.
import_edited "$base61" "$tmp/bases-sub" Makefile 's/^SUBLEVEL = .*/SUBLEVEL = 150/'
bv=$(kernel_version "$(kdir_for "$K1")")
bad source-other-sublevel-strict "imported source is Linux 6.1.150 but kernel $K1 is Linux $bv (STRICT=1): import the matching source" \
	env STRICT=1 BQLKIT_BASES="$tmp/bases-sub" BQLKIT_BUILD="$tmp/b" "$BQLKIT_TOP/scripts/build.sh" "$K1" veth
out=$(BQLKIT_BASES=$tmp/bases-sub BQLKIT_BUILD=$tmp/b "$BQLKIT_TOP/scripts/build.sh" "$K1" veth 2>&1) && rc=0 || rc=$?
check source-other-sublevel-builds test "$rc" -eq 0
has source-other-sublevel-note "veth: building from Linux 6.1.150 source for kernel $K1" "$out"
mkdir -p "$tmp/bases-series"
cp -a "$base612" "$tmp/bases-series/6.1"
bad source-other-series "holds Linux 6.12.[0-9]*, not 6.1: re-import it (make import SRC=" \
	env BQLKIT_BASES="$tmp/bases-series" BQLKIT_BUILD="$tmp/b" "$BQLKIT_TOP/scripts/build.sh" "$K1" veth
tarball=/usr/src/linux-source-6.1.tar.xz
mkdir -p "$tmp/bases-keep"
cp -a "$base61" "$tmp/bases-keep/6.1"
head -c 30000000 "$tarball" >"$tmp/linux-source-6.1.tar.xz"
bad tarball-truncated "truncated or corrupted: .*apt-get install --reinstall linux-source" \
	env BQLKIT_BASES="$tmp/bases-keep" "$BQLKIT_TOP/scripts/import-source.sh" "$tmp/linux-source-6.1.tar.xz"
cp "$tarball" "$tmp/linux-source-6.1.tar.xz"
printf 'garbage!garbage!garbage!' | dd of="$tmp/linux-source-6.1.tar.xz" bs=1 seek=20000000 conv=notrunc status=none
bad tarball-corrupted "truncated or corrupted: .*apt-get install --reinstall linux-source" \
	env BQLKIT_BASES="$tmp/bases-keep" "$BQLKIT_TOP/scripts/import-source.sh" "$tmp/linux-source-6.1.tar.xz"
rm -f "$tmp/linux-source-6.1.tar.xz"
check tarball-bad-base-kept diff -r "$base61" "$tmp/bases-keep/6.1"

# A patch that no longer applies: an imported file edited (the manifest
# catches it), and a source the series was not made for.
veth_ok='if (unlikely(ptr_ring_produce(&rq->xdp_ring, skb))) {'
veth_bad='if (unlikely(ptr_ring_produce(\&rq->xdp_ring, skb) != 0)) {'
mkdir -p "$tmp/bases-edit"
cp -a "$base61" "$tmp/bases-edit/6.1"
sed -i "s/$veth_ok/$veth_bad/" "$tmp/bases-edit/6.1/drivers/net/veth.c"
bad imported-file-edited "imported file changed since import .*veth.c.*: re-import the source (make import SRC=" \
	env BQLKIT_BASES="$tmp/bases-edit" BQLKIT_BUILD="$tmp/b" "$BQLKIT_TOP/scripts/build.sh" "$K1" veth
# A vendor's edit inside a function the series rewrites is adapted
# (wiggle: the edited line is one the change removes), and re-proved.
import_edited "$base61" "$tmp/bases-vendor" drivers/net/veth.c "s/$veth_ok/$veth_bad/"
out=$(BQLKIT_BASES=$tmp/bases-vendor BQLKIT_BUILD=$tmp/b "$BQLKIT_TOP/scripts/build.sh" "$K1" veth 2>&1) && rc=0 || rc=$?
check vendor-edit-adapted-builds test "$rc" -eq 0
has vendor-edit-adapted-says-so "0001-veth-.* *adapted: .*re-proved by the rules" "$out"
lacks vendor-edit-adapted-kept-edit 'ptr_ring_produce(&rq->xdp_ring, skb) != 0' "$(cat "$tmp/b/$K1/veth-src/drivers/net/veth.c")"
# One the series cannot take (the function it charges BQL in renamed):
# refused by the rules after adaptation, with the fix.
import_edited "$base61" "$tmp/bases-renamed" drivers/net/veth.c 's/static int veth_xdp_rx(/static int veth_xdp_rx_renamed(/'
bad patch-does-not-fit "veth: the kit's changes do not fit the imported Linux 6.1.[0-9]* source: series 6.1: its result breaks .*bql-charge (of 0002-veth-.*import Debian's linux-source-6.1" \
	env BQLKIT_BASES="$tmp/bases-renamed" BQLKIT_BUILD="$tmp/b" "$BQLKIT_TOP/scripts/build.sh" "$K1" veth

# make bench: a driver it does not bench, and the mana bench's knobs
# (refused before anything is built or booted).
bad bench-driver-unknown "make bench benches veth (the default) or mana: DRIVER=mvneta is neither" \
	make -s -C "$BQLKIT_TOP" bench DRIVER=mvneta
bad bench-turn-us "BENCH_TURN_US must be microseconds (0..1000000; 0 = QEMU's own turns), not '5ms'" \
	make -s -C "$BQLKIT_TOP" bench BENCH_KERNELS="$K1" BENCH_TURN_US=5ms
bad bench-qdisc "BENCH_QDISC must be root (fq_codel as vethA's root qdisc) or mq (mq with fq_codel per tx queue), not 'pfifo'" \
	make -s -C "$BQLKIT_TOP" bench BENCH_KERNELS="$K1" BENCH_QDISC=pfifo
bad bench-kernel-unknown "BENCH_KERNELS: 9.9.9-99-amd64 is neither an installed kernel with headers" \
	make -s -C "$BQLKIT_TOP" bench BENCH_KERNELS=9.9.9-99-amd64
bad bench-pin-harness "BENCH_PIN_HARNESS must be 0 or 1, not 'yes'" \
	make -s -C "$BQLKIT_TOP" bench BENCH_KERNELS="$K1" BENCH_PIN_HARNESS=yes
bad bench-limit-max "BENCH_LIMIT_MAX must be a number of packets (0..256, veth's ring; unset = DQL's own limit), not '2k'" \
	make -s -C "$BQLKIT_TOP" bench BENCH_KERNELS="$K1" BENCH_LIMIT_MAX=2k
# lab/trace-report.py: a console log without a trace window is
# refused; one with a window is followed from a probe's enqueue to its
# receive (skb addresses reused: each enqueue matches the next events).
printf 'BQLKIT bench\n' >"$tmp/console-notrace.log"
bad trace-report-no-window 'no "BQLKIT trace" window in .*console-notrace.log: bench with BENCH_TRACE_MS=N' \
	python3 "$BQLKIT_TOP/lab/trace-report.py" "$tmp/console-notrace.log"
{
	echo 'BQLKIT trace begin label=t'
	printf '%s\n' \
		' tsprobe-9 [000] ..... 10.000100: net_dev_queue: dev=vethA skbaddr=00000000aa len=46' \
		' udpflood-8 [000] ..... 10.000150: net_dev_start_xmit: dev=vethA queue_mapping=0 skbaddr=00000000bb len=106' \
		' tsprobe-9 [000] ..... 10.000400: net_dev_start_xmit: dev=vethA queue_mapping=0 skbaddr=00000000aa len=46' \
		' napi-7 [001] ..... 10.000900: netif_receive_skb: dev=vethB skbaddr=00000000aa len=32' \
		' tsprobe-9 [000] ..... 10.001000: net_dev_queue: dev=vethA skbaddr=00000000aa len=46' \
		' tsprobe-9 [000] ..... 10.001100: net_dev_start_xmit: dev=vethA queue_mapping=0 skbaddr=00000000aa len=46' \
		' napi-7 [001] ..... 10.001200: netif_receive_skb: dev=vethB skbaddr=00000000aa len=32' | gzip | base64
	echo 'BQLKIT trace end'
} >"$tmp/console-trace.log"
out=$(python3 "$BQLKIT_TOP/lab/trace-report.py" "$tmp/console-trace.log" 2>&1) || true
has trace-report-probes "t: 7 events in 1.1 ms, 2 probes (len 46)" "$out"
has trace-report-qdisc "qdisc_us  median \[q1..q3\] 200 \[150..250\]" "$out"
has trace-report-ahead "ahead     median \[q1..q3\] 0 \[0..1\]" "$out"
bad bench-queues-mq-one "BENCH_QDISC=mq needs 2 or more queues (mq refuses a one-queue device): give BENCH_QUEUES=2 or more, or BENCH_QDISC=root" \
	make -s -C "$BQLKIT_TOP" bench BENCH_KERNELS="$K1" BENCH_QUEUES=1 BENCH_QDISC=mq
bad bench-queues-number "BENCH_QUEUES must be one number of veth queues from 1 to 64, not '1,2'" \
	make -s -C "$BQLKIT_TOP" bench BENCH_KERNELS="$K1" BENCH_QUEUES=1,2
bad bench-scale-driver "make bench-scale benches veth, mana or both (the default): DRIVER=mvneta is none of them" \
	make -s -C "$BQLKIT_TOP" bench-scale DRIVER=mvneta
bad bench-scale-flows "SCALE_FLOWS: 128 is above 64 (udpflood's sockets, mana's TCP streams)" \
	make -s -C "$BQLKIT_TOP" bench-scale SCALE_FLOWS=1,128
bad bench-mana-rate "BENCH_RATE must be Mbit/s from 1 to 100000, not '0'" \
	make -s -C "$BQLKIT_TOP" bench DRIVER=mana BENCH_KERNELS="$K1" BENCH_RATE=0
bad bench-mana-queues-above-cpus "BENCH_QUEUES: 4 queues need BENCH_SMP=4 or more vCPUs" \
	make -s -C "$BQLKIT_TOP" bench DRIVER=mana BENCH_KERNELS="$K1" BENCH_QUEUES=1,4
bad bench-mana-loads "BENCH_LOADS must be tcp, udp or both separated by a comma, not 'icmp'" \
	make -s -C "$BQLKIT_TOP" bench DRIVER=mana BENCH_KERNELS="$K1" BENCH_LOADS=icmp
bad bench-mana-cost-payload "BENCH_COST_PAYLOAD must be a UDP payload from 0 to 1472 bytes (one frame), not '9000'" \
	make -s -C "$BQLKIT_TOP" bench DRIVER=mana BENCH_KERNELS="$K1" BENCH_COST_PAYLOAD=9000
bad bench-mana-nothing "BENCH_LATENCY=0 and BENCH_COST_COUNT=0: nothing to bench" \
	make -s -C "$BQLKIT_TOP" bench DRIVER=mana BENCH_KERNELS="$K1" BENCH_LATENCY=0 BENCH_COST_COUNT=0
bad bench-mana-kernel-unknown "BENCH_KERNELS: 9.9.9-99-amd64 is neither an installed kernel with headers" \
	make -s -C "$BQLKIT_TOP" bench DRIVER=mana BENCH_KERNELS=9.9.9-99-amd64

# Secure Boot and signature enforcement (scripts/module-trust.sh): where
# the kernel would refuse what DKMS signs, the kit is not installed (exit
# 3, one line with the enrollment steps) and the in-tree drivers stay.
trust() { "$BQLKIT_TOP/scripts/module-trust.sh" "$K1" 2>&1; }
out=$(BQLKIT_SB_STATE=enabled BQLKIT_MOK_ENROLLED=no trust) && rc=0 || rc=$?
check trust-sb-not-enrolled-exit-1 test "$rc" -eq 1
has trust-sb-not-enrolled-says-enroll "would refuse the kit's modules (Secure Boot is on and DKMS's key .* is not enrolled).*mokutil --import .*reboot.*Enroll MOK" "$out"
check trust-sb-enrolled-accepted env BQLKIT_SB_STATE=enabled BQLKIT_MOK_ENROLLED=yes "$BQLKIT_TOP/scripts/module-trust.sh" "$K1"
out=$(BQLKIT_SB_STATE=disabled BQLKIT_SIG_ENFORCE=1 trust) && rc=0 || rc=$?
check trust-sig-enforce-exit-1 test "$rc" -eq 1
has trust-sig-enforce-says-why "with Secure Boot off it trusts no key DKMS made" "$out"
check trust-sig-enforce-key-trusted env BQLKIT_SB_STATE=disabled BQLKIT_SIG_ENFORCE=1 BQLKIT_KEY_TRUSTED=1 "$BQLKIT_TOP/scripts/module-trust.sh" "$K1"
check trust-nothing-enforced env BQLKIT_SB_STATE=disabled "$BQLKIT_TOP/scripts/module-trust.sh" "$K1"
bad trust-bad-kver "module-trust.sh: '../x' is not a kernel release" "$BQLKIT_TOP/scripts/module-trust.sh" ../x
if [ "$(id -u)" = 0 ]; then
	# install.sh's own status is 3 (make's is 2, with its "Error 3" line).
	out=$(BQLKIT_SB_STATE=enabled BQLKIT_MOK_ENROLLED=no "$BQLKIT_TOP/scripts/install.sh" "$K1" 2>&1) && rc=0 || rc=$?
	check secure-boot-install-exit-3 test "$rc" -eq 3
	check secure-boot-install-one-line test "$(grep -c . <<<"$out")" -eq 1
	bad secure-boot-make-install "^bqlkit: error: kernel $K1 would refuse the kit's modules .*mokutil --import" \
		env BQLKIT_SB_STATE=enabled BQLKIT_MOK_ENROLLED=no make -s -C "$BQLKIT_TOP" install KVER="$K1"
else
	skip secure-boot-install "needs root"
fi
# After an install: an unsigned module where signatures are enforced.
out=$(BQLKIT_SB_STATE=enabled BQLKIT_MOK_ENROLLED=yes "$BQLKIT_TOP/scripts/secure-boot.sh" 2>&1) || true
lacks secure-boot-enrolled-no-advice 'mokutil --import' "$out"

# Values and paths a root program must not trust (issue 33 item 4): each
# refused with one line, nothing run, nothing written outside the kit.
mk() { make -s -C "$BQLKIT_TOP" "$@"; }
bad input-kver-path "KVER='../../x' is not a kernel release" mk build KVER=../../x
bad input-base-injection "BASE='6.1;touch .*' is not a kernel series X.Y" mk export BASE="6.1;touch $tmp/pwned"
bad input-base-two-series "BASE='6.1 6.6' is not a kernel series X.Y" env BQLKIT_BUILD="$tmp/b-export" make -s -C "$BQLKIT_TOP" export BASE='6.1 6.6'
bad input-export-kver "KVER='../../x' is not a kernel release" env BQLKIT_BUILD="$tmp/b-export" make -s -C "$BQLKIT_TOP" export BASE=6.1 KVER=../../x
check input-base-not-run test ! -e "$tmp/pwned"
# make help shows the values it was given, as text.
out=$(mk help KVER="x';touch $tmp/pwned-help;'" DRIVERS="y';touch $tmp/pwned-help2;'" BQLKIT_CACHE="z';touch $tmp/pwned-help3;'" 2>&1) || true
check input-help-not-run test ! -e "$tmp/pwned-help" -a ! -e "$tmp/pwned-help2" -a ! -e "$tmp/pwned-help3"
has input-help-shows-value "KVER=x';touch $tmp/pwned-help;'  KDIR=" "$out"
bad input-kver-injection "KVER='6.1;touch .*' is not a kernel release" mk probe KVER="6.1;touch $tmp/pwned2"
bad input-kver-injection-build "KVER='6.1;touch .*' is not a kernel release" mk build KVER="6.1;touch $tmp/pwned3"
check input-kver-injection-not-run test ! -e "$tmp/pwned2" -a ! -e "$tmp/pwned3"
# Make syntax in a value (command line or environment) is not expanded by
# make: the value reaches the script as written, which refuses it.
bad input-kver-make-syntax "KVER='\$(shell touch .*)' is not a kernel release" mk build KVER="\$(shell touch $tmp/pwned4)"
bad input-kver-make-syntax-env "KVER='\$(shell touch .*)' is not a kernel release" env KVER="\$(shell touch $tmp/pwned5)" make -s -C "$BQLKIT_TOP" build
bad input-bench-make-syntax "BENCH_RUNS" mk bench BENCH_RUNS="\$(shell touch $tmp/pwned6)" BENCH_KERNELS=9.9.9-99-amd64
check input-make-syntax-not-run test ! -e "$tmp/pwned4" -a ! -e "$tmp/pwned5" -a ! -e "$tmp/pwned6"
bad input-drivers-unknown "DRIVERS: 'bogus' is not a driver the kit carries (mana mvneta veth)" mk build KVER="$K1" DRIVERS=bogus
bad input-kdir-missing "KDIR='$tmp/no such dir' does not exist" mk build KDIR="$tmp/no such dir"
bad input-fit-kdir-missing "KDIR='$tmp/no such dir' does not exist" \
	mk fit SRC="$BQLKIT_TOP/tests/fixtures/kernels/armbian-6.1.166" KDIR="$tmp/no such dir"
# A path with a space stays one path (SRC); Kbuild cannot build in one: a
# KDIR, TREE or OUT with a space is refused at once.
mkdir -p "$tmp/a tree"
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 0\n' >"$tmp/a tree/Makefile"
bad input-kdir-space "KDIR='$tmp/a tree' has a space or a colon, and Kbuild cannot build" mk build KDIR="$tmp/a tree"
bad input-tree-space "TREE='$tmp/a tree' has a space or a colon" mk prepare-tree TREE="$tmp/a tree"
bad input-src-space "kernel source '$tmp/no such.tar.xz' does not exist" mk import SRC="$tmp/no such.tar.xz"
# A Makefile's version that is not digits is not a version (it would become
# a path): make build KDIR= says so, KVER= given or not, and writes nothing.
mkdir -p "$tmp/dotdot"
printf 'VERSION = 6\nPATCHLEVEL = 1/../..\nSUBLEVEL = 0\n' >"$tmp/dotdot/Makefile"
bad input-version-not-digits "cannot read the kernel version of $tmp/dotdot" \
	env BQLKIT_BUILD="$tmp/b-dotdot" make -s -C "$BQLKIT_TOP" build KDIR="$tmp/dotdot"
bad input-version-not-digits-kver "cannot read the kernel version of $tmp/dotdot" \
	env BQLKIT_BUILD="$tmp/b-dotdot" make -s -C "$BQLKIT_TOP" build KDIR="$tmp/dotdot" KVER=6.1.0-99-test
check input-version-not-digits-nothing-written test ! -e "$tmp/b-dotdot"
# (Digits only, but a line's trailing blanks and a CRLF file's CRs are no
# part of them: such a Makefile's version is read as it was.)
mkdir -p "$tmp/blanks"
printf 'VERSION = 6 \r\nPATCHLEVEL = 1\t\r\nSUBLEVEL = 0\r\n' >"$tmp/blanks/Makefile"
check version-trailing-blanks test "$(kernel_version "$tmp/blanks")" = 6.1.0
bad input-arch "--arch 'amd64\";x' is not a Debian architecture name" \
	env BQLKIT_CACHE="$tmp/cache" "$BQLKIT_TOP/scripts/apt-private.sh" bookworm --arch 'amd64";x' -- true
bad input-arch-missing "--arch '' is not a Debian architecture name" \
	env BQLKIT_CACHE="$tmp/cache" "$BQLKIT_TOP/scripts/apt-private.sh" bookworm --arch
bad input-suite "unknown Debian suite 'bookworm-x\";y'" \
	env BQLKIT_CACHE="$tmp/cache" "$BQLKIT_TOP/scripts/apt-private.sh" 'bookworm-x";y' --print-config
# apt checks Release files' Valid-Until and fetches as _apt: the private
# configuration neither turns the check off (but for a suite the user marks
# as a frozen snapshot) nor makes root apt's sandbox user.
conf=$(env BQLKIT_CACHE="$tmp/cache" "$BQLKIT_TOP/scripts/apt-private.sh" bookworm-security --print-config)
lacks apt-private-no-root-sandbox 'Sandbox' "$(cat "$conf")"
lacks apt-private-valid-until-checked 'Valid-Until\|check-valid-until' "$(cat "$conf" "${conf%apt.conf}sources.list")"
env BQLKIT_CACHE="$tmp/cache" BQLKIT_FROZEN_SUITES=bookworm "$BQLKIT_TOP/scripts/apt-private.sh" bookworm-security --print-config >/dev/null
has apt-private-frozen-suite-opt-in 'check-valid-until=no\] http://deb.debian.org/debian bookworm main' "$(cat "${conf%apt.conf}sources.list")"
lacks apt-private-frozen-only-that-suite 'check-valid-until=no\] http://deb.debian.org/debian-security' "$(cat "${conf%apt.conf}sources.list")"
bad input-frozen-suites "BQLKIT_FROZEN_SUITES: 'bookworm;x' is not a Debian suite name" \
	env BQLKIT_CACHE="$tmp/cache" BQLKIT_FROZEN_SUITES='bookworm;x' "$BQLKIT_TOP/scripts/apt-private.sh" bookworm --print-config
# make bench BENCH_RUNS= is refused, also by the bench scripts themselves
# (the kernel named does not exist: no bench starts either way).
bad input-bench-empty "BENCH_RUNS given empty: give a value or leave it out" mk bench BENCH_RUNS= BENCH_KERNELS=9.9.9-99-amd64
bad input-bench-script-empty "BENCH_RUNS given empty: give a value or leave it out" \
	env BENCH_RUNS= BENCH_KERNELS=9.9.9-99-amd64 "$BQLKIT_TOP/lab/bench.sh"
bad input-bench-mana-script-empty "BENCH_RATE given empty: give a value or leave it out" \
	env BENCH_RATE= BENCH_KERNELS=9.9.9-99-amd64 "$BQLKIT_TOP/lab/bench-mana.sh"
bad input-bench-tx-ring "BENCH_TX_RING must be 0 (the driver's) or a power of two from 128 to 16384 WQEs" \
	env BENCH_TX_RING=1000 BENCH_KERNELS=9.9.9-99-amd64 "$BQLKIT_TOP/lab/bench-mana.sh"
bad input-bench-out-comma "BENCH_OUT '/tmp/a,b' holds a comma, which QEMU's -plugin option cannot carry" \
	env BENCH_OUT=/tmp/a,b BENCH_KERNELS=9.9.9-99-amd64 "$BQLKIT_TOP/lab/bench-mana.sh"
bad input-bench-scale-script-empty "SCALE_QUEUES given empty: give a value or leave it out" \
	env SCALE_QUEUES= BENCH_KERNELS=9.9.9-99-amd64 "$BQLKIT_TOP/lab/bench-scale.sh"
# make dkms-source DESTDIR=<a directory the kit did not write> (DESTDIR=/usr/src
# removed /usr/src): refused, left as it was; so is a checkout of the kit
# (its dkms.conf and scripts, no mark); one the kit wrote is replaced.
mkdir -p "$tmp/usrsrc" && touch "$tmp/usrsrc/keep"
bad dkms-source-foreign-dest "$tmp/usrsrc exists and is not a DKMS source the kit wrote" mk dkms-source DESTDIR="$tmp/usrsrc"
check dkms-source-foreign-dest-kept test -e "$tmp/usrsrc/keep"
mkdir -p "$tmp/checkout/scripts"
cp "$BQLKIT_TOP/dkms.conf" "$tmp/checkout/"
cp "$BQLKIT_TOP/scripts/build.sh" "$tmp/checkout/scripts/"
touch "$tmp/checkout/uncommitted-work"
bad dkms-source-kit-checkout "$tmp/checkout exists and is not a DKMS source the kit wrote" mk dkms-source DESTDIR="$tmp/checkout"
check dkms-source-kit-checkout-kept test -e "$tmp/checkout/uncommitted-work"
check dkms-source-own-dest-replaced bash -c "make -s -C '$BQLKIT_TOP' dkms-source DESTDIR='$tmp/dkms-src' >/dev/null &&
	touch '$tmp/dkms-src/stale' && make -s -C '$BQLKIT_TOP' dkms-source DESTDIR='$tmp/dkms-src' >/dev/null &&
	test -f '$tmp/dkms-src/dkms.conf' && test ! -e '$tmp/dkms-src/stale'"
# No fixed name in a world-writable directory; the install lock's directory
# must be root's own.
lacks no-fixed-names-in-tmp '/run/lock/bqlkit\|/tmp/bqlkit-apt' "$(grep -rn '/run/lock/bqlkit\|/tmp/bqlkit-apt' "$BQLKIT_TOP/scripts" || true)"
# The install lock, in a private mount namespace with an empty /run (so
# nothing of this machine's changes, and no real install or uninstall
# runs): root's own /run/bqlkit/install.lock, made 0700; a symlink planted
# at the old /run/lock name empties nothing; a /run/bqlkit that is not
# root's alone is refused.  Then apt's logs.
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	# in_run SETUP: SETUP, then take the install lock as make install does;
	# print the lock's path, and its directory's mode and owner.
	in_run() {
		# shellcheck disable=SC2016 # the inner bash's $1, $2 and $$
		unshare -m bash -c 'mount -t tmpfs tmpfs /run && mkdir -m 1777 /run/lock && eval "$2" &&
			. "$1/scripts/lib.sh" && install_lock install && readlink /proc/$$/fd/9 && stat -c "%a %u" /run/bqlkit' \
			_ "$BQLKIT_TOP" "$1" 2>&1
	}
	echo data >"$tmp/rootfile"
	out=$(in_run "ln -s '$tmp/rootfile' /run/lock/bqlkit-install.lock") || true
	has install-lock-path '^/run/bqlkit/install.lock$' "$out"
	has install-lock-dir-made-0700 '^700 0$' "$out"
	check install-lock-symlink-not-followed test "$(cat "$tmp/rootfile")" = data
	bad install-lock-dir-foreign "/run/bqlkit must be a directory only root can write" in_run 'mkdir /run/bqlkit && chown 65534 /run/bqlkit'
	bad install-lock-dir-symlink "/run/bqlkit must be a directory only root can write" in_run "ln -s '$tmp' /run/bqlkit"
	bad install-lock-dir-world-writable "/run/bqlkit must be a directory only root can write" in_run 'mkdir -m 0777 /run/bqlkit'
	out=$(BQLKIT_RUN_DIR=$tmp/elsewhere in_run 'true') || true
	has install-lock-no-variable-moves-it '^/run/bqlkit/install.lock$' "$out"
	# apt's logs (install-deps.sh with a stub apt-get, its update stamp in
	# a private /var/lib/apt/periodic): a new file each run, kept and named
	# when apt-get fails, removed when it succeeds.
	mkdir -p "$tmp/stub" "$tmp/aptlogs"
	cat >"$tmp/stub/apt-get" <<'EOF'
#!/bin/sh
echo "stub apt-get $*"
case " $* " in *" $STUB_APT_FAIL "*) echo "E: stub failure"; exit 100 ;; esac
EOF
	chmod +x "$tmp/stub/apt-get"
	# deps FAIL: the stub fails "apt-get FAIL" (update, install; none).
	deps() {
		# shellcheck disable=SC2016 # the inner bash's $@
		unshare -m bash -c 'mount -t tmpfs tmpfs /var/lib/apt/periodic && exec "$@"' _ \
			env PATH="$tmp/stub:$PATH" TMPDIR="$tmp/aptlogs" STUB_APT_FAIL="$1" \
			"$BQLKIT_TOP/scripts/install-deps.sh" build bqlkit-t95-no-such-package 2>&1
	}
	for f in update install; do
		out=$(deps "$f") && rc=0 || rc=$?
		log=$(sed -n 's/^bqlkit: error: apt-get .*failed (log: \(.*\))$/\1/p' <<<"$out")
		check "apt-$f-fails" test "$rc" -ne 0
		has "apt-$f-log-new-file" "^$tmp/aptlogs/bqlkit-apt-$f\.[A-Za-z0-9]\{6\}$" "$log"
		has "apt-$f-log-kept" "^E: stub failure" "$(cat "$log" 2>/dev/null)"
	done
	rm -f "$tmp/aptlogs"/*
	out=$(deps none) && rc=0 || rc=$?
	check apt-succeeds test "$rc" -eq 0
	check apt-succeeds-log-removed test -z "$(ls "$tmp/aptlogs")"
else
	skip install-lock-apt-logs "needs root and unshare (a private /run)"
fi

check host-state-unchanged test "$(state)" = "$before"
for k in $(test_kernels); do
	ls "/lib/modules/$k/kernel/drivers/net/veth.ko"* >/dev/null 2>&1 || continue # an image installed
	has "host-modinfo-names-veth-$(series_of "$(kernel_version "$(kdir_for "$k")")")" "/lib/modules/$k/\(kernel/drivers/net\|updates/dkms\)/veth.ko" "$(modinfo -k "$k" -n veth 2>&1)"
done

# --- in the Debian chroot: the install itself going wrong -----------------
if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip bad-input-chroot "BQLKIT_QUICK=1 (no chroot)"
	exit 0
fi
[ "$(id -u)" = 0 ] || { skip bad-input-chroot "needs root (chroot)"; exit 0; }
if ! chroot_up "$R"; then
	fail chroot "could not make or unpack the chroot (see stderr)"
	exit 0
fi
cr() { chroot_run "$R" bash -c "$1" 2>&1; }
K4=$(cd "$R/root/debs" && ls linux-headers-5.10.*-amd64_*.deb | sed 's/^linux-headers-\([^_]*\)_.*/\1/' | sed -n 1p)
kit=$R/root/bqlkit
# clean NAME: nothing of the kit installed, the in-tree veth named ($why_left:
# more detail for a failure).
why_left=
clean() {
	local left
	left=$(cr "ls -d /usr/src/bqlkit* /var/lib/dkms/bqlkit/* /lib/modules/*/updates/dkms/*.ko* 2>/dev/null; dkms status bqlkit" | grep . || true)
	if [ -z "$left" ]; then pass "$1-nothing-left"; else fail "$1-nothing-left" "left: $(tr '\n' ' ' <<<"$left")${why_left:+; $why_left}"; fi
	has "$1-in-tree-named" "/lib/modules/$K1/kernel/drivers/net/veth.ko" "$(cr "modinfo -k $K1 -n veth")"
}
installed_for() { cr "dkms status bqlkit" | sed -n 's/^[^,]*, \([^,]*\),.*: installed.*/\1/p' | sort | tr '\n' ' '; }
t0=$(date +%s)
lap() { echo "  [t95 $(($(date +%s) - t0)) s] $*" >&2; }

# A driver that fails to build: nothing installed.
cp "$kit/drivers/mana/Kbuild" "$tmp/Kbuild.mana"
echo 'ccflags-y += -DBQLKIT_TEST_BREAK -include /nonexistent/broken.h' >>"$kit/drivers/mana/Kbuild"
bad driver-build-fails "mana failed to build for $K1 (log: " cr "cd /root/bqlkit && make install KVER=$K1"
clean driver-build-fails
cp "$tmp/Kbuild.mana" "$kit/drivers/mana/Kbuild"
lap "driver build failure"

# SIGINT while DKMS builds, then again: the second run installs; the same
# for SIGHUP (an SSH session that drops).
# (set -m: the job gets its own process group and, unlike a plain background
# job of a script, does not ignore SIGINT.  perl resets the signal to its
# default first: a shell cannot undo an ignored SIGINT it inherited, as when
# this suite itself runs as a background job.)
# interrupt_install SIG NAME: make install KVER=$K1, SIG to its process
# group once DKMS builds; NAME-exit-N, NAME-says-removing, and nothing of
# it left or still running.  (With SIGHUP the terminal is gone: install
# writes its cleanup's lines to the DKMS log.)
interrupt_install() {
	local sig=$1 name=$2 code out still
	code=$((128 + $(kill -l "$sig")))
	out=$(cr "set -m; : >/var/log/bqlkit-dkms.log; cd /root/bqlkit && { perl -e '\$SIG{$sig} = \"DEFAULT\"; exec @ARGV or die' make install KVER=$K1 >/tmp/install.log 2>&1 & pid=\$!; }
		for i in \$(seq 600); do grep -q 'dkms build + install' /tmp/install.log && break; sleep 0.5; done
		sleep 1; kill -$sig -- -\$pid; wait \$pid; echo rc=\$?; cat /tmp/install.log; grep -h '^bqlkit' /var/log/bqlkit-dkms.log") || true
	has "$name-exit-$code" "^rc=$code\$" "$out"
	has "$name-says-removing" 'interrupted: removing bqlkit' "$out"
	# Once the install has returned, nothing of DKMS's build still runs:
	# DKMS makes in a background job that ignores SIGINT, and that make,
	# left running, wrote into the tree the install had removed
	# (sigint-nothing-left, twice in CI).  A process works on the tree when
	# its cwd is in it (DKMS's make) or an argument names it (Kbuild's,
	# M=...); the pattern is split so that this shell's own command line
	# does not match.  Only processes of this chroot (their root is "/"
	# seen from it): /proc shows every process of the machine, and another
	# checkout's t95 runs its DKMS in a chroot of its own.
	still=$(cr 't=/var/lib/dkms; t=$t/bqlkit; for p in /proc/[0-9]*; do [ "$(readlink "$p/root")" = / ] || continue; c=$(readlink "$p/cwd") || continue; a=$(tr "\0" " " <"$p/cmdline") || continue; case "$c $a" in *"$t"*) echo "$(cat "$p/comm") (cwd $c)";; esac; done' | tr '\n' ';')
	if [ -z "$still" ]; then
		pass "$name-nothing-running"
	else
		fail "$name-nothing-running" "still working on the DKMS tree after the install returned: $still"
	fi
	why_left="the install's last lines: $(tail -3 <<<"$out" | tr '\n' ';')"
	clean "$name"
	why_left=
	lap "$sig"
}
interrupt_install INT sigint
interrupt_install HUP sighup

# The initramfs when an install or uninstall stops half-way.  Stubs stand
# for initramfs-tools (a real update-initramfs takes a minute): lsinitramfs
# lists a veth.ko, update-initramfs records its calls in /var/tmp/ui-calls
# and, while /var/tmp/ui-hold exists, waits to be interrupted; a dkms
# wrapper fails "dkms install" while /var/tmp/dkms-fail exists.
sb=$R/usr/local/sbin
cat >"$sb/lsinitramfs" <<'EOF'
#!/bin/sh
echo usr/lib/modules/x/kernel/drivers/net/veth.ko
EOF
cat >"$sb/update-initramfs" <<'EOF'
#!/bin/sh
echo "$*" >>/var/tmp/ui-calls
[ ! -e /var/tmp/ui-hold ] || { touch /var/tmp/ui-waiting; sleep 120; }
EOF
cat >"$sb/dkms" <<'EOF'
#!/bin/sh
[ "$1" = install ] && [ -e /var/tmp/dkms-fail ] && { echo "dkms: planted failure" >&2; exit 10; }
exec /usr/sbin/dkms "$@"
EOF
chmod +x "$sb/lsinitramfs" "$sb/update-initramfs" "$sb/dkms"
ui_calls() { tr '\n' ';' <"$R/var/tmp/ui-calls" 2>/dev/null || true; }
rm -f "$R/var/tmp/ui-"*
out=$(cr "cd /root/bqlkit && make install KVER=$K1") && rc=0 || rc=$?
check initramfs-install-regenerates bash -c "[ $rc -eq 0 ] && [ '$(ui_calls)' = '-u -k $K1;' ]"
# A changed kit source whose first kernel's DKMS build fails: the old
# modules are gone from DKMS, so the image that held them is regenerated.
echo '# changed' >>"$kit/drivers/veth/driver.conf"
touch "$R/var/tmp/dkms-fail"
rm -f "$R/var/tmp/ui-calls"
out=$(cr "cd /root/bqlkit && make install KVER=$K1") && rc=0 || rc=$?
rm -f "$R/var/tmp/dkms-fail"
check source-changed-fails-exit-nonzero test "$rc" -ne 0
has source-changed-fails-replaced 'replacing bqlkit/.* in DKMS (its source changed)' "$out"
check source-changed-fails-initramfs-regenerated test "$(ui_calls)" = "-u -k $K1;"
clean source-changed-fails
sed -i '$d' "$kit/drivers/veth/driver.conf"
# An uninstall interrupted (SIGINT) while it regenerates the image, then run
# again: the second run regenerates it (it found nothing to do before).
out=$(cr "cd /root/bqlkit && make install KVER=$K1") && rc=0 || rc=$?
check initramfs-reinstall test "$rc" -eq 0
rm -f "$R/var/tmp/ui-calls"
touch "$R/var/tmp/ui-hold"
out=$(cr "set -m; cd /root/bqlkit && { perl -e '\$SIG{INT} = \"DEFAULT\"; exec @ARGV or die' make uninstall >/tmp/uninstall.log 2>&1 & pid=\$!; }
	for i in \$(seq 600); do [ -e /var/tmp/ui-waiting ] && break; sleep 0.5; done
	kill -INT -- -\$pid; wait \$pid; echo rc=\$?; cat /tmp/uninstall.log") || true
rm -f "$R/var/tmp/ui-hold" "$R/var/tmp/ui-waiting"
has uninstall-interrupted-exit-130 '^rc=130$' "$out"
check uninstall-interrupted-in-initramfs test "$(ui_calls)" = "-u -k $K1;"
rm -f "$R/var/tmp/ui-calls"
out=$(cr "cd /root/bqlkit && make uninstall") && rc=0 || rc=$?
check uninstall-rerun-exit-0 test "$rc" -eq 0
check uninstall-rerun-regenerates test "$(ui_calls)" = "-u -k $K1;"
clean uninstall-interrupted
rm -f "$sb/lsinitramfs" "$sb/update-initramfs" "$sb/dkms" "$R/var/tmp/ui-calls"
lap "initramfs after interruptions"

# Signatures enforced and DKMS's key not trusted: make install refuses
# (exit 3) before installing anything; DKMS itself (the .deb's postinst,
# autoinstall for a later kernel) skips the kernel and succeeds.
out=$(cr "cd /root/bqlkit && BQLKIT_SIG_ENFORCE=1 BQLKIT_NO_INITRAMFS=1 scripts/install.sh $K1; echo rc=\$?") || true
has sig-enforced-install-exit-3 '^rc=3$' "$out"
has sig-enforced-install-says-why "^bqlkit: error: kernel $K1 would refuse the kit's modules (signatures enforced" "$out"
clean sig-enforced-install
out=$(cr "cd /root/bqlkit && make -s dkms-source >/dev/null && dkms add bqlkit/$ver >/dev/null &&
	{ BQLKIT_SIG_ENFORCE=1 dkms install bqlkit/$ver -k $K1; echo rc=\$?; BQLKIT_SIG_ENFORCE=1 dkms autoinstall -k $K1; echo autoinstall-rc=\$?; }
	dkms remove bqlkit/$ver --all >/dev/null; rm -rf /usr/src/bqlkit-$ver" 2>&1) || true
has sig-enforced-dkms-skips "bqlkit: skipping kernel $K1: kernel $K1 would refuse the kit's modules" "$out"
has sig-enforced-dkms-exit-77 '^rc=77$' "$out"
has sig-enforced-autoinstall-exit-0 '^autoinstall-rc=0$' "$out"
clean sig-enforced-dkms
# Secure Boot on and DKMS's key enrolled, but DKMS did not sign (no
# sign-file): the install is rolled back with the fix.
cr "mkdir -p /etc/dkms/framework.conf.d && echo 'sign_file=/nonexistent/sign-file' >/etc/dkms/framework.conf.d/bqlkit-test-nosign.conf" >/dev/null
bad unsigned-module-enforced "did not sign .*veth.ko.* mokutil --import /var/lib/dkms/mok.pub" \
	cr "cd /root/bqlkit && BQLKIT_SB_STATE=enabled BQLKIT_MOK_ENROLLED=yes BQLKIT_NO_INITRAMFS=1 make install KVER=$K1"
clean unsigned-module-enforced
cr "rm /etc/dkms/framework.conf.d/bqlkit-test-nosign.conf" >/dev/null
lap "signatures"

# Two installs at once (a second terminal), and an uninstall beside them:
# the later ones refuse while the first holds the install lock, and change
# nothing; the first completes.  (One chroot_run: each has its own /run,
# where the lock lives.)
out=$(cr "cd /root/bqlkit || exit 1
	{ BQLKIT_NO_INITRAMFS=1 make install KVER=$K1 >/tmp/first.log 2>&1; echo first-rc=\$? >>/tmp/first.log; } &
	for i in \$(seq 600); do [ -e /run/bqlkit/install.lock ] && ! flock -n /run/bqlkit/install.lock true && break; sleep 0.2; done
	BQLKIT_NO_INITRAMFS=1 make install KVER=$K1; echo second-rc=\$?
	BQLKIT_NO_INITRAMFS=1 make uninstall; echo uninstall-rc=\$?
	wait; cat /tmp/first.log") || true
has two-installs-second-refused "another bqlkit install or uninstall is running (lock /run/bqlkit/install.lock)" "$out"
grep -q 'another bqlkit install' <<<"$out" || echo "two installs at once: $out" >&2
# (Refused by the lock, not for another reason: both name it.)
check two-installs-both-name-the-lock test "$(grep -c 'another bqlkit install or uninstall is running' <<<"$out")" -eq 2
has two-installs-second-exit-nonzero '^second-rc=[1-9]' "$out"
has two-installs-uninstall-refused '^uninstall-rc=[1-9]' "$out"
has two-installs-first-completes '^first-rc=0$' "$out"
check two-installs-first-installed test "$(installed_for)" = "$K1 "
lap "two installs at once"
# The first install completed: another is an install over an installed
# kit (t90 install-twice does the same on the default kernels).
out=$(cr "cd /root/bqlkit && BQLKIT_NO_INITRAMFS=1 make install KVER=$K1") && rc=0 || rc=$?
check after-interrupt-install-again bash -c "[ $rc -eq 0 ] && [ '$(installed_for)' = '$K1 ' ]"
check install-twice-exit-0 test "$rc" -eq 0
has install-twice-says-so "already installed for $K1" "$out"
check install-twice-same-state test "$(installed_for)" = "$K1 "
lap "install, twice"

# A patch that fails for one kernel of two: that kernel named, the other
# installed.  The kit fits by content (scripts/fit.sh): 6.12's source also
# takes the 7.2/7.3 series as they are, so the BQL patch of every series
# but 6.1's (K1's) is broken the same way: nothing fits 6.12.
cp -a "$kit/patches/veth" "$tmp/veth-series"
for s in "$kit"/patches/veth/*/; do
	[ "$(basename "$s")" != 6.1 ] || continue
	sed -i 's/^-\t\tkfree_skb(ptr);$/-\t\tkfree_skb(ptr); \/* changed *\//' "$s"*.patch
done
out=$(cr "cd /root/bqlkit && BQLKIT_NO_INITRAMFS=1 make install") && rc=0 || rc=$?
check one-kernel-fails-exit-nonzero test "$rc" -ne 0
has one-kernel-fails-names-patch "veth: patch 0001-.* of series 6.12 does not apply" "$out"
has one-kernel-fails-names-fix "bqlkit: error: the kit is installed for $K1 but not for $K2" "$out"
check one-kernel-fails-other-installed test "$(installed_for)" = "$K1 "
check one-kernel-fails-nothing-for-it bash -c "! ls '$R/lib/modules/$K2/updates/dkms/'*.ko* 2>/dev/null && ! ls -d '$R/var/lib/dkms/bqlkit/$ver/$K2' 2>/dev/null"
rm -rf "$kit/patches/veth"
cp -a "$tmp/veth-series" "$kit/patches/veth"
lap "one kernel fails"

# Real headers of a series whose base is not imported and whose source apt
# (bookworm) does not have (bullseye's 5.10): refused naming the fix,
# nothing changed.
cr "dpkg -i --force-depends /root/debs/linux-kbuild-5.10*.deb /root/debs/linux-headers-${K4%-amd64}-common*.deb /root/debs/linux-headers-$K4*.deb" >/dev/null || true
bad series-no-base-install "no linux-source-5.10 in apt: import a Linux 5.10 source yourself (make import SRC=...)" \
	cr "cd /root/bqlkit && make install KVER=$K4"
check series-no-base-install-others-kept test "$(installed_for)" = "$K1 "
out=$(cr "cd /root/bqlkit && BQLKIT_NO_INITRAMFS=1 make uninstall") || true
clean uninstall-after-bad-input
lap "series without a base"

# make install SRC=: the kernel's own source given by the user (here its
# driver files, from the chroot's linux-source-6.1 of K1's very version),
# no linux-source import: refused when it does not exist, is of another
# version or does not fit (one error line, nothing installed, the base
# kept); else installed from it (veth.c's marked description), for K1 only.
lists=$(cd "$kit" && grep -hv '^[[:space:]]*\(#\|$\)' scripts/import.list drivers/*/import.list | tr '|' '\n' | sed "s|.*|'linux-source-6.1/&'|" | tr '\n' ' ')
cr "rm -rf /tmp/src && mkdir /tmp/src && tar -xJf /usr/src/linux-source-6.1.tar.xz -C /tmp/src --strip-components=1 --wildcards $lists 2>/dev/null
	sed -i 's/^MODULE_DESCRIPTION(\"\(.*\)\");/MODULE_DESCRIPTION(\"\1 (t95 SRC mark)\");/' /tmp/src/drivers/net/veth.c
	cp -a /tmp/src /tmp/src-150 && sed -i 's/^SUBLEVEL = .*/SUBLEVEL = 150/' /tmp/src-150/Makefile
	cp -a /tmp/src /tmp/src-nofit && sed -i 's/static int veth_xdp_rx(/static int veth_xdp_rx_renamed(/' /tmp/src-nofit/drivers/net/veth.c" >/dev/null
has src-tree-marked '(t95 SRC mark)' "$(cat "$R/tmp/src/drivers/net/veth.c")"
kv1=$(kernel_version "$R/tmp/src")
base_before=$(cat "$kit/build/bases/6.1/MANIFEST" 2>/dev/null || true)
bad src-missing "SRC='/tmp/no-such-src' does not exist: give the kernel's own source" \
	cr "cd /root/bqlkit && make install SRC=/tmp/no-such-src KVER=$K1"
clean src-missing
bad src-other-version "SRC='/tmp/src-150' is Linux 6.1.150, but kernel $K1 is Linux $kv1 .*SRC_ANY_VERSION=1" \
	cr "cd /root/bqlkit && make install SRC=/tmp/src-150 KVER=$K1"
clean src-other-version
bad src-does-not-fit "veth: the kit's changes do not fit the imported Linux 6.1.[0-9]* source" \
	cr "cd /root/bqlkit && make install SRC=/tmp/src-nofit KVER=$K1"
clean src-does-not-fit
check src-refused-base-kept test "$(cat "$kit/build/bases/6.1/MANIFEST" 2>/dev/null || true)" = "$base_before"
lap "make install SRC=, refused"
out=$(cr "cd /root/bqlkit && BQLKIT_NO_INITRAMFS=1 make install SRC=/tmp/src KVER=$K1") && rc=0 || rc=$?
check src-install-exit-0 test "$rc" -eq 0
check src-install-installed test "$(installed_for)" = "$K1 "
has src-install-from-src '(t95 SRC mark)' "$(cr "modinfo -k $K1 -F description veth")"
# For K1 only: the same headers under another kernel's name (a vendor's
# next ABI of the same upstream version) are refused the base (the
# linux-source tarball, K1's own, set aside: it would be taken).
out=$(cr "mv /usr/src/linux-source-6.1.tar.xz /usr/src/aside.tar.xz; rc=0
	KDIR=/lib/modules/$K1/build BQLKIT_BASES=/usr/src/bqlkit-$ver/bases /usr/src/bqlkit-$ver/scripts/pick-source.sh 6.1.0-999-amd64 || rc=\$?
	mv /usr/src/aside.tar.xz /usr/src/linux-source-6.1.tar.xz; exit \$rc") && rc=0 || rc=$?
check src-base-other-kernel-refused test "$rc" -eq 1
has src-base-other-kernel-says-why "given for kernel $K1 only" "$out"
out=$(cr "cd /root/bqlkit && BQLKIT_NO_INITRAMFS=1 make uninstall") || true
clean src-uninstall
lap "make install SRC="
