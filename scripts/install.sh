#!/bin/bash
# The main job: build the kit for a kernel and install it with DKMS.
#
#   install.sh [KVER]
#
# Without KVER: the running kernel, or the distro's default kernel when the
# running one has no headers in the distro (say which).  Installs what it
# needs with apt (dkms, quilt, the headers, the matching linux-source-X.Y),
# imports the driver sources, builds once outside DKMS to fail early, then
# adds, builds and installs the DKMS package.  On failure or interrupt
# nothing of this run stays installed; running it twice is harmless.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || die "installing kernel modules needs root: run 'sudo make install'"
exec 9>/run/lock/bqlkit-install.lock
flock -n 9 || die "another bqlkit install is running (lock /run/lock/bqlkit-install.lock)"

if [ -n "${1:-}" ]; then
	kver=$1
	why="requested with KVER"
else
	IFS=$'\t' read -r kver why < <("$BQLKIT_TOP/scripts/pick-kernel.sh")
fi
[ -n "$kver" ] || die "no kernel to build for"
step "building for $kver ($why)"

# Headers first: they tell the kernel's version and so the source needed.
kdir=$(kdir_for "$kver")
if [ ! -f "$kdir/Makefile" ]; then
	apt-cache show "linux-headers-$kver" >/dev/null 2>&1 ||
		die "kernel $kver has no headers installed and none in apt (linux-headers-$kver): give KVER= of a kernel with headers"
	"$BQLKIT_TOP/scripts/install-deps.sh" build "linux-headers-$kver"
else
	"$BQLKIT_TOP/scripts/install-deps.sh" build
fi
kv=$(kernel_version "$kdir") || die "cannot read the kernel version of $kdir"
series=$(series_of "$kv")
[ -d "$BQLKIT_TOP/patches/veth/$series" ] ||
	die "kernel $kver is Linux $series, which the kit does not support (it carries: $(cd "$BQLKIT_TOP/patches/veth" && echo */ | tr -d /))"

# The source: the distro's linux-source-X.Y, the exact version if apt has it.
tarball=/usr/src/linux-source-$series.tar.xz
if [ ! -f "$tarball" ]; then
	want=$(distro_version "$kdir")
	pkg=linux-source-$series
	if [ -n "$want" ] && apt-cache madison "$pkg" 2>/dev/null | grep -q " $want "; then
		pkg="$pkg=$want"
	fi
	apt-cache show "${pkg%%=*}" >/dev/null 2>&1 ||
		die "no linux-source-$series in apt: import a Linux $series source yourself (make import SRC=...)"
	"$BQLKIT_TOP/scripts/install-deps.sh" build "$pkg"
fi
base=$(base_dir "$series")
if [ "$(manifest_get "$base" source_sha256)" != "$(sha256sum "$tarball" | cut -d' ' -f1)" ]; then
	"$BQLKIT_TOP/scripts/import-source.sh" "$tarball"
fi

# Build once outside DKMS: a failure here leaves the system untouched.
"$BQLKIT_TOP/scripts/build.sh" "$kver"

ver=$(cat "$BQLKIT_TOP/VERSION")
src=/usr/src/bqlkit-$ver
added=
cleanup() {
	rc=$?
	if [ $rc -ne 0 ] && [ -n "$added" ]; then
		note "install failed or interrupted: removing bqlkit/$ver from DKMS again"
		dkms remove "bqlkit/$ver" --all >/dev/null 2>&1 || true
		rm -rf "$src"
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

stage=$(mktemp -d "${TMPDIR:-/tmp}/bqlkit-src.XXXXXX")
"$BQLKIT_TOP/scripts/make-dkms-source.sh" "$stage/bqlkit-$ver" >/dev/null
# (Read dkms status whole: grep -q would close the pipe early, and with
# pipefail the SIGPIPE'd dkms would make the test false.)
dkms_status() { dkms status "bqlkit/$ver" "$@" 2>/dev/null || true; }
if [ -n "$(dkms_status)" ]; then
	if [ -d "$src" ] && diff -rq "$stage/bqlkit-$ver" "$src" >/dev/null; then
		note "bqlkit/$ver is already in DKMS with the same source"
	else
		step "replacing bqlkit/$ver in DKMS (its source changed)"
		# Rebuilt below for these kernels too, not only for $kver.
		others=$(dkms_status |
			sed -n 's/^[^,]*, \([^,]*\),.*: installed.*/\1/p' | grep -vx "$kver" || true)
		dkms remove "bqlkit/$ver" --all >/dev/null
	fi
fi
if [ -z "$(dkms_status)" ]; then
	rm -rf "$src"
	mv "$stage/bqlkit-$ver" "$src"
	added=yes
	out=$(dkms add "bqlkit/$ver" 2>&1) || die "dkms add bqlkit/$ver failed: $(tail -1 <<<"$out")"
fi
rm -rf "$stage"

if grep -q ': installed' <<<"$(dkms_status -k "$kver")"; then
	note "bqlkit/$ver is already installed for $kver"
else
	step "dkms build + install bqlkit/$ver for $kver"
	if ! dkms install "bqlkit/$ver" -k "$kver" >/tmp/bqlkit-dkms.log 2>&1; then
		tail -5 /tmp/bqlkit-dkms.log >&2
		# Leave the other kernels' installs alone; drop only this kernel's.
		dkms remove "bqlkit/$ver" -k "$kver" >/dev/null 2>&1 || true
		die "dkms install for $kver failed (log: /tmp/bqlkit-dkms.log)"
	fi
fi
added=
for k in ${others:-}; do
	if [ -f "$(kdir_for "$k")/Makefile" ] && dkms install "bqlkit/$ver" -k "$k" >/dev/null 2>&1; then
		note "re-installed bqlkit/$ver for $k"
	else
		note "could not re-install bqlkit/$ver for $k: run 'make install KVER=$k'"
	fi
done

path=$(modinfo -k "$kver" -n veth 2>/dev/null || true)
case $path in
*/updates/dkms/*) ;;
*) die "after install, modinfo -k $kver -n veth names '$path', not the kit's module: check 'depmod -a $kver'" ;;
esac
echo "bqlkit: installed for $kver: veth -> $path"
echo "bqlkit: load it with 'modprobe -r veth && modprobe veth' (or reboot into $kver)"
