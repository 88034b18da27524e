#!/bin/bash
# Build every driver of the kit against every kernel of lab/matrix.conf
# and write results/matrix.md and results/matrix.json.
#
#   matrix.sh [ID_REGEX]          (MATRIX_JOBS=2 cells at a time)
#   matrix.sh --cache-keys ID     what row ID reads back from BQLKIT_CACHE
#                                 (cache_keys: CI's cache keys)
#
# A cell is ok, FAIL (first error line), or skip (why).  Exit 1 if any cell
# failed.  Headers come from Debian's archive without touching /etc/apt
# (lab/get-headers.sh); kernels newer than the host's toolchain are
# built in cached mmdebstrap chroots ($BQLKIT_CACHE/chroots).
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$BQLKIT_TOP/lab/chroot-lib.sh"

# chroot_include: what a build needs in a chroot (scripts/build-deps.list,
# but for dkms: the cells build with make): a cached chroot made with
# another list is made again.
chroot_include() { echo "$(build_deps | grep -vx dkms | tr '\n' ,)ca-certificates,binutils,perl"; }

# chroot_current SUITE: the SUITE chroot is unpacked and was made with the
# package list chroot_include names.
chroot_current() {
	[ -e "$BQLKIT_CACHE/chroots/$1-amd64/.ready" ] &&
		[ "$(cat "$BQLKIT_CACHE/chroots/$1-amd64.tar.packages" 2>/dev/null)" = "$(chroot_include)" ]
}

# chroot_dir SUITE: an unpacked chroot of SUITE with a compiler, from its
# cached tarball (lab/chroot-lib.sh; under chroot_hold's exclusive lock when
# it changes anything).  A subshell: interrupted (SIGINT, SIGTERM, SIGHUP),
# it removes the chroot it was unpacking.
chroot_dir() (
	local s=$1 dir=$BQLKIT_CACHE/chroots/$1-amd64 tar=$BQLKIT_CACHE/chroots/$1-amd64.tar
	local include half=() kr=/usr/share/keyrings/debian-archive-keyring.gpg srcs=()
	trap 'rm -rf "${half[@]}"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP
	if ! chroot_current "$s"; then
		! mountpoint -q "$dir/proc" || umount "$dir/proc" || umount -l "$dir/proc"
		half=("$dir")
		rm -rf "$dir"
		case $s in
		trixie) srcs=("deb http://deb.debian.org/debian trixie main"
			"deb http://deb.debian.org/debian-security trixie-security main"
			"deb http://deb.debian.org/debian trixie-backports main") ;;
		sid) srcs=("deb http://deb.debian.org/debian sid main")
			kr=$BQLKIT_CACHE/apt/keyring/usr/share/keyrings/debian-archive-keyring.gpg ;;
		bullseye) srcs=("deb http://deb.debian.org/debian bullseye main"
			"deb http://deb.debian.org/debian-security bullseye-security main") ;;
		*) die "no chroot recipe for $s" ;;
		esac
		include=$(chroot_include)
		chroot_cached --prepare chroot_prepare "$tar" "$tar.packages" "$include" "$s" \
			--keyring="$kr" --include="$include" -- "${srcs[@]}" >/dev/null || exit 1
		mkdir -p "$dir"
		tar -xf "$tar" -C "$dir"
		cp /etc/resolv.conf "$dir/etc/resolv.conf"
		# (A chroot made before Valid-Until became opt-in has the option
		# in mmdebstrap's apt.conf: not any more.)
		[ ! -f "$dir/etc/apt/apt.conf.d/99mmdebstrap" ] ||
			sed -i '/Check-Valid-Until/d' "$dir/etc/apt/apt.conf.d/99mmdebstrap"
		touch "$dir/.ready"
		half=()
	fi
	echo "$dir"
)

