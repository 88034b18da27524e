# shellcheck shell=bash
# Shared helpers for bqlkit's scripts. Source it; do not run it.
# The product's (import, fit, build, DKMS, install, export, deb): what only
# the laboratory and the suite use is in lab/lib.sh.

BQLKIT_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BQLKIT_BUILD=${BQLKIT_BUILD:-$BQLKIT_TOP/build}
# The kit's defaults live here, and only here: the Makefile and tests/vm
# take them from this file (tests/t04-defaults.sh).
BQLKIT_CACHE=${BQLKIT_CACHE:-/var/cache/bqlkit}
# kit_drivers: the drivers the kit carries, in build order: the directories
# under drivers/ with a driver.conf, by its ORDER= (dkms.conf lists its
# modules the same way).
kit_drivers() {
	(cd "$BQLKIT_TOP/drivers" && grep -H '^ORDER=' -- */driver.conf) | sort -t= -k2n | cut -d/ -f1 | xargs
}
BQLKIT_DRIVERS=${BQLKIT_DRIVERS:-$(kit_drivers)}

die() {
	echo "bqlkit: error: $*" >&2
	exit 1
}

# valid_drivers NAME...: die unless each is a driver the kit carries.
# Every script checks DRIVERS= (BQLKIT_DRIVERS) here, when it sources this.
valid_drivers() {
	local d
	for d in "$@"; do
		[[ $d =~ ^[a-z0-9_]+$ && -d $BQLKIT_TOP/drivers/$d ]] ||
			die "DRIVERS: '$d' is not a driver the kit carries ($(cd "$BQLKIT_TOP/drivers" && echo */ | tr -d /))"
	done
}
# shellcheck disable=SC2086 # a word list
valid_drivers $BQLKIT_DRIVERS

note() {
	echo "bqlkit: $*" >&2
}

# is_release STR: STR can be a kernel release as uname -r prints it
# (letters, digits, . _ + ~ -; no "..", no "/"), so it can name a path.
# (scripts/fit-source.sh builds under labels like fit-6.12.15.)
is_release() { [[ $1 =~ ^[A-Za-z0-9][A-Za-z0-9._+~-]*$ && $1 != *..* ]]; }

# valid_kver KVER: die unless KVER is a kernel release (empty: make found
# none to default to).
valid_kver() {
	[ -n "$1" ] || die "no kernel headers installed; give KVER= or run make install"
	is_release "$1" || die "KVER='$1' is not a kernel release (like $(uname -r)): give the release of an installed kernel"
}

# valid_series NAME SERIES: die unless SERIES (given as NAME=) is a kernel
# series X.Y.
valid_series() {
	[[ $2 =~ ^[0-9]+\.[0-9]+$ ]] || die "$1='$2' is not a kernel series X.Y: give one the kit carries ($(carried_series))"
}

# kbuild_path NAME PATH: die if PATH (given as NAME=), or where it leads,
# has a space or a colon: Kbuild cannot build there.
kbuild_path() {
	[[ $2$(readlink -m -- "$2") != *[[:space:]:]* ]] ||
		die "$1='$2' has a space or a colon, and Kbuild cannot build in such a path: move it to a path without them"
}

# valid_dir NAME DIR WHAT: die unless DIR (given as NAME=) is an existing
# directory Kbuild can build in; WHAT: what to give instead.
valid_dir() {
	[ -d "$2" ] || die "$1='$2' does not exist: give $3"
	kbuild_path "$1" "$2"
}

# step LABEL: print a progress line for a long step.
step() {
	echo "bqlkit: [$(date +%H:%M:%S)] $*" >&2
}

