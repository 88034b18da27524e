# shellcheck shell=bash
# A Debian bookworm chroot that stands in for a user's machine (tests t90,
# t95).  Source it after tests/lib.sh.
#
#   chroot_tarball            make (or reuse) the cached chroot tarball, print its path
#   chroot_up DIR             unpack it into DIR (DIR/root/bqlkit: a copy of the kit)
#   chroot_run DIR CMD...     run CMD inside, with /proc, /sys, /dev and a fresh /run
#                             mounted in a private mount namespace (gone when CMD ends)
#   chroot_down DIR           remove DIR
#
# The tarball ($BQLKIT_CACHE/chroot/, ~700 MB; ~1.6 GB unpacked; made by
# lab/chroot-lib.sh, as the build matrix's chroots are) holds
# bookworm with dkms, the test kernels' linux-image + linux-headers, their linux-source-X.Y, and in
# /root/debs the .debs of two more kernels' headers, installed by the tests:
# another 6.1 ABI (bookworm-security) and a 5.10 one (bullseye-security; a
# series the kit has no base for).  It is rebuilt when older than
# BQLKIT_CHROOT_MAX_DAYS (default 14) or when the wanted packages change.
# initramfs-tools is set to MODULES=list plus a hook adding veth, so the
# images are small and the kit's veth is in them.
# Nothing here touches the host's /lib/modules, DKMS or apt configuration.

BQLKIT_CHROOT_DIR=${BQLKIT_CHROOT_DIR:-$BQLKIT_CACHE/chroot}
BQLKIT_CHROOT_MAX_DAYS=${BQLKIT_CHROOT_MAX_DAYS:-14}
CHROOT_MIRROR=http://deb.debian.org/debian
CHROOT_SECURITY=http://deb.debian.org/debian-security
. "$BQLKIT_TOP/lab/chroot-lib.sh"

# chroot_wanted: the package list the chroot is made with (also its cache key).
chroot_wanted() {
	local k kdir series want
	build_deps | tr '\n' ' '
	echo openssl zstd mokutil initramfs-tools apt-utils
	for k in $(test_kernels); do
		kdir=$(kdir_for "$k")
		series=$(series_of "$(kernel_version "$kdir")")
		want=$(distro_version "$kdir")
		echo "linux-headers-$k linux-image-$k linux-source-$series${want:+=$want}"
	done
}

# chroot_tarball: the cached tarball (lab/chroot-lib.sh), made first where
# missing or stale, under a lock (two suites at once, t90 beside t95 in two
# checkouts, must not both write it).
chroot_tarball() {
	local wanted pkgs=() p k61 abi61
	wanted=$(chroot_wanted | tr '\n' ' ')
	for p in $wanted; do
		pkgs+=("$p")
	done
	k61=$(test_kernels 2>/dev/null | head -1)
	abi61=$(sed -n 's/^6\.1\.0-\([0-9]*\)-amd64$/\1/p' <<<"$k61")
	# Without the test kernels (tests/setup.sh writes them) the list would
	# not match the cached one, and a rebuild would replace the shared
	# chroot with one holding no kernel: refuse instead.
	if [ -z "$abi61" ]; then
		note "chroot: no 6.1 test kernel (${k61:-none}; tests/setup.sh writes $TEST_KERNELS_FILE): not making the chroot"
		return 1
	fi
	# initramfs-tools is set up before any kernel is installed: MODULES=list
	# (small, fast images) plus veth, so that each image holds veth.
	# shellcheck disable=SC2016 # $1 is mmdebstrap's, in its hooks
	chroot_cached --lock "$BQLKIT_CHROOT_DIR/.lock" --log "$BQLKIT_CHROOT_DIR/mmdebstrap.log" \
		--max-days "$BQLKIT_CHROOT_MAX_DAYS" --prepare chroot_debs_510 \
		"$BQLKIT_CHROOT_DIR/bookworm-kit.tar.zst" "$BQLKIT_CHROOT_DIR/bookworm-kit.packages" "$wanted" bookworm \
		--mode=root --skip=cleanup/apt/lists --include="$(IFS=,; echo "${pkgs[*]}")" \
		--essential-hook='mkdir -p "$1/etc/initramfs-tools/conf.d" "$1/etc/initramfs-tools/hooks" "$1/root/debs"' \
		--essential-hook='echo MODULES=list >"$1/etc/initramfs-tools/conf.d/bqlkit-test.conf"' \
		--essential-hook='printf "#!/bin/sh\n[ \"\$1\" = prereqs ] && exit 0\n. /usr/share/initramfs-tools/hook-functions\nmanual_add_modules veth\n" >"$1/etc/initramfs-tools/hooks/bqlkit-test-veth" && chmod +x "$1/etc/initramfs-tools/hooks/bqlkit-test-veth"' \
		--customize-hook="cp $BQLKIT_CHROOT_DIR/debs-5.10/*.deb \"\$1/root/debs/\"" \
		--customize-hook="n=\$(chroot \"\$1\" apt-cache search --names-only '^linux-headers-6\.1\.0-[0-9]+-amd64\$' | sed -n 's/^linux-headers-6\.1\.0-\([0-9]*\)-amd64 .*/\1/p' | sort -n | awk '\$1 < $abi61' | tail -1); [ -n \"\$n\" ]; cd \"\$1/root/debs\" && chroot \"\$1\" sh -c \"cd /root/debs && apt-get -o APT::Sandbox::User=root download -q linux-headers-6.1.0-\$n-amd64 linux-headers-6.1.0-\$n-common\"" \
		-- "deb $CHROOT_MIRROR bookworm main" "deb $CHROOT_MIRROR bookworm-updates main" \
		"deb $CHROOT_SECURITY bookworm-security main"
}

