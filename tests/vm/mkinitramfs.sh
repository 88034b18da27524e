#!/bin/bash
# mkinitramfs.sh --kver KVER --scenario NAME --out FILE [--veth /path/to/veth.ko]
#                [--arch ARCH] [--file SRC:DST]... [--module FILE]... [--intree NAME]...
# Build a gzip'd newc initramfs that boots into guest/init and runs
# guest/NAME.sh.  Without --veth the kernel's stock veth module is used.
# --arch (Debian architecture, default amd64): for a foreign one the tools
# come from that architecture's .debs (busybox-static, iproute2, ethtool,
# iputils-ping and the libraries they need) and the guest C tools are
# cross-compiled.  --file copies SRC to DST in the image (e.g. a BPF object).
# --module stages another kit module (loaded after veth, under its modinfo
# name, in-tree dependencies resolved); --intree stages the kernel's own
# module NAME and its dependencies, loaded after the --module ones.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

usage() { die "usage: mkinitramfs.sh --kver KVER --scenario NAME --out FILE [--veth FILE] [--arch ARCH] [--file SRC:DST]... [--module FILE]... [--intree NAME]..."; }
kver='' scenario='' out='' veth='' extra=() kitmods=() intree=()
while [[ $# -gt 0 ]]; do
	case $1 in
	--kver) need_arg "$1" "${2:-}"; kver=$2; shift 2 ;;
	--scenario) need_arg "$1" "${2:-}"; scenario=$2; shift 2 ;;
	--out) need_arg "$1" "${2:-}"; out=$2; shift 2 ;;
	--veth) need_arg "$1" "${2:-}"; veth=$2; shift 2 ;;
	--arch) need_arg "$1" "${2:-}"; VM_ARCH=$2; shift 2 ;;
	--file) need_arg "$1" "${2:-}"; extra+=("$2"); shift 2 ;;
	--module) need_arg "$1" "${2:-}"; kitmods+=("$2"); shift 2 ;;
	--intree) need_arg "$1" "${2:-}"; intree+=("$2"); shift 2 ;;
	*) usage ;;
	esac
done
[[ -n $kver && -n $scenario && -n $out ]] || usage
[[ -f $VM_DIR/guest/$scenario.sh ]] || die "no such scenario: $VM_DIR/guest/$scenario.sh"
[[ -z $veth || -f $veth ]] || die "--veth: no such file: $veth"

# Modules every scenario may need; veth is added separately.
BASE_MODULES=(sch_fq_codel sch_ingress cls_u32 act_gact)
# Host binaries copied (with their ldd closure) and called by absolute path.
HOST_TOOLS=(/usr/sbin/ip /usr/sbin/tc /usr/sbin/ethtool /usr/bin/ping)

kdir=$("$VM_DIR/get-kernel.sh" --arch "$VM_ARCH" "$kver")
moddir=$kdir/lib/modules/$kver
foreign=''
[[ $VM_ARCH == "$(dpkg --print-architecture)" ]] || foreign=1
# Guest C tools: bin/ for the host architecture (as before), bin/ARCH/ else.
bindir=$BQLKIT_VM_BUILD/bin${foreign:+/$VM_ARCH}
cc=gcc
if [[ -n $foreign ]]; then
	case $VM_ARCH in
	arm64) cc=aarch64-linux-gnu-gcc ;;
	*) die "unsupported --arch $VM_ARCH (amd64, arm64)" ;;
	esac
	command -v "$cc" >/dev/null || die "$cc not found (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)"
fi
mkdir -p "$bindir"
root=$(mktemp -d "$BQLKIT_VM_BUILD/initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT

# build_tool NAME: the static guest tool tests/vm/NAME.c, rebuilt when it
# or a model header it may include (manactl: mana_debug.h, mana_gdma.h) is
# newer.
build_tool() {
	local bin=$bindir/$1 src=$VM_DIR/$1.c hdr=$VM_DIR/../../lab/qemu/hw/net
	if [[ ! -x $bin || $src -nt $bin || $hdr/mana_debug.h -nt $bin || $hdr/mana_gdma.h -nt $bin ]]; then
		"$cc" -O2 -Wall -static -o "$bin.$$" "$src" || die "cannot build $1"
		mv "$bin.$$" "$bin"
	fi
	echo "$bin"
}

install_busybox() {
	local bb applet
	bb=$(command -v busybox) || die "busybox not found (apt-get install busybox-static)"
	! ldd "$bb" >/dev/null 2>&1 || die "$bb is not static (apt-get install busybox-static)"
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib/modules/bqlkit,etc,proc,sys,dev,run,tmp,var}
	cp "$bb" "$root/bin/busybox"
	# A foreign busybox cannot run here: its applets are the host's (same
	# Debian package, so the same list).
	[[ -z $foreign ]] || cp "$fdeb/bin/busybox" "$root/bin/busybox"
	for applet in $("$bb" --list); do
		[[ -e $root/bin/$applet ]] || ln -s busybox "$root/bin/$applet"
	done
	# Never let an applet shadow the real tools below.
	rm -f "$root"/bin/{ip,tc,ping,ping6,ethtool}
}

