#!/bin/bash
# mkinitramfs.sh --kver KVER --scenario NAME --out FILE [--veth /path/to/veth.ko]
# Build a gzip'd newc initramfs that boots into guest/init and runs
# guest/NAME.sh.  Without --veth the kernel's stock veth module is used.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

usage() { die "usage: mkinitramfs.sh --kver KVER --scenario NAME --out FILE [--veth FILE]"; }
kver='' scenario='' out='' veth=''
while [[ $# -gt 0 ]]; do
	case $1 in
	--kver) need_arg "$1" "${2:-}"; kver=$2; shift 2 ;;
	--scenario) need_arg "$1" "${2:-}"; scenario=$2; shift 2 ;;
	--out) need_arg "$1" "${2:-}"; out=$2; shift 2 ;;
	--veth) need_arg "$1" "${2:-}"; veth=$2; shift 2 ;;
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

kdir=$("$VM_DIR/get-kernel.sh" "$kver")
moddir=$kdir/lib/modules/$kver
mkdir -p "$BQLKIT_VM_BUILD/bin"
root=$(mktemp -d "$BQLKIT_VM_BUILD/initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT

# build_tool NAME: the static guest tool tests/vm/NAME.c, rebuilt when newer.
build_tool() {
	local bin=$BQLKIT_VM_BUILD/bin/$1 src=$VM_DIR/$1.c
	if [[ ! -x $bin || $src -nt $bin ]]; then
		gcc -O2 -Wall -static -o "$bin.$$" "$src" || die "cannot build $1"
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

install_busybox
install_host_tools
for tool in udpflood bqlwatch; do
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
mkdir -p "$root/bqlkit"
install -m 0755 "$VM_DIR/guest/init" "$root/init"
install -m 0644 "$VM_DIR/guest/lib.sh" "$root/bqlkit/lib.sh"
install -m 0755 "$VM_DIR/guest/$scenario.sh" "$root/bqlkit/scenario.sh"
echo "$scenario" >"$root/bqlkit/scenario.name"
echo "$kver" >"$root/bqlkit/kver"

mkdir -p "$(dirname "$out")"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -1) >"$out.tmp"
mv "$out.tmp" "$out"
log "built $out ($(du -h "$out" | cut -f1), modules: $(tr '\n' ' ' <"$root/lib/modules/bqlkit/load.list"))"
