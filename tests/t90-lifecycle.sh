#!/bin/bash
# The kit's life on a user's machine, played in a Debian bookworm chroot
# (tests/chroot.sh) with the test kernels' images and headers installed:
#   make install      -> DKMS builds + installs for both kernels, signed,
#                        modinfo names the kit's module (depmod beats in-tree),
#                        the initramfs holds the kit's veth
#   a third kernel's headers (another 6.1 upload, whose source the kit does
#                        not have) -> skipped, in-tree drivers stay, one line
#   a 5.10 kernel's headers (no base in the kit) -> skipped (exit 77), one line
#   make uninstall    -> the in-tree modules again, nothing of the kit left
#   the bqlkit-dkms .deb: apt install, upgrade to a newer version, purge
# Each command's output is compared, versions and paths normalized, with
# tests/expected/t90-*.txt.  BQLKIT_QUICK=1 skips it all.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/chroot.sh"

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip lifecycle "BQLKIT_QUICK=1 (no chroot)"
	exit 0
fi
[ "$(id -u)" = 0 ] || { skip lifecycle "needs root (chroot)"; exit 0; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bqlkit-t90.XXXXXX")
R=$tmp/root
trap 'chroot_down "$R" || true; rm -rf "$tmp"' EXIT
t0=$(date +%s)
lap() { echo "  [t90 $(($(date +%s) - t0)) s] $*" >&2; }

ver=$(cat "$BQLKIT_TOP/VERSION")
ver2=$ver.1
K1=$(test_kernels | sed -n 1p)
K2=$(test_kernels | sed -n 2p)

# The debs first (on this machine; the chroot stands in for the user's).
if ! out=$(make -s -C "$BQLKIT_TOP" deb 2>&1) || ! out2=$(make -s -C "$BQLKIT_TOP" deb DEB_VERSION="$ver2" 2>&1); then
	fail make-deb "$(tail -1 <<<"${out2:-$out}")"
	exit 0
fi
pass make-deb
# The package as Debian checks one: lintian at every level, each override
# explained in debian/bqlkit-dkms.lintian-overrides.
for v in "$ver" "$ver2"; do
	out=$(lintian --allow-root --fail-on error,warning,info,pedantic -I --pedantic "$BQLKIT_BUILD/deb/bqlkit-dkms_${v}_all.deb" 2>&1) && rc=0 || rc=$?
	if [ "$rc" -eq 0 ] && [ -z "$out" ]; then pass "deb-lintian-$v"; else fail "deb-lintian-$v" "$(head -1 <<<"$out") (rc $rc)"; fi
done
check make-deb-has-bases bash -c "dpkg-deb -c '$BQLKIT_BUILD/deb/bqlkit-dkms_${ver}_all.deb' | grep -q 'usr/src/bqlkit-$ver/bases/6.1/MANIFEST'"
lap "debs built"

if ! chroot_up "$R"; then
	fail chroot "could not make or unpack the chroot (see stderr)"
	exit 0
fi
pass chroot
cp "$BQLKIT_BUILD/deb/bqlkit-dkms_${ver}_all.deb" "$BQLKIT_BUILD/deb/bqlkit-dkms_${ver2}_all.deb" "$R/root/"
K3=$(cd "$R/root/debs" && ls linux-headers-6.1.0-*-amd64_*.deb | sed 's/^linux-headers-\([^_]*\)_.*/\1/' | sed -n 1p)
K4=$(cd "$R/root/debs" && ls linux-headers-5.10.*-amd64_*.deb | sed 's/^linux-headers-\([^_]*\)_.*/\1/' | sed -n 1p)
lap "chroot up: kernels $K1 $K2, later $K3 and $K4"

# cr CMD: run a shell command in the chroot; output on stdout, 2>&1.
cr() { chroot_run "$R" bash -c "$1" 2>&1; }
norm() { normalize "$K1" "$K2" "$K3" "$K4"; }
exp_out() { expect_output "$1" "$2" "$3" "$K1" "$K2" "$K3" "$K4"; }
# Lines of apt/dpkg progress are not what we compare (grep's own error
# shows in the compared output: an empty one would hide every line).
quiet_apt() { local rc=0; grep -vE '^(Reading|Building|Preparing|Unpacking|Selecting|Setting up|Processing|\(Reading|Get:|Fetched|Need to get|After this|The following|  |Note, selecting|[0-9]+ upgraded|Removing|Purging|update-initramfs: Generating|W: |Download is performed|Use .apt autoremove.|Recommended packages:|Suggested packages:)' || rc=$?; [ "$rc" -le 1 ] || echo "quiet_apt: grep exited $rc"; }
kit_path() { cr "modinfo -k $1 -n $2" | tail -1; }
# ko_sha FILE (in the chroot): sha256 of a module's content, uncompressed
# (initramfs-tools decompresses 6.12's .ko.xz into the image).
ko_sha='ko_sha() { case $1 in *.xz) xz -dc "$1" ;; *.zst) zstd -qdc "$1" ;; *) cat "$1" ;; esac | sha256sum | cut -d" " -f1; }'
sha_in_initrd() { # KVER MODULE: sha256 of MODULE.ko* inside /boot/initrd.img-KVER
	cr "$ko_sha; rm -rf /tmp/ird && unmkinitramfs /boot/initrd.img-$1 /tmp/ird && for f in \$(find /tmp/ird -name '$2.ko*'); do ko_sha \$f; done; rm -rf /tmp/ird"
}
sha_of() { cr "$ko_sha; ko_sha \$(ls $1 | head -1)"; } # sha_of GLOB (in the chroot)
kernels_installed() { cr "dkms status bqlkit" | sed -n 's/^[^,]*, \([^,]*\),.*: installed.*/\1/p' | sort | tr '\n' ' '; }
nothing_left() {
	cr "ls -d /usr/src/bqlkit* /var/lib/dkms/bqlkit* /lib/modules/*/updates/dkms/veth.ko* /lib/modules/*/updates/dkms/mana.ko* 2>/dev/null; dkms status bqlkit" | grep . || true
}

# --- make install, as the README says ------------------------------------
out=$(cr "cd /root/bqlkit && make install") && rc=0 || rc=$?
lap "make install (rc $rc)"
check install-exit-0 test "$rc" -eq 0
exp_out install-output t90-make-install.txt "$out"
exp_out install-dkms-status t90-dkms-status-installed.txt "$(cr 'dkms status')"
for k in "$K1" "$K2"; do
	n=$(series_of "$(kernel_version "$(kdir_for "$k")")")
	for m in veth mana; do
		p=$(kit_path "$k" "$m")
		has "install-$n-modinfo-$m-kit" "/lib/modules/$k/updates/dkms/$m.ko" "$p"
	done
	check "install-$n-in-tree-still-there" bash -c "ls '$R/lib/modules/$k/kernel/drivers/net/veth.ko'* >/dev/null"
	has "install-$n-signed-by-dkms-key" . "$(cr "modinfo -F signer /lib/modules/$k/updates/dkms/veth.ko*")"
	kit_sha=$(sha_of "/lib/modules/$k/updates/dkms/veth.ko*")
	check "install-$n-initramfs-has-kit-veth" test "$(sha_in_initrd "$k" veth)" = "$kit_sha"
done
has install-initramfs-said "initramfs of $K1 regenerated" "$out"
lacks install-secure-boot-off-no-advice 'mokutil --import' "$out"
out=$(cr "cd /root/bqlkit && BQLKIT_NO_INITRAMFS=1 make install") && rc=0 || rc=$?
check install-twice test "$rc" -eq 0
has install-twice-says-so "already installed for $K1" "$out"
lap "install checks"

# --- a third kernel's headers, another Debian upload of 6.1 (-2 where the
# kit has -3's source): DKMS skips it, its in-tree drivers stay, one line --
out=$(cr "apt-get install -y /root/debs/linux-headers-$K3*.deb /root/debs/linux-headers-${K3%-amd64}-common*.deb") && rc=0 || rc=$?
lap "third kernel $K3 (rc $rc)"
check third-kernel-apt-install test "$rc" -eq 0
exp_out third-kernel-output t90-third-kernel.txt "$(quiet_apt <<<"$out")"
check third-kernel-skipped-one-line test "$(grep -c "bqlkit: skipping kernel $K3: its own driver source is not here" <<<"$out")" -eq 1
check third-kernel-not-built bash -c "! ls '$R/lib/modules/$K3/updates/dkms/'*.ko* 2>/dev/null"
check third-kernel-others-kept test "$(kernels_installed)" = "$(printf '%s\n' "$K1" "$K2" | sort | tr '\n' ' ')"

# --- a kernel series the kit has no base for: skipped, one line ----------
out=$(cr "dpkg -i --force-depends /root/debs/linux-kbuild-5.10*.deb /root/debs/linux-headers-${K4%-amd64}-common*.deb /root/debs/linux-headers-$K4*.deb") || true
lap "unsupported kernel $K4"
exp_out unsupported-kernel-output t90-unsupported-kernel.txt "$(grep -iE 'bqlkit|dkms|skip|error' <<<"$out" | grep -v 'dependency problems\|depends on' || true)"
check unsupported-kernel-one-line test "$(grep -c "bqlkit: skipping kernel $K4" <<<"$out")" -eq 1
out=$(cr "dkms build bqlkit/$ver -k $K4") && rc=0 || rc=$?
check unsupported-kernel-dkms-exit-77 test "$rc" -eq 77
check unsupported-kernel-not-built bash -c "! ls '$R/lib/modules/$K4/updates/dkms/'*.ko* 2>/dev/null"
check unsupported-kernel-others-kept test "$(kernels_installed)" = "$(printf '%s\n' "$K1" "$K2" | sort | tr '\n' ' ')"
# These headers' dependencies (gcc-10) are not in bookworm: take them out
# before apt is used again; the third kernel too (fewer builds below).
cr "dpkg --purge --force-depends linux-headers-$K4 linux-headers-${K4%-amd64}-common linux-kbuild-5.10 && apt-get purge -y -q linux-headers-$K3 linux-headers-${K3%-amd64}-common" >/dev/null || true

# --- make uninstall --------------------------------------------------------
out=$(cr "cd /root/bqlkit && make uninstall") && rc=0 || rc=$?
lap "make uninstall (rc $rc)"
check uninstall-exit-0 test "$rc" -eq 0
exp_out uninstall-output t90-make-uninstall.txt "$out"
lacks uninstall-nothing-left . "$(nothing_left)"
for k in "$K1" "$K2"; do
	n=$(series_of "$(kernel_version "$(kdir_for "$k")")")
	has "uninstall-$n-modinfo-in-tree" "/lib/modules/$k/kernel/drivers/net/veth.ko" "$(kit_path "$k" veth)"
	tree_sha=$(sha_of "/lib/modules/$k/kernel/drivers/net/veth.ko*")
	check "uninstall-$n-initramfs-has-in-tree-veth" test "$(sha_in_initrd "$k" veth)" = "$tree_sha"
done

# --- the .deb: install, upgrade, purge ---------------------------------------
# The package is light: a DKMS build applies the changes fitted when the
# package was made, with patch; Coccinelle, wiggle and Python are only
# recommended (they fit anew where those do not apply).  Installed here
# without them.
deb1=$BQLKIT_BUILD/deb/bqlkit-dkms_${ver}_all.deb
lacks deb-depends-light 'coccinelle\|wiggle\|python' "$(dpkg-deb -f "$deb1" Depends)"
has deb-recommends-fit-tools 'wiggle, coccinelle, libpython3-dev' "$(dpkg-deb -f "$deb1" Recommends)"
cr "apt-get purge -y -q coccinelle wiggle libpython3-dev" >/dev/null || true
check deb-install-no-fit-tools bash -c "! chroot '$R' sh -c 'command -v spatch || command -v wiggle'"
# Installed as Debian's CI tests a DKMS package (debian/control's
# Testsuite: autopkgtest-pkg-dkms, whose test is dkms's dkms-autopkgtest):
# from an apt source, autoinstall off (/etc/dkms/no-autoinstall, which the
# postinst obeys), then `dkms build` and `dkms install` for every kernel
# with headers.  (The upgrade below runs the postinst's own builds.)
mkdir -p "$R/root/repo" && cp "$deb1" "$R/root/repo/"
cr "cd /root/repo && apt-ftparchive packages . >Packages && echo 'deb [trusted=yes] file:/root/repo ./' >/etc/apt/sources.list.d/bqlkit-local.list &&
	apt-get update -q -o Dir::Etc::sourcelist=sources.list.d/bqlkit-local.list -o Dir::Etc::sourceparts=- -o APT::Get::List-Cleanup=0" >/dev/null || true
out=$(cr "/usr/lib/dkms/dkms-autopkgtest bqlkit-dkms") && rc=0 || rc=$?
cr "rm -f /etc/dkms/no-autoinstall /etc/apt/sources.list.d/bqlkit-local.list" >/dev/null || true
lap "autopkgtest-pkg-dkms: bqlkit-dkms $ver (rc $rc)"
check deb-install test "$rc" -eq 0
exp_out deb-install-output t90-deb-install.txt "$(sed -n '/^I: Installing binary package/,/^I: Checking for missing dkms/p' <<<"$out" | quiet_apt)"
for k in "$K1" "$K2"; do
	n=$(series_of "$(kernel_version "$(kdir_for "$k")")")
	has "deb-autopkgtest-$n-pass" "^I: PASS $k\$" "$out"
	has "deb-install-$n-modinfo-kit" "/lib/modules/$k/updates/dkms/veth.ko" "$(kit_path "$k" veth)"
	check "deb-install-$n-version" test "$(cr "modinfo -k $k -F version veth" | tail -1)" = "$ver-bqlkit"
	has "deb-install-$n-applied-fitted" 'applied the changes fitted to Linux' "$(cat "$R/var/lib/dkms/bqlkit/$ver/$k/"*/log/make.log 2>&1)"
done
check deb-install-still-no-fit-tools bash -c "! chroot '$R' sh -c 'command -v spatch || command -v wiggle'"
out=$(cr "cd /root/bqlkit && make install") && rc=0 || rc=$?
check deb-then-make-install-fails test "$rc" -ne 0
has deb-then-make-install-says-why 'bqlkit-dkms is installed and owns /usr/src/bqlkit-.*apt-get purge bqlkit-dkms' "$out"
out=$(cr "apt-get install --no-install-recommends -y /root/bqlkit-dkms_${ver2}_all.deb") && rc=0 || rc=$?
lap "apt upgrade to bqlkit-dkms $ver2 (rc $rc)"
check deb-upgrade test "$rc" -eq 0
exp_out deb-upgrade-output t90-deb-upgrade.txt "$(quiet_apt <<<"$out")"
for k in "$K1" "$K2"; do
	n=$(series_of "$(kernel_version "$(kdir_for "$k")")")
	check "deb-upgrade-$n-version" test "$(cr "modinfo -k $k -F version veth" | tail -1)" = "$ver2-bqlkit"
done
lacks deb-upgrade-old-gone . "$(cd "$R" && find "usr/src/bqlkit-$ver" "var/lib/dkms/bqlkit/$ver" -maxdepth 3 2>/dev/null | head -3)"
out=$(cr "apt-get purge -y bqlkit-dkms") && rc=0 || rc=$?
lap "apt purge (rc $rc)"
check deb-purge test "$rc" -eq 0
exp_out deb-purge-output t90-deb-purge.txt "$(quiet_apt <<<"$out")"
lacks deb-purge-nothing-left . "$(nothing_left)"
for k in "$K1" "$K2"; do
	n=$(series_of "$(kernel_version "$(kdir_for "$k")")")
	has "deb-purge-$n-modinfo-in-tree" "/lib/modules/$k/kernel/drivers/net/veth.ko" "$(kit_path "$k" veth)"
done

# --- make install with only a 6.1 kernel, then 6.12's headers arrive -----
# (an upgrade to a kernel of a new series): install imported 6.12 too, so
# DKMS autoinstall builds the kit for it.
n2=$(series_of "$(kernel_version "$(kdir_for "$K2")")")
cr "apt-get purge -y -q linux-headers-$K2 && rm -rf /root/bqlkit/build" >/dev/null || true
out=$(cr "cd /root/bqlkit && BQLKIT_NO_INITRAMFS=1 make install") && rc=0 || rc=$?
lap "install with only $K1 (rc $rc)"
check new-series-install-exit-0 test "$rc" -eq 0
has new-series-install-imports-it "importing Linux $n2 too (linux-source-$n2)" "$out"
check new-series-base-in-dkms-source test -f "$R/usr/src/bqlkit-$ver/bases/$n2/MANIFEST"
out=$(cr "apt-get install -y linux-headers-$K2") && rc=0 || rc=$?
lap "then $K2's headers (rc $rc)"
check new-series-headers-install test "$rc" -eq 0
has new-series-autoinstalled "/lib/modules/$K2/updates/dkms/veth.ko" "$(kit_path "$K2" veth)"
cr "cd /root/bqlkit && BQLKIT_NO_INITRAMFS=1 make uninstall" >/dev/null || true

# --- a security update must not roll the driver back ------------------------
# A made pair of one series: linux-source-6.1 of K3's upload and of K1's,
# each the kit's files of the real one with veth.c's MODULE_DESCRIPTION
# naming it (a change only that source has).  The kit is installed on the
# older kernel (K3) from its source; then the newer kernel (K1) arrives with
# its linux-source, as an upgrade brings them: DKMS must build K1's module
# from K1's source, not from the base imported for K3 (before the kit took
# each kernel's own source, K1 got "(6.1.192-2 source)").  The metapackage
# linux-source goes first, and the made packages are held: apt would
# otherwise put the archive's linux-source-6.1 back.
v3=$(cd "$R/root/debs" && ls linux-headers-"$K3"_*.deb | sed 's/^[^_]*_\([^_]*\)_.*/\1/')
v1=$(distro_version "$(kdir_for "$K1")")
fake_source() { # VERSION LABEL: /root/linux-source-6.1_VERSION_all.deb in the chroot
	local d=$tmp/fake-$1 b=$tmp/fake-$1-bases t=$tmp/fake-$1-tar/linux-source-6.1
	BQLKIT_BASES=$b "$BQLKIT_TOP/scripts/import-source.sh" "$R/usr/src/linux-source-6.1.tar.xz" >/dev/null 2>&1 || return 1
	mkdir -p "$d/DEBIAN" "$d/usr/src" "$t"
	cp -a "$b/6.1/." "$t/" && rm "$t/MANIFEST"
	sed -i "s/^MODULE_DESCRIPTION(\"Virtual Ethernet Tunnel\")/MODULE_DESCRIPTION(\"Virtual Ethernet Tunnel ($2)\")/" "$t/drivers/net/veth.c"
	grep -q "($2)" "$t/drivers/net/veth.c" || return 1
	tar -C "$(dirname "$t")" -cJf "$d/usr/src/linux-source-6.1.tar.xz" linux-source-6.1
	printf 'Package: linux-source-6.1\nVersion: %s\nArchitecture: all\nMaintainer: bqlkit tests <tests@bqlkit.invalid>\nDescription: made for t90: the files bqlkit imports, veth.c marked %s\n' "$1" "$2" >"$d/DEBIAN/control"
	dpkg-deb --root-owner-group --build "$d" "$R/root/linux-source-6.1_$1_all.deb" >/dev/null
}
desc_of() { cr "modinfo -F description /lib/modules/$1/updates/dkms/veth.ko*" | tail -1; }
if [ -z "$v3" ] || [ -z "$v1" ] || [ "$v3" = "$v1" ] || ! fake_source "$v3" "$v3 source" || ! fake_source "$v1" "$v1 source"; then
	fail security-update-made-pair "could not make the pair of linux-source-6.1 packages ($v3, $v1)"
else
	out=$(cr "apt-get purge -y -q linux-headers-$K1 linux-headers-${K1%-amd64}-common linux-source && apt-get install -y /root/debs/linux-headers-$K3*.deb /root/debs/linux-headers-${K3%-amd64}-common*.deb && dpkg -i /root/linux-source-6.1_${v3}_all.deb && apt-mark hold linux-source-6.1 && cd /root/bqlkit && BQLKIT_NO_INITRAMFS=1 make install KVER=$K3") && rc=0 || rc=$?
	lap "install on the older kernel $K3 from linux-source-6.1 $v3 (rc $rc)"
	if [ "$rc" -eq 0 ]; then pass security-update-install-older; else fail security-update-install-older "exit $rc: $(tail -1 <<<"$out")"; fi
	has security-update-older-from-its-source "($v3 source)" "$(desc_of "$K3")"
	out=$(cr "apt-mark unhold linux-source-6.1 && dpkg -i /root/linux-source-6.1_${v1}_all.deb && apt-mark hold linux-source-6.1 && apt-get install -y linux-headers-$K1") && rc=0 || rc=$?
	lap "the update: $K1 with linux-source-6.1 $v1 (rc $rc)"
	if [ "$rc" -eq 0 ]; then pass security-update-newer-arrives; else fail security-update-newer-arrives "exit $rc: $(tail -1 <<<"$out")"; fi
	has security-update-newer-from-its-source "($v1 source)" "$(desc_of "$K1")"
	has security-update-newer-info "package=$v1 " "$(cr "modinfo -F bqlkit /lib/modules/$K1/updates/dkms/veth.ko*" | tail -1)"
	has security-update-older-kept "($v3 source)" "$(desc_of "$K3")"
	cr "cd /root/bqlkit && BQLKIT_NO_INITRAMFS=1 make uninstall" >/dev/null || true
fi
lap "done"
