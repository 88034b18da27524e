#!/bin/bash
# Signature enforcement in a VM, guest/sigenforce.sh: each
# test kernel booted with module.sig_enforce=1 refuses the kit's veth signed
# with a key it does not trust (made here; it stands for DKMS's key before
# enrollment: the premise), the kit's own decision (scripts/module-trust.sh,
# run in the guest on the kernel's real state) says "do not install", and
# the in-tree veth loads and carries traffic.  The first kernel is also
# booted without enforcement (the kernel loads the module, the decision
# says install) and, enforced, with a mutant of the decision that ignores
# enforcement, whose kit_refuses check must fail.  Then mana the same way
# on the kit's QEMU with two emulated MANA VFs (guest/mana-sigenforce.sh):
# the kit's mana refused, the in-tree mana carries traffic.  ~1 min per boot.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip vm-sig-enforce "BQLKIT_QUICK=1 (VM tests not run)"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bqlkit-t66.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cn="bqlkit test key (stands for DKMS's, not enrolled)"
if ! openssl req -new -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=$cn" \
	-keyout "$tmp/key.pem" -outform DER -out "$tmp/cert.der" >"$tmp/openssl.log" 2>&1; then
	fail vm-sig-enforce-key "openssl req: $(tail -1 "$tmp/openssl.log")"
	exit 0
fi
# The decision with enforcement ignored: must be caught.
sed 's/^enforced_why() {$/&\n\treturn 0/' "$BQLKIT_TOP/scripts/module-trust.sh" >"$tmp/module-trust-mutant.sh"
check vm-sig-enforce-mutant-made bash -c "! cmp -s '$BQLKIT_TOP/scripts/module-trust.sh' '$tmp/module-trust-mutant.sh'"

# signed NAME KVER DRIVER: the kit's DRIVER built for KVER and signed with
# the untrusted key, as $tmp/DRIVER-KVER.ko; false (after a FAIL) if not.
signed() {
	local out ko=$tmp/$3-$2.ko
	if ! out=$("$BQLKIT_TOP/scripts/build.sh" "$2" "$3" 2>&1); then
		fail "$1-build" "$(tail -1 <<<"$out")"
		return 1
	fi
	cp "$BQLKIT_BUILD/$2/$3.ko" "$ko"
	"$(kdir_for "$2")/scripts/sign-file" sha256 "$tmp/key.pem" "$tmp/cert.der" "$ko"
	has "$1-module-signed" "^$cn\$" "$(modinfo -F signer "$ko")"
}

first=1
for k in $(test_kernels); do
	series=$(series_of "$(kernel_version "$(kdir_for "$k")")")
	t=vm-$series-sigenforce
	signed "$t" "$k" veth || continue
	ko=$tmp/veth-$k.ko
	log=$BQLKIT_BUILD/test-logs/vm-sigenforce-$k
	files=(--scenario sigenforce --file "$ko:/bqlkit/veth-signed.ko")
	vm_smoke "$t" "$k" "" "$log.log" "${files[@]}" \
		--file "$BQLKIT_TOP/scripts/module-trust.sh:/bqlkit/module-trust.sh" \
		--append "bqlkit.enforce=1 module.sig_enforce=1"
	[ -n "$first" ] || continue
	first=
	vm_smoke "$t-off" "$k" "" "$log-off.log" "${files[@]}" \
		--file "$BQLKIT_TOP/scripts/module-trust.sh:/bqlkit/module-trust.sh" \
		--append "bqlkit.enforce=0"
	"$BQLKIT_TOP/tests/vm/smoke.sh" --kver "$k" --log "$log-mutant.log" --quiet "${files[@]}" \
		--file "$tmp/module-trust-mutant.sh:/bqlkit/module-trust.sh" \
		--append "bqlkit.enforce=1 module.sig_enforce=1" >/dev/null 2>&1 || true
	has "$t-mutant-killed" 'BQLKIT-RESULT kit_refuses FAIL' "$(cat "$log-mutant.log" 2>/dev/null)"
done

# mana, where it is the only NIC: the kit's mana signed with the untrusted
# key, the kernel booted enforcing, the in-tree mana loaded by /init.
mana_dev_qemu || exit 0
for k in $(test_kernels); do
	series=$(series_of "$(kernel_version "$(kdir_for "$k")")")
	t=vm-$series-sigenforce-mana
	signed "$t" "$k" mana || continue
	MANA_DEV_APPEND="bqlkit.enforce=1 module.sig_enforce=1" vm_mana_dev "$t" "$k" none \
		--scenario mana-sigenforce --timeout 300 --file "$tmp/mana-$k.ko:/bqlkit/mana-signed.ko" \
		--file "$BQLKIT_TOP/scripts/module-trust.sh:/bqlkit/module-trust.sh"
done
