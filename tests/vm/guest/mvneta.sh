#!/bin/busybox sh
# shellcheck shell=dash source-path=SCRIPTDIR
# mvneta scenario (no device needed): /init has inserted the kit's
# mvneta.ko after its in-tree dependencies (phylink, libphy, ...); it must
# resolve every symbol against the running kernel, be the kit's module, and
# unload cleanly.
. /bqlkit/lib.sh

kit_module_loaded mvneta
check dmesg_no_symbol_errors "no CRC/unknown-symbol complaints" \
	sh -c '! dmesg | grep -E "disagrees about version of symbol|Unknown symbol|no symbol version"'
check mvneta_rmmod "rmmod mvneta" rmmod mvneta
check dmesg_clean "no WARNING/BUG/Oops" dmesg_check