# chroot_prepare SUITE: chroot_dir's --prepare, when the tarball must be
# made: mmdebstrap, and for sid the keyring of scripts/apt-private.sh.
chroot_prepare() {
	"$BQLKIT_TOP/scripts/install-deps.sh" build mmdebstrap
	[ "$1" != sid ] || "$BQLKIT_TOP/scripts/apt-private.sh" sid --print-config >/dev/null
	step "creating the $1 chroot (a few minutes; cached in $BQLKIT_CACHE/chroots)"
}

# chroot_hold SUITE: this run holds the SUITE chroot until it ends (the
# lock file's descriptor stays open): shared while it builds there, so
# that runs beside it (make bench beside make check) build there too but
# none deletes or re-unpacks it under another's builds; exclusive (taken
# here, waiting for every holder) when chroot_dir must make, replace or
# unpack it.  The caller takes the shared lock back after chroot_dir.
declare -A chroot_fd=()
chroot_hold() {
	local s=$1 lock=$BQLKIT_CACHE/chroots/$1-amd64.lock fd
	[ -z "${chroot_fd[$s]:-}" ] || return 0
	mkdir -p "${lock%/*}"
	exec {fd}>>"$lock"
	chroot_fd[$s]=$fd
	flock -s "$fd"
	! chroot_current "$s" || return 0
	flock -n -x "$fd" || {
		step "waiting for the other runs that use the $s chroot (lock $lock): this one must make or replace it"
		flock -x "$fd"
	}
}

# in_chroot DIR CMD...: run CMD in the chroot, with /proc mounted.
in_chroot() {
	local dir=$1
	shift
	mountpoint -q "$dir/proc" || mount -t proc proc "$dir/proc"
	chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"
}

# cross_of ARCH: the make variables that build for Debian architecture ARCH.
cross_of() {
	case $1 in
	arm64) echo ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- ;;
	armhf) echo ARCH=arm CROSS_COMPILE=arm-linux-gnueabihf- ;;
	esac
}

# row_base SUITE KDIR: import the base of KDIR's series from SUITE's
# linux-source where the kit carries that series and has no base for it
# yet (a fresh machine; a CI job per row).  A failure is said by the cells.
row_base() {
	local series t
	series=$(series_of "$(kernel_version "$2")") || return 0
	carried "$series" || return 0
	[ ! -f "$(base_dir "$series")/MANIFEST" ] || return 0
	step "no imported Linux $series base: importing linux-source-$series from $1"
	t=$("$BQLKIT_TOP/scripts/fetch-source.sh" "$1" "linux-source-$series") &&
		"$BQLKIT_TOP/scripts/import-source.sh" "$t" >&2 ||
		note "could not import linux-source-$series from $1: the cells of Linux $series will fail"
}

# carried SERIES: the kit has a series of some driver for Linux SERIES.
carried() { compgen -G "$BQLKIT_TOP/patches/*/$1/series" >/dev/null; }

# cache_keys ID: what a run of row ID reads back from BQLKIT_CACHE, as the
# keys of the caches of .github/workflows/ci.yml (one job per row): NAME=VALUE
# lines for $GITHUB_OUTPUT.  Resolving them fetches package lists only
# (scripts/apt-private.sh), which the row's run then uses.
#   chroot=SUITE    chroot rows: chroot_dir's tarball and its .packages,
#   packages=HASH   made with the package list of this hash (a tarball made
#                   with another list is made again)
#   kver=KVER       host and cross rows: the kernel whose headers
#                   get-headers.sh downloads (a chroot row installs them in
#                   its chroot with apt)
#   source=DEB      the linux-source .deb row_base imports the kernel's base
#                   from (none where the kit has no series of the kernel)
# Nothing for a tree row, nor what cannot be resolved (the run says why).
cache_keys() {
	local id='' suite arch meta env kver series deb
	read -r id suite arch meta env < <(awk -v id="$1" '$1 == id' "$BQLKIT_TOP/lab/matrix.conf") || true
	[ -n "$id" ] || die "lab/matrix.conf has no row '$1'"
	case $env in
	chroot:*)
		echo "chroot=${env#chroot:}"
		echo "packages=$(chroot_include | sha256sum | cut -c1-16)"
		arch=amd64
		;;
	host | cross) ;;
	*) return 0 ;;
	esac
	kver=$("$BQLKIT_TOP/lab/get-headers.sh" --kver "$suite" "$arch" "$meta") || return 0
	[[ $env == chroot:* ]] || echo "kver=$kver"
	[[ $kver =~ ^[0-9]+\.[0-9]+ ]] || return 0
	series=${BASH_REMATCH[0]}
	carried "$series" || return 0
	deb=$("$BQLKIT_TOP/scripts/fetch-source.sh" --deb "$suite" "linux-source-$series") || return 0
	echo "source=${deb##*/}"
}

