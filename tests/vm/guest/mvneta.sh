#!/bin/busybox sh
# shellcheck shell=dash source-path=SCRIPTDIR
# mvneta scenario (no device needed): /init has inserted the kit's
# mvneta.ko after its in-tree dependencies (phylink, libphy, ...); it must
# resolve every symbol against the running kernel, be the kit's module, and
# unload cleanly.
. /bqlkit/lib.sh

status() { sed -n "s/^$1 //p" "$BQLKIT_RUN/modules.status"; }

check mvneta_insmod "the kit's mvneta.ko inserted" [ "$(status mvneta)" = ok ]
ver=$(cat /sys/module/mvneta/version 2>/dev/null)
emit "module name=mvneta version=${ver:-none} srcversion=$(cat /sys/module/mvneta/srcversion 2>/dev/null)"
case $ver in
*-bqlkit) result mvneta_is_kit PASS "version=$ver" ;;
*) result mvneta_is_kit FAIL "version=${ver:-none}: not the kit's module" ;;
esac
check dmesg_no_symbol_errors "no CRC/unknown-symbol complaints" \
	sh -c '! dmesg | grep -E "disagrees about version of symbol|Unknown symbol|no symbol version"'
check mvneta_rmmod "rmmod mvneta" rmmod mvneta
check dmesg_clean "no WARNING/BUG/Oops" dmesg_check
