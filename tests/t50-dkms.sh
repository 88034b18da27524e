#!/bin/bash
# DKMS: add/build for each Debian kernel in a throwaway DKMS tree, a kernel
# with no base is skipped with exit 77 and one line; the bqlkit-dkms RPM
# made from the same DKMS source (make rpm); then (unless BQLKIT_QUICK) the
# real install the way a user runs it: make install, again (idempotent),
# modinfo names the kit's module, make uninstall.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ver=$(cat "$BQLKIT_TOP/VERSION")
# One version source: the committed dkms.conf has the placeholder, the
# DKMS source VERSION's version.
check dkms-conf-placeholder grep -qx 'PACKAGE_VERSION="#MODULE_VERSION#"' "$BQLKIT_TOP/dkms.conf"
mkdir -p "$tmp/tree" "$tmp/src" "$tmp/inst"
check dkms-source "$BQLKIT_TOP/scripts/make-dkms-source.sh" "$tmp/src/bqlkit-$ver"
check dkms-conf-version grep -qx "PACKAGE_VERSION=\"$ver\"" "$tmp/src/bqlkit-$ver/dkms.conf"
d=(dkms --dkmstree "$tmp/tree" --sourcetree "$tmp/src" --installtree "$tmp/inst")
check dkms-add "${d[@]}" add "bqlkit/$ver"
for k in $(test_kernels); do
	series=$(series_of "$(kernel_version "$(kdir_for "$k")")")
	if out=$("${d[@]}" build "bqlkit/$ver" -k "$k" 2>&1); then
		pass "dkms-build-$series"
		ko=$(ls "$tmp/tree/bqlkit/$ver/$k/"*/module/veth.ko* 2>/dev/null | head -1)
		check "dkms-build-$series-module" test -n "$ko"
		check "dkms-build-$series-is-bql" bash -c "modinfo -F bqlkit '$ko' | grep -q 'series=$series'"
		mko=$(ls "$tmp/tree/bqlkit/$ver/$k/"*/module/mana.ko* 2>/dev/null | head -1)
		check "dkms-build-$series-mana" bash -c "[ -n '$mko' ] && modinfo -F bqlkit '$mko' | grep -q 'series=$series'"
	else
		fail "dkms-build-$series" "$(tail -1 <<<"$out")"
	fi
done
rc=0
out=$("${d[@]}" build "bqlkit/$ver" -k 5.4.0-99-amd64 2>&1) || rc=$?
check dkms-unsupported-exit-77 test "$rc" -eq 77
check dkms-unsupported-one-line-reason grep -q 'bqlkit: skipping kernel 5.4.0-99-amd64: the kit has no series for Linux 5.4' <<<"$out"
check dkms-status-lists-built bash -c "'${d[0]}' ${d[*]:1} status | grep -c ': built' | grep -qx 2"

