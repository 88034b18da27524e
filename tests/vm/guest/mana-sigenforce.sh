#!/bin/busybox sh
# shellcheck shell=dash source-path=SCRIPTDIR
# mana under signature enforcement (tests/t66): guest/sigenforce.sh's
# checks on the emulated MANA VFs.  /init loaded the kernel's own mana (what
# stays in charge when the kit does not install: on an Azure VM, the only
# NIC); /bqlkit/mana-signed.ko is the kit's mana signed with a key this
# kernel does not trust, as DKMS signs it before its key is enrolled;
# /bqlkit/module-trust.sh is the kit's decision (scripts/module-trust.sh).
# Enforced: the kernel refuses the kit's module (the premise), the decision
# says do not install, and the in-tree mana, loaded again, carries traffic.
. /bqlkit/lib.sh
. /bqlkit/mana-lib.sh

sig_state mana
intree_mana() { [ "$(module_status mana)" = ok ] && [ -d /sys/module/mana ] && ! mana_is_kit; }
check intree_mana_loaded "the in-tree mana is loaded (not the kit's)" intree_mana
check intree_mana_setup "both VFs up in netns A and B" mana_setup
check intree_mana_traffic "A pings B over the emulated wire" ping_ok
[ ! -d /sys/module/mana_ib ] || rmmod mana_ib
sig_premise mana /bqlkit/mana-signed.ko
sig_decision
check intree_mana_back "the in-tree mana is loaded again" sh -c '[ -d /sys/module/mana ] && ! grep -q bqlkit /sys/module/mana/version 2>/dev/null'
check intree_mana_back_setup "both VFs up again" mana_setup
check intree_mana_back_traffic "A pings B again" ping_ok
check dmesg_clean "no WARNING/BUG/Oops" dmesg_check