if [ "${1:-}" = --cache-keys ]; then
	[ $# -eq 2 ] || die "usage: matrix.sh --cache-keys ID"
	cache_keys "$2"
	exit 0
fi

filter=${1:-.}
jobs=${MATRIX_JOBS:-2}
"$BQLKIT_TOP/scripts/install-deps.sh" matrix
out=$BQLKIT_BUILD/matrix
results=${MATRIX_RESULTS:-$BQLKIT_TOP/results}
rm -rf "$out"
mkdir -p "$out/cells" "$results"
start=$(date +%s)

# Prepare each kernel: headers, and for chroots the kit copied in.
declare -A seen_chroot=()
: >"$out/kernels"
while read -r id suite arch meta env; do
	case $id in '' | '#'*) continue ;; esac
	[[ $id =~ $filter ]] || continue
	case $env in
	host | cross)
		if ! r=$("$BQLKIT_TOP/lab/get-headers.sh" "$suite" "$arch" "$meta" 2>"$out/$id.prep.err"); then
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$suite" "$arch" "-" "-" "$env" >>"$out/kernels"
			echo "FAIL $(grep -m1 '^bqlkit: error:' "$out/$id.prep.err" | sed 's/^bqlkit: error: //' ||
				echo "get-headers.sh $suite $arch $meta failed: $(tail -1 "$out/$id.prep.err")") (log: $out/$id.prep.err)" >"$out/$id.prep"
			continue
		fi
		read -r kver kdir <<<"$r"
		row_base "$suite" "$kdir"
		;;
	tree)
		# 5.15 and 6.6 have no Debian package: a prepared kernel tree of
		# the user's (MATRIX_TREES), or one cached by an earlier session.
		kdir=
		case $arch in
		amd64) asym=CONFIG_X86_64 ;;
		arm64) asym=CONFIG_ARM64 ;;
		armhf) asym=CONFIG_ARM ;;
		esac
		for t in ${MATRIX_TREES:-} "$BQLKIT_CACHE"/trees/linux-"$meta".*; do
			[ -f "$t/Makefile" ] && [ -f "$t/include/generated/autoconf.h" ] || continue
			grep -q "^$asym=y" "$t/include/config/auto.conf" || continue
			v=$(kernel_version "$t") || continue
			[ "$(series_of "$v")" = "$meta" ] && { kdir=$(readlink -f "$t"); kver=$v; break; }
		done
		if [ -z "$kdir" ]; then
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$suite" "$arch" "-" "-" "$env" >>"$out/kernels"
			echo "skip not in CI: no Debian source; give a Linux $meta $arch tree: scripts/prepare-tree.sh TREE, make import SRC=TREE, MATRIX_TREES=TREE" >"$out/$id.prep"
			continue
		fi
		;;
	chroot:*)
		s=${env#chroot:}
		chroot_hold "$s"
		dir=$(chroot_dir "$s")
		flock -s "${chroot_fd[$s]}"
		pin=()
		case $suite in *-backports) pin=(-t "$suite") ;; esac
		alog=$out/$id.apt.log
		mountpoint -q "$dir/proc" || mount -t proc proc "$dir/proc"
		apt_get --root "$dir" "$alog" update -qq ||
			note "$id: apt-get update in the $s chroot failed (log: $alog); going on with its old package lists"
		kver=$(in_chroot "$dir" apt-cache ${pin[@]:+-o APT::Default-Release=$suite} depends "$meta" 2>/dev/null |
			sed -n 's/^ *Depends: linux-headers-\(.*\)$/\1/p' | grep -v common | head -1)
		if [ -z "$kver" ]; then
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$suite" "$arch" "-" "-" "$env" >>"$out/kernels"
			echo "FAIL $meta names no kernel in the $s chroot" >"$out/$id.prep"
			continue
		fi
		if [ ! -d "$dir/usr/src/linux-headers-$kver" ]; then
			step "installing linux-headers-$kver in the $s chroot"
			apt_get --root "$dir" "$alog.install" install -y -qq --no-install-recommends \
				"${pin[@]}" "linux-headers-$kver" ||
				{ echo "FAIL cannot install linux-headers-$kver in the $s chroot (log: $alog.install)" >"$out/$id.prep"; }
		fi
		kdir=/usr/src/linux-headers-$kver
		[ -e "$out/$id.prep" ] || row_base "$suite" "$dir$kdir"
		if [ -z "${seen_chroot[$s]:-}" ]; then
			# A fresh copy of the kit, but the modules of the rows
			# this run does not build stay (bqlkit/out/ROW): another
			# run may be loading them (make bench on one row while
			# make check boots another).
			find "$dir/bqlkit" -mindepth 1 -maxdepth 1 ! -name out -exec rm -rf {} + 2>/dev/null || true
			mkdir -p "$dir/bqlkit/build"
			kit_copy "$dir/bqlkit"
			seen_chroot[$s]=1
		fi
		rm -rf "$dir/bqlkit/out/$id"
		# The bases, again for each row: row_base may have added one.
		mkdir -p "${BQLKIT_BASES:-$BQLKIT_BUILD/bases}"
		rm -rf "$dir/bqlkit/build/bases"
		cp -a "${BQLKIT_BASES:-$BQLKIT_BUILD/bases}" "$dir/bqlkit/build/bases"
		;;
	*) die "matrix.conf: $id: unknown ENV '$env'" ;;
	esac
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$suite" "$arch" "$kver" "$kdir" "$env" >>"$out/kernels"
done <"$BQLKIT_TOP/lab/matrix.conf"