# apt_lock_holder [ROOT]: "PID (COMMAND)" of a process holding dpkg's or
# apt's lock, or nothing.  The locks as the apt configuration (APT_CONFIG: a
# private one's lists have their own lock) names them; under ROOT for a chroot.
apt_lock_holder() {
	local root=${1:-} L='' S='' A=''
	eval "$(apt-config shell L Dir::State::Lists/d S Dir::State::status/f A Dir::Cache::Archives/d 2>/dev/null)" || true
	S=$(dirname "${S:-/var/lib/dpkg/status}")
	lslocks -n -o PID,COMMAND,PATH 2>/dev/null | awk -v a="$root$S/lock" -v b="$root$S/lock-frontend" \
		-v c="$root${L:-/var/lib/apt/lists/}lock" -v d="$root${A:-/var/cache/apt/archives/}lock" \
		'$3 == a || $3 == b || $3 == c || $3 == d {print $1 " (" $2 ")"; exit}'
}

# apt_get [--root DIR] LOG ARG...: apt-get ARG... with its output in LOG
# (in the chroot DIR, whose /proc the caller mounted).  Another apt or
# dpkg (a fresh cloud VM runs unattended-upgrades and cloud-init for
# minutes) makes it wait, saying so once, for up to BQLKIT_APT_LOCK_WAIT
# seconds (default 900), instead of failing.  (apt 2.6's apt-get update
# ignores DPkg::Lock::Timeout for the lists lock: it fails at once.)
apt_get() {
	local root='' log said='' holder rc deadline=$((SECONDS + ${BQLKIT_APT_LOCK_WAIT:-900})) run
	[ "$1" != --root ] || { root=$2; shift 2; }
	log=$1
	shift
	run=(env DEBIAN_FRONTEND=noninteractive)
	[ -z "$root" ] || run=(chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
		DEBIAN_FRONTEND=noninteractive)
	while :; do
		while holder=$(apt_lock_holder "$root") && [ -n "$holder" ] && [ "$SECONDS" -lt "$deadline" ]; do
			[ -n "$said" ] || note "waiting for the apt/dpkg lock held by process $holder (up to ${BQLKIT_APT_LOCK_WAIT:-900} s)"
			said=1
			sleep 2
		done
		rc=0
		"${run[@]}" apt-get -o DPkg::Lock::Timeout=60 "$@" >"$log" 2>&1 || rc=$?
		# Lost the race for a lock that was free a moment ago: wait again.
		if [ "$rc" -ne 0 ] && [ "$SECONDS" -lt "$deadline" ] &&
			grep -qE 'Could not get lock|Unable to (acquire|lock)' "$log"; then
			continue
		fi
		return "$rc"
	done
}

# frozen_suite SUITE: true when the user marked SUITE as a frozen snapshot
# (BQLKIT_FROZEN_SUITES="bookworm bookworm-security ..."), whose Release
# files apt may accept past their Valid-Until; no suite by default.
# (Checked when this file is sourced, below.)
frozen_suite() {
	[[ " ${BQLKIT_FROZEN_SUITES:-} " == *" $1 "* ]]
}
for _s in ${BQLKIT_FROZEN_SUITES:-}; do
	[[ $_s =~ ^[a-z]+(-[a-z]+)?$ ]] ||
		die "BQLKIT_FROZEN_SUITES: '$_s' is not a Debian suite name (bookworm, bookworm-security, ...)"
done
unset _s

# kdir_for KVER: the kbuild directory of an installed kernel's headers; for
# a kernel the kit built itself (lab/build-vm-kernel.sh: no headers
# package), its O= build directory.
kdir_for() {
	local mark=$BQLKIT_CACHE/kernels/$1/.bqlkit-tree-kernel
	if [ ! -e "/lib/modules/$1/build" ] && [ -f "$mark" ]; then
		cat "$mark"
	else
		echo "/lib/modules/$1/build"
	fi
}

# build_deps: the packages a build of the kit needs, one per line
# (scripts/build-deps.list: the one list of them).
build_deps() {
	sed 's/#.*//' "$BQLKIT_TOP/scripts/build-deps.list" | awk 'NF { print $1 }'
}

