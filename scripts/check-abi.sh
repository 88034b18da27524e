#!/bin/bash
# ABI check: the kit's module must export every symbol the in-tree module
# exports, with the same CRC, export type and namespace as the kernel's
# Module.symvers records, so that in-tree modules built against it (mana_ib
# for mana) load against the kit's module.
#
#   check-abi.sh KVER DRIVER
#
# Reads ABI_MODULE (the in-tree module's path in Module.symvers) from
# drivers/DRIVER/driver.conf and the kit's build/KVER/DRIVER/Module.symvers.
# Exit 0: every symbol matches (or the driver declares no ABI_MODULE, or the
# kernel does not build the module); 1: a symbol is missing or differs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || die "usage: check-abi.sh KVER DRIVER"
kver=$1
drv=$2
kdir=${KDIR:-$(kdir_for "$kver")}
abi=$(sed -n 's/^ABI_MODULE="\(.*\)"/\1/p' "$BQLKIT_TOP/drivers/$drv/driver.conf")
[ -n "$abi" ] || exit 0
ksv=$kdir/Module.symvers
msv=$BQLKIT_BUILD/$kver/$drv/Module.symvers
[ -f "$ksv" ] || die "$drv: no $ksv: cannot check the ABI of $drv against kernel $kver"
[ -f "$msv" ] || die "$drv: no $msv: build $drv for $kver first"

# Module.symvers: CRC <tab> symbol <tab> module <tab> export type [<tab> namespace]
want=$(awk -F'\t' -v m="$abi" '$3 == m { print $2 "\t" $1 "\t" $4 "\t" $5 }' "$ksv" | LC_ALL=C sort)
if [ -z "$want" ]; then
	sym=$(sed -n 's/^KCONFIG=//p' "$BQLKIT_TOP/drivers/$drv/driver.conf")
	if grep -q "^$sym=[ym]" "$kdir/include/config/auto.conf" 2>/dev/null; then
		note "$drv: the in-tree $drv of kernel $kver exports no symbols ($ksv lists none from $abi): no ABI to keep"
	else
		note "$drv: kernel $kver does not build the in-tree $drv ($sym is not set): no ABI to keep"
	fi
	exit 0
fi
have=$(awk -F'\t' '{ print $2 "\t" $1 "\t" $4 "\t" $5 }' "$msv" | LC_ALL=C sort)
rc=0 n=0
while IFS=$'\t' read -r sym crc type ns; do
	n=$((n + 1))
	line=$(awk -F'\t' -v s="$sym" '$1 == s' <<<"$have")
	if [ -z "$line" ]; then
		echo "bqlkit: error: $drv: ABI break for kernel $kver: the kit's $drv.ko does not export $sym (the in-tree $abi.ko does)" >&2
		rc=1
		continue
	fi
	IFS=$'\t' read -r _ kcrc ktype kns <<<"$line"
	if [ "$kcrc" != "$crc" ]; then
		echo "bqlkit: error: $drv: ABI break for kernel $kver: $sym has CRC $kcrc in the kit's $drv.ko but $crc in $ksv (a type it depends on changed; in-tree users such as mana_ib would not load)" >&2
		rc=1
	elif [ "$ktype" != "$type" ] || [ "$kns" != "$ns" ]; then
		echo "bqlkit: error: $drv: ABI break for kernel $kver: $sym is $ktype${kns:+ ($kns)} in the kit's $drv.ko but $type${ns:+ ($ns)} in $ksv" >&2
		rc=1
	fi
done <<<"$want"
extra=$(comm -23 <(cut -f1 <<<"$have" | LC_ALL=C sort) <(cut -f1 <<<"$want" | LC_ALL=C sort) | tr '\n' ' ')
[ -z "$extra" ] || note "$drv: the kit's $drv.ko also exports symbols the in-tree module does not: $extra"
[ $rc -eq 0 ] && echo "bqlkit: $drv: ABI kept for $kver: $n exported symbols match $ksv"
exit $rc