# chroot_debs_510: chroot_tarball's --prepare, under its lock: the 5.10
# headers (bullseye-security: a kernel series the kit has no base for),
# downloaded once into $BQLKIT_CHROOT_DIR/debs-5.10.
chroot_debs_510() {
	local old=$BQLKIT_CHROOT_DIR/debs-5.10 abi
	step "chroot: bookworm with dkms, the test kernels (image + headers) and their linux-source (downloads ~750 MB the first time, then ~5 min)"
	! ls "$old"/linux-headers-5.10.*-amd64_*.deb >/dev/null 2>&1 || return 0
	step "chroot: downloading Linux 5.10 headers from bullseye-security (~12 MB)"
	abi=$("$BQLKIT_TOP/scripts/apt-private.sh" bullseye-security -- apt-cache search --names-only \
		'^linux-headers-5\.10\.0-[0-9]+-amd64$' | awk '{print $1}' | sort -V | tail -1)
	abi=${abi#linux-headers-}
	abi=${abi%-amd64}
	[ -n "$abi" ] || { note "chroot: no 5.10 headers in bullseye-security"; return 1; }
	half+=("$old.tmp")
	rm -rf "$old.tmp" && mkdir -p "$old.tmp"
	(cd "$old.tmp" && "$BQLKIT_TOP/scripts/apt-private.sh" bullseye-security -- apt-get download -qq \
		"linux-headers-$abi-amd64" "linux-headers-$abi-common" linux-kbuild-5.10) >&2 || return 1
	rm -rf "$old" && mv "$old.tmp" "$old"
}

chroot_up() {
	local dir=$1 tar start
	tar=$(chroot_tarball) || return 1
	start=$(date +%s)
	rm -rf "$dir" && mkdir -p "$dir"
	step "chroot: unpacking $(du -sh "$tar" | cut -f1) into $dir"
	# A failure here once said nothing (full45's t90): name the step.
	if ! zstd -q -dc -T0 "$tar" | tar -x -C "$dir"; then
		note "chroot: unpacking $tar failed (zstd, tar exit ${PIPESTATUS[*]}; free: $(df -h --output=avail "$dir" | tail -1 | tr -d ' '))"
		return 1
	fi
	mkdir -p "$dir/root/bqlkit"
	# The kit as a user has it: a clone, without build products.
	if ! (cd "$BQLKIT_TOP" && tar -c --exclude=./build --exclude=./.git --exclude=./results --exclude=./out .) |
		tar -x -C "$dir/root/bqlkit"; then
		note "chroot: copying the kit into $dir/root/bqlkit failed (tar exit ${PIPESTATUS[*]})"
		return 1
	fi
	if ! ls "$dir"/var/lib/apt/lists/*Packages* >/dev/null 2>&1; then
		step "chroot: apt-get update (the cached chroot has no package lists)"
		chroot_run "$dir" bash -c '. /root/bqlkit/scripts/lib.sh && apt_get /var/log/bqlkit-apt.log update -qq' >&2 ||
			{ note "chroot: apt-get update failed (log: $dir/var/log/bqlkit-apt.log)"; return 1; }
	fi
	step "chroot: ready in $(($(date +%s) - start)) s"
}

chroot_run() {
	local dir=$1
	shift
	unshare --mount --propagation private -- bash -c '
		r=$1; shift
		mount -t proc proc "$r/proc" && mount -t sysfs -o ro sys "$r/sys" &&
		mount --rbind /dev "$r/dev" && mount -t tmpfs tmpfs "$r/run" && mkdir -p "$r/run/lock" ||
			{ echo "chroot_run: cannot mount in $r" >&2; exit 125; }
		exec chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive "$@"' chroot_run "$dir" "$@"
}

# normalize K61 K612 K3 K510: an output with versions, times and temporary
# paths replaced by placeholders (as DKMS's own test suite does), for diffing
# against tests/expected/*.txt.  The way to the kit a skipped kernel's line
# names depends on what apt's lists hold that day (ADVICE; t50 checks it).
normalize() {
	local a=() i=0 k
	for k in "$@"; do
		i=$((i + 1))
		[ -n "$k" ] && a+=(-e "s/$(sed 's/[.]/\\&/g' <<<"$k")/@K$i@/g")
	done
	# DKMS's line for the host's running kernel depends on the host (the
	# kit skips it unless a base of its series is in the kit): not compared.
	sed "${a[@]}" -e "/^bqlkit: skipping kernel $(uname -r | sed 's/[.]/\\&/g'): /d" \
		-e "s/$(uname -r | sed 's/[.]/\\&/g')/@RUNNING@/g" \
		-e 's/\[[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\]/[TIME]/g' \
		-e 's/\b[0-9][0-9]* \(files\|exported symbols\)\b/N \1/g' -e 's/(it carries: [0-9. ]*)/(it carries: SERIES)/' \
		-e 's/\b\(5\.10\|6\.1\|6\.12\)\.[0-9][0-9]*\(-[0-9][0-9.~a-z+]*\)\?/\1.Z/g' \
		-e 's/\.\.\.\.*/.../g' -e 's/ in [0-9.]* s\b/ in N s/g' -e 's|/tmp/[A-Za-z0-9._-]*|/tmp/TMP|g' \
		-e 's/([0-9.]*[kKMG]B\?)/(SIZE)/g' -e "s/$(date +%Y)-[0-9-]*T[0-9:]*Z/DATE/g" \
		-e 's/for the kit: .* (or, to build from/for the kit: ADVICE (or, to build from/'
}

# expect_output NAME FILE OUTPUT K61 K612 K3 K510: OUTPUT, normalized, must
# equal tests/expected/FILE (BQLKIT_UPDATE_EXPECTED=1 writes FILE instead).
expect_output() {
	local name=$1 file=$BQLKIT_TOP/tests/expected/$2 out=$3 d
	shift 3
	if [ -n "${BQLKIT_UPDATE_EXPECTED:-}" ]; then
		mkdir -p "$(dirname "$file")"
		normalize "$@" <<<"$out" >"$file"
		pass "$name"
	elif d=$(diff -u "$file" <(normalize "$@" <<<"$out") 2>&1); then
		pass "$name"
	else
		fail "$name" "output differs from tests/expected/$(basename "$file"): $(grep '^[-+][^-+]' <<<"$d" | head -3 | tr '\n' ' ')"
		echo "--- $name: diff against tests/expected/$(basename "$file")" >&2
		echo "$d" >&2
	fi
}

chroot_down() {
	local dir=$1
	# Mounts live in chroot_run's private namespaces: nothing is mounted here.
	if grep -q " $dir/" /proc/self/mounts; then
		note "chroot: $dir still has mounts; not removing it"
		return 1
	fi
	rm -rf "$dir"
}