# A kernel gets the kit only from its own driver source (scripts/pick-source.sh):
# kernels of the 6.1 series at another sublevel (a security update) or
# another Debian revision, as far as the kit reads their headers.
fake_kernel() { # DIR SUBLEVEL DEBIAN_VERSION
	mkdir -p "$1/include/generated"
	printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = %s\nEXTRAVERSION =\n' "$2" >"$1/Makefile"
	echo "#define UTS_VERSION \"#1 SMP PREEMPT_DYNAMIC Debian $3 (2026-12-01)\"" >"$1/include/generated/utsversion.h"
}
shipped=$tmp/src/bqlkit-$ver/bases
bv=$(manifest_get "$shipped/6.1" version)
bpv=$(manifest_get "$shipped/6.1" package)
bpv=${bpv#* }
up=$((${bv##*.} + 8))
fake_kernel "$tmp/k-same" "${bv##*.}" "$bpv"
fake_kernel "$tmp/k-update" "$up" "6.1.$up-1"
fake_kernel "$tmp/k-rev" "${bv##*.}" "${bv}-99"
pick() { KDIR=$1 BQLKIT_BASES=$2 "$BQLKIT_TOP/scripts/pick-source.sh" 6.1.0-99-amd64; }
check pick-source-own-base bash -c "[ \"\$(KDIR='$tmp/k-same' BQLKIT_BASES='$shipped' '$BQLKIT_TOP/scripts/pick-source.sh' 6.1.0-99-amd64)\" = 'base $shipped/6.1' ]"
expect_error pick-source-update-refused "its own driver source is not here (it is Linux 6.1.$up (package version 6.1.$up-1); the kit has Linux $bv" pick "$tmp/k-update" "$shipped"
expect_error pick-source-update-says-in-tree-stays "so its in-tree drivers stay; for the kit: .*touch /etc/bqlkit/any-sublevel" pick "$tmp/k-update" "$shipped"
expect_error pick-source-other-revision-refused "its own driver source is not here" pick "$tmp/k-rev" "$shipped"
has pick-source-opt-in "^other $shipped/6.1$" "$(BQLKIT_ANY_SUBLEVEL=1 pick "$tmp/k-update" "$shipped" 2>&1)"
rc=0
out=$("${d[@]}" build "bqlkit/$ver" -k 6.1.0-99-amd64 --kernelsourcedir "$tmp/k-update" 2>&1) || rc=$?
check dkms-other-sublevel-exit-77 test "$rc" -eq 77
check dkms-other-sublevel-one-line test "$(grep -c 'bqlkit: skipping kernel 6.1.0-99-amd64: its own driver source is not here' <<<"$out")" -eq 1
# The distro's linux-source of the very kernel: DKMS imports it and builds from it.
tb=/usr/src/linux-source-6.1.tar.xz
tv=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || true)
k61=$(test_kernels | sed -n 1p)
if [ -f "$tb" ] && [ "$tv" = "$(distro_version "$(kdir_for "$k61")")" ]; then
	mkdir -p "$tmp/nobase"
	has pick-source-own-tarball "^tarball $tb$" "$(pick "$(kdir_for "$k61")" "$tmp/nobase" 2>&1)"
	cp -a "$tmp/src/bqlkit-$ver" "$tmp/src2" && rm -rf "$tmp/src2/bases/6.1" && mkdir -p "$tmp/src3" && mv "$tmp/src2" "$tmp/src3/bqlkit-$ver"
	d3=(dkms --dkmstree "$tmp/tree3" --sourcetree "$tmp/src3" --installtree "$tmp/inst")
	mkdir -p "$tmp/tree3"
	"${d3[@]}" add "bqlkit/$ver" >/dev/null 2>&1 || true
	if out=$("${d3[@]}" build "bqlkit/$ver" -k "$k61" 2>&1); then
		pass dkms-build-from-own-tarball
		has dkms-build-from-own-tarball-imported "importing from $tb" "$(cat "$tmp/tree3/bqlkit/$ver/$k61/"*/log/make.log 2>&1)"
		ko=$(ls "$tmp/tree3/bqlkit/$ver/$k61/"*/module/veth.ko* 2>/dev/null | head -1)
		has dkms-build-from-own-tarball-module "package=$tv " "$(modinfo -F bqlkit "$ko" 2>&1)"
	else
		fail dkms-build-from-own-tarball "$(tail -1 <<<"$out")"
	fi
else
	skip pick-source-own-tarball "no $tb of $k61's version ${tv:-(none)}"
fi

# A DKMS build applies the changes fitted when the DKMS source was made,
# with patch alone: no Coccinelle, no wiggle on PATH (a PATH of this
# machine's commands without spatch and wiggle).  Where those fitted
# changes do not apply (a source whose context moved, here a fitted patch
# made stale) and the tools are missing: refused, naming them.
check dkms-source-has-fitted test -s "$tmp/src/bqlkit-$ver/fitted/veth/6.1/series"
has dkms-build-applies-fitted "applied the changes fitted to Linux $bv when this DKMS source was made" \
	"$(cat "$tmp/tree/bqlkit/$ver/$k61/"*/log/make.log 2>&1)"
mkdir -p "$tmp/nofit"
for f in /usr/local/sbin/* /usr/local/bin/* /usr/sbin/* /usr/bin/* /sbin/* /bin/*; do
	n=$(basename "$f")
	case $n in spatch* | wiggle) continue ;; esac
	[ -e "$tmp/nofit/$n" ] || ln -s "$f" "$tmp/nofit/$n"
done
light() { # FITTED: build veth for $k61 with BQLKIT_FITTED=FITTED and no fit tools on PATH
	env PATH="$tmp/nofit" BQLKIT_BUILD="$tmp/light" BQLKIT_BASES="$shipped" BQLKIT_FITTED="$1" \
		"$BQLKIT_TOP/scripts/build.sh" "$k61" veth
}
check dkms-light-no-fit-tools bash -c "! PATH='$tmp/nofit' command -v spatch && ! PATH='$tmp/nofit' command -v wiggle"
check dkms-light-build light "$tmp/src/bqlkit-$ver/fitted"
cp -a "$tmp/src/bqlkit-$ver/fitted" "$tmp/stale"
sed -i '0,/^ #define VETH_RING_SIZE/s// #define VETH_RING_SIZE_MOVED/' "$tmp/stale/veth/6.1/"*implement-byte-queue-limits.patch
expect_error dkms-light-stale-needs-tools "do not apply exactly to the Linux $bv source (its context moved), and fitting them again needs coccinelle and wiggle: apt-get install coccinelle wiggle" \
	light "$tmp/stale"

# Only a distro's or the user's import ships (scripts/make-dkms-source.sh):
# never a test's, a fixture's.
mkdir -p "$tmp/pb/bases"
cp -a "$shipped/6.1" "$tmp/pb/bases/"
fx=$(ls -d "$BQLKIT_TOP"/tests/fixtures/kernels/stable-5.15.* | head -1)
BQLKIT_BUILD=$tmp/pb "$BQLKIT_TOP/scripts/import-source.sh" "$fx" >/dev/null 2>&1
has import-records-test-provenance '^provenance=test$' "$(cat "$tmp/pb/bases/5.15/MANIFEST")"
out=$(BQLKIT_BUILD=$tmp/pb "$BQLKIT_TOP/scripts/make-dkms-source.sh" "$tmp/pbsrc" 2>&1) || true
check dkms-source-ships-distro-base test -f "$tmp/pbsrc/bases/6.1/MANIFEST"
check dkms-source-not-fixture test ! -e "$tmp/pbsrc/bases/5.15"
has dkms-source-says-not-shipped "not shipping base 5.15 ($fx, provenance test)" "$out"

# The bqlkit-dkms RPM (make rpm: scripts/make-rpm.sh, rpm/bqlkit-dkms.spec)
# of the DKMS source above, as rpm reads it.  Its scriptlets run with $1 as
# rpm gives it, against stubs that record their calls: dkms (its status
# says what $STUB_STATUS says) and the kit's scripts they run (nothing is
# installed).
rpmf=$tmp/rpmb/rpm/bqlkit-dkms-$ver-1.noarch.rpm
same() { # NAME WANT GOT: PASS when GOT is WANT
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$(paste -sd';' <<<"$3")', want '$(paste -sd';' <<<"$2")'"; fi
}
check make-rpm-target bash -c "make -s -n -C '$BQLKIT_TOP' rpm | grep -q '/scripts/make-rpm.sh\$'"
if ! out=$(BQLKIT_BUILD=$tmp/rpmb "$BQLKIT_TOP/scripts/make-rpm.sh" "$tmp/src/bqlkit-$ver" 2>&1) || [ ! -f "$rpmf" ]; then
	fail rpm-build "$(tail -1 <<<"$out")"
else
	pass rpm-build
	same rpm-version-is-VERSION "$ver" "$(rpm -qp --qf '%{VERSION}' "$rpmf")"
	reqs=$(rpm -qp --requires "$rpmf")
	for p in dkms kernel-devel make gcc patch; do
		has "rpm-requires-$p" "^$p\$" "$reqs"
	done
	# The payload is the DKMS source (without make dkms-source's mark).
	pd=$(diff <(cd "$tmp/src" && find "bqlkit-$ver" ! -name .bqlkit-dkms-source | sed 's|^|/usr/src/|' | sort) \
		<(rpm -qpl "$rpmf" | sort) | grep '^[<>]' | head -3 || true)
	same rpm-payload-is-dkms-source "" "$pd"
	same rpm-dkms-conf-version "PACKAGE_VERSION=\"$ver\"" \
		"$(rpm2cpio "$rpmf" | cpio -i --quiet --to-stdout "./usr/src/bqlkit-$ver/dkms.conf" | grep '^PACKAGE_VERSION=')"
	if command -v rpmlint >/dev/null; then
		# Clean, each filter explained in rpm/bqlkit-dkms.rpmlintrc.
		out=$(rpmlint -r "$BQLKIT_TOP/rpm/bqlkit-dkms.rpmlintrc" "$rpmf" "$tmp/rpmb/rpm/bqlkit-dkms.spec" 2>&1) && rc=0 || rc=$?
		if [ "$rc" -eq 0 ] && grep -q ' 0 errors, 0 warnings, 0 badness' <<<"$out"; then
			pass rpm-rpmlint-clean
		else
			fail rpm-rpmlint-clean "rc $rc: $(grep -m1 ': [EW]: ' <<<"$out" || tail -1 <<<"$out")"
		fi
	else
		skip rpm-rpmlint-clean "no rpmlint (scripts/install-deps.sh test installs it)"
	fi
	fake=$tmp/rpmfake
	mkdir -p "$fake/bin" "$fake/usr/src/bqlkit-$ver/scripts"
	for s in dkms-all-kernels.sh dkms-remove.sh; do
		printf '#!/bin/sh\necho "%s $*" >>"$STUB_LOG"\nexit "${STUB_RC:-0}"\n' "$s" >"$fake/usr/src/bqlkit-$ver/scripts/$s"
	done
	printf '#!/bin/sh\necho "dkms $*" >>"$STUB_LOG"\n[ "$1" != status ] || printf "%%s" "$STUB_STATUS"\n' >"$fake/bin/dkms"
	chmod +x "$fake/bin/dkms" "$fake/usr/src/bqlkit-$ver/scripts/"*
	for s in POSTIN PREUN; do
		rpm -qp --qf "%{$s}" "$rpmf" >"$tmp/$s.sh"
		check "rpm-$s-sh-syntax" sh -n "$tmp/$s.sh"
		check "rpm-$s-bash-syntax" bash -n "$tmp/$s.sh"
		sed "s|/usr/src/|$fake/usr/src/|g" "$tmp/$s.sh" >"$tmp/$s.fake"
	done
	# scriptlet NAME ARG STATUS [RC]: what scriptlet NAME (POSTIN, PREUN) run
	# with $1 = ARG calls, then "exit N"; the kit's scripts exit RC.
	scriptlet() {
		local rc=0
		: >"$tmp/stub.log"
		STUB_LOG=$tmp/stub.log STUB_STATUS=$3 STUB_RC=${4:-0} PATH="$fake/bin:$PATH" sh "$tmp/$1.fake" "$2" >/dev/null 2>&1 || rc=$?
		cat "$tmp/stub.log"
		echo "exit $rc"
	}
	st="bqlkit/$ver, k1, x86_64: installed"
	same rpm-post-adds-and-installs "$(printf 'dkms status bqlkit/%s\ndkms add bqlkit/%s\ndkms-all-kernels.sh %s\nexit 0' "$ver" "$ver" "$ver")" \
		"$(scriptlet POSTIN 1 '')"
	same rpm-post-failed-kernel-exits-0 "$(printf 'dkms status bqlkit/%s\ndkms add bqlkit/%s\ndkms-all-kernels.sh %s\nexit 0' "$ver" "$ver" "$ver")" \
		"$(scriptlet POSTIN 1 '' 1)"
	same rpm-post-same-version-added-once "$(printf 'dkms status bqlkit/%s\ndkms-all-kernels.sh %s\nexit 0' "$ver" "$ver")" \
		"$(scriptlet POSTIN 2 "$st")"
	same rpm-preun-erase-removes "$(printf 'dkms-remove.sh %s\nexit 0' "$ver")" "$(scriptlet PREUN 0 "$st" 1)"
	same rpm-preun-upgrade-same-version-keeps "$(printf 'dkms status bqlkit\nexit 0')" \
		"$(scriptlet PREUN 1 "$(printf '%s\nbqlkit/%s, k2, x86_64: installed' "$st" "$ver")")"
	same rpm-preun-upgrade-other-version-leaves-dkms "$(printf 'dkms status bqlkit\ndkms remove bqlkit/%s --all\nexit 0' "$ver")" \
		"$(scriptlet PREUN 1 "$(printf 'bqlkit/%s, k1, x86_64: built\nbqlkit/%s.1, k1, x86_64: installed' "$ver" "$ver")")"
fi

# A kit an RPM installed is rpm's to remove: make uninstall and make
# install name the package and its removal, and touch neither DKMS nor /usr/src (an rpm
# stand-in owns /usr/src/bqlkit-VERSION; dpkg owns nothing of it here).
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$tmp/ownerbin"
	printf '#!/bin/sh\n[ "$1" = -qf ] && [ "$4" = /usr/src/bqlkit-%s ] && { echo bqlkit-dkms; exit 0; }\nexit 1\n' "$ver" >"$tmp/ownerbin/rpm"
	chmod +x "$tmp/ownerbin/rpm"
	# kit_state: what of the kit this machine has (none is nothing).
	kit_state() { find "/usr/src/bqlkit-$ver" /var/lib/dkms/bqlkit -maxdepth 1 2>/dev/null | sort || true; }
	# (The package's source: a stand-in where this machine has none,
	# removed however the test ends.)
	if [ ! -e "/usr/src/bqlkit-$ver" ]; then
		trap 'rm -rf "$tmp" "/usr/src/bqlkit-$ver"' EXIT
		mkdir "/usr/src/bqlkit-$ver" && : >"/usr/src/bqlkit-$ver/dkms.conf"
		mine=1
	fi
	before=$(kit_state)
	out=$(PATH="$tmp/ownerbin:$PATH" BQLKIT_NO_INITRAMFS=1 "$BQLKIT_TOP/scripts/uninstall.sh" 2>&1) || true
	has uninstall-leaves-rpm-kit-to-rpm "bqlkit/$ver was installed by the bqlkit-dkms package: remove it with 'rpm -e bqlkit-dkms'" "$out"
	same uninstall-rpm-kit-untouched "$before" "$(kit_state)"
	out=$(PATH="$tmp/ownerbin:$PATH" BQLKIT_NO_INITRAMFS=1 "$BQLKIT_TOP/scripts/install.sh" 2>&1) && rc=0 || rc=$?
	check install-refuses-rpm-kit test "$rc" -ne 0
	has install-names-rpm-kit "bqlkit-dkms is installed and owns /usr/src/bqlkit-$ver: upgrade that package, or 'rpm -e bqlkit-dkms'" "$out"
	same install-rpm-kit-untouched "$before" "$(kit_state)"
	if [ -n "${mine:-}" ]; then
		rm -rf "/usr/src/bqlkit-$ver"
		trap 'rm -rf "$tmp"' EXIT
	fi
fi

if [ -n "${BQLKIT_QUICK:-}" ]; then
	skip dkms-install "BQLKIT_QUICK=1 (real DKMS install not run)"
	exit 0
fi
[ "$(id -u)" = 0 ] || { skip dkms-install "needs root"; exit 0; }

# The real thing, as README says.  Put back whatever was installed before.
# (The initramfs part is tested in the chroot, t90: leave this machine's alone.)
export BQLKIT_NO_INITRAMFS=1
had=$(dkms status "bqlkit/$ver" 2>/dev/null | sed -n 's/^[^,]*, \([^,]*\),.*installed.*/\1/p')
k61=$(test_kernels | sed -n 1p)
k612=$(test_kernels | sed -n 2p)
check dkms-install-main-command make -C "$BQLKIT_TOP" install
kdef=$(IFS=$'\t' read -r k _ < <("$BQLKIT_TOP/scripts/pick-kernel.sh"); echo "$k")
check dkms-install-modinfo-names-kit bash -c "modinfo -k '$kdef' -n veth | grep -q '/updates/dkms/veth.ko'"
check dkms-install-6.12 make -C "$BQLKIT_TOP" install KVER="$k612"
check dkms-install-6.12-modinfo bash -c "modinfo -k '$k612' -n veth | grep -q '/updates/dkms/veth.ko'"
check dkms-status-installed bash -c "dkms status bqlkit/$ver | grep -c ': installed' | grep -qx 2"
check dkms-uninstall make -C "$BQLKIT_TOP" uninstall
check dkms-uninstall-nothing-left bash -c "! dkms status bqlkit 2>/dev/null | grep -q . && [ ! -e /usr/src/bqlkit-$ver ] && [ ! -e /var/lib/dkms/bqlkit/$ver ] && ! ls /lib/modules/*/updates/dkms/veth.ko* 2>/dev/null"
check dkms-uninstall-in-tree-back bash -c "modinfo -k '$k612' -n veth | grep -q '/kernel/drivers/net/veth.ko'"
for k in $had; do
	make -C "$BQLKIT_TOP" install KVER="$k" >/dev/null 2>&1 || true
done
: "$k61"
