#!/bin/bash
# Build the kit's QEMU: Debian's QEMU source (bookworm, through the kit's
# private APT config with deb-src lines; /etc/apt is never touched) with the
# kit's fixes from lab/qemu/patches/ applied (DEP-3 headers say why) and its
# devices from lab/qemu/hw/ added, and the kit's TCG plugins from
# lab/qemu/plugins/ built against it.  Only the targets asked for are built.
#
#   build-qemu.sh [--print-key]        prints the output directory:
#       DIR/qemu-system-<target>       one per target of QEMU_TARGETS
#       DIR/plugins/lib<name>.so       one per lab/qemu/plugins/<name>.c
#       DIR/firmware-args              the -L options for Debian's firmware
#
# QEMU_TARGETS="x86_64 aarch64" (default x86_64).  The result is cached in
# $BQLKIT_CACHE/qemu/<key>, the key a hash of the QEMU source version, this
# script, the kit's patches, device and plugin sources and the targets: a change to
# any of them builds anew (one device file: the source tree and its build
# directory are kept, so only what changed is recompiled: ~1-3 min).
# The first build takes ~8 min on 2 idle cores (48 min measured while four
# other builds shared them); its log is named on failure.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

print_key=
[ "${1:-}" != --print-key ] || print_key=1
targets=${QEMU_TARGETS:-x86_64}
suite=bookworm
qdir=$BQLKIT_CACHE/qemu
mkdir -p "$qdir"
kit=$BQLKIT_TOP/lab/qemu

# The source version: what the private deb-src index of bookworm offers.
apt_src() { "$BQLKIT_TOP/scripts/apt-private.sh" "$suite" --src -- "$@"; }
# (Not "set -e"'s silent exit when apt fails: say what apt said.)
showsrc_err=$(mktemp)
ver=$(apt_src apt-cache showsrc qemu 2>"$showsrc_err" | sed -n 's/^Version: //p' | sort -V | tail -1) || true
err=$(grep -v '^$' "$showsrc_err" | tail -n1 || true)
rm -f "$showsrc_err"
[ -n "$ver" ] || die "cannot find Debian's qemu source package in $suite${err:+: $err} (log: $BQLKIT_CACHE/apt/$suite-src-$(dpkg --print-architecture)/update.log)"

# Everything the result depends on, hashed.
key=$( {
	echo "qemu $ver targets $targets"
	cat "$0"
	if [ -d "$kit" ]; then
		(cd "$kit" && find . -type f \( -name '*.c' -o -name '*.h' -o -name 'trace-events' -o -name 'meson.build' -o -name '*.patch' \) |
			LC_ALL=C sort | xargs -r sha256sum)
	fi
} | sha256sum | cut -c1-16)
out=$qdir/$key
if [ -n "$print_key" ]; then
	echo "$out"
	exit 0
fi
if [ -f "$out/.ready" ]; then
	echo "$out"
	exit 0
fi

exec {lockfd}>"$qdir/.lock"
flock "$lockfd"
if [ -f "$out/.ready" ]; then
	echo "$out"
	exit 0
fi

"$BQLKIT_TOP/scripts/install-deps.sh" build dpkg-dev meson ninja-build pkg-config \
	libglib2.0-dev libpixman-1-dev libslirp-dev libfdt-dev zlib1g-dev python3-venv \
	qemu-system-data seabios

log=$qdir/build-$key.log
: >"$log"
fail() { tail -5 "$log" >&2; die "$* (log: $log)"; }

