#!/bin/bash
# After a DKMS install: are the kit's modules signed, and will the kernel
# accept them?  Tells the user exactly how to enroll DKMS's key.
#
#   secure-boot.sh KVER...
#
# DKMS signs what it builds with its MOK key (/var/lib/dkms/mok.key and
# mok.pub, made on first use; /etc/dkms/framework.conf may name others).
# - Secure Boot on and the key not enrolled: print how to enroll it.
# - The kernel enforces module signatures (Secure Boot on, sig_enforce, or
#   CONFIG_MODULE_SIG_FORCE) and a module is unsigned: fail (exit 1) with the
#   fix, instead of a later "Key was rejected by service" from modprobe.
# Test hooks: BQLKIT_SB_STATE=enabled|disabled, BQLKIT_SIG_ENFORCE=1,
# BQLKIT_MOK_ENROLLED=yes|no stand in for mokutil and /sys.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# sb_state, enrolled, enforced_why, trust_cert: the kit's one answer to
# "does this kernel load what DKMS signed" (install.sh and dkms.conf ask it
# before installing anything).
# shellcheck source=module-trust.sh
BQLKIT_TRUST_LIB=1 . "$BQLKIT_TOP/scripts/module-trust.sh"
cert=$(trust_cert)
enforced() { [ -n "$(enforced_why "$1")" ]; }

enroll="mokutil --import $cert (choose a one-time password), reboot, and in the blue MOK manager choose 'Enroll MOK', 'Continue', 'Yes', enter that password and reboot"
sb=$(sb_state)
rc=0
unsigned_any=
for k in "$@"; do
	unsigned=()
	for ko in "/lib/modules/$k/updates/dkms/"*.ko*; do
		[ -f "$ko" ] || continue
		[ -n "$(modinfo -F signer "$ko" 2>/dev/null)" ] || unsigned+=("$(basename "$ko")")
	done
	[ ${#unsigned[@]} -gt 0 ] || continue
	unsigned_any=1
	if enforced "$k"; then
		echo "bqlkit: error: kernel $k only loads signed modules (Secure Boot $sb) but DKMS did not sign ${unsigned[*]}: install openssl (DKMS makes its key /var/lib/dkms/mok.key with it) and run the install again; then enroll the key: $enroll" >&2
		rc=1
	else
		note "${unsigned[*]} for $k not signed (DKMS had no key or sign-file); fine while Secure Boot is off"
	fi
done
if [ "$sb" = enabled ] && [ -z "$unsigned_any" ]; then
	if enrolled; then
		note "Secure Boot is on and DKMS's key $cert is enrolled: the kernel accepts the kit's modules"
	else
		note "Secure Boot is on: the kit's modules are signed with DKMS's key, which the firmware does not trust yet, so 'modprobe veth' would fail with 'Key was rejected by service'. Enroll the key once: $enroll"
	fi
fi
exit $rc