# kit_copy DEST: what a copy of the kit needs to build (DKMS source, a
# matrix chroot, the deb): its scripts, compat layer, drivers, series, the
# rules scripts/fit.sh checks (rules/) and the reference files the series
# were written against (base.conf REFERENCE=, in the fit corpus), which
# fit.sh merges with (3-way).  Not the imported bases: callers add those.
# Not lab/ either: the laboratory (benches, matrix, VM and QEMU builders)
# is no part of what a user installs.
kit_copy() {
	local r
	mkdir -p "$1/tests/fixtures/kernels"
	(cd "$BQLKIT_TOP" && cp -a Makefile VERSION compat drivers patches rules scripts "$1/")
	# (Python's byte-code caches of a run here are not the kit's.)
	find "$1/scripts" -name __pycache__ -prune -exec rm -rf {} +
	for r in $(sed -n 's/^REFERENCE=//p' "$BQLKIT_TOP"/patches/*/*/base.conf | sort -u); do
		cp -a "$BQLKIT_TOP/tests/fixtures/kernels/$r" "$1/tests/fixtures/kernels/"
	done
}

# series_changes DRIVER SERIES: the changes a series carries, in order, as
# paths under patches/DRIVER/: "REQ <path>" for each change its base.conf
# REQUIRES (changes the series builds on that its own base already has),
# then "OWN SERIES/<patch>" for its series file.  fit.sh, export-series.sh
# and lab/measure-fit.sh read a series through this, nothing else.
series_changes() {
	local pd=$BQLKIT_TOP/patches/$1 r
	for r in $(sed -n 's/^REQUIRES=//p' "$pd/$2/base.conf" 2>/dev/null); do
		[ -f "$pd/$r" ] || die "patches/$1/$2/base.conf: REQUIRES names $r, which is not in patches/$1/"
		echo "REQ $r"
	done
	grep -v '^#' "$pd/$2/series" | grep . | sed "s|^|OWN $2/|" || true
}

