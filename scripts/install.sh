#!/bin/bash
# The main job: build the kit for a kernel and install it with DKMS.
#
#   install.sh [KVER]
#
# BQLKIT_SRC (make install SRC=): the kernel's own source, given by the
# user, on any distro with dkms and the kernel's headers: that kernel only
# (KVER, default the running one), no apt when the tools are there, the
# source imported for that kernel alone (scripts/import-kernel-source.sh).
# Without KVER: the running kernel, or the distro's default kernel when the
# running one has no headers in the distro (say which), and then every other
# kernel whose headers are installed and whose series the kit carries (the
# way a distro's -dkms package does).  With KVER: that kernel only.
# Installs what it needs with apt (dkms, quilt, the headers, the matching
# linux-source-X.Y), imports the driver sources, builds once outside DKMS to
# fail early, then adds, builds and installs the DKMS package, regenerates
# the initramfs where it holds a kit driver (scripts/initramfs.sh) and
# checks module signing for Secure Boot (scripts/secure-boot.sh).
# If the first kernel fails, or on interrupt, nothing of this run stays
# installed; another kernel that fails is left without the kit and named.
# Running it twice is harmless.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

install_lock install

ver=$(cat "$BQLKIT_TOP/VERSION")
src=/usr/src/bqlkit-$ver
# The kit from the bqlkit-dkms package, or another version, owns the module names.
if owner=$(package_owner "$src"); then
	die "${owner%%$'\t'*} is installed and owns $src: upgrade that package, or '${owner#*$'\t'}' before 'make install'"
fi
otherv=$(dkms status bqlkit 2>/dev/null | sed -n 's|^bqlkit/\([^,:]*\)[,:].*|\1|p' | grep -vx "$ver" | sort -u | head -1 || true)
[ -z "$otherv" ] ||
	die "bqlkit/$otherv is in DKMS (another version of the kit): remove it first ('dkms remove bqlkit/$otherv --all', or 'apt-get purge bqlkit-dkms' if the package put it there)"

given=${BQLKIT_SRC:-}
[ -z "$given" ] || [ -e "$given" ] ||
	die "SRC='$given' does not exist: give the kernel's own source (a tarball, an unpacked tree, a git tree or its driver files; docs/install.md, 'Any distro: SRC=')"
all=
if [ -n "${1:-}" ]; then
	kver=$1
	why="requested with KVER"
elif [ -n "$given" ]; then
	kver=$(uname -r)
	why="the running kernel, SRC= its source"
else
	all=yes
	IFS=$'\t' read -r kver why < <("$BQLKIT_TOP/scripts/pick-kernel.sh")
fi
[ -n "$kver" ] || die "no kernel to build for"
valid_kver "$kver"
# A kernel that would refuse what DKMS signs (Secure Boot with DKMS's key
# not enrolled, signature enforcement) keeps its in-tree drivers: exit 3
# before anything is installed (README, Install: Secure Boot).
trust_rc=0
refusal=$("$BQLKIT_TOP/scripts/module-trust.sh" "$kver") || trust_rc=$?
case $trust_rc in
0) ;;
1) echo "bqlkit: error: $refusal" >&2; exit 3 ;;
*) die "cannot tell whether kernel $kver loads DKMS-signed modules (scripts/module-trust.sh exit $trust_rc)" ;;
esac
step "building for $kver ($why)"

# missing_tools: the commands a build needs (scripts/build-deps.list's
# packages) that are not here, as "command (Debian's package)".
missing_tools() {
	local p c
	for p in $(build_deps); do
		case $p in
		diffutils) c=diff3 ;;
		coccinelle) c=spatch ;;
		xz-utils) c=xz ;;
		kmod) c=depmod ;;
		libc6-dev | libpython3-dev) continue ;; # (libraries: gcc and spatch fail without them)
		*) c=$p ;;
		esac
		command -v "$c" >/dev/null || echo "$c ($p)"
	done
}