install_host_tools() {
	local tool lib
	for tool in "${HOST_TOOLS[@]}"; do
		[[ -x $tool ]] || die "missing host tool $tool (iproute2/ethtool/iputils-ping)"
		cp -L "$tool" "$root$tool"
		for lib in $(ldd "$tool" | grep -o '/[^ ]*'); do
			[[ -e $root$lib ]] && continue
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
	done
}

# Foreign architecture: extract ARCH's .debs (cached) under $fdeb.
FOREIGN_DEBS=(busybox-static iproute2 ethtool iputils-ping)
fdeb=$BQLKIT_CACHE/rootfs-$VM_ARCH
# fetch_foreign PKG...: download and extract PKG... into $fdeb once each.
fetch_foreign() {
	local p f debs=$BQLKIT_CACHE/debs
	mkdir -p "$debs" "$fdeb/.done"
	for p in "$@"; do
		[[ -e $fdeb/.done/$p ]] && continue
		f=$(find "$debs" -maxdepth 1 -name "${p}_*_${VM_ARCH}.deb" | sort -V | tail -n1)
		if [[ -z $f ]]; then
			apt_download "$debs" "$p" >/dev/null || die "cannot download $p ($VM_ARCH)"
			f=$(find "$debs" -maxdepth 1 -name "${p}_*_${VM_ARCH}.deb" | sort -V | tail -n1)
		fi
		dpkg-deb -x "$f" "$fdeb" || die "cannot extract $f"
		touch "$fdeb/.done/$p"
	done
}

# foreign_lib SONAME: the path (inside $fdeb) of a library, fetching its
# package first: the package is the one holding SONAME on the host
# (Debian names library packages the same on every architecture).
foreign_lib() {
	local d pkg
	for d in lib/aarch64-linux-gnu usr/lib/aarch64-linux-gnu lib usr/lib; do
		[[ -e $fdeb/$d/$1 ]] && { echo "/$d/$1"; return 0; }
	done
	pkg=$(dpkg -S "*/$1" 2>/dev/null | grep -v '^diversion' | head -1 | cut -d: -f1)
	[[ -n $pkg ]] || die "no host package holds $1: cannot tell which $VM_ARCH package to get"
	fetch_foreign "$pkg"
	for d in lib/aarch64-linux-gnu usr/lib/aarch64-linux-gnu lib usr/lib; do
		[[ -e $fdeb/$d/$1 ]] && { echo "/$d/$1"; return 0; }
	done
	die "$pkg ($VM_ARCH) has no $1"
}