# source_version DIR: the version of a source of driver files (make fit):
# its top Makefile's, else BQLKIT_SRCVER=X.Y.Z (make fit SRCVER=: driver
# files without the tree around them, e.g. a vendor tree's driver
# directory).  Both given and different: an error.  (Namespaced, so that
# an unrelated SRCVER in a user's environment cannot stop a build.)
source_version() {
	local v sv=${BQLKIT_SRCVER:-}
	if v=$(kernel_version "$1"); then
		[ -z "$sv" ] || [ "$sv" = "$v" ] ||
			die "SRCVER=$sv, but the Makefile of '$1' says $v: drop SRCVER= (it is for sources without a top Makefile)"
		echo "$v"
	elif [ -n "$sv" ]; then
		[[ $sv =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "SRCVER=$sv is not a kernel version X.Y.Z (e.g. SRCVER=5.15.0)"
		echo "$sv"
	else
		die "'$1' has no top-level Makefile with VERSION/PATCHLEVEL/SUBLEVEL: give the kernel tree, or SRCVER=X.Y.Z (the release these driver files are from)"
	fi
}

# kernel_version KDIR: "X.Y.Z" of a kernel tree or headers directory.
# This is the only place scripts read a kernel's version number.
kernel_version() {
	local kdir=$1 f v
	f=$kdir/include/generated/uapi/linux/version.h
	if [ -r "$f" ] && grep -q LINUX_VERSION_SUBLEVEL "$f"; then
		v=$(awk '/LINUX_VERSION_MAJOR/ {a=$3} /LINUX_VERSION_PATCHLEVEL/ {b=$3}
			/LINUX_VERSION_SUBLEVEL/ {c=$3} END {print a "." b "." c}' "$f")
	elif [ -r "$kdir/Makefile" ]; then
		f=$kdir/Makefile
		# Debian's arch headers only include the -common Makefile.
		if ! grep -q '^VERSION *=' "$f"; then
			f=$(sed -n 's/^include \(\/.*\/Makefile\)$/\1/p' "$f" | head -1)
		fi
		# (A line's trailing blanks, a CR of a CRLF file, are not the number's.)
		[ -r "$f" ] && v=$(awk -F' *= *' '{ sub(/[ \t\r]+$/, "", $2) } $1=="VERSION" {a=$2} $1=="PATCHLEVEL" {b=$2}
			$1=="SUBLEVEL" {c=$2} END {print a "." b "." c}' "$f")
	fi
	# Headers whose Makefile includes a path valid only elsewhere (Debian
	# headers seen from outside their chroot) and whose version.h predates
	# the SUBLEVEL macros (5.10): LINUX_VERSION_CODE (sublevel capped at 255).
	f=$kdir/include/generated/uapi/linux/version.h
	# Digits only: a Makefile's "PATCHLEVEL = 1/../.." must not become a path.
	local re='^[0-9]+\.[0-9]+\.[0-9]+$'
	if [[ ! ${v:-} =~ $re ]] && [ -r "$f" ]; then
		v=$(awk '/define LINUX_VERSION_CODE/ {c=$3; print int(c/65536) "." int(c/256)%256 "." c%256}' "$f")
	fi
	[[ ${v:-} =~ $re ]] || return 1
	echo "$v"
}

# no_version DIR: the error for a DIR whose version kernel_version cannot
# read, with the fix.
no_version() {
	echo "cannot read the kernel version of $1 (VERSION, PATCHLEVEL and SUBLEVEL in its Makefile, or its version.h, as numbers): give a kernel tree or a kernel's headers"
}

# series_of X.Y.Z -> X.Y
series_of() {
	echo "${1%.*}"
}

# version_ge A B: true when dotted version A >= B.
version_ge() {
	[ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" = "$2" ]
}

# distro_version KDIR: the distro's package version recorded in the headers, if any.
distro_version() {
	local f v
	for f in "$1/include/generated/utsversion.h" "$1/include/generated/compile.h"; do
		[ -f "$f" ] || continue
		v=$(sed -n 's/.*Debian \([^ ]*\) .*/\1/p' "$f")
		if [ -n "$v" ]; then
			echo "${v%%$'\n'*}"
			return 0
		fi
	done
}

# base_dir SERIES: where the imported base for a kernel series lives.
base_dir() {
	echo "${BQLKIT_BASES:-$BQLKIT_BUILD/bases}/$1"
}

# manifest_get BASEDIR KEY
manifest_get() {
	sed -n "s/^$2=//p" "$1/MANIFEST" 2>/dev/null | head -1
}

# manifest_pkgver BASEDIR: the distro package version the base was imported
# from (package=NAME VERSION), nothing when it is not a package's.
manifest_pkgver() {
	local p
	p=$(manifest_get "$1" package)
	[ -z "$p" ] || [ "$p" = unknown ] || echo "${p#* }"
}

# root_dir DIR: DIR as a directory only root can write (made 0700 if
# missing); dies if it is a symlink, not root's, or writable by others (a
# root program must not write where another user can plant a symlink).
root_dir() {
	# (Another install may make it at the same moment: its checks decide.)
	[ -e "$1" ] || [ -L "$1" ] || mkdir -m 0700 "$1" 2>/dev/null || true
	[ ! -L "$1" ] && [ -d "$1" ] && [ "$(stat -c %u "$1")" = 0 ] &&
		[ -z "$(find "$1" -maxdepth 0 -perm /022)" ] ||
		die "$1 must be a directory only root can write (a symlink, another owner or group/other write was found): remove it and run again"
}

# package_owner PATH: "NAME<TAB>how to remove it" when a package (dpkg's,
# or rpm's: make rpm) owns PATH; fails when none does.  The kit's make
# install and make uninstall leave a packaged kit to its package manager.
package_owner() {
	local p
	if p=$(dpkg-query -S "$1" 2>/dev/null); then
		p=${p%%:*}
		printf '%s\tapt-get purge %s\n' "$p" "$p"
	elif command -v rpm >/dev/null && p=$(rpm -qf --qf '%{NAME}\n' "$1" 2>/dev/null) && [ -n "$p" ]; then
		p=$(head -1 <<<"$p")
		printf '%s\trpm -e %s\n' "$p" "$p"
	else
		return 1
	fi
}

# install_lock ACTION: be root and hold the kit's install lock, so one
# install or uninstall runs at a time (ACTION: install, uninstall).  The
# lock is in /run/bqlkit (root's, not the world-writable /run/lock; no
# variable moves it), opened without truncating.
install_lock() {
	[ "$(id -u)" = 0 ] || die "${1%e}ing kernel modules needs root: run 'sudo make $1'"
	root_dir /run/bqlkit
	exec 9>>/run/bqlkit/install.lock
	flock -n 9 || die "another bqlkit install or uninstall is running (lock /run/bqlkit/install.lock): wait for it, then run 'make $1' again"
}

# debian_suite SERIES: a Debian suite with a linux-source-SERIES package;
# false for series Debian never packaged (5.15, 6.6, 6.18 LTS).
debian_suite() {
	case $1 in
	5.10) echo bullseye-security ;;
	6.1 | 6.12) echo bookworm-security ;;
	7.2) echo sid ;;
	7.3) echo trixie-backports ;;
	*) return 1 ;;
	esac
}

