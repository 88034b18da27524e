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
# Output: build/export/<SERIES>/<driver>/NNNN-*.patch.  The first patch of a
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
drivers=${*:-}
if [ -z "$drivers" ]; then
	for d in "$BQLKIT_TOP"/patches/*/; do
		d=$(basename "$d")
		# mvneta's series are empty: nothing to export.
		grep -qsv '^#' "$BQLKIT_TOP"/patches/"$d"/*/series && drivers="$drivers $d"
	done
fi
[ -f "$(base_dir "$series")/MANIFEST" ] ||
	die "no imported Linux $series source to export the kit's changes for: make import SRC=<a Linux $series source> (the kit has series: $(cd "$BQLKIT_TOP/patches" && ls -d */* | tr '\n' ' '))"

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
[ -n "$cfg" ] || die "no probed kernel of series $series: run 'make build KVER=<a $series kernel>' (or 'make build KDIR=<prepared $series tree>') first (or give KVER=)"

out=$BQLKIT_BUILD/export/$series
rm -rf "$out"
for drv in $drivers; do
	# The changes as they fit this base (scripts/fit.sh: the same choice of
	# series, adaptation and summary as make build).
	fitd=$BQLKIT_BUILD/export/.fit-$series/$drv
	mkdir -p "$(dirname "$fitd")"
	frc=0
	bash "$BQLKIT_TOP/scripts/fit.sh" "$drv" "$(base_dir "$series")" "$fitd" >&2 || frc=$?
	[ "$frc" -eq 0 ] || die "$drv: the kit's changes do not fit the imported Linux $series source (above): nothing exported"
	pseries=$(sed -n 's/^series //p' "$fitd.fit")
	pdir=$BQLKIT_TOP/patches/$drv/$pseries
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
	mail() { # NUM SUBJECT BODYFILE DIFFFILE
		local f
		f=$out/$drv/$(printf '%04d' "$1")-$(echo "$2" | tr -c 'A-Za-z0-9\n' - | tr -s - | sed 's/^-//; s/-$//' | cut -c1-52).patch
		{
			echo "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
			echo "From: bqlkit <bqlkit@localhost>"
			echo "Date: $(date -R)"
			echo "Subject: [PATCH $(printf '%02d' "$1")] $2"
			echo
			cat "$3"
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
		cat "$tmpd/compat.body"
		echo "#endif /* _BQLKIT_COMPAT_H */"
	} >"$tmpd/bqlkit_compat.h"
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
	mail $n "$drv: bqlkit compat for Linux $series" "$tmpd/body" "$tmpd/diff"
	# 2..: the series, DEP-3 header as the commit message.
	while read -r p; do
		case $p in *bqlkit-*test-hook*) continue ;; esac
		# A change already in the base is not exported (fit says so above).
		[ -s "$fitd.changes/$p" ] || continue
		n=$((n + 1))
		subj=$(sed -n 's/^Description: //p' "$pdir/$p" | head -1)
		awk '/^Description: /{on=1; next} /^---$/{exit} on && /^ /{sub(/^ /,""); if ($0==".") $0=""; print; next} on{print}' \
			"$pdir/$p" >"$tmpd/body"
		# The change as it got into this base (adapted hunks included),
		# each file's diff preceded by its git header.
		awk '/^--- a\// { f = substr($2, 3); print "diff --git a/" f " b/" f } { print }' \
			"$fitd.changes/$p" >"$tmpd/diff"
		mail $n "$subj" "$tmpd/body" "$tmpd/diff"
	done < <(grep -v '^#' "$pdir/series")
	rm -rf "$tmpd"
	echo "bqlkit: exported $drv/$series: $(ls "$out/$drv" | wc -l) patches in $out/$drv"
done