# One unpacked source per QEMU version; the kit's files are copied over it
# each build, so an edited device recompiles incrementally.  Its physical
# path: configure writes absolute links into the build directory, and a
# cache reached through a symlink (t49's) must not leave links into a
# directory that goes away.
src=$(cd -P "$qdir" && pwd)/src-${ver//[:+~]/_}
if [ ! -f "$src/.unpacked" ]; then
	step "apt-get source qemu $ver ($suite, ~30 MB)"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	(cd "$src.tmp" && apt_src apt-get source -qq "qemu=$ver") >>"$log" 2>&1 ||
		fail "apt-get source qemu=$ver failed"
	d=$(find "$src.tmp" -mindepth 1 -maxdepth 1 -type d -name 'qemu-*' | head -1)
	[ -n "$d" ] || fail "apt-get source qemu left no qemu-* directory"
	mv "$d" "$src"
	rm -rf "$src.tmp"
	touch "$src/.unpacked"
fi

# The kit's fixes: lab/qemu/patches/*.patch, in order, on the pristine files
# (kept as *.bqlkit-orig the first time; restored before each build, so a
# patch removed or changed since is undone too).
find "$src" -name '*.bqlkit-orig' -print0 | while IFS= read -r -d '' o; do
	cp "$o" "${o%.bqlkit-orig}"
done
for p in "$kit"/patches/*.patch; do
	[ -e "$p" ] || continue
	sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$p" | while read -r f; do
		[ -f "$src/$f.bqlkit-orig" ] || cp "$src/$f" "$src/$f.bqlkit-orig"
	done
	patch -d "$src" -p1 --quiet --no-backup-if-mismatch <"$p" >>"$log" 2>&1 ||
		fail "lab/qemu/patches/$(basename "$p") does not apply to QEMU $ver"
done
# The kit's devices: lab/qemu/hw/<dir>/{*.c,*.h,trace-events}, added to the
# same directory of QEMU's tree and to its meson.build (any target with
# PCI).  The pristine meson.build and trace-events are kept as *.orig.
if [ -d "$kit/hw" ]; then
	for d in "$kit"/hw/*/; do
		sub=hw/$(basename "$d")
		[ -f "$src/$sub/meson.build.orig" ] || cp "$src/$sub/meson.build" "$src/$sub/meson.build.orig"
		cp "$src/$sub/meson.build.orig" "$src/$sub/meson.build"
		if [ -f "$src/$sub/trace-events" ]; then
			[ -f "$src/$sub/trace-events.orig" ] || cp "$src/$sub/trace-events" "$src/$sub/trace-events.orig"
			cp "$src/$sub/trace-events.orig" "$src/$sub/trace-events"
		fi
		# QEMU 7.2 names the system-emulation source set softmmu_ss; 8.2+ system_ss.
		ss=system_ss
		grep -q '^softmmu_ss' "$src/$sub/meson.build" && ss=softmmu_ss
		for f in "$d"*.c "$d"*.h; do
			[ -e "$f" ] || continue
			cp "$f" "$src/$sub/"
			case $f in
			*.c) echo "$ss.add(when: 'CONFIG_PCI', if_true: files('$(basename "$f")'))" >>"$src/$sub/meson.build" ;;
			esac
		done
		[ ! -f "$d/trace-events" ] || cat "$d/trace-events" >>"$src/$sub/trace-events"
	done
fi

bld=$src/build-${targets// /-}
tl=$(for t in $targets; do printf '%s-softmmu,' "$t"; done)
# A build directory configured through a path that is gone (its links
# dangle: meson then fails to regenerate) is configured again.
if [ -f "$bld/build.ninja" ] && [ -n "$(find "$bld" -maxdepth 1 -xtype l -print -quit)" ]; then
	note "QEMU's build directory links to a path that is gone: configuring it again"
	rm -f "$bld/build.ninja"
fi
if [ ! -f "$bld/build.ninja" ]; then
	step "configuring QEMU $ver for ${targets} (plugins on)"
	rm -rf "$bld"
	mkdir -p "$bld"
	(cd "$bld" && ../configure --target-list="${tl%,}" --without-default-features \
		--enable-slirp --enable-tcg --enable-fdt=system --enable-plugins \
		--disable-docs --disable-tools --disable-user --disable-werror \
		--meson=/usr/bin/meson) >>"$log" 2>&1 || fail "QEMU configure failed"
fi
bins=()
for t in $targets; do bins+=("qemu-system-$t"); done
step "building ${bins[*]} (~8 min the first time on 2 idle cores, 1-3 min after a device change; log: $log)"
ninja -C "$bld" -j"$(nproc)" "${bins[@]}" >>"$log" 2>&1 || fail "QEMU build failed"

rm -rf "$out.tmp"
mkdir -p "$out.tmp/plugins"
for b in "${bins[@]}"; do cp "$bld/$b" "$out.tmp/"; done
# TCG plugins: one shared object per lab/qemu/plugins/*.c, against this QEMU's
# plugin API header.
for p in "$kit"/plugins/*.c; do
	[ -e "$p" ] || continue
	n=$(basename "$p" .c)
	# shellcheck disable=SC2046 # pkg-config prints a word list
	gcc -shared -fPIC -O2 -Wall -Werror -o "$out.tmp/plugins/lib$n.so" "$p" \
		-I"$src/include/qemu" $(pkg-config --cflags glib-2.0) >>"$log" 2>&1 ||
		fail "cannot build the TCG plugin $n"
done
# Debian's firmware (the source tarball ships none): seabios, the option ROMs.
echo "-L /usr/share/qemu -L /usr/share/seabios" >"$out.tmp/firmware-args"
echo "qemu $ver targets $targets" >"$out.tmp/VERSION"
rm -rf "$out"
mv "$out.tmp" "$out"
touch "$out/.ready"
step "QEMU ready in $out"
echo "$out"
