#!/bin/bash
# Vendor export: the kit's series for one base as mail-formatted patches
# that `git am` applies, in order, to a kernel tree of that base, with the
# compat layer folded in so the result needs nothing from the kit.
#
#   export-series.sh SERIES [DRIVER...]     (default: every driver with changes)
#
# SERIES names the imported base (build/bases/SERIES) the patches are for;
# the kit's changes are fitted to it by scripts/fit.sh, whose summary is
# printed: the series it chooses, changes adapted to the base exported as
# they got in, changes already in the base left out.
#
# Default: every driver whose SERIES series is not empty and whose sources
# are in the imported base; the others are named with the reason.
# Output: build/export/<SERIES>/<driver>/NNNN-*.patch (only the exported
# drivers' directories are replaced).  Stable-backport form: From: the
# upstream author of the change (patches/upstream.conf) with "commit <id>
# upstream." or the posting it backports in the message; kit-only patches
# (the compat header) from the kit's maintainers; the backporter's
# Signed-off-by: from SIGNOFF="Name <email>", else git config user.name and
# user.email.  The first patch of a
# driver adds <driver dir>/bqlkit_compat.h: this base's probe results
# (taken from a kernel of that series whose headers the kit has probed, see
# KVER below) followed by compat/bqlkit_compat.h, included by the driver's
# main file.  Kit-only test hooks (patches named *bqlkit-*test-hook*) are
# left out.  KVER=<kver> picks the kernel whose probe results are used.
# A kernel built in a chroot (5.10: make matrix) is found with
# BQLKIT_BUILD=<the chroot's /bqlkit/out/ROW>.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || die "usage: export-series.sh SERIES [DRIVER...]"
series=$1
shift
valid_series BASE "$series"
valid_drivers "$@"
[ -z "${KVER:-}" ] || valid_kver "$KVER"
[[ " $(carried_series) " == *" $series "* ]] ||
	die "the kit has no series for Linux $series (it carries: $(carried_series)): nothing to export"
base=$(base_dir "$series")
[ -f "$base/MANIFEST" ] || die "no imported Linux $series source to export against: $(source_advice "$series")"