# One job per (kernel, driver).
: >"$out/jobs"
while IFS=$'\t' read -r id suite arch kver kdir env; do
	[ -e "$out/$id.prep" ] && continue
	for d in $BQLKIT_DRIVERS; do
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$arch" "$kver" "$kdir" "$env" "$d" >>"$out/jobs"
	done
done <"$out/kernels"

export BQLKIT_TOP BQLKIT_BUILD BQLKIT_CACHE out
export -f cross_of
[ -z "${BQLKIT_BASES:-}" ] || export BQLKIT_BASES
cell() {
	IFS=$'\t' read -r id arch kver kdir env d <<<"$1"
	local cf=$out/cells/$id.$d t0 rc=0 cross=() log status detail
	t0=$(date +%s.%N)
	read -ra cross <<<"$(cross_of "$arch")"
	# The driver must exist in the release and be enabled in this kernel's
	# configuration.
	local sym conf hdir series
	sym=$(sed -n 's/^KCONFIG=//p' "$BQLKIT_TOP/drivers/$d/driver.conf")
	case $env in
	chroot:*) hdir=$BQLKIT_CACHE/chroots/${env#chroot:}-amd64$kdir ;;
	*) hdir=$kdir ;;
	esac
	conf=$hdir/include/config/auto.conf
	series=$(. "$BQLKIT_TOP/scripts/lib.sh" && series_of "$(kernel_version "$hdir")")
	if [[ " $(sed -n 's/^absent=//p' "${BQLKIT_BASES:-$BQLKIT_BUILD/bases}/$series/MANIFEST" 2>/dev/null) " == *" $d "* ]]; then
		printf 'skip\t%s absent in Linux %s\t-\t0\n' "$d" "$series" >"$cf"
		return 0
	fi
	if [ -n "$sym" ] && [ -f "$conf" ] && ! grep -q "^$sym=[ym]" "$conf"; then
		printf 'skip\t%s not enabled in %s\t-\t0\n' "$sym" "$kver" >"$cf"
		return 0
	fi
	log=$out/cells/$id.$d.log
	case $env in
	chroot:*)
		chroot "$BQLKIT_CACHE/chroots/${env#chroot:}-amd64" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			BQLKIT_BUILD=/bqlkit/out/$id BQLKIT_BASES=/bqlkit/build/bases \
			bash /bqlkit/scripts/build.sh "$kver" "$d" >"$log" 2>&1 || rc=$?
		;;
	*)
		env KDIR="$kdir" ${cross[@]+"${cross[@]}"} BQLKIT_BUILD="$out/build/$id" \
			BQLKIT_BASES="${BQLKIT_BASES:-$BQLKIT_BUILD/bases}" \
			"$BQLKIT_TOP/scripts/build.sh" "$kver" "$d" >"$log" 2>&1 || rc=$?
		;;
	esac
	case $rc in
	0) status=ok detail=- ;;
	77) status=skip detail=$(grep -m1 'no series' "$log" | sed 's/^bqlkit: //') ;;
	*)
		status=FAIL detail=$(grep -m1 -E 'error|Error' "$log" | sed 's/^bqlkit: //' | cut -c1-200)
		# A log without such a line still says something: its last line
		# (a cell once failed with nothing but "-" to show for it).
		[ -n "$detail" ] || detail="exit $rc: $(tail -n1 "$log" | cut -c1-200)"
		detail=${detail//$'\t'/ }
		;;
	esac
	series=$(sed -n 's/.*with series \([0-9.]*\).*/\1/p' "$log" | head -1)
	printf '%s\t%s\t%s\t%.1f\n' "$status" "${detail:--}" "${series:--}" \
		"$(echo "$(date +%s.%N) - $t0" | bc)" >"$cf"
}
export -f cell
step "building $(wc -l <"$out/jobs") cells, $jobs at a time"
tr '\n' '\0' <"$out/jobs" | xargs -0 -P "$jobs" -I{} bash -c 'cell "$1"' _ {}

# Probe results that disagree with the kernel's version, from the probes
# the cells already ran (probe.sh's cache in each build's compat/), two
# kernels at a time.
report() {
	IFS=$'\t' read -r id suite arch kver kdir env <<<"$1"
	[ -e "$out/$id.prep" ] && return 0
	local cross=()
	read -ra cross <<<"$(cross_of "$arch")"
	case $env in
	chroot:*) chroot "$BQLKIT_CACHE/chroots/${env#chroot:}-amd64" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		bash /bqlkit/scripts/probe-report.sh "$kdir" "/bqlkit/out/$id/$kver/compat" >"$out/$id.probes" 2>&1 || true ;;
	*) env "${cross[@]}" \
		"$BQLKIT_TOP/scripts/probe-report.sh" "$kdir" "$out/build/$id/$kver/compat" >"$out/$id.probes" 2>&1 || true ;;
	esac
}
export -f report
tr '\n' '\0' <"$out/kernels" | xargs -0 -P "$jobs" -I{} bash -c 'report "$1"' _ {}

python3 "$BQLKIT_TOP/lab/matrix-report.py" "$out" "$results" "$BQLKIT_DRIVERS" "$(($(date +%s) - start))"
