#!/bin/sh
# Signature enforcement (issue 33): the kernel booted with or without
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

ENFORCE=$(knob enforce 0)
SIG=$(cat /sys/module/module/parameters/sig_enforce 2>/dev/null || echo none)
emit "sigenforce asked=$ENFORCE sig_enforce=$SIG kernel=$(uname -r)"
if [ "$ENFORCE" = 1 ]; then
	check sig_enforce_on "the kernel enforces signatures (sig_enforce=$SIG)" [ "$SIG" = Y ]
else
	check sig_enforce_off "the kernel does not enforce signatures (sig_enforce=$SIG)" [ "$SIG" = N ]
fi

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

# The premise: what the kernel does with a module signed by a key it does
# not trust.
rmmod veth
if out=$(insmod /bqlkit/veth-signed.ko 2>&1); then kit_loaded=1; else kit_loaded=0; fi
emit "sigenforce insmod_signed loaded=$kit_loaded out=$(echo "$out" | tr '\n' ' ')"
rmmod veth 2>/dev/null
insmod /lib/modules/bqlkit/veth.ko
if [ "$ENFORCE" = 1 ]; then
	check kernel_refuses_untrusted "the kernel refused the kit's veth signed with an untrusted key ($out)" [ "$kit_loaded" = 0 ]
else
	check kernel_loads_untrusted "the kernel loaded the kit's veth signed with an untrusted key" [ "$kit_loaded" = 1 ]
fi

# The kit's decision on this kernel, as install.sh and dkms.conf take it.
line=$(sh /bqlkit/module-trust.sh "$(uname -r)")
rc=$?
emit "sigenforce module_trust rc=$rc line=$line"
refuses() { [ "$rc" -eq 1 ] && echo "$line" | grep -q 'module.sig_enforce=1'; }
if [ "$ENFORCE" = 1 ]; then
	check kit_refuses "the kit's decision: do not install (exit $rc: $line)" refuses
else
	check kit_installs "the kit's decision: install (exit $rc)" [ "$rc" -eq 0 ]
fi
check veth_back_traffic "the in-tree veth, loaded again, carries pings" pair_pings
check dmesg_clean "no WARNING/BUG/Oops" dmesg_check