# nofit_fix BASE SERIES DRIVER WHAT: the fix for an imported source BASE
# the kit's SERIES changes to DRIVER do not fit: a tree of unknown origin
# whose release Debian ships can be replaced by Debian's source the series
# is made for; any other (a vendor's or later stable change where the
# backport touches the driver) needs the kit's maintainers, who get WHAT
# (the log, the report).
nofit_fix() {
	if [ "$(manifest_get "$1" package)" = unknown ] && debian_suite "$2" >/dev/null; then
		echo "import Debian's linux-source-$2, which the series is made for: $(source_advice "$2")"
	else
		echo "this source changed $3 where the kit's backport touches it (a vendor or later stable change), so the kit cannot build $3 for it as it is; send the $4 to the kit's maintainers"
	fi
}

# source_advice SERIES: how to get a Linux SERIES source for `make import`,
# true for that release: Debian's linux-source-X.Y where Debian has one
# (here with apt, or from the suite that has it), else a kernel tree.
source_advice() {
	local suite
	suite=$(debian_suite "$1") || suite=
	if apt-cache show "linux-source-$1" >/dev/null 2>&1; then
		echo "'make import SRC=/usr/src/linux-source-$1.tar.xz' (after apt-get install linux-source-$1)"
	elif [ -n "$suite" ]; then
		echo "'make import SRC=\$(scripts/fetch-source.sh $suite linux-source-$1)' (Debian $suite's linux-source-$1)"
	else
		echo "'make import SRC=<a Linux $1 kernel tree: stable, your vendor's>' (no Debian package has Linux $1)"
	fi
}

# is_tree KDIR: true when KDIR is a kernel source tree or its O= build
# directory (make prepare-tree), not a distro's headers package.
is_tree() {
	[ -f "$1/.bqlkit-prepared" ] || [ -f "$1/init/main.c" ] || [ -e "$1/source" ]
}

# tree_src KDIR: the source tree of a tree or of its O= build directory.
tree_src() {
	if [ -e "$1/source" ]; then readlink -f "$1/source"; else readlink -f "$1"; fi
}

# carried_series: the kernel series the kit has a series for (any driver).
carried_series() {
	(cd "$BQLKIT_TOP/patches" && for f in */*/series; do f=${f#*/}; echo "${f%/series}"; done) | sort -uV | tr '\n' ' ' | sed 's/ $//'
}

# refuse_series SERIES WHAT: die unless the kit carries SERIES or FORCE=1
# (WHAT: what the refused command would have done).
refuse_series() {
	[[ " $(carried_series) " != *" $1 "* ]] || return 0
	[ -n "${FORCE:-}" ] && { note "the kit has no series for Linux $1: going on as FORCE=1 asks; nothing will build from it"; return 0; }
	die "the kit has no series for Linux $1 (it carries: $(carried_series)): nothing would build from it, so not $2 (FORCE=1 does it anyway)"
}
