#!/bin/bash
# Build modpost for a 32-bit target, to run on this 64-bit host.
#
#   build-modpost.sh SOURCE KDIR OUT
#
# Debian's linux-kbuild runs modpost.real-{lsb,msb}-{32,64} by the module's
# ELF class, but all four were built on the build machine: their device
# table layouts (scripts/mod/devicetable-offsets.h) are the host's.  A 32-bit
# ARM module with an of_device_id table (mvneta) then fails modpost with
# "sizeof(struct of_device_id)=200 is not a modulo of the size of section".
# This builds modpost from SOURCE (the linux-source-X.Y tarball of the host's
# linux-kbuild) with the layouts and ELF class of KDIR's target, computed by
# compiling devicetable-offsets.c and empty.c for it (ARCH, CROSS_COMPILE).
# OUT/modpost.real-lsb-32 is the result (a big-endian target: -msb-32).
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

[ $# -eq 3 ] || die "usage: build-modpost.sh SOURCE KDIR OUT"
src=$1 kdir=$2 out=$3
[ -f "$src" ] || die "no kernel source tarball $src to build modpost from"
work=$(mktemp -d "${TMPDIR:-/tmp}/bqlkit-modpost.XXXXXX")
trap 'rm -rf "$work"' EXIT

step "building modpost for ${ARCH:-?} from $(basename "$src")"
mkdir -p "$work/src"
# scripts/include/ (modpost's list.h, hashtable.h) exists from 6.8 on.
xz -T0 -dc "$src" | tar -x -C "$work/src" --strip-components=1 --wildcards \
	'*/scripts/mod/*' '*/scripts/include/*' '*/include/linux/*' 2>"$work/tar.err" || true
mod=$work/src/scripts/mod
[ -f "$mod/modpost.c" ] || die "$src has no scripts/mod/modpost.c"

# Target-side objects, compiled by the kernel's own build for KDIR.
mkdir -p "$work/target"
cp "$mod/devicetable-offsets.c" "$mod/empty.c" "$work/target/"
echo 'obj-m :=' >"$work/target/Kbuild"
mkdir -p "$out"
make -C "$kdir" M="$work/target" ${ARCH:+ARCH=$ARCH} ${CROSS_COMPILE:+CROSS_COMPILE=$CROSS_COMPILE} \
	devicetable-offsets.s empty.o >"$out/build-modpost-target.log" 2>&1 ||
	{ tail -5 "$out/build-modpost-target.log" >&2; die "cannot compile devicetable-offsets.c for $kdir (log: $out/build-modpost-target.log)"; }

# devicetable-offsets.h, as Kbuild's filechk_offsets writes it.
{
	echo "#ifndef __DEVICETABLE_OFFSETS_H__"
	echo "#define __DEVICETABLE_OFFSETS_H__"
	sed -ne '/^\.ascii "->/{s:^\.ascii "::; s:"$::; s:->#\(.*\):/* \1 */:; s:^->\([^ ]*\) [\$#]*\([^ ]*\) \(.*\):#define \1 \2 /* \3 */:; s:->::; p;}' \
		-ne '/^->/{s:->#\(.*\):/* \1 */:; s:^->\([^ ]*\) [\$#]*\([^ ]*\) \(.*\):#define \1 \2 /* \3 */:; s:->::; p;}' \
		"$work/target/devicetable-offsets.s"
	echo "#endif"
} >"$mod/devicetable-offsets.h"
grep -q '#define SIZE_of_device_id ' "$mod/devicetable-offsets.h" ||
	die "no device table offsets in the compiled devicetable-offsets.s"

gcc -O2 -o "$work/mk_elfconfig" "$mod/mk_elfconfig.c"
"$work/mk_elfconfig" <"$work/target/empty.o" >"$mod/elfconfig.h"
class=$(sed -n 's/^#define KERNEL_ELFCLASS ELFCLASS//p' "$mod/elfconfig.h")
endian=$(sed -n 's/^#define KERNEL_ELFDATA ELFDATA2//p' "$mod/elfconfig.h")
case $endian in LSB) e=lsb ;; MSB) e=msb ;; *) die "unknown ELF data encoding '$endian'" ;; esac

# The host's modpost sources: every .c but the target-side ones.
srcs=()
for f in "$mod"/*.c; do
	case ${f##*/} in mk_elfconfig.c | devicetable-offsets.c | empty.c) ;; *) srcs+=("${f##*/}") ;; esac
done
(cd "$mod" && gcc -O2 -I"$work/src/scripts/include" -o "$work/modpost" "${srcs[@]}") \
	>"$out/build-modpost-host.log" 2>&1 ||
	{ tail -5 "$out/build-modpost-host.log" >&2; die "cannot build modpost from $src (log: $out/build-modpost-host.log)"; }
cp "$work/modpost" "$out/modpost.real-$e-$class"
echo "$out/modpost.real-$e-$class"
