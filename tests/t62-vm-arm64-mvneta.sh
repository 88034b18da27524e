#!/bin/bash
# mvneta on arm64 (the Armada boards' driver): cross-build the kit's
# mvneta.ko for Debian's arm64 6.1 kernel (its series is empty: the audit
# proves the base has xmit_more and BQL) and load it in an arm64 VM, no
# device needed: its symbols must resolve and it must unload cleanly.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip vm-arm64-mvneta "BQLKIT_QUICK=1 (VM tests not run)"
	exit 0
fi
logs=$BQLKIT_BUILD/test-logs
mkdir -p "$logs"
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")-security
if ! out=$("$BQLKIT_TOP/lab/get-headers.sh" "$suite" arm64 linux-headers-arm64 2>"$logs/vm-mvneta-headers.err"); then
	fail vm-arm64-mvneta-headers "$(tail -1 "$logs/vm-mvneta-headers.err")"
	exit 0
fi
read -r kver kdir <<<"$out"
s=$(series_of "$(kernel_version "$kdir")")
check "vm-arm64-$s-mvneta-audit" "$BQLKIT_TOP/scripts/audit-mvneta.sh" "$(base_dir "$s")"
if ! ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- KDIR=$kdir \
	"$BQLKIT_TOP/scripts/build.sh" "$kver" mvneta >"$logs/vm-mvneta-build.log" 2>&1; then
	fail "vm-arm64-$s-mvneta-build" "$(grep -m1 'error' "$logs/vm-mvneta-build.log" || tail -1 "$logs/vm-mvneta-build.log")"
	exit 0
fi
ko=$BQLKIT_BUILD/$kver/mvneta.ko
pass "vm-arm64-$s-mvneta-build"
vm=$BQLKIT_TOP/tests/vm
log=$logs/vm-mvneta-$kver.log
initrd=$(mktemp /tmp/bqlkit-initrd-XXXXXX.cpio.gz)
rc=0
{ "$vm/mkinitramfs.sh" --arch arm64 --kver "$kver" --scenario mvneta --out "$initrd" --module "$ko" &&
	"$vm/run-vm.sh" --arch arm64 --kver "$kver" --initrd "$initrd" --log "$log" --timeout 300 --quiet; } \
	>/dev/null 2>"$log.err" || rc=$?
rm -f "$initrd"
if ! grep -q '^BQLKIT-END' "$log" 2>/dev/null; then
	fail "vm-arm64-$s-mvneta-run" "the VM run did not complete (rc=$rc): $(tail -1 "$log.err") (log: $log)$(vm_crash_note "$log")"
	exit 0
fi
vm_results "vm-arm64-$s" "$log"
