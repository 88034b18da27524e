#!/bin/bash
# Make a kernel source tree something the kit can build against.
#
#   prepare-tree.sh TREE [OUTDIR]
#
# For kernels with no distro headers package (5.15, 6.6 LTS; a vendor's
# own tree): TREE is an unpacked kernel tree.  Without a .config, it gets
# ARCH's defconfig (ARCH defaults to the host's) with every driver of the
# kit enabled as a module and MODVERSIONS on (as distro kernels have it);
# an existing .config is kept.  Then `make modules_prepare`.  With OUTDIR,
# the configuration and generated files go there (make O=OUTDIR), so one
# tree serves several architectures (ARCH=arm64 CROSS_COMPILE=... for
# mvneta); build against OUTDIR then.
#
# A prepared tree has no Module.symvers (that needs the whole kernel built).
# So that scripts/check-abi.sh still compares CRCs, the in-tree modules the
# kit replaces (driver.conf ABI_MODULE) are built from the unpatched tree and
# their exports written to TREE/Module.symvers; the core kernel's symbols
# stay unknown to modpost, which then only warns about them (the tree is
# marked with .bqlkit-prepared; scripts/build.sh passes KBUILD_MODPOST_WARN=1
# for such a tree).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: prepare-tree.sh TREE [OUTDIR]"
valid_dir TREE "$1" "an unpacked kernel tree"
[ $# -lt 2 ] || kbuild_path OUTDIR "$2"
tree=$(readlink -f "$1")
[ -f "$tree/Makefile" ] && [ -d "$tree/scripts/kconfig" ] ||
	die "$1 is not a kernel source tree (no Makefile or scripts/kconfig): give an unpacked kernel tree"
kv=$(kernel_version "$tree") || die "$(no_version "$tree")"
refuse_series "$(series_of "$kv")" "preparing $tree"
# A kernel's own build tools (kconfig: flex, bison; objtool: libelf; certs:
# libssl), and the cross compiler CROSS_COMPILE names.
"$BQLKIT_TOP/scripts/install-deps.sh" tree ${CROSS_COMPILE:+"gcc-${CROSS_COMPILE%-}"}
obj=$tree
if [ $# -eq 2 ]; then
	mkdir -p "$2"
	obj=$(readlink -f "$2")
fi
"$BQLKIT_TOP/scripts/install-deps.sh" tree
mk=(make -C "$tree" ${ARCH:+ARCH=$ARCH} ${CROSS_COMPILE:+CROSS_COMPILE=$CROSS_COMPILE} -j"$(nproc)")
[ "$obj" = "$tree" ] || mk+=(O="$obj")

if [ ! -f "$obj/.config" ]; then
	step "configuring Linux $kv: defconfig + the kit's drivers as modules"
	"${mk[@]}" defconfig >"$obj/.bqlkit-config.log" 2>&1 ||
		die "make defconfig failed in $obj (log: $obj/.bqlkit-config.log)"
	opts=(--enable MODULES --enable MODVERSIONS --module VETH)
	case ${ARCH:-$(uname -m)} in
	x86_64 | x86)
		# mana sits behind Hyper-V's PCI pass-through.
		opts+=(--enable HYPERVISOR_GUEST --enable HYPERV --module PCI_HYPERV
			--enable NET_VENDOR_MICROSOFT --module MICROSOFT_MANA)
		;;
	arm64)
		# mana on arm64 from 6.2 (olddefconfig drops it where unsupported).
		opts+=(--enable NET_VENDOR_MARVELL --module MVNETA --enable HYPERV --module PCI_HYPERV
			--enable NET_VENDOR_MICROSOFT --module MICROSOFT_MANA)
		;;
	arm)
		opts+=(--enable NET_VENDOR_MARVELL --module MVNETA)
		;;
	esac
	"$tree/scripts/config" --file "$obj/.config" "${opts[@]}"
	"${mk[@]}" olddefconfig >>"$obj/.bqlkit-config.log" 2>&1 ||
		die "make olddefconfig failed in $obj (log: $obj/.bqlkit-config.log)"
fi

step "make modules_prepare in $obj (Linux $kv)"
"${mk[@]}" modules_prepare >"$obj/.bqlkit-prepare.log" 2>&1 ||
	die "make modules_prepare failed in $obj (log: $obj/.bqlkit-prepare.log); is the compiler new enough for Linux $kv?"

# A tree whose kernel is built has the real Module.symvers: keep it.
if [ -f "$obj/Module.symvers" ] && [ ! -f "$obj/.bqlkit-prepared" ]; then
	echo "bqlkit: $obj (Linux $kv) has its kernel built (Module.symvers): ready as it is: make import SRC=$tree; make build KDIR=$obj"
	exit 0
fi

# Module.symvers stand-in: the in-tree modules whose ABI the kit keeps,
# built in a scratch copy of their directory.
: >"$obj/Module.symvers.bqlkit"
for drv in $BQLKIT_DRIVERS; do
	conf=$BQLKIT_TOP/drivers/$drv/driver.conf
	abi=$(sed -n 's/^ABI_MODULE="\(.*\)"/\1/p' "$conf")
	sym=$(sed -n 's/^KCONFIG=//p' "$conf")
	[ -n "$abi" ] || continue
	grep -q "^$sym=m" "$obj/include/config/auto.conf" || continue
	dir=$(dirname "$abi")
	scratch=$obj/.bqlkit-abi/$drv
	rm -rf "$scratch"
	mkdir -p "$scratch"
	cp -r "$tree/$dir/." "$scratch/"
	step "building the unpatched in-tree $drv for its exports"
	make -C "$obj" ${ARCH:+ARCH=$ARCH} ${CROSS_COMPILE:+CROSS_COMPILE=$CROSS_COMPILE} -j"$(nproc)" \
		M="$scratch" KBUILD_MODPOST_WARN=1 modules >"$obj/.bqlkit-$drv.log" 2>&1 ||
		die "the unpatched $drv does not build in $obj (log: $obj/.bqlkit-$drv.log)"
	# External builds record the module by its absolute path (by its path
	# relative to M= from 6.13 on): use the
	# in-tree path, as a full kernel build would.
	awk -F'\t' -v OFS='\t' -v abs="$scratch/" -v rel="$dir/" \
		'{ if ($3 ~ /^\//) sub("^" abs, rel, $3); else $3 = rel $3; print }' "$scratch/Module.symvers" >>"$obj/Module.symvers.bqlkit"
	rm -rf "$obj/.bqlkit-abi"
done
mv "$obj/Module.symvers.bqlkit" "$obj/Module.symvers"
echo "Linux $kv prepared by bqlkit's prepare-tree.sh on $(date -u +%FT%TZ): Module.symvers holds only the in-tree modules whose ABI the kit keeps" >"$obj/.bqlkit-prepared"
echo "bqlkit: $obj (Linux $kv) is ready: make import SRC=$tree; make build KDIR=$obj"