# Headers first: they tell the kernel's version and so the source needed.
kdir=$(kdir_for "$kver")
missing=
[ -z "$given" ] || missing=$(missing_tools)
if [ -n "$given" ] && { ! command -v apt-get >/dev/null || [ -z "$missing" ]; }; then
	# SRC= on any distro: nothing from apt; what is missing is named.
	[ -z "$missing" ] ||
		die "missing: $(paste -sd, - <<<"$missing" | sed 's/,/, /g') (the Debian package in brackets): install them with your distro's package manager (docs/install.md, 'Any distro: SRC=')"
	[ -f "$kdir/Makefile" ] ||
		die "kernel $kver has no headers at $kdir: install them (Debian, Ubuntu: linux-headers-$kver; RHEL, CentOS Stream, Azure Linux: kernel-devel-$kver), or give KVER= of a kernel with headers"
elif [ ! -f "$kdir/Makefile" ]; then
	apt-cache show "linux-headers-$kver" >/dev/null 2>&1 ||
		die "kernel $kver has no headers installed and none in apt (linux-headers-$kver): give KVER= of a kernel with headers"
	"$BQLKIT_TOP/scripts/install-deps.sh" build "linux-headers-$kver"
else
	"$BQLKIT_TOP/scripts/install-deps.sh" build
fi
kv=$(kernel_version "$kdir") || die "$(no_version "$kdir")"
series=$(series_of "$kv")
[ -d "$BQLKIT_TOP/patches/veth/$series" ] ||
	die "kernel $kver is Linux $series, which the kit does not support (it carries: $(cd "$BQLKIT_TOP/patches/veth" && echo */ | tr -d /))"

# ensure_base KDIR: the imported base of the kernel's series, from the
# distro's linux-source-X.Y (the kernel's own version if apt has it; never
# a downgrade of an installed one).  On failure returns 1 with the reason
# in $no_base.
ensure_base() {
	ensure_series "$(series_of "$(kernel_version "$1")")" "$(distro_version "$1")"
}
# ensure_series SERIES [PACKAGE_VERSION]: the same for a series.
ensure_series() {
	local series=$1 want=${2:-} tarball pkg have
	tarball=/usr/src/linux-source-$series.tar.xz
	pkg=linux-source-$series
	have=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null) || have=
	if [ ! -f "$tarball" ] || { [ -n "$want" ] && [ -n "$have" ] && dpkg --compare-versions "$want" gt "$have"; }; then
		if [ -n "$want" ] && apt-cache madison "$pkg" 2>/dev/null | grep -q " $want "; then
			pkg="$pkg=$want"
		fi
		if ! apt-cache show "${pkg%%=*}" >/dev/null 2>&1; then
			no_base="no linux-source-$series in apt: import a Linux $series source yourself (make import SRC=...)"
			[ -f "$(base_dir "$series")/MANIFEST" ]
			return
		fi
		"$BQLKIT_TOP/scripts/install-deps.sh" build "$pkg" || { no_base="apt-get install $pkg failed"; return 1; }
	fi
	if [ "$(manifest_get "$(base_dir "$series")" source_sha256)" != "$(sha256sum "$tarball" | cut -d' ' -f1)" ]; then
		"$BQLKIT_TOP/scripts/import-source.sh" "$tarball" || { no_base="cannot import $tarball (see above)"; return 1; }
	fi
}
no_base=
if [ -n "$given" ]; then
	# The kit is built here from the source given (and so the build below
	# is done): a source that does not fit changes nothing.
	"$BQLKIT_TOP/scripts/import-kernel-source.sh" "$kver" "$given" || exit 1
else
	ensure_base "$kdir" || die "$no_base"
fi
# The kit builds a kernel only from its own driver source (an update that
# changed veth.c or mana is never undone): scripts/pick-source.sh.
pick=$("$BQLKIT_TOP/scripts/pick-source.sh" "$kver") || die "not installing for kernel $kver: $pick"

