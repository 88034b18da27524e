#!/bin/bash
# arm64 VM smoke test: Debian bookworm's arm64 6.1 kernel under
# qemu-system-aarch64 (TCG, -M virt), an arm64 initramfs (arm64 busybox,
# iproute2, ethtool, ping and their libraries from arm64 .debs; static
# aarch64 udpflood/bqlwatch) and the kit's veth.ko cross-built against the
# arm64 headers (lab/get-headers.sh, the host's linux-kbuild).  Runs the
# smoke scenario; one line per guest check: vm-arm64-<series>-<check>.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip vm-arm64 "BQLKIT_QUICK=1 (VM tests not run)"
	exit 0
fi
logs=$BQLKIT_BUILD/test-logs
mkdir -p "$logs"
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")-security

# The kernel the distro's arm64 headers metapackage names, and its headers.
if ! out=$("$BQLKIT_TOP/lab/get-headers.sh" "$suite" arm64 linux-headers-arm64 2>"$logs/vm-arm64-headers.err"); then
	fail vm-arm64-headers "cannot get the arm64 headers: $(tail -1 "$logs/vm-arm64-headers.err")"
	exit 0
fi
read -r kver kdir <<<"$out"
s=$(series_of "$(kernel_version "$kdir")")
pass "vm-arm64-$s-headers"

# Cross-build the kit's module (always: a few seconds, never stale).
if ! ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- KDIR=$kdir \
	"$BQLKIT_TOP/scripts/build.sh" "$kver" >"$logs/vm-arm64-build.log" 2>&1; then
	fail "vm-arm64-$s-build" "$(grep -m1 'error' "$logs/vm-arm64-build.log" || tail -1 "$logs/vm-arm64-build.log")"
	exit 0
fi
ko=$BQLKIT_BUILD/$kver/veth.ko
check "vm-arm64-$s-build" sh -c "file '$ko' | grep -q 'ARM aarch64'"

log=$logs/vm-smoke-$kver.log
rm -f "$log"
rc=0
"$BQLKIT_TOP/tests/vm/smoke.sh" --arch arm64 --kver "$kver" --veth "$ko" --log "$log" \
	--timeout 400 --quiet >/dev/null 2>"$log.err" || rc=$?
if ! grep -q '^BQLKIT-END' "$log" 2>/dev/null; then
	fail "vm-arm64-$s-run" "the VM run did not complete: $(tail -1 "$log.err" 2>/dev/null) (log: $log)$(vm_crash_note "$log")"
	exit 0
fi
vm_results "vm-arm64-$s" "$log"
grep -q "BQLKIT boot kernel=$kver " "$log" ||
	fail "vm-arm64-$s-kernel" "the guest did not run $kver (log: $log)"
grep -o 'BQLKIT \(rtt\|bql label=load\).*' "$log" | sed "s/^/vm-arm64-$s: /" >&2 || true
[ "$rc" -eq 0 ] || grep -q 'BQLKIT-RESULT .* FAIL' "$log" ||
	fail "vm-arm64-$s-harness" "smoke.sh exit $rc with no failed check (log: $log)"