# install_foreign_tools: HOST_TOOLS' ARCH builds and their library closure
# (NEEDED entries and the ELF interpreter, read with readelf).
install_foreign_tools() {
	local tool src lib path todo=() seen=' '
	fetch_foreign "${FOREIGN_DEBS[@]}"
	for tool in "${HOST_TOOLS[@]}"; do
		src=$(find "$fdeb"/{bin,sbin,usr/bin,usr/sbin} -maxdepth 1 -name "${tool##*/}" -type f 2>/dev/null | head -1)
		[[ -n $src ]] || die "no $VM_ARCH ${tool##*/} in ${FOREIGN_DEBS[*]}"
		cp "$src" "$root$tool"
		todo+=("$src")
	done
	while [[ ${#todo[@]} -gt 0 ]]; do
		src=${todo[0]}
		todo=("${todo[@]:1}")
		for lib in $(readelf -d "$src" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p') \
			$(readelf -l "$src" | sed -n 's/.*interpreter: \(.*\)\]/\1/p'); do
			[[ $seen == *" $lib "* ]] && continue
			seen+="$lib "
			path=$(foreign_lib "${lib##*/}")
			mkdir -p "$root$(dirname "$path")"
			cp -L "$fdeb$path" "$root$path"
			# The interpreter is looked up by its absolute path.
			if [[ $lib == /* && $lib != "$path" ]]; then
				mkdir -p "$root$(dirname "$lib")"
				cp -L "$fdeb$path" "$root$lib"
			fi
			todo+=("$fdeb$path")
		done
	done
}

# stage_module NAME FILE: decompress FILE to the initramfs as NAME.ko
stage_module() {
	local dst=$root/lib/modules/bqlkit/$1.ko
	case $2 in
	*.ko.xz) xz -dc "$2" >"$dst" ;;
	*.ko.zst) zstd -qdc "$2" >"$dst" ;;
	*.ko.gz) gzip -dc "$2" >"$dst" ;;
	*.ko) cp "$2" "$dst" ;;
	*) die "not a kernel module: $2" ;;
	esac
}

find_module() {
	find "$moddir/kernel" \( -name "$1.ko*" -o -name "${1//_/-}.ko*" \) -print -quit
}

is_builtin() {
	# Debian's 7.x packages ship no modules.builtin: a module that is not
	# there is taken as built in (sch_fq_codel is, on 7.x); a scenario that
	# needs it fails visibly in the guest.
	if [[ ! -f $moddir/modules.builtin ]]; then
		log "no modules.builtin for $kver: taking $1 as built in"
		return 0
	fi
	grep -qE "/(${1}|${1//_/-})\.ko\$" "$moddir/modules.builtin"
}

# add_module NAME [FILE]: stage NAME and (first) its dependencies, recording
# the load order in load.list.
declare -A added=()
add_module() {
	local name=$1 file=${2:-} dep
	[[ -n ${added[$name]:-} ]] && return 0
	added[$name]=1
	if [[ -z $file ]]; then
		file=$(find_module "$name")
		if [[ -z $file ]]; then
			is_builtin "$name" && return 0
			die "module $name not found in $moddir"
		fi
	fi
	stage_module "$name" "$file"
	for dep in $(modinfo -F depends "$root/lib/modules/bqlkit/$name.ko" | tr ',' ' '); do
		add_module "$dep"
	done
	echo "$name" >>"$root/lib/modules/bqlkit/load.list"
}

# Record what the guest must find loaded as veth (checked by module_loaded).
describe_veth() {
	local f=$root/lib/modules/bqlkit/veth.ko
	{
		echo "origin=${veth:-stock}"
		echo "sha256=$(sha256sum "$f" | cut -d' ' -f1)"
		echo "srcversion=$(modinfo -F srcversion "$f" | grep . || echo NA)"
		echo "version=$(modinfo -F version "$f" | grep . || echo NA)"
		echo "intree=$(modinfo -F intree "$f" | grep . || echo N)"
	} >"$root/lib/modules/bqlkit/veth.info"
}

check_veth() {
	local name vermagic
	name=$(modinfo -F name "$veth")
	vermagic=$(modinfo -F vermagic "$veth")
	[[ $name == veth ]] || die "--veth $veth: module name is '$name', not veth"
	[[ ${vermagic%% *} == "$kver" ]] || die "--veth $veth: built for '${vermagic%% *}', not $kver"
}

[[ -z $foreign ]] || fetch_foreign busybox-static
install_busybox
if [[ -n $foreign ]]; then install_foreign_tools; else install_host_tools; fi
tools="udpflood bqlwatch manactl tcpload xdpload rthog"
# tsprobe and vmmark serve make bench, cx16flags checks the emulator
# (guest/mana-dev.sh): amd64 guests only (x86-64 instructions).
[[ -n $foreign ]] || tools+=" tsprobe vmmark cx16flags"
for tool in $tools; do
	cp "$(build_tool "$tool")" "$root/usr/bin/$tool"
done
: >"$root/lib/modules/bqlkit/load.list"
for m in "${BASE_MODULES[@]}"; do add_module "$m"; done
if [[ -n $veth ]]; then
	check_veth
	add_module veth "$veth"
else
	add_module veth
fi
describe_veth
for f in "${kitmods[@]}"; do
	[[ -f $f ]] || die "--module: no such file: $f"
	[[ $(modinfo -F vermagic "$f" | cut -d' ' -f1) == "$kver" ]] || die "--module $f: not built for $kver"
	add_module "$(modinfo -F name "$f")" "$f"
done
for m in "${intree[@]}"; do add_module "$m"; done
mkdir -p "$root/bqlkit"
install -m 0755 "$VM_DIR/guest/init" "$root/init"
install -m 0644 "$VM_DIR/guest/lib.sh" "$root/bqlkit/lib.sh"
install -m 0644 "$VM_DIR/guest/debug-reports.ere" "$root/bqlkit/debug-reports.ere"
install -m 0755 "$VM_DIR/guest/$scenario.sh" "$root/bqlkit/scenario.sh"
echo "$scenario" >"$root/bqlkit/scenario.name"
echo "$kver" >"$root/bqlkit/kver"
for f in "${extra[@]}"; do
	[[ $f == *:/* && -f ${f%%:*} ]] || die "--file $f: want SRC:/DST with an existing SRC"
	mkdir -p "$root$(dirname "${f#*:}")"
	cp "${f%%:*}" "$root${f#*:}"
done
# XDP programs: guest/init holds each on a dummy device of its own, which it
# creates after loading dummy.ko without the default dummy0 (so the module is
# staged, not in load.list).
if compgen -G "$root/bqlkit/xdp_*.o" >/dev/null; then
	f=$(find_module dummy)
	if [[ -n $f ]]; then
		stage_module dummy "$f"
	else
		is_builtin dummy || die "module dummy not found in $moddir"
	fi
fi

mkdir -p "$(dirname "$out")"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -1) >"$out.tmp"
mv "$out.tmp" "$out"
log "built $out ($(du -h "$out" | cut -f1), modules: $(tr '\n' ' ' <"$root/lib/modules/bqlkit/load.list"))"