# Without KVER: every other kernel with headers whose series the kit carries.
carried=$(cd "$BQLKIT_TOP/patches/veth" && echo */ | tr -d /)
others=
if [ -n "$all" ]; then
	for b in /lib/modules/*/build/Makefile; do
		[ -f "$b" ] || continue
		k=${b#/lib/modules/}
		k=${k%/build/Makefile}
		[ "$k" != "$kver" ] || continue
		s=$(series_of "$(kernel_version "$(kdir_for "$k")" 2>/dev/null || echo unknown.0)")
		if [ ! -d "$BQLKIT_TOP/patches/veth/$s" ]; then
			note "skipping kernel $k: the kit has no series for Linux $s (it carries: $carried)"
		elif ! refusal=$("$BQLKIT_TOP/scripts/module-trust.sh" "$k"); then
			note "skipping kernel $k: ${refusal:-scripts/module-trust.sh failed}"
		elif [ "$s" != "$series" ] && ! ensure_base "$(kdir_for "$k")"; then
			# (Another kernel of $kver's series keeps the source imported
			# for $kver: one linux-source-X.Y is installed at a time.)
			note "skipping kernel $k: $no_base"
		elif ! pick=$("$BQLKIT_TOP/scripts/pick-source.sh" "$k"); then
			note "skipping kernel $k: $pick"
		else
			others="$others $k"
		fi
	done
	# Every other series the kit carries whose linux-source this distro
	# release ships: imported too, so that DKMS builds the kit for a kernel
	# of that series installed later (bookworm's 6.1 -> 6.12).
	for s in $carried; do
		[ ! -f "$(base_dir "$s")/MANIFEST" ] || continue
		apt-cache show "linux-source-$s" >/dev/null 2>&1 || continue
		step "importing Linux $s too (linux-source-$s): a Linux $s kernel installed later gets the kit"
		ensure_series "$s" || note "not importing Linux $s: $no_base; a Linux $s kernel installed later will not get the kit"
	done
fi

# Build once outside DKMS: a failure here leaves the system untouched.
[ -n "$given" ] || "$BQLKIT_TOP/scripts/build.sh" "$kver"

# DKMS runs "make clean" and the build as background jobs of its script
# (invoke_command ... background), and a background job of a non-interactive
# shell ignores SIGINT: a Ctrl-C ends dkms but not the make it started, which
# then goes on writing into the tree that cleanup's 'dkms remove' deletes, and
# leaves a part of it behind (t95 sigint-nothing-left, seen twice in CI).  So
# dkms runs here as a job of its own (set -m: its own process group, which
# the terminal's SIGINT does not reach; this script's trap does), and cleanup
# stops that whole group before it removes anything.
dkms_pgid=
# run_dkms LOG ARGS...: dkms ARGS, its output to LOG, in a process group of
# its own; dkms's status.  (The redirection is the job's, not this
# function's: cleanup, run by the trap from inside the function, would
# otherwise write its messages into LOG.)
run_dkms() {
	local rc=0 out=$1
	shift
	set -m
	dkms "$@" </dev/null >"$out" 2>&1 &
	dkms_pgid=$!
	set +m
	wait "$dkms_pgid" || rc=$?
	dkms_pgid=
	return $rc
}
# stop_dkms: end what run_dkms started, its background make included: TERM,
# then KILL after 10 s; returns when none of the group is left.
stop_dkms() {
	local pg=$dkms_pgid i
	[ -n "$pg" ] || return 0
	dkms_pgid=
	kill -TERM -- "-$pg" 2>/dev/null || return 0
	wait "$pg" 2>/dev/null || true
	for i in $(seq 200); do
		kill -0 -- "-$pg" 2>/dev/null || return 0
		[ "$i" -ne 100 ] || kill -KILL -- "-$pg" 2>/dev/null || true
		sleep 0.1
	done
	note "processes of the interrupted DKMS build (process group $pg) did not end"
}

added=
cleanup() {
	rc=$?
	stop_dkms
	if [ $rc -ne 0 ] && [ -n "$added" ]; then
		note "install failed or interrupted: removing bqlkit/$ver from DKMS again"
		dkms remove "bqlkit/$ver" --all >/dev/null 2>&1 || true
		rm -rf "$src"
		# The kernels built before, and those a replaced source had
		# (pending: scripts/initramfs.sh --defer).
		"$BQLKIT_TOP/scripts/initramfs.sh" ${done_k:-} || true
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# SIGHUP (an SSH session that drops) must not skip the cleanup either; its
# terminal is gone, so the cleanup's messages go to the DKMS log.
trap 'exec >>/var/log/bqlkit-dkms.log 2>&1; exit 129' HUP

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
		had=$(dkms_status | sed -n 's/^[^,]*, \([^,]*\),.*: installed.*/\1/p')
		others="$others $(grep -vx "$kver" <<<"$had" || true)"
		# Their images hold the old source's modules until regenerated,
		# also when this install fails or is interrupted from here on.
		[ -z "$had" ] || "$BQLKIT_TOP/scripts/initramfs.sh" --defer $had
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

