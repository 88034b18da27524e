#!/bin/sh
# Signature enforcement: the kernel booted with or without
# module.sig_enforce=1 (bqlkit.enforce says which the host asked for).
# /bqlkit/veth-signed.ko is the kit's veth signed with a key this kernel
# does not trust, as DKMS signs it before its key is enrolled;
# /bqlkit/module-trust.sh is the kit's own decision (scripts/module-trust.sh,
# the file install.sh and dkms.conf run), run here on the kernel's real
# state.  Enforced: the kernel refuses the signed module (the premise), the
# kit's decision says so, and the in-tree veth (loaded by /init: what stays
# in charge when the kit is not installed) loads and carries traffic.  Not
# enforced: the kernel loads the signed module and the decision says it
# would.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "${BQLKIT_GUEST:-/bqlkit}/lib.sh"

sig_state veth

# pair_pings: a veth pair up, pings across it, the pair gone again.
pair_pings() {
	setup_pair 0 && ping_ok
	_r=$?
	ip -n A link del vethA 2>/dev/null
	return $_r
}
intree_loaded() { grep -qx 'veth ok' "$BQLKIT_RUN/modules.status" && [ -d /sys/module/veth ]; }

# The in-tree veth /init loaded (signed by the distro: loads either way).
check intree_veth_loaded "the in-tree veth is loaded" intree_loaded
check intree_veth_traffic "a veth pair carries pings" pair_pings
sig_premise veth /bqlkit/veth-signed.ko
sig_decision
check veth_back_traffic "the in-tree veth, loaded again, carries pings" pair_pings
check dmesg_clean "no WARNING/BUG/Oops" dmesg_check
