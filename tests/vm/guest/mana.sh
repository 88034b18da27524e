#!/bin/busybox sh
# shellcheck shell=dash source-path=SCRIPTDIR
# mana scenario (no device needed): /init has inserted the kit's mana.ko and
# then the kernel's own mana_ib.ko (where the kernel has one).  mana_ib
# resolves mana's exported symbols with their CRCs: it loads only if the
# kit's module kept the in-tree ABI.  Then both unload and dmesg is clean.
. /bqlkit/lib.sh

kit_module_loaded mana
if grep -qx mana_ib /lib/modules/bqlkit/load.list; then
	check mana_ib_insmod "the kernel's mana_ib.ko inserted after the kit's mana.ko" [ "$(module_status mana_ib)" = ok ]
	check mana_ib_holds_kit_mana "mana_ib is linked against the loaded (kit) mana" [ -e /sys/module/mana/holders/mana_ib ]
else
	result mana_ib_insmod SKIP "this kernel has no in-tree mana_ib"
fi
check dmesg_no_symbol_errors "no CRC/unknown-symbol complaints" \
	sh -c '! dmesg | grep -E "disagrees about version of symbol|Unknown symbol|no symbol version"'
dmesg | grep -iE 'mana|symbol' | head -n 20 | sed 's/^/BQLKIT dmesg /'
if [ "$(module_status mana_ib)" = ok ]; then
	check mana_ib_rmmod "rmmod mana_ib" rmmod mana_ib
fi
check mana_rmmod "rmmod mana" rmmod mana
check dmesg_clean "no WARNING/BUG/Oops" dmesg_check