# The other kernels: those above, and those installed before when the source changed.
others=$(printf '%s\n' ${others:-} | grep -vx "$kver" | sort -uV | tr '\n' ' ' || true)
n=$(($(wc -w <<<"$others") + 1))

log=/var/log/bqlkit-dkms.log
# dkms_install K I: build + install for kernel K (the I-th of $n); 0 when
# installed, else the kernel is left without the kit.
dkms_install() {
	local k=$1 i=$2 rc=0
	if grep -q ': installed' <<<"$(dkms_status -k "$k")"; then
		note "bqlkit/$ver is already installed for $k"
		return 0
	fi
	step "($i/$n) dkms build + install bqlkit/$ver for $k (about a minute)"
	run_dkms "$log.$k" install "bqlkit/$ver" -k "$k" || rc=$?
	cat "$log.$k" >>"$log"
	# The kit's own error line is in DKMS's make.log, not in its output.
	cat "/var/lib/dkms/bqlkit/$ver/build/make.log" >>"$log.$k" 2>/dev/null || true
	if [ $rc -ne 0 ]; then
		# Only this kernel's build goes; other kernels' installs stay.
		dkms remove "bqlkit/$ver" -k "$k" >/dev/null 2>&1 || true
		if [ $rc -eq 77 ]; then
			grep -m1 '^bqlkit: skipping' "$log.$k" >&2 || note "skipping kernel $k: DKMS says the kit does not build for it"
			rm -f "$log.$k"
			return 77
		else
			grep -m1 '^bqlkit: error:' "$log.$k" >&2 || tail -3 "$log.$k" >&2
			note "dkms install for $k failed (log: $log.$k): fix the cause and run 'make install KVER=$k'"
		fi
		return 1
	fi
	rm -f "$log.$k"
}

: >"$log"
dkms_install "$kver" 1 || die "dkms install for $kver failed (log: $log); the kit is not installed for $kver"
done_k=$kver
i=1 failed_k=
for k in $others; do
	i=$((i + 1))
	if dkms_install "$k" "$i"; then
		done_k="$done_k $k"
	elif [ $? -ne 77 ]; then
		failed_k="$failed_k $k"
	fi
done

# The initramfs first: a failure there must not undo the install.
"$BQLKIT_TOP/scripts/initramfs.sh" $done_k || true
# An unsigned module on a kernel that enforces signatures: undo, say why.
if ! "$BQLKIT_TOP/scripts/secure-boot.sh" $done_k; then
	[ -n "$added" ] || for k in $done_k; do dkms remove "bqlkit/$ver" -k "$k" >/dev/null 2>&1 || true; done
	exit 1
fi
added=

for k in $done_k; do
	line=
	# The modules DKMS built for this kernel (dkms.conf picks them per kernel).
	for m in $(ls /var/lib/dkms/bqlkit/"$ver"/"$k"/*/module/ 2>/dev/null | sed 's/\.ko.*//' | sort -u); do
		p=$(modinfo -k "$k" -n "$m" 2>/dev/null || true)
		case $p in
		*/updates/dkms/*) line="$line $m -> $p" ;;
		"") ;;
		*) die "after install, modinfo -k $k -n $m names '$p', not the kit's module: check 'depmod -a $k'" ;;
		esac
	done
	echo "bqlkit: installed for $k:$line"
done
echo "bqlkit: load it with 'modprobe -r veth && modprobe veth' (or reboot into $kver)"
[ -z "$failed_k" ] || die "the kit is installed for $done_k but not for$failed_k (see above)"