# why_not DRIVER: why DRIVER is not exported for this base (nothing: it is).
why_not() {
	local pdir=$BQLKIT_TOP/patches/$1/$series
	if [ ! -f "$pdir/series" ]; then
		echo "the kit has no $1 series for Linux $series"
	elif [[ " $(manifest_get "$base" absent) " == *" $1 "* ]]; then
		echo "$1 is not in Linux $(manifest_get "$base" version)"
	elif ! grep -qv '^#' "$pdir/series"; then
		echo "its Linux $series series is empty: the base already has what the kit adds$(grep -q '^AUDIT=' "$BQLKIT_TOP/drivers/$1/driver.conf" && echo ", as $(sed -n 's/^AUDIT=//p' "$BQLKIT_TOP/drivers/$1/driver.conf") checks")"
	elif [[ " $(manifest_get "$base" drivers) " != *" $1 "* ]]; then
		echo "its sources are not in the imported Linux $series base (imported without it: re-import with DRIVERS including $1)"
	fi
}
drivers=
if [ $# -gt 0 ]; then
	for d in "$@"; do
		w=$(why_not "$d")
		[ -z "$w" ] || die "$d: not exported for Linux $series: $w"
		drivers="$drivers $d"
	done
else
	for d in $BQLKIT_DRIVERS; do
		w=$(why_not "$d")
		if [ -n "$w" ]; then
			note "$d: not exported: $w"
		else
			drivers="$drivers $d"
		fi
	done
	[ -n "$drivers" ] || die "no driver to export for Linux $series (see above)"
fi

# Who signs off the export: the backporter.
signoff=${SIGNOFF:-}
if [ -z "$signoff" ]; then
	gn=$(git -C "$BQLKIT_TOP" config user.name 2>/dev/null || true)
	ge=$(git -C "$BQLKIT_TOP" config user.email 2>/dev/null || true)
	[ -n "$gn" ] && [ -n "$ge" ] && signoff="$gn <$ge>"
fi
[[ $signoff =~ ^[^\<\>]+\ \<[^\<\>@\ ]+@[^\<\>\ ]+\>$ ]] ||
	die "who signs off the exported patches? give SIGNOFF='Your Name <you@example.org>' (or set git config user.name and user.email)${signoff:+; '$signoff' is not 'Name <email>'}"
maint=$(sed -n 's/^Maintainer: //p' "$BQLKIT_TOP/debian/control")

# Probe results of a kernel of this series.
cfg=
for k in ${KVER:-$(ls "$BQLKIT_BUILD" 2>/dev/null)}; do
	f=$BQLKIT_BUILD/$k/compat/bqlkit_config.h
	[ -f "$f" ] || continue
	# The version of the headers or prepared tree the build probed, as
	# build.sh recorded it (a chroot's headers are not readable from here).
	v=$(cat "$BQLKIT_BUILD/$k/compat/kernel_version" 2>/dev/null || kernel_version "$(kdir_for "$k")" 2>/dev/null || true)
	[ -n "$v" ] && [ "$(series_of "$v")" = "$series" ] && { cfg=$f; break; }
done
if [ -z "$cfg" ]; then
	if debian_suite "$series" >/dev/null; then
		die "no probed kernel of Linux $series yet: run 'make build KVER=<a Linux $series kernel whose headers are installed>' first (or give KVER= of one built)"
	fi
	die "no probed kernel of Linux $series yet: run 'make build KDIR=<your Linux $series tree, after make prepare-tree TREE=...>' first (or give KVER= of one built)"
fi

out=$BQLKIT_BUILD/export/$series
for drv in $drivers; do
	rm -rf "${out:?}/$drv"
	# The changes as they fit this base (scripts/fit.sh: the same choice of
	# series, adaptation and summary as make build).
	fitd=$BQLKIT_BUILD/export/.fit-$series/$drv
	mkdir -p "$(dirname "$fitd")"
	frc=0
	bash "$BQLKIT_TOP/scripts/fit.sh" "$drv" "$(base_dir "$series")" "$fitd" >&2 || frc=$?
	[ "$frc" -eq 0 ] || die "$drv: the kit's changes do not fit the imported Linux $series source (above; report: $fitd.fit): nothing exported; $(nofit_fix "$(base_dir "$series")" "$series" "$drv" report)"
	pseries=$(sed -n 's/^series //p' "$fitd.fit")
	# The file that includes the folded compat header: MAIN= in driver.conf,
	# else the first FILES entry.
	main=$(sed -n 's/^MAIN=//p' "$BQLKIT_TOP/drivers/$drv/driver.conf")
	[ -n "$main" ] || main=$(sed -n 's/^FILES="\([^: ]*\):.*/\1/p' "$BQLKIT_TOP/drivers/$drv/driver.conf")
	case $main in
	'' | *'*'*) die "$drv: drivers/$drv/driver.conf names no MAIN file to include the compat header" ;;
	esac
	ddir=$(dirname "$main")
	mkdir -p "$out/$drv"
	n=1
	mail() { # NUM SUBJECT BODYFILE DIFFFILE AUTHOR
		local f
		f=$out/$drv/$(printf '%04d' "$1")-$(echo "$2" | tr -c 'A-Za-z0-9\n' - | tr -s - | sed 's/^-//; s/-$//' | cut -c1-52).patch
		{
			echo "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
			echo "From: $5"
			echo "Date: $(date -R)"
			echo "Subject: [PATCH $(printf '%02d' "$1")] $2"
			echo
			cat "$3"
			echo
			# The author's sign-off (their submission carries it), then the
			# backporter's.
			echo "Signed-off-by: $5"
			[ "$5" = "$signoff" ] || echo "Signed-off-by: $signoff"
			echo "---"
			cat "$4"
			echo "-- "
			echo "bqlkit $(cat "$BQLKIT_TOP/VERSION")"
		} >"$f"
	}
	# 1: the compat header, resolved for this base.
	tmpd=$(mktemp -d)
	{
		echo "/* SPDX-License-Identifier: GPL-2.0 */"
		echo "/* bqlkit compat for Linux $series, folded in by scripts/export-series.sh. */"
		sed '1d; /#include "bqlkit_config.h"/d; /^#ifndef _BQLKIT_COMPAT_H/,/^#define _BQLKIT_COMPAT_H/d; $d' \
			"$BQLKIT_TOP/compat/bqlkit_compat.h" >"$tmpd/compat.body"
		echo "#ifndef _BQLKIT_COMPAT_H"
		echo "#define _BQLKIT_COMPAT_H"
		grep '^#define \(HAVE\|NEED\)_' "$cfg" || true
		# The networking comment style ("/* text" on the first line), as
		# checkpatch wants it in drivers/net.
		awk 'prev == "/*" && /^ \* / { sub(/^ \* /, ""); print "/* " $0; prev = ""; next }
			prev == "/*" { print prev } { prev = $0 } prev != "/*" { print }
			END { if (prev == "/*") print prev }' "$tmpd/compat.body"
		echo "#endif /* _BQLKIT_COMPAT_H */"
	} | cat -s >"$tmpd/bqlkit_compat.h"
	hdr_lines=$(wc -l <"$tmpd/bqlkit_compat.h")
	{
		echo "diff --git a/$ddir/bqlkit_compat.h b/$ddir/bqlkit_compat.h"
		echo "new file mode 100644"
		echo "--- /dev/null"
		echo "+++ b/$ddir/bqlkit_compat.h"
		echo "@@ -0,0 +1,$hdr_lines @@"
		sed 's/^/+/' "$tmpd/bqlkit_compat.h"
		# Include it after the driver's first #include.
		first=$(grep -n '^#include' "$(base_dir "$series")/$main" | head -1 | cut -d: -f1)
		sed "${first}a #include \"bqlkit_compat.h\"" "$(base_dir "$series")/$main" >"$tmpd/main.c"
		echo "diff --git a/$main b/$main"
		diff -u --label "a/$main" --label "b/$main" "$(base_dir "$series")/$main" "$tmpd/main.c" || true
	} >"$tmpd/diff"
	printf 'The kit'"'"'s compat layer for Linux %s, resolved with the probe results\nof %s: supplies the APIs the following patches use that\nthis base lacks.\n\n' \
		"$series" "$(basename "$(dirname "$(dirname "$cfg")")")" >"$tmpd/body"
	mail $n "$drv: bqlkit compat for Linux $series" "$tmpd/body" "$tmpd/diff" "$maint"
	# 2..: what the series requires and this base lacked (base.conf
	# REQUIRES=, put in by fit.sh), then the series; DEP-3 header as the
	# commit message.
	while read -r pf; do
		p=$(basename "$pf")
		pf=$BQLKIT_TOP/patches/$drv/$pf
		case $p in *bqlkit-*test-hook*) continue ;; esac
		# A change already in the base is not exported (fit says so above).
		[ -s "$fitd.changes/$p" ] || continue
		n=$((n + 1))
		subj=$(sed -n 's/^Description: //p' "$pf" | head -1)
		# The upstream author and commit or posting (patches/upstream.conf).
		if grep -q '^Origin: vendor' "$pf"; then
			author=$maint up=
		else
			IFS='|' read -r _ author up < <(awk -F' *[|] *' -v s="$subj" '$1 == s { print $1 "|" $2 "|" $3; exit }' \
				"$BQLKIT_TOP/patches/upstream.conf")
			[ -n "$author" ] || die "${pf#"$BQLKIT_TOP"/} backports '$subj' but patches/upstream.conf names no upstream author for it: add its line"
		fi
		{
			case $up in
			'') ;;
			posting:*) printf 'Backport of the netdev posting "%s" (not merged upstream when this was written).\n' "${up#posting: }" |
				fold -s -w 72 | sed 's/ *$//'; echo ;;
			*) printf 'commit %s upstream.\n\n' "$up" ;;
			esac
			awk '/^Description: /{on=1; next} /^[A-Z][A-Za-z-]*: /{on=0} /^---$/{exit} on && /^ /{sub(/^ /,""); if ($0==".") $0=""; print; next}' \
				"$pf"
		} >"$tmpd/body"
		# The change as it got into this base (adapted hunks included),
		# each file's diff preceded by its git header.
		awk '/^--- a\// { f = substr($2, 3); print "diff --git a/" f " b/" f } { print }' \
			"$fitd.changes/$p" >"$tmpd/diff"
		mail $n "$subj" "$tmpd/body" "$tmpd/diff" "$author"
	done < <(series_changes "$drv" "$pseries" | cut -d' ' -f2)
	rm -rf "$tmpd"
	echo "bqlkit: exported $drv/$series: $(ls "$out/$drv" | wc -l) patches in $out/$drv"
done
